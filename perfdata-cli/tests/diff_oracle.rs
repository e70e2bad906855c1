//! `perfdata diff` against perf 6.1's `perf diff`: two recordings of tests/diff/work.c
//! (the second run halves one function's work) and two fixtures of other programs,
//! compared as text, byte for byte, for every computation (`delta-abs`, perf's default,
//! `delta`, `ratio`, `wdiff:W1,W2`), both orders of the files and two sort orders; a
//! third recording (less work) with the first two, for perf's views of three files
//! (`-o`, `-b`, `-p`, `-F`, `-q`, the filters and `--percentage relative`); and the
//! differential flame graph's changes against perf diff's deltas.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available, run_perfdata};

use crate::workload;

/// `perf diff ARGS` as perf prints it (stdout), which must succeed.
fn perf_diff(args: &[&OsStr]) -> String {
    let out = Command::new("perf")
        .arg("diff")
        .args(args)
        .env("PERF_PAGER", "cat")
        .output()
        .expect("perf runs");
    assert!(out.status.success(), "perf diff {args:?}");
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// `perfdata diff ARGS`, which must succeed.
fn our_diff(args: &[&OsStr]) -> String {
    let mut all = vec![OsStr::new("diff")];
    all.extend_from_slice(args);
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(
        out.status.success(),
        "perfdata diff {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

/// Every computation and sort on `base` and `new`, both ways round: perf's text.
fn compare(base: &Path, new: &Path) -> usize {
    let mut rows = 0;
    for (a, b) in [(base, new), (new, base)] {
        for compute in ["delta-abs", "delta", "ratio", "wdiff:1,2", "wdiff:3,1"] {
            for sort in ["dso,sym", "comm,dso,sym"] {
                let args = [
                    OsStr::new("-c"),
                    OsStr::new(compute),
                    OsStr::new("--sort"),
                    OsStr::new(sort),
                    a.as_os_str(),
                    b.as_os_str(),
                ];
                let (perf, ours) = (perf_diff(&args), our_diff(&args));
                assert_eq!(ours, perf, "-c {compute} --sort {sort} {a:?} {b:?}");
                rows += perf.lines().filter(|l| !l.starts_with('#')).count();
            }
        }
    }
    rows
}

#[perfdata_oracle::needs(perf)]
#[test]
fn two_runs_of_one_program_diff_as_perf_diffs_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe: PathBuf = dir.path().join("work");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diff/work.c");
    workload::run(Command::new("gcc").arg("-O1").arg("-o").arg(&exe).arg(&src));
    let exe = exe.to_str().expect("utf-8 path");
    let args = ["-e", "task-clock", "-c", "100000"];
    let a = workload::record(dir.path(), "a.data", &args, &[exe, "5000000"]);
    let b = workload::record(dir.path(), "b.data", &args, &[exe, "5000000", "half"]);
    // The halved function is a row whose delta is negative, in both tools' text.
    let text = our_diff(&[a.as_os_str(), b.as_os_str()]);
    let b_row = text
        .lines()
        .find(|l| l.ends_with("[.] b"))
        .unwrap_or_else(|| panic!("no row of b:\n{text}"));
    assert!(b_row.contains("%    -"), "{b_row}");
    let rows = compare(&a, &b);
    eprintln!("{rows} rows compared");
    let c = workload::record(dir.path(), "c.data", &args, &[exe, "3000000"]);
    three_recordings_diff_as_perf_diffs_them(&a, &b, &c);
    differential_flame_graph_says_perf_diffs_deltas(&a, &b, dir.path());
}

/// perf diff's views of three recordings (and some of two): each column per file
/// (`Delta Abs/1`), the sort by `-o N`, `-b`, `-p`, `-F`, `-q`, and the filters, whose
/// one name leaves its column out; `--symbols` with an entry that reads as hex (`b`,
/// the function) is an address for perf, so selects nothing by that name.
fn three_recordings_diff_as_perf_diffs_them(a: &Path, b: &Path, c: &Path) {
    let views: &[&[&str]] = &[
        &[],
        &["-c", "delta"],
        &["-c", "ratio"],
        &["-c", "wdiff:1,2"],
        &["-o", "2"],
        &["-o", "0", "-c", "ratio"],
        &["-p", "-F"],
        &["-F", "-c", "wdiff:2,3"],
        &["-b"],
        &["-q", "-s", "comm,dso,sym"],
        // Keys perf prints and orders by their own rules: the pid's `%7d:%-*s`, a
        // symbol not last padded, ties by the symbol's name without its `[k] `.
        &["-s", "pid"],
        &["-s", "sym"],
        &["-s", "sym,dso"],
        &["-d", "work"],
        &["-d", "work", "--percentage", "relative"],
        // perf sums the filtered rows -b keeps into the Baseline column too.
        &["-b", "-d", "work"],
        &["-C", "work", "-S", "main,a,c"],
    ];
    let mut rows = 0;
    for view in views {
        let mut args: Vec<&OsStr> = view.iter().map(OsStr::new).collect();
        args.extend([a.as_os_str(), b.as_os_str(), c.as_os_str()]);
        let (perf, ours) = (perf_diff(&args), our_diff(&args));
        assert_eq!(ours, perf, "perf diff {view:?} of three recordings");
        rows += perf.lines().filter(|l| !l.starts_with('#')).count();
    }
    for view in [
        &["-S", "main"][..],
        &["-b", "-p", "-d", "work", "--percentage", "relative"],
    ] {
        let mut args: Vec<&OsStr> = view.iter().map(OsStr::new).collect();
        args.extend([a.as_os_str(), c.as_os_str()]);
        assert_eq!(our_diff(&args), perf_diff(&args), "perf diff {view:?}");
    }
    eprintln!("{rows} rows of three recordings compared");
    assert!(rows > 50, "too few rows to compare: {rows}");
}

/// `export --format flamegraph --diff A B`: each function's change of share, in the
/// SVG's titles (`b (405 samples, 28.66%; -15.78%)`), is perf diff's Delta Abs of its
/// row within 0.1 (the baseline's counts are scaled to whole samples).
fn differential_flame_graph_says_perf_diffs_deltas(a: &Path, b: &Path, dir: &Path) {
    let svg = dir.join("diff.svg");
    let args = [
        OsStr::new("export"),
        OsStr::new("--format"),
        OsStr::new("flamegraph"),
        OsStr::new("--diff"),
        a.as_os_str(),
        OsStr::new("-o"),
        svg.as_os_str(),
        b.as_os_str(),
    ];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&svg).expect("svg");
    let perf = perf_diff(&[a.as_os_str(), b.as_os_str()]);
    for f in ["a", "b", "c"] {
        let delta = |line: &str| -> Option<f64> {
            line.split_whitespace()
                .nth(1)?
                .trim_end_matches('%')
                .parse()
                .ok()
        };
        let theirs = perf
            .lines()
            .find(|l| l.ends_with(&format!("[.] {f}")))
            .and_then(delta)
            .unwrap_or_else(|| panic!("perf diff has no row of {f}:\n{perf}"));
        let title = format!("<title>{f} (");
        let ours: f64 = svg
            .split(title.as_str())
            .nth(1)
            .and_then(|t| t.split("; ").nth(1))
            .and_then(|t| t.split('%').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no title of {f} in the SVG"));
        assert!(
            (ours - theirs).abs() < 0.1,
            "{f}: ours {ours}%, perf diff {theirs}%"
        );
    }
    // The other formats have no differential form.
    let args = [
        OsStr::new("export"),
        OsStr::new("--format"),
        OsStr::new("folded"),
        OsStr::new("--diff"),
        a.as_os_str(),
        OsStr::new("-o"),
        OsStr::new("-"),
        b.as_os_str(),
    ];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(!out.status.success());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn recordings_of_different_programs_diff_as_perf_diffs_them() {
    assert!(perf_available());
    let f = fixtures_dir();
    let rows = compare(
        &f.join("file-cpu-clock.data"),
        &f.join("file-callgraph-fp.data"),
    );
    eprintln!("{rows} rows compared");
    // Events matched by attr type and config, as perf's evsel_match does:
    // `cpu-clock/period=100000/` of one is `cpu-clock` of the other; an event the other
    // lacks (page-faults, task-clock) is printed with its column empty.
    for files in [
        &["file-multi-event.data", "file-cpu-clock.data"][..],
        &[
            "file-cpu-clock.data",
            "file-multi-event.data",
            "file-tracepoint.data",
        ],
        // A baseline's event without samples (dummy:HG) is printed, without rows.
        &["file-system-wide.data", "file-cpu-clock.data"],
    ] {
        let paths: Vec<PathBuf> = files.iter().map(|n| f.join(n)).collect();
        let args: Vec<&OsStr> = paths.iter().map(|p| p.as_os_str()).collect();
        assert_eq!(our_diff(&args), perf_diff(&args), "perf diff {files:?}");
    }
    // perf pairs the entries a filter hides (an entry is hidden by its first sample's
    // thread, here sh's before its exec): their deltas are printed, the dummies they
    // would make are not; relative percentages are of the samples kept (the others')
    // and of the entries shown (the baseline's).
    for view in [
        &["-C", "perfdata-spin"][..],
        &["-b", "-C", "perfdata-spin"],
        &["-C", "perfdata-spin", "--percentage", "relative"],
        &["-b", "-C", "perfdata-spin", "--percentage", "relative"],
        // file-cpu-clock has no sh: its percents are of 0, `+inf%` and `-nan%`.
        &["-C", "sh", "--percentage", "relative"],
    ] {
        for files in [
            ["dir-threads.data", "file-cpu-clock.data"],
            ["file-cpu-clock.data", "dir-threads.data"],
        ] {
            let paths: Vec<PathBuf> = files.iter().map(|n| f.join(n)).collect();
            let mut args: Vec<&OsStr> = view.iter().map(OsStr::new).collect();
            args.extend(paths.iter().map(|p| p.as_os_str()));
            assert_eq!(our_diff(&args), perf_diff(&args), "perf diff {args:?}");
        }
    }
}
