//! `perfdata flamegraph`: `export --format flamegraph` with perf's habits. Without
//! arguments it reads `./perf.data` and writes `./flamegraph.svg`, the same bytes as the
//! export; `-e EVENT` draws one event's samples (a graph whose root is that event's
//! sample count, as perf counts them); an unknown event is an error naming the events.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use perfdata_tests::{fixtures_dir, perf_available, perf_stats};

use crate::exports;

/// A fixture with three events: cpu-clock and task-clock (318 samples each) and
/// page-faults (12), as `perf report --stats` counts them.
const INPUT: &str = "file-multi-event.data";
const EVENTS: [(&str, u64); 3] = [
    ("cpu-clock/period=100000/", 318),
    ("task-clock/period=100000/", 318),
    ("page-faults/period=4/", 12),
];

fn perfdata(dir: &Path, args: &[&str]) -> Output {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"));
    cmd.current_dir(dir).args(&args);
    cmd.output().expect("perfdata runs")
}

fn ok(out: Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[perfdata_oracle::needs(perf)]
#[test]
fn flamegraph_draws_what_export_draws_and_one_event_alone() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let input = fixtures_dir().join(INPUT);
    std::fs::copy(&input, dir.path().join("perf.data")).expect("copied");
    // The counts below are perf's.
    let stats = perf_stats(&input);
    for (event, n) in EVENTS {
        let count = stats.samples.iter().find(|s| s.0 == event).map(|s| s.1);
        assert_eq!(count, Some(n), "perf's count of {event}");
    }

    ok(perfdata(dir.path(), &["flamegraph", "-q"]), "flamegraph");
    let drawn = std::fs::read(dir.path().join("flamegraph.svg")).expect("flamegraph.svg");
    let args = [
        "export",
        "perf.data",
        "--format",
        "flamegraph",
        "-o",
        "x.svg",
    ];
    ok(perfdata(dir.path(), &args), "export");
    let exported = std::fs::read(dir.path().join("x.svg")).expect("x.svg");
    assert_eq!(drawn, exported, "flamegraph and export --format flamegraph");
    let (folded, total) = exports::decode::flamegraph(&String::from_utf8_lossy(&drawn));
    assert_eq!(total, EVENTS.iter().map(|e| e.1).sum::<u64>());
    for (event, n) in EVENTS {
        // Each event is a root of its own.
        let under: u64 = folded
            .iter()
            .filter(|(stack, _)| stack.split(';').next() == Some(event))
            .map(|(_, n)| n)
            .sum();
        assert_eq!(under, n, "{event} in the merged graph");
    }

    for (i, (event, n)) in EVENTS.iter().enumerate() {
        let out = format!("{i}.svg");
        ok(
            perfdata(dir.path(), &["flamegraph", "-q", "-e", event, "-o", &out]),
            event,
        );
        let svg = std::fs::read_to_string(dir.path().join(&out)).expect("svg");
        let (folded, total) = exports::decode::flamegraph(&svg);
        assert_eq!(total, *n, "{event} alone");
        assert!(
            folded
                .keys()
                .all(|s| !EVENTS.iter().any(|e| s.starts_with(e.0))),
            "one event: no event roots"
        );
    }

    let out = perfdata(dir.path(), &["flamegraph", "-e", "cycles", "-o", "no.svg"]);
    assert!(!out.status.success(), "an unknown event is an error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no event \"cycles\"") && stderr.contains(EVENTS[2].0),
        "{stderr}"
    );
    assert!(!dir.path().join("no.svg").exists(), "nothing written");
}
