//! Inputs the merge oracle makes from its recordings, and how it runs the merge and
//! reads perf script's lines.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_core::feature::{Feature, FeatureId, FeatureSection, PerfString};
use perfdata_core::{PerfData, ReadOptions};
use perfdata_tests::run_perfdata;
use perfdata_write::{Conversion, Sink, TreeSource};

use super::common::strip::perf;

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

/// Run `perfdata ARGS`; its stderr, exit status checked.
pub fn perfdata(args: &[&OsStr]) -> String {
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None);
    assert!(
        out.status.success(),
        "perfdata {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `perfdata merge INPUTS... -o OUT EXTRA...`; its stderr.
pub fn merge(inputs: &[&Path], out: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec![OsStr::new("merge")];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend([OsStr::new("-o"), out.as_os_str()]);
    args.extend(extra.iter().map(OsStr::new));
    perfdata(&args)
}

/// One line of `perf script -F comm,pid,tid,time,event`: (comm, pid, tid, time, event).
pub type Line = (String, i64, i64, String, String);

pub fn script(input: &Path) -> Vec<Line> {
    perf(
        &["script", "--ns", "-G", "-F", "comm,pid,tid,time,event"],
        input,
    )
    .lines()
    .map(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(w.len(), 4, "a comm without spaces: {l}");
        let (pid, tid) = w[1].split_once('/').expect("pid/tid");
        (
            w[0].to_string(),
            pid.parse().expect("pid"),
            tid.parse().expect("tid"),
            w[2].to_string(),
            w[3].to_string(),
        )
    })
    .collect()
}

/// The time of a script line, in ns.
pub fn ns(line: &Line) -> u64 {
    let (s, frac) = line.3.trim_end_matches(':').split_once('.').expect("s.ns");
    s.parse::<u64>().unwrap() * 1_000_000_000 + frac.parse::<u64>().unwrap()
}

/// The inputs' script lines, each input's pids moved by its offset, merged in time
/// order (a stable sort: equal times keep the inputs' order).
pub fn merged_lines(inputs: &[(&Path, i64)]) -> Vec<Line> {
    let mut all: Vec<Line> = Vec::new();
    for (input, offset) in inputs {
        let moved = |v: i64| if v <= 0 { v } else { v + offset };
        all.extend(
            script(input)
                .into_iter()
                .map(|(c, p, t, time, e)| (c, moved(p), moved(t), time, e)),
        );
    }
    all.sort_by_key(ns);
    all
}
