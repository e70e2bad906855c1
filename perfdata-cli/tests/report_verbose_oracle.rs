//! `perfdata -v report` prints what perf 6.1's `perf report -v --stdio` prints, live, on
//! every fixture the text oracles read and on a `--call-graph dwarf` recording made
//! here: DSOs by their paths (the column as wide as the longest, rows of equal overhead
//! ordered by the paths, as perf compares them under `-v`), each symbol after its
//! entry's address (the sample's DSO-relative address, a callchain frame's ip as
//! sampled for the entries `--children` makes) and the letter of the kind of file its
//! symbols came from (`k` kallsyms, `D` the build-id cache's debug file, `B` its copy of
//! the binary, `!` none), the Symbol column 21 wider for an entry with a symbol. With
//! and without `-g`, perf's default sort and `--sort dso,sym`, `--children` and
//! `--no-children`.
//!
//! Compared as report_graph_oracle compares ([`canonical`]): a run of entries of equal
//! overhead that holds an inlined function as a set (perf's rb-tree order, a known gap),
//! every run as a set on the recording of several threads it names ([`TIES_AS_SETS`]),
//! every other run in order. Left out, as report_text_oracle leaves them out:
//! strip-system-wide.data (perf leaves a sample unresolved that perfdata names).
//! A kernel module's letter (`K`) is compared on the corpus's recording of one.
//!
//! perf compares DSOs by their long names under `-v` (sort.c's `_sort__dso_cmp`), so its
//! tree of entries, and where it splits an inlined function into two entries
//! (perfdata-report/src/hists.rs), differs from the tree without `-v`: the dwarf
//! recording is made again until perf's trees with and without `-v` split
//! `_dl_start_final (inlined)` differently ([`split_by_verbose`]); perfdata, comparing
//! by the short names, printed one row of the two (or two of the one) and the address
//! of the other entry on about one recording in three.

use std::path::{Path, PathBuf};

use perfdata_tests::{fixture_files, name, par_map, perf_available};

use crate::report_graph_oracle::{compile, PAGE_FAULTS_DWARF, TIES_AS_SETS};
use crate::report_text;
use crate::workload;

use report_text::{canonical, Ties};

/// Compare one report with `-v` on both sides; a description of the first difference.
fn differs(input: &Path, args: &[&str]) -> Option<String> {
    let perf = report_text::perf_stdio(input, &[&["-v"][..], args].concat());
    let ours = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["-v", "report"])
        .arg(input)
        .args(args)
        .output()
        .expect("perfdata runs");
    assert!(ours.status.success(), "perfdata -v report {args:?}");
    let ties = if TIES_AS_SETS.contains(&name(input).as_str()) {
        Ties::AsSets
    } else {
        Ties::InlinedAsSets
    };
    let (perf, ours) = (
        canonical(&perf, ties),
        canonical(&String::from_utf8_lossy(&ours.stdout), ties),
    );
    if perf == ours {
        return None;
    }
    let at = perf
        .iter()
        .zip(&ours)
        .position(|(a, b)| a != b)
        .unwrap_or(perf.len().min(ours.len()));
    Some(format!(
        "{} -v {args:?}: line {}: perf {:?}, ours {:?}",
        name(input),
        at + 1,
        perf.get(at),
        ours.get(at)
    ))
}

/// The function perf's start-up frames make two entries of, or one.
const SPLIT: &str = "_dl_start_final (inlined)";

/// The views whose trees [`split_by_verbose`] compares, with and without `-v`.
const SPLIT_VIEWS: &[&[&str]] = &[&["-g", "none"], &["--sort", "dso,sym", "-g", "none"]];

/// How many entry lines of perf's report `args` (and `-v` where `verbose`) on `input`
/// name [`SPLIT`].
fn split_rows(input: &Path, args: &[&str], verbose: bool) -> usize {
    let args = [if verbose { &["-v"][..] } else { &[] }, args].concat();
    report_text::perf_stdio(input, &args)
        .lines()
        .filter(|l| report_text::is_entry(l) && l.ends_with(SPLIT))
        .count()
}

/// Whether perf splits [`SPLIT`] differently with and without `-v` in one of
/// [`SPLIT_VIEWS`] on `input`.
fn verbose_splits_apart(input: &Path) -> bool {
    SPLIT_VIEWS
        .iter()
        .any(|v| split_rows(input, v, true) != split_rows(input, v, false))
}

/// tests/callgraph/kernel_faults.c compiled into `dir` and recorded with `--call-graph
/// dwarf` until perf's trees with and without `-v` split [`SPLIT`] apart (three
/// recordings in ten here; the first of ten that does, else the last, so that a slow
/// machine's recordings cannot fail the test, only exercise less).
fn split_by_verbose(dir: &Path) -> PathBuf {
    let exe = compile(
        dir,
        "kernel_faults",
        &["-O2", "-g", "-fno-optimize-sibling-calls"],
    );
    let exe = exe.to_str().expect("utf-8 path");
    let mut input = PathBuf::new();
    for attempt in 1..=10 {
        input = workload::record(
            dir,
            &format!("kernel-{attempt}.data"),
            &PAGE_FAULTS_DWARF,
            &[exe, "16"],
        );
        if verbose_splits_apart(&input) {
            return input;
        }
        eprintln!("recording {attempt}: perf splits {SPLIT} alike with and without -v");
    }
    input
}

/// The views compared on every input.
const VIEWS: &[&[&str]] = &[
    &["--no-children", "-g", "none"],
    &["--no-children", "-g", "none", "--sort", "dso,sym"],
    &["-g", "none"],
    &[],
    &["--no-children"],
];

#[perfdata_oracle::needs(perf)]
#[test]
fn verbose_reports_equal_perfs() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let dwarf = split_by_verbose(dir.path());
    let mut inputs: Vec<_> = fixture_files()
        .into_iter()
        .filter(|f| !name(f).contains("strip-system-wide"))
        .collect();
    inputs.push(dwarf.clone());
    let runs: Vec<(&Path, &[&str])> = inputs
        .iter()
        .flat_map(|i| VIEWS.iter().map(move |v| (i.as_path(), *v)))
        .collect();
    let compared = runs.len();
    let mut problems: Vec<String> = par_map(&runs, |(input, view)| differs(input, view))
        .into_iter()
        .flatten()
        .collect();
    for view in [
        &["--sort", "dso,sym", "--no-children"][..],
        &["--sort", "dso,sym", "-g", "none"],
        &["--sort", "dso,sym"],
    ] {
        problems.extend(differs(&dwarf, view));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(compared >= 100, "{compared} reports compared");
    // What -v adds is there: a path, and an address and origin before a symbol.
    let text = report_text::perfdata_report(&dwarf, &["--no-children", "-g", "none"]);
    let verbose = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["-v", "report", "--no-children", "-g", "none"])
        .arg(&dwarf)
        .output()
        .expect("perfdata runs");
    let verbose = String::from_utf8_lossy(&verbose.stdout);
    assert_ne!(text, verbose);
    assert!(verbose.contains(" k [k] read_zero\n"), "{verbose}");
    let exe = dir.path().join("kernel_faults");
    assert!(
        verbose.contains(&format!("  {}  ", exe.display())),
        "{verbose}"
    );
}

/// A kernel module's DSO is `K` under `-v` (perf's `dso__set_module_info`, its file
/// found or not), the kernel's `!` where no kallsyms fits it: the corpus's recording
/// of a module's samples, with and without the call graph.
#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn a_kernel_modules_origin_is_perfs() {
    assert!(perf_available());
    let corpus = perfdata_tests::corpus_dir().expect("PERFDATA_CORPUS is set");
    let input = corpus.join("jbeich-generated_by_linux_perf.data");
    let problems: Vec<String> = [&["--no-children", "-g", "none"][..], &["--no-children"]]
        .iter()
        .filter_map(|view| differs(&input, view))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
