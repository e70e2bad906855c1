//! `perfdata info` against `perf report --header-only -I`, run live: for every corpus file
//! and fixture perf reads, the text must be the same line for line, framing included.
//!
//! perf runs with `TZ=UTC` (perfdata formats the "captured on" mtime and the CLOCK_DATA
//! reference time in UTC) and `PERF_PAGER=cat`. No line is excluded: everything perf
//! prints there comes from the file, its mtime included.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use perfdata_tests::{
    all_inputs, fixtures_dir, listed, name, perf_available, perf_run, run_perfdata, PERF_NO_HEADER,
};

fn perfdata(args: &[&str], path: &Path) -> Output {
    let mut args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    args.push(path.as_os_str());
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None)
}

/// The differing lines, numbered, perf's first.
fn line_diff(perf: &str, ours: &str) -> String {
    let (p, o): (Vec<&str>, Vec<&str>) = (perf.lines().collect(), ours.lines().collect());
    let mut out = Vec::new();
    for i in 0..p.len().max(o.len()) {
        let (a, b) = (p.get(i), o.get(i));
        if a != b {
            out.push(format!(
                "  line {}:\n    perf:     {}\n    perfdata: {}",
                i + 1,
                a.unwrap_or(&"<none>"),
                b.unwrap_or(&"<none>")
            ));
        }
        if out.len() == 12 {
            out.push("  ...".into());
            break;
        }
    }
    out.join("\n")
}

#[perfdata_oracle::needs(perf)]
#[test]
fn info_matches_perf_report_header_only() {
    assert!(perf_available());
    let mut compared = Vec::new();
    let mut failures = Vec::new();
    for path in all_inputs() {
        let n = name(&path);
        let perf = perf_run(&["report", "--header-only", "-I"], &path);
        let perf_clean = perf.clean() && !perf.stdout.is_empty();
        match (perf_clean, listed(PERF_NO_HEADER, &n)) {
            (true, Some(why)) => {
                failures.push(format!(
                    "{n}: perf prints its header cleanly now, but PERF_NO_HEADER says: {why}"
                ));
                continue;
            }
            (false, None) => {
                failures.push(format!(
                    "{n}: perf report --header-only failed ({:?}), and it is not in PERF_NO_HEADER: {}",
                    perf.status, perf.stderr
                ));
                continue;
            }
            _ => {}
        }
        // Where perf printed nothing there is nothing to compare.
        if perf.stdout.is_empty() {
            continue;
        }
        let ours = perfdata(&["info"], &path);
        // Where perf read the file cleanly, perfdata must too. Where perf complained
        // (a corrupt record after the header, an AUXTRACE index it cannot use) the header
        // text must still agree, whatever the exit status.
        if perf_clean && !ours.status.success() {
            failures.push(format!(
                "{n}: perfdata info failed: {}",
                String::from_utf8_lossy(&ours.stderr)
            ));
            continue;
        }
        let ours = String::from_utf8_lossy(&ours.stdout);
        if perf.stdout != ours {
            failures.push(format!(
                "{n}: output differs\n{}",
                line_diff(&perf.stdout, &ours)
            ));
        }
        compared.push(n);
    }
    println!("compared with perf ({}): {compared:?}", compared.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(!compared.is_empty());
}

/// The documented top-level fields, for every kind of container.
#[test]
fn json_has_the_documented_fields() {
    let fields = [
        "container",
        "endian",
        "captured_on",
        "header",
        "events",
        "features",
        "missing_features",
        "warnings",
    ];
    for (fixture, container) in [
        ("file-group.data", "file"),
        ("pipe-cpu-clock.data", "pipe"),
        ("dir-threads.data", "directory"),
    ] {
        let out = perfdata(&["info", "--json"], &fixtures_dir().join(fixture));
        assert!(out.status.success(), "{fixture}: {out:?}");
        let v: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("info --json is JSON");
        let obj = v.as_object().expect("an object");
        for f in fields {
            assert!(
                obj.contains_key(f),
                "{fixture}: no `{f}` in {:?}",
                obj.keys()
            );
        }
        assert_eq!(v["container"], container, "{fixture}");
        assert_eq!(v["endian"], "little");
        assert_eq!(v["header"]["version"], 1);
        assert_eq!(v["features"]["hostname"], "vm", "{fixture}");
        assert_eq!(v["features"]["nrcpus"]["nr_cpus_online"], 2, "{fixture}");
        let events = v["events"].as_array().expect("events is an array");
        assert!(!events.is_empty(), "{fixture}: no events");
        assert!(events[0]["name"].is_string() && events[0]["ids"].is_array());
        assert_eq!(events[0]["attr"]["size"], 128);
        let missing = v["missing_features"]
            .as_array()
            .expect("missing is an array");
        assert!(
            missing.contains(&"BRANCH_STACK".into()),
            "{fixture}: {missing:?}"
        );
        assert!(v["captured_on"].as_str().is_some_and(|s| s.ends_with('Z')));
        if container == "pipe" {
            assert!(v["header"]["data"].is_null() && v["header"]["size"] == 16);
        } else {
            assert_eq!(v["header"]["attr_size"], 144, "{fixture}");
            assert!(v["header"]["feat_offset"].as_u64().unwrap() > 0);
        }
    }
    let group = perfdata(&["info", "--json"], &fixtures_dir().join("file-group.data"));
    let v: serde_json::Value = serde_json::from_slice(&group.stdout).unwrap();
    assert_eq!(v["features"]["group_desc"][0]["nr_members"], 2);
    assert_eq!(v["events"][1]["name"], "task-clock");
}

/// `perfdata info -` reads a pipe-mode stream from stdin: redirected from the file it is
/// exactly `perfdata info FILE` (and perf's `-i -`); through a real pipe, the same but for
/// the mtime, which is then the pipe's.
#[perfdata_oracle::needs(perf)]
#[test]
fn info_reads_a_pipe_stream_from_stdin() {
    assert!(perf_available());
    let fixture = fixtures_dir().join("pipe-cpu-clock.data");
    let by_path = perfdata(&["info"], &fixture);
    assert!(by_path.status.success());

    let redirected = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["info", "-"])
        .stdin(std::fs::File::open(&fixture).unwrap())
        .output()
        .unwrap();
    assert!(redirected.status.success(), "{redirected:?}");
    assert_eq!(
        String::from_utf8_lossy(&redirected.stdout),
        String::from_utf8_lossy(&by_path.stdout)
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["info", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let bytes = std::fs::read(&fixture).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(&bytes).unwrap();
    });
    let piped = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(piped.status.success());
    let drop_mtime = |s: &[u8]| -> Vec<String> {
        String::from_utf8_lossy(s)
            .lines()
            .filter(|l| !l.starts_with("# captured on"))
            .map(String::from)
            .collect()
    };
    let lines = drop_mtime(&piped.stdout);
    assert_eq!(lines, drop_mtime(&by_path.stdout));
    assert!(lines
        .iter()
        .any(|l| l.starts_with("# event : name = cpu-clock")));

    let perf = Command::new("perf")
        .args(["report", "--header-only", "-I", "-i", "-"])
        .stdin(std::fs::File::open(&fixture).unwrap())
        .env("TZ", "UTC")
        .env("PERF_PAGER", "cat")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&perf.stdout),
        String::from_utf8_lossy(&redirected.stdout),
        "perf report -i - and perfdata info - disagree"
    );
}
