//! Edits and filters that follow a thread's comm take the records in perf's time
//! order, as perf 6.1 does (issue #24, defect 11), run live: a recording of
//! `sh -c 'ls; ls; ls'` sampled often on this machine's CPUs has children whose
//! samples come, in the file, before their FORK or after their exec COMM on another
//! CPU. `perf script --comms sh` of the input must be `perf script` of `strip --keep
//! --comm sh`, sample for sample; the other samples must be what `strip --comm sh`
//! leaves; `dump --comm sh` must show perf's samples (in the file's order); from a pipe
//! stream too.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_core::record::RecordType;
use perfdata_core::PerfReader;
use perfdata_tests::{perf_available, run_perfdata};

use crate::common;
use crate::workload;
use common::strip::*;

/// How many samples a reading in the file's order names `comm`: COMM names a thread,
/// FORK gives the child its parent's name, each when the file has it.
fn file_order_count(path: &Path, comm: &[u8]) -> usize {
    let mut reader = PerfReader::open(path).expect("recording reads");
    let mut names: HashMap<u32, Vec<u8>> = HashMap::new();
    let mut n = 0;
    while let Some(item) = reader.next_record().expect("recording reads") {
        let (b, e) = (item.raw.bytes, item.meta.endian);
        let word = |o: usize| perfdata_core::u32_at(b, o, e).expect("field");
        match item.raw.record_type() {
            RecordType::Comm => {
                let name = &b[16..];
                let end = name.iter().position(|&c| c == 0).unwrap_or(name.len());
                names.insert(word(12), name[..end].to_vec());
            }
            RecordType::Fork => {
                if let Some(parent) = names.get(&word(20)).cloned() {
                    names.insert(word(16), parent);
                }
            }
            RecordType::Sample => {
                let tid = item.locate().tid.expect("tid") as u32;
                n += usize::from(names.get(&tid).is_some_and(|c| c == comm));
            }
            _ => {}
        }
    }
    n
}

/// (tid, time) of each sample line of `perf script` with `filter`.
fn tid_times(input: &Path, filter: &[&str]) -> Vec<String> {
    script_fields(input, "tid,time", filter)
}

/// (tid, time) of each SAMPLE `perfdata dump ARGS` shows.
fn dump_tid_times(input: &Path, args: &[&str]) -> Vec<String> {
    let mut all: Vec<&OsStr> = vec![OsStr::new("dump"), input.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.split(' ').nth(1) == Some("SAMPLE"))
        .map(|l| {
            let field = |k: &str| {
                l.split(' ')
                    .find_map(|kv| kv.strip_prefix(k))
                    .unwrap_or_else(|| panic!("no {k} in {l}"))
                    .parse::<u64>()
                    .expect("a number")
            };
            let t = field("time=");
            format!(
                "{} {}.{:09}:",
                field("tid.tid="),
                t / 1_000_000_000,
                t % 1_000_000_000
            )
        })
        .collect()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn comm_selectors_follow_perfs_time_order() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    // A recording in which the file's order names some samples otherwise than perf
    // does: most are (a child runs on the other CPU), some are not; try a few.
    let mut found = None;
    for attempt in 0..10 {
        let data = workload::record(
            d,
            &format!("sh{attempt}.data"),
            &["-c", "20000"],
            &["sh", "-c", "ls; ls; ls"],
        );
        let perf_sh = tid_times(&data, &["--comms", "sh"]).len();
        if file_order_count(&data, b"sh") != perf_sh {
            found = Some(data);
            break;
        }
    }
    let data = found.expect("ten recordings whose file order names every sample as perf does");
    let sh = tid_times(&data, &["--comms", "sh"]);
    let all = tid_times(&data, &[]);
    assert!(!sh.is_empty() && sh.len() < all.len());

    let pipe = to_pipe(&data, d);
    for (input, name) in [(&data, "file"), (&pipe, "pipe")] {
        let kept = d.join(format!("keep-{name}"));
        strip(input, &kept, &["--keep", "--comm", "sh"]);
        assert_eq!(tid_times(&kept, &[]), sh, "{name}: strip --keep --comm sh");
        let rest = d.join(format!("rest-{name}"));
        strip(input, &rest, &["--comm", "sh"]);
        assert_eq!(
            tid_times(&rest, &[]),
            minus(&all, &sh),
            "{name}: strip --comm sh"
        );
        // A glob selects the same.
        let glob = d.join(format!("glob-{name}"));
        strip(input, &glob, &["--keep", "--comm", "s?"]);
        assert_eq!(
            tid_times(&glob, &[]),
            sh,
            "{name}: strip --keep --comm 's?'"
        );
    }
    // dump shows the records in the file's order, perf script in time order.
    let mut sorted = sh.clone();
    sorted.sort();
    for input in [&data, &pipe] {
        let mut shown = dump_tid_times(input, &["--comm", "sh"]);
        shown.sort();
        assert!(shown == sorted, "dump --comm sh of {}", name_of(input));
    }
}
