//! `perfdata dump`'s selectors against perf 6.1's `perf script` filters, run live: the
//! SAMPLE lines of `dump --pid P`, `--tid T`, `--cpu C`, `--comm NAME` and `--time
//! 10%-50%` are as many as the samples `perf script` prints with `--pid`, `--tid`,
//! `--cpu`, `--comms` and `--time` (the values taken from each fixture's first sample;
//! commands followed in perf's time order, which on strip-multi.data names two samples
//! otherwise than the file's order),
//! `--event NAME` as many as perf script's samples of that event, and `--type T` gives
//! exactly the unfiltered dump's lines of type T.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, name, perf_available, run_perfdata};

/// perf script's lines (one per sample with `-F` of one field); None where perf
/// refuses (a field the samples lack).
fn try_perf_script(input: &Path, args: &[&str]) -> Option<Vec<String>> {
    let out = Command::new("perf")
        .args(["script", "-i"])
        .arg(input)
        .args(args)
        .output()
        .expect("perf script runs");
    out.status.success().then(|| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    })
}

fn perf_script(input: &Path, args: &[&str]) -> Vec<String> {
    try_perf_script(input, args)
        .unwrap_or_else(|| panic!("perf script {args:?} on {}", name(input)))
}

/// dump's lines.
fn dump(input: &Path, args: &[&str]) -> Vec<String> {
    let mut all: Vec<&OsStr> = vec![OsStr::new("dump"), input.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(
        out.status.success(),
        "dump {args:?} on {}: {}",
        name(input),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

fn samples(lines: &[String]) -> usize {
    lines
        .iter()
        .filter(|l| l.split(' ').nth(1) == Some("SAMPLE"))
        .count()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn dump_selectors_select_what_perf_script_does() {
    assert!(perf_available());
    let mut compared = 0;
    for fixture in [
        "file-multi-event.data",
        "file-system-wide.data",
        "strip-multi.data",
        "file-sample-identifier.data",
        "file-switch.data",
    ] {
        let input = fixtures_dir().join(fixture);
        let first = perf_script(&input, &["-F", "comm,pid,tid"]);
        // "comm pid/tid"
        let fields: Vec<&str> = first
            .first()
            .expect("a sample")
            .split_whitespace()
            .collect();
        let (comm, ids) = (fields[0], fields[1]);
        let (pid, tid) = ids.split_once('/').expect("pid/tid");
        // "[001]", where the samples have a CPU.
        let cpu = try_perf_script(&input, &["-F", "cpu"])
            .and_then(|l| l.first().cloned())
            .map(|c| {
                c.trim()
                    .trim_matches(['[', ']'])
                    .trim_start_matches('0')
                    .to_string()
            })
            .map(|c| if c.is_empty() { "0".to_string() } else { c });
        let mut selectors = vec![
            (vec!["--pid", pid], vec!["--pid", pid]),
            (vec!["--tid", tid], vec!["--tid", tid]),
            (vec!["--time", "10%-50%"], vec!["--time", "10%-50%"]),
        ];
        // Commands are followed in perf's time order: in strip-multi a child's exec
        // COMM and two samples on CPU 0 come before its FORK on CPU 1 in the file, and
        // perf names those two samples "sh", as dump must.
        selectors.push((vec!["--comm", comm], vec!["--comms", comm]));
        if fixture == "strip-multi.data" {
            assert_eq!(comm, "sh", "strip-multi's first sample is the shell's");
        }
        if let Some(cpu) = &cpu {
            selectors.push((vec!["--cpu", cpu], vec!["--cpu", cpu]));
        }
        for (ours, theirs) in selectors {
            let mut perf_args = theirs.clone();
            perf_args.extend(["-F", "pid"]);
            let want = perf_script(&input, &perf_args).len();
            let got = samples(&dump(&input, &ours));
            assert_eq!(got, want, "{fixture} {ours:?}");
            compared += 1;
        }
        // Events: perf script -F event names each sample's event.
        let events = perf_script(&input, &["-F", "event"]);
        let mut names: Vec<String> = events
            .iter()
            .map(|e| e.trim().trim_end_matches(':').to_string())
            .collect();
        names.sort();
        names.dedup();
        for event in &names {
            let want = events
                .iter()
                .filter(|e| e.trim().trim_end_matches(':') == event)
                .count();
            let got = samples(&dump(&input, &["--event", event]));
            assert_eq!(got, want, "{fixture} --event {event}");
            compared += 1;
        }
        // Types: exactly the unfiltered dump's lines of those types.
        let all = dump(&input, &[]);
        for types in ["SAMPLE", "COMM,MMAP2", "FINISHED_ROUND"] {
            let want: Vec<&String> = all
                .iter()
                .filter(|l| {
                    l.split(' ')
                        .nth(1)
                        .is_some_and(|t| types.split(',').any(|w| w == t))
                })
                .collect();
            let got = dump(&input, &["--type", types]);
            assert_eq!(
                got.iter().collect::<Vec<_>>(),
                want,
                "{fixture} --type {types}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 40, "{compared} comparisons");
}

/// A record about a selected process (its COMM, MMAP2, EXIT) is shown with its samples;
/// one of another process, or without a pid (FINISHED_ROUND), is not.
#[test]
fn pid_selects_the_process_records_too() {
    let input = fixtures_dir().join("file-multi-event.data");
    let all = dump(&input, &[]);
    // A sample says `tid.pid=`, COMM, MMAP2 and EXIT `pid=`.
    let pid_of = |l: &String| {
        l.split(' ')
            .find_map(|kv| kv.strip_prefix("pid=").or(kv.strip_prefix("tid.pid=")))
            .map(str::to_string)
    };
    let sample = all
        .iter()
        .find(|l| l.split(' ').nth(1) == Some("SAMPLE"))
        .expect("a sample");
    let pid = pid_of(sample).expect("a sample's pid");
    let shown = dump(&input, &["--pid", &pid]);
    assert!(shown
        .iter()
        .all(|l| pid_of(l).as_deref() == Some(pid.as_str())));
    let types: Vec<&str> = shown.iter().filter_map(|l| l.split(' ').nth(1)).collect();
    for t in ["SAMPLE", "COMM", "MMAP2", "EXIT"] {
        assert!(types.contains(&t), "{t} missing: {types:?}");
    }
    assert!(!types.contains(&"FINISHED_ROUND"));
    let err = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[
            OsStr::new("dump"),
            input.as_os_str(),
            OsStr::new("--event"),
            OsStr::new("nope"),
        ],
        None,
    );
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("no event \"nope\""));
}
