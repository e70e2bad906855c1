//! perf 6.1 as the oracle: running it, checking that it really read what it was given,
//! and the exact lists of inputs it cannot read (anything else it fails on is a failure).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use crate::{all_inputs, name};

/// Inputs `perf report --stats` of perf 6.1 does not read cleanly, each with the reason.
/// The oracle tests compare every other input; `perf_oracle` checks that this list is
/// exact (an input listed here that perf reads cleanly fails it too).
pub const PERF_REFUSES: &[(&str, &str)] = &[
    (
        "KDAB-cpp-inlining-cpp-inlining.perf.data",
        "attrs larger than perf 6.1's (incompatible file format)",
    ),
    (
        "KDAB-perf.data.PerfFormatLost",
        "attrs larger than perf 6.1's (incompatible file format)",
    ),
    (
        "KDAB-probe.data.stream",
        "pipe with tracing data: perf 6.1 stops after HEADER_TRACING_DATA",
    ),
    (
        "google-perf.data.piped.corrupted.zero_size_sample-3.2",
        "corrupt on purpose: a SAMPLE of size 0",
    ),
    (
        "google-perf.data.piped.intel_pt-4.14",
        "AUX area data in pipe mode: perf 6.1 fails (bad event header size)",
    ),
    (
        "jbeich-etm-perf_etm.data",
        "simpleperf's AUXTRACE index without a count: perf fails to process it",
    ),
    (
        "jbeich-lbr-perf_lbr.data",
        "simpleperf feature bits perf rejects (incompatible file format)",
    ),
    (
        "jbeich-perf_with_tracepoint_event.data",
        "simpleperf feature bits perf rejects (incompatible file format)",
    ),
    (
        "mstange-fibo.compressed2.pipe.data",
        "COMPRESSED2 records (type 83), which perf 6.1 does not know",
    ),
    (
        "mstange-sleep.compressed.data",
        "attrs larger than perf 6.1's (incompatible file format)",
    ),
    (
        "mstange-sleep.compressed.pipe.data",
        "compressed records in pipe mode: perf 6.1 cannot size its buffer",
    ),
    (
        "mstange-sleep.compressed2.data",
        "attrs larger than perf 6.1's (incompatible file format)",
    ),
    (
        "mstange-sleep.compressed2.pipe.data",
        "COMPRESSED2 records (type 83), which perf 6.1 does not know",
    ),
    (
        "mstange-sleep.data",
        "attrs larger than perf 6.1's (incompatible file format)",
    ),
    (
        "pipe-compressed.data",
        "compressed records in pipe mode: perf 6.1 cannot size its buffer",
    ),
    (
        "pipe-tracepoint.data",
        "pipe with tracing data: perf 6.1 stops after HEADER_TRACING_DATA",
    ),
];

/// Inputs for which `perf report --header-only -I` prints nothing or complains on stderr:
/// `info_oracle` compares every other input and checks this list is exact.
pub const PERF_NO_HEADER: &[(&str, &str)] = &[
    (
        "KDAB-cpp-inlining-cpp-inlining.perf.data",
        "incompatible file format",
    ),
    ("KDAB-perf.data.PerfFormatLost", "incompatible file format"),
    (
        "google-perf.data.piped.corrupted.zero_size_sample-3.2",
        "bad event header size",
    ),
    (
        "google-perf.data.piped.intel_pt-4.14",
        "warns that Intel PT in pipe mode is unreliable",
    ),
    (
        "jbeich-etm-perf_etm.data",
        "failed to process the auxtrace index",
    ),
    ("jbeich-lbr-perf_lbr.data", "incompatible file format"),
    (
        "jbeich-perf_with_tracepoint_event.data",
        "incompatible file format",
    ),
    ("mstange-sleep.compressed.data", "incompatible file format"),
    ("mstange-sleep.compressed2.data", "incompatible file format"),
    ("mstange-sleep.data", "incompatible file format"),
];

/// The reason `list` gives for `input`, if it lists it.
pub fn listed<'a>(list: &[(&str, &'a str)], input: &str) -> Option<&'a str> {
    list.iter().find(|(n, _)| *n == input).map(|(_, why)| *why)
}

/// Every corpus file and fixture perf 6.1 reads cleanly (not in [`PERF_REFUSES`]).
pub fn perf_inputs() -> Vec<PathBuf> {
    all_inputs()
        .into_iter()
        .filter(|p| listed(PERF_REFUSES, &name(p)).is_none())
        .collect()
}

/// Whether `perf` can be run. Without it the oracle tests are reported as ignored (see
/// `oracle_cfg.rs` and `perfdata_oracle::needs`); in CI (`CI` set) a missing perf is a
/// failure, not a skip.
pub fn perf_available() -> bool {
    let ok = Command::new("perf")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var_os("CI").is_some() {
        panic!("`perf` is not installed: CI needs it for the perf oracle tests");
    }
    ok
}

/// One run of perf: what it printed and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfRun {
    /// How perf exited.
    pub status: Option<i32>,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error, with the input's path replaced by `INPUT`, so that runs on
    /// different files can be compared.
    pub stderr: String,
}

impl PerfRun {
    /// perf exited 0 and printed nothing on stderr but `benign` lines.
    pub fn clean(&self) -> bool {
        self.status == Some(0) && self.stderr.lines().all(benign)
    }
}

/// Lines perf prints on stderr that say nothing about the file: it has no kernel symbols
/// here, and it warns about the build-id cache.
fn benign(line: &str) -> bool {
    line.starts_with("No kallsyms or vmlinux with build-id") || line.trim().is_empty()
}

/// Run `perf ARGS -i input` with no pager and times in UTC.
pub fn perf_run(args: &[&str], input: &Path) -> PerfRun {
    let out = crate::perf_output(args, input);
    let status: ExitStatus = out.status;
    PerfRun {
        status: status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).replace(&*input.to_string_lossy(), "INPUT"),
    }
}

/// `-F` arguments asking every event type for `fields`: with a type prefix perf leaves
/// out a field an event does not sample instead of refusing the whole run ("Cannot print
/// 'cpu' field"), so one field list serves every input. `trace` is only valid for
/// tracepoints and is added there.
pub fn script_fields(fields: &str) -> Vec<String> {
    ["hw", "sw", "raw", "break", "synth", "trace"]
        .iter()
        .flat_map(|t| {
            let extra = if *t == "trace" { ",trace" } else { "" };
            ["-F".to_string(), format!("{t}:{fields}{extra}")]
        })
        .collect()
}
