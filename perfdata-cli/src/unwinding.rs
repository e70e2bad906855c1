//! The unwinding of `--call-graph dwarf` samples, as `report` and the exports ask for
//! it (the work is in perfdata_report::unwind), and what is said of it.

use std::path::PathBuf;

use perfdata_report::replay::ReplayOptions;
use perfdata_report::unwind::{UnwindOptions, UnwindStats};

#[derive(clap::Args)]
pub struct UnwindArgs {
    /// Keep the recorded callchains of `--call-graph dwarf` samples (their kernel part
    /// only) instead of unwinding their user stack copies (perf has no such option:
    /// it always unwinds them).
    #[arg(long)]
    no_unwind: bool,
}

impl UnwindArgs {
    /// The replay's options: unwinding on unless `--no-unwind`, binaries looked for
    /// under `symfs` as symbols are.
    pub fn options(&self, symfs: &Option<PathBuf>) -> ReplayOptions {
        ReplayOptions {
            unwind: (!self.no_unwind).then(|| UnwindOptions {
                symfs: symfs.clone(),
                buildid_dir: None,
            }),
        }
    }
}

/// Say what became of the stack copies: with `-v` always, else a warning when frames
/// were cut, naming each missing binary once with the samples it cut.
pub fn tell(stats: &UnwindStats) {
    if !stats.any() {
        return;
    }
    if stats.cut == 0 {
        crate::verbose::say(1, stats.summary());
        return;
    }
    crate::warn(stats.summary());
    for line in stats.missing_lines() {
        crate::warn(line);
    }
}
