//! perfdata's exit statuses where perf 6.1 refuses the arguments, against perf live.
//!
//! `perfdata script` refuses what `perf script` refuses with perf's exit status: 129 where perf's option parser refuses a `-F` list
//! (`parse_output_fields`), 255 where `cmd_script` returns -1 before the listing (a field
//! a file's events do not sample, `-C` on a file without CPUs), 234 where it returns
//! -EINVAL (a `--time` that does not parse or cannot be placed; a field a pipe's events
//! or a trace decoder's lack, refused while the records are processed). Where perfdata
//! says perf's own words (the field refusals), its stderr holds perf's first line.
//!
//! `perfdata report` exits as `perf report` does where perf refuses an option with a
//! status of its own (129 for `-g`, 234 for `--time`); where perf prints an error and
//! exits 0, or where clap (status 2) refuses a value before perfdata sees it, the
//! difference is kept and listed ([`REPORT_CASES`]).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use perfdata_tests::{corpus_dir, fixtures_dir, perf_available, run_perfdata};

/// One `perf script` refusal (or not): the input, the arguments, perf's status, and
/// whether our message is perf's.
struct Case {
    input: PathBuf,
    args: &'static [&'static str],
    status: i32,
    perfs_words: bool,
}

fn cases() -> Vec<Case> {
    let file = fixtures_dir().join("file-cpu-clock.data");
    let pipe = fixtures_dir().join("pipe-cpu-clock.data");
    let case = |input: &Path, args, status, perfs_words| Case {
        input: input.to_path_buf(),
        args,
        status,
        perfs_words,
    };
    let mut cases = vec![
        case(&file, &["-F", "bogus"], 129, false),
        case(&file, &["-F", "bogus:comm"], 129, false),
        case(&file, &["-F", "comm,+tid"], 129, false),
        case(&file, &["-F", "hw:trace"], 129, true),
        case(&file, &["-F", ""], 129, true),
        case(&file, &["-F", "weight"], 255, true),
        case(&file, &["-F", "srcline"], 255, true),
        case(&file, &["-C", "1"], 255, true),
        case(&file, &["--time", "abc"], 234, false),
        case(&pipe, &["-F", "weight"], 234, true),
        case(&pipe, &["--time", "10%/2"], 234, false),
        // Accepted: a type's empty list (its events print nothing), a field not valid
        // for some types (a warning each).
        case(&file, &["-F", "sw:"], 0, false),
        case(&file, &["-F", "trace"], 0, true),
    ];
    // The events an ETM trace's decoder adds are checked as their AUXTRACE_INFO comes.
    if let Some(dir) = corpus_dir() {
        cases.push(case(
            &dir.join("jbeich-etm-perf_etm.data"),
            &["-F", "time"],
            234,
            true,
        ));
    }
    cases
}

/// perf's exit status and the first line of its stderr that is not a notice of its own
/// (missing kallsyms, an unwinder or decoder it lacks).
fn perf(c: &Case) -> (i32, String) {
    perf_run("script", &c.input, c.args)
}

/// `perf COMMAND -i input ARGS`: [`perf`]'s exit status and first line.
fn perf_run(command: &str, input: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new("perf")
        .arg(command)
        .arg("-i")
        .arg(input)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("perf runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let first = err
        .lines()
        .find(|l| {
            !l.is_empty()
                && !l.starts_with("No kallsyms")
                && !l.starts_with("Failed to process auxtrace index")
                && !l.starts_with("unwind: target platform")
                && !l.starts_with("CS ETM")
        })
        .unwrap_or_default()
        .to_string();
    (out.status.code().expect("perf exits"), first)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn script_refusals_exit_with_perfs_status() {
    assert!(perf_available());
    let mut problems = Vec::new();
    for c in cases() {
        let (status, first) = perf(&c);
        let mut argv: Vec<&OsStr> = vec![OsStr::new("script"), c.input.as_os_str()];
        argv.extend(c.args.iter().map(OsStr::new));
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &argv, None);
        let ours = out.status.code().expect("perfdata exits");
        let err = String::from_utf8_lossy(&out.stderr);
        let what = format!("{} {:?}", c.input.display(), c.args);
        if status != c.status {
            problems.push(format!(
                "{what}: perf exits {status}, the table says {}",
                c.status
            ));
        }
        if ours != status {
            problems.push(format!(
                "{what}: perf exits {status}, perfdata {ours}: {err}"
            ));
        }
        if c.perfs_words && !err.contains(&first) {
            problems.push(format!("{what}: perf says {first:?}, perfdata {err:?}"));
        }
        if status != 0 && !out.stdout.is_empty() {
            problems.push(format!("{what}: refused, yet printed a listing"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// `perf report` refusals on the `-g` fixture: (arguments, perf's status, perfdata's).
/// Where they differ: perf 6.1 prints `Error:` and the reason (an unknown sort or
/// field key, a pid list, `-C` without CPUs) and exits 0, which perfdata does not copy;
/// clap refuses a value that is no number with its usage status, 2 (perf takes
/// `--percent-limit x` as 0 and refuses `--max-stack x` with 129).
const REPORT_CASES: &[(&[&str], i32, i32)] = &[
    (&["-g", "bogus"], 129, 129),
    (&["-g", "caller,x"], 129, 129),
    (&["--time", "abc"], 234, 234),
    (&["--sort", "bogus"], 0, 1),
    (&["-F", "bogus"], 0, 1),
    (&["--pid", "x"], 0, 1),
    (&["-C", "1"], 0, 1),
    (&["--percent-limit", "x"], 0, 2),
    (&["--max-stack", "x"], 129, 2),
];

/// `perf report` on a recording without callchains (file-cpu-clock.data): `-g` given
/// (but `-g none`) is refused as perf 6.1 refuses it ("Selected -g or
/// --branch-history. But no callchain or branch data.", then exit 0 and no report:
/// perfdata exits 1 with perf's words); `-G` and `-g none` print the flat report.
/// Seen on new recordings made without `-g`: perfdata printed the flat report for `-g
/// caller`.
const FLAT_REPORT_CASES: &[(&[&str], i32, i32)] = &[
    (&["-g", "caller"], 0, 1),
    (&["-g", "fractal,0.5,callee"], 0, 1),
    (&["-g", "none"], 0, 0),
    (&["-G"], 0, 0),
];

/// Each of `cases` on `input`, perf's status and ours as listed; where we refuse and
/// `words` are given, perf must have said `Error:` and ours must say the words.
fn report_cases(
    input: &Path,
    cases: &[(&[&str], i32, i32)],
    words: Option<&str>,
    problems: &mut Vec<String>,
) {
    for &(args, perf_status, our_status) in cases {
        let mut with_stdio = vec!["--stdio"];
        with_stdio.extend(args);
        let (status, perf_err) = perf_run("report", input, &with_stdio);
        let mut argv: Vec<&OsStr> = vec![OsStr::new("report"), input.as_os_str()];
        argv.extend(args.iter().map(OsStr::new));
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &argv, None);
        let ours = out.status.code().expect("perfdata exits");
        if (status, ours) != (perf_status, our_status) {
            problems.push(format!(
                "{args:?}: perf exits {status} (listed {perf_status}), perfdata {ours} \
                 (listed {our_status}): {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        // perf's first line is `Error:`; the reason follows it.
        let ours_err = String::from_utf8_lossy(&out.stderr);
        if let Some(words) = words.filter(|_| our_status != 0) {
            if !perf_err.starts_with("Error:") || !ours_err.contains(words) {
                problems.push(format!(
                    "{args:?}: perf says {perf_err:?}, perfdata {ours_err:?}"
                ));
            }
        }
        if ours != 0 && !out.stdout.is_empty() {
            problems.push(format!("{args:?}: refused, yet printed a report"));
        }
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn report_refusals_exit_with_perfs_status_or_a_listed_one() {
    assert!(perf_available());
    let mut problems = Vec::new();
    let graph = fixtures_dir().join("file-callgraph-fp.data");
    report_cases(&graph, REPORT_CASES, None, &mut problems);
    let flat = fixtures_dir().join("file-cpu-clock.data");
    let words = Some(perfdata_report::report::NO_CALLCHAINS);
    report_cases(&flat, FLAT_REPORT_CASES, words, &mut problems);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
