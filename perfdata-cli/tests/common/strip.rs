//! Helpers of the strip oracle tests: perf script lines, their fields, side-band, and
//! running `perfdata strip`.
// Each test crate that includes `common` uses a part of these.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{perf_stats, run_perfdata};

use super::perf_run;

pub const FIELDS: &str = "comm,pid,tid,cpu,time,ip,sym,period,event";
/// For system-wide recordings: perf 6.1 sometimes fails to name the symbol of the first
/// sample it meets in a DSO that other processes' (removed) samples had loaded first,
/// even when every side-band record is kept (`--keep-sideband`); the DSO is what the
/// side-band decides, so these compare it instead.
pub const FIELDS_DSO: &str = "comm,pid,tid,cpu,time,ip,dso,period,event";
/// A directory recording has no CPU field in its samples.
pub const FIELDS_NO_CPU: &str = "comm,pid,tid,time,ip,sym,period,event";

/// Run perf with `args` on `input`; perf must succeed and say nothing on stderr.
pub fn perf(args: &[&str], input: &Path) -> String {
    let run = perf_run(args, input);
    assert!(
        run.clean(),
        "perf {args:?} -i {} failed: {}",
        input.display(),
        run.stderr
    );
    run.stdout
}

/// Sample lines of `perf script` with the oracle fields (nanosecond times), after
/// `filter` (perf's own selection options).
pub fn script(input: &Path, filter: &[&str]) -> Vec<String> {
    script_fields(input, FIELDS, filter)
}

pub fn script_fields(input: &Path, fields: &str, filter: &[&str]) -> Vec<String> {
    let mut args = vec!["script", "--ns", "-F", fields];
    args.extend_from_slice(filter);
    // perf pads event names to the longest one the file has: compare words.
    perf(&args, input)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// One sample line's fields.
pub struct Line {
    pub comm: String,
    pub pid: i64,
    pub cpu: Option<u32>,
    pub time: String,
    pub event: String,
}

/// Parse `COMM PID/TID [CPU] TIME: PERIOD EVENT: IP SYM` (a comm may hold spaces).
pub fn parse(line: &str) -> Line {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let at = tokens
        .iter()
        .position(|t| {
            t.split_once('/')
                .is_some_and(|(a, b)| a.parse::<i64>().is_ok() && b.parse::<i64>().is_ok())
        })
        .unwrap_or_else(|| panic!("no pid/tid in {line:?}"));
    let (pid, _tid) = tokens[at].split_once('/').expect("pid/tid");
    let mut next = at + 1;
    let cpu = tokens[next].strip_prefix('[').map(|c| {
        next += 1;
        c.trim_end_matches(']')
            .parse()
            .unwrap_or_else(|_| panic!("cpu in {line:?}"))
    });
    Line {
        comm: tokens[..at].join(" "),
        pid: pid.parse().expect("pid"),
        cpu,
        time: tokens[next].trim_end_matches(':').to_string(),
        event: tokens[next + 2].trim_end_matches(':').to_string(),
    }
}

/// `all` without one occurrence of each line of `removed`, order kept.
pub fn minus(all: &[String], removed: &[String]) -> Vec<String> {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for r in removed {
        *left.entry(r.as_str()).or_default() += 1;
    }
    let out: Vec<String> = all
        .iter()
        .filter(|l| match left.get_mut(l.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => true,
        })
        .cloned()
        .collect();
    assert_eq!(
        out.len() + removed.len(),
        all.len(),
        "some selected lines are not in the input"
    );
    out
}

/// Side-band records as perf shows them: (type, pid) of each COMM, FORK, EXIT, MMAP,
/// MMAP2 line.
pub fn sideband(input: &Path) -> Vec<(String, i64)> {
    let text = perf(
        &["script", "--show-task-events", "--show-mmap-events", "--ns"],
        input,
    );
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("PERF_RECORD_") else {
            continue;
        };
        let kind: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        let after = &rest[kind.len()..];
        let pid = match kind.as_str() {
            // COMM[ exec]: NAME:PID/TID (the name may hold ':' and '/').
            "COMM" => after.rsplit(':').next().and_then(|s| s.split('/').next()),
            // FORK(PID:TID):(PPID:PTID)
            "FORK" | "EXIT" => after.strip_prefix('(').and_then(|s| s.split(':').next()),
            // MMAP PID/TID: [...]
            "MMAP" | "MMAP2" => after
                .split_whitespace()
                .next()
                .and_then(|s| s.split('/').next()),
            _ => None,
        };
        if let Some(pid) = pid.and_then(|p| p.trim().parse::<i64>().ok()) {
            out.push((kind, pid));
        }
    }
    assert!(!out.is_empty(), "no side-band in {}", input.display());
    out
}

pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Run `perfdata strip IN -o OUT ARGS`; it must succeed and print its summary.
pub fn strip(input: &Path, out: &Path, args: &[&str]) -> String {
    let mut all: Vec<&OsStr> = vec![OsStr::new("strip"), input.as_os_str()];
    all.extend([OsStr::new("-o"), out.as_os_str()]);
    all.extend(args.iter().map(OsStr::new));
    let res = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    let stderr = String::from_utf8_lossy(&res.stderr).into_owned();
    assert!(res.status.success(), "strip {args:?} failed: {stderr}");
    assert!(stderr.contains("SAMPLE"), "no summary: {stderr}");
    assert!(std::fs::metadata(out).expect("output").len() > 0);
    stderr
}

/// The pids of the samples of `lines`, the busiest first.
pub fn pids_by_samples(lines: &[String]) -> Vec<i64> {
    let mut n: BTreeMap<i64, usize> = BTreeMap::new();
    for l in lines {
        *n.entry(parse(l).pid).or_default() += 1;
    }
    let mut v: Vec<(usize, i64)> = n.into_iter().map(|(p, c)| (c, p)).collect();
    v.sort_by(|a, b| b.cmp(a));
    v.into_iter().map(|(_, p)| p).collect()
}

/// Strip `args` from `input` and compare with `expected` (perf's lines); returns the
/// output path.
pub fn check(input: &Path, dir: &Path, name: &str, args: &[&str], expected: &[String]) -> PathBuf {
    check_fields(input, FIELDS, dir, name, args, expected)
}

pub fn check_fields(
    input: &Path,
    fields: &str,
    dir: &Path,
    name: &str,
    args: &[&str],
    expected: &[String],
) -> PathBuf {
    let out = dir.join(name);
    strip(input, &out, args);
    let got = script_fields(&out, fields, &[]);
    assert!(
        !got.is_empty() && !expected.is_empty(),
        "{name}: empty output"
    );
    assert_eq!(got.len(), expected.len(), "{name}: {args:?} sample count");
    if got != expected {
        // A live recording that fails once in many runs (under load) is kept to be read.
        let kept = std::env::temp_dir().join(format!("perfdata-strip-failed-{name}"));
        let _ = std::fs::create_dir_all(&kept);
        let _ = std::fs::copy(input, kept.join("input.data"));
        let _ = std::fs::copy(&out, kept.join("output.data"));
        let first = got.iter().zip(expected).find(|(g, e)| g != e);
        panic!(
            "{name}: {args:?} lines differ, first: ours {:?}, perf {:?} (input and output kept in {})",
            first.map(|f| f.0),
            first.map(|f| f.1),
            kept.display()
        );
    }
    out
}

/// Side-band kinds of a thread; MMAP and MMAP2 are its process's.
pub const THREAD_KINDS: &[&str] = &["COMM", "FORK", "EXIT"];
pub const ALL_KINDS: &[&str] = &["COMM", "FORK", "EXIT", "MMAP", "MMAP2"];

/// No side-band (of `kinds`) of `gone` pids in `out`; with `exact`, perf's record counts
/// of the output are the input's minus the side-band lines of those pids.
pub fn check_sideband(input: &Path, out: &Path, gone: &[i64], kinds: &[&str], exact: bool) {
    let left: Vec<_> = sideband(out)
        .into_iter()
        .filter(|(k, p)| gone.contains(p) && kinds.contains(&k.as_str()))
        .collect();
    assert!(left.is_empty(), "side-band of stripped pids left: {left:?}");
    let (si, so) = (perf_stats(input), perf_stats(out));
    assert!(si.clean && so.clean, "perf report --stats failed");
    if !exact {
        return;
    }
    let removed = sideband(input);
    for &kind in kinds {
        let n = removed
            .iter()
            .filter(|(k, p)| k == kind && gone.contains(p))
            .count() as u64;
        let before = si.records.get(kind).copied().unwrap_or(0);
        let after = so.records.get(kind).copied().unwrap_or(0);
        assert_eq!(after, before - n, "{kind} count after stripping {gone:?}");
    }
}

/// `perfdata ARGS`, which must succeed: its stdout.
pub fn perfdata_stdout(args: &[&str]) -> String {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `file` converted to a pipe stream in `dir`.
pub fn to_pipe(file: &Path, dir: &Path) -> PathBuf {
    let pipe = dir.join(format!("{}.pipe", name_of(file)));
    let (f, p) = (file.to_str().unwrap(), pipe.to_str().unwrap());
    perfdata_stdout(&["convert", f, "--to-pipe", "-o", p]);
    pipe
}

pub fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// `perfdata strip IN -o OUT ARGS` must fail saying `message`, leaving nothing in `dir`.
pub fn strip_fails(input: &Path, dir: &Path, args: &[&str], message: &str) {
    let out = dir.join("out.data");
    let mut all: Vec<&OsStr> = vec![OsStr::new("strip"), input.as_os_str()];
    all.extend([OsStr::new("-o"), out.as_os_str()]);
    all.extend(args.iter().map(OsStr::new));
    let res = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(!res.status.success(), "{args:?} succeeded");
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert!(!out.exists(), "{args:?} left an output");
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        0,
        "temp files left"
    );
}
