//! Inputs the merge oracle makes from its recordings.

use std::path::{Path, PathBuf};

use perfdata_core::feature::{Feature, FeatureId, FeatureSection, PerfString};
use perfdata_core::{PerfData, ReadOptions};
use perfdata_write::{Conversion, Sink, TreeSource};

/// A copy of `input` whose HOSTNAME says `host`: a recording of another machine.
pub fn on_host(input: &Path, host: &str, out: &Path) -> PathBuf {
    let mut tree = PerfData::read_with(input, ReadOptions::Contents).expect("reads");
    let name = Feature::Hostname(PerfString::new(host));
    tree.meta.features.insert(
        FeatureId::Hostname,
        FeatureSection::new(FeatureId::Hostname, name),
    );
    Conversion::new(TreeSource::new(&tree))
        .write(Sink::path(out).expect("output"))
        .expect("written");
    out.to_path_buf()
}
