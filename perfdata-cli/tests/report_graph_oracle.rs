//! `perfdata report` with no options prints what perf 6.1's `perf report --stdio`
//! prints on a recording with callchains: the Children and Self columns and the call
//! graph under each entry (`|`, `---`, `--N.NN%--` lines), and so for `-g caller`,
//! `-g callee`, `-g fractal`, `-g flat`, `-g folded`, `--no-children`, `-G` and
//! `--no-children -G`, and the filters `--percent-limit 2`, `--time` of a window,
//! `--dsos` and `--symbols` (one name; two and a sample's address); each run
//! with perf live on the `-g` fixtures and on recordings
//! of tests/callgraph/levels.c (a few call levels, recursion) made here with `-g` and
//! `--call-graph dwarf`, of tied_inlines.c and same_names.c (inlined functions among a
//! node's children), and on a pipe-mode `-g` recording (a file and standard input).
//!
//! Compared byte for byte but for what cannot match, named here:
//! - the random tip perf ends with (`#`, `# (Tip: ...)`, `#`);
//! - the order of entries of equal overhead on a recording of several threads
//!   ([`TIES_AS_SETS`]): perf asks the depth of two entries' call graphs only when they
//!   are one thread's (`__hpp__sort_acc`) and inserts entries one by one into an
//!   rb-tree, so that among ties of several threads its order follows the tree's
//!   shape; there each entry, its line and its whole call graph, must be equal as text,
//!   and each run of ties must have the same entries and blank lines. Every other
//!   recording is compared in order, ties included (where perf's tree of entries
//!   splits an inlined function's entry in two, perfdata's does too:
//!   report_hist_split_oracle);
//! - perf's `[...]` line of `fractal` sometimes says `[...] (inlined)`: perf 6.1
//!   mallocs that symbol without clearing its `inlined` flag;
//!
//! The dwarf recordings are compared as they are: the frames perf names inlined from
//! DWARF (`__libc_start_main_impl (inlined)` from libc's debug info, where it is
//! installed) are perfdata's too (inline_oracle checks them on a program of its own).
//!
//! file-callgraph-dwarf.data is read by both with `--symfs fixtures/symfs`, where the
//! binary it was recorded from is kept (built without libc, it is the process's only
//! file), so both unwind every sample whole wherever the test runs.

use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, name, perf_available};

use crate::report_text;
use crate::workload;

use report_text::{canonical, Ties};

/// The option sets compared on every recording.
const VIEWS: &[&[&str]] = &[
    &[],
    &["-g", "caller"],
    &["-g", "callee"],
    &["-g", "fractal"],
    &["-g", "flat"],
    &["-g", "folded"],
    &["--no-children"],
    &["-G"],
    &["--no-children", "-G"],
    &["--no-children", "-g", "fractal,0.5,callee"],
    &["-g", "address"],
];

/// perf's text without its closing tip; `None` where perf was killed (see
/// [`report_text::perf_stdio_unless_killed`]: `-g address` of a recording whose binary
/// is missing here).
pub(crate) fn perf_text(input: &Path, args: &[&str]) -> Option<String> {
    report_text::perf_stdio_unless_killed(input, args)
}

fn our_text(input: &Path, args: &[&str]) -> String {
    report_text::perfdata_report(input, args)
}

/// Recordings of several threads whose entries of equal overhead are compared as sets
/// (see the module's documentation): anon-secret.data has sh, its children and two
/// worker programs, with runs of one-sample entries of many threads.
pub(crate) const TIES_AS_SETS: &[&str] = &["anon-secret.data"];

/// Live recordings whose call graphs' lines are compared as a set per entry
/// ([`Ties::GraphLinesAsSets`]): the pipe recording made here (seen in CI: `elf_load`
/// and `_start` at 50.00% swapped under `--no-children -g fractal,0.5,callee`). Not
/// perf's `callchain_merge`, which perfdata models (report_hist_split_oracle compares
/// its graphs in order): that recording has no inlined function, so perf's tree of
/// entries is one order and its collapse pass merges nothing. Not reproduced here (30
/// recordings equal perf's in every view, none with both frames under one entry); the
/// likely cause is that the two are frames of two DSOs (the kernel's and a user one)
/// under one node, which perf's `match_chain` orders by the addresses of their `struct
/// dso` (malloc's), taken here as the order the DSOs were made.
pub(crate) const GRAPH_TIES_AS_SETS: &[&str] = &["pipe-g.data"];

/// Compare one report; a description of the first difference.
pub(crate) fn differs(input: &Path, ours: &[&str], perfs: &[&str]) -> Option<String> {
    let ties = if TIES_AS_SETS.contains(&name(input).as_str()) {
        Ties::AsSets
    } else if GRAPH_TIES_AS_SETS.contains(&name(input).as_str()) {
        Ties::GraphLinesAsSets
    } else {
        Ties::InOrder
    };
    let Some(perf) = perf_text(input, perfs) else {
        eprintln!(
            "perf report {perfs:?} on {} was killed: not compared",
            name(input)
        );
        return None;
    };
    let perf = canonical(&perf, ties);
    let mine = canonical(&our_text(input, ours), ties);
    if perf == mine {
        return None;
    }
    let at = perf
        .iter()
        .zip(&mine)
        .position(|(a, b)| a != b)
        .unwrap_or(perf.len().min(mine.len()));
    Some(format!(
        "{} {ours:?}: line {}: perf {:?}, ours {:?}",
        name(input),
        at + 1,
        perf.get(at),
        mine.get(at)
    ))
}

/// What the filters of a recording's views select: a DSO and one or two functions.
pub(crate) struct Selection<'a> {
    pub(crate) dso: &'a str,
    pub(crate) symbols: [&'a str; 2],
}

/// perf's `--time` window of the middle of the recording's samples (from 20% to 60%
/// of their span), in seconds as perf script prints them.
fn middle_window(input: &Path) -> String {
    let out = Command::new("perf")
        .args(["script", "-F", "time", "-i"])
        .arg(input)
        .output()
        .expect("perf script runs");
    let times: Vec<f64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
        .collect();
    let (first, last) = (times[0], times[times.len() - 1]);
    let at = |f: f64| first + (last - first) * f;
    format!("{:.6},{:.6}", at(0.2), at(0.6))
}

/// The sample ip most samples of `input` have outside the functions `names`, as perf
/// script prints it (hex): perf's `--symbols` takes an entry that reads as hex as an
/// address the sample's ip must be.
fn hottest_ip_outside(input: &Path, names: &[&str]) -> String {
    let out = Command::new("perf")
        .args(["script", "-G", "-F", "ip,sym", "-i"])
        .arg(input)
        .output()
        .expect("perf script runs");
    let mut counts = std::collections::BTreeMap::<String, usize>::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let mut w = line.split_whitespace();
        if let (Some(ip), sym) = (w.next(), w.next()) {
            if !sym.is_some_and(|s| names.contains(&s)) {
                *counts.entry(ip.to_string()).or_default() += 1;
            }
        }
    }
    let hottest = counts.into_iter().max_by_key(|&(_, n)| n);
    format!("0x{}", hottest.expect("a sample outside the functions").0)
}

/// Every view of `input`, and the filters on it, each also given `shared` (to both)
/// and `perf_extra` (to perf).
pub(crate) fn compare_views(
    input: &Path,
    select: &Selection,
    shared: &[&str],
    perf_extra: &[&str],
    problems: &mut Vec<String>,
) -> usize {
    let window = middle_window(input);
    // Two names and an address (the hottest ip outside them).
    let both = format!(
        "{},{},{}",
        select.symbols[0],
        select.symbols[1],
        hottest_ip_outside(input, &select.symbols)
    );
    let filters: [&[&str]; 8] = [
        &["--percent-limit", "2"],
        &["--no-children", "--percent-limit", "2"],
        &["--time", &window],
        &["--no-children", "--time", &window],
        &["--dsos", select.dso],
        &["--no-children", "--dsos", select.dso],
        &["--symbols", select.symbols[0]],
        &["--symbols", &both],
    ];
    // A filter `shared` already gives is not given twice.
    let filters: Vec<&[&str]> = filters
        .into_iter()
        .filter(|f| !f.iter().any(|a| a.starts_with("--") && shared.contains(a)))
        .collect();
    for view in VIEWS.iter().chain(&filters) {
        let ours = [&view[..], shared].concat();
        let perfs = [&ours[..], perf_extra].concat();
        problems.extend(differs(input, &ours, &perfs));
    }
    VIEWS.len() + filters.len()
}

/// What perfdata says of `input`'s stack copies (`unwound N samples whole, ...`).
fn unwind_summary(input: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["-v", "report", "--no-children", "-g", "none"])
        .args(args)
        .arg(input)
        .output()
        .expect("perfdata runs");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn call_graphs_equal_perfs_on_the_fixtures() {
    assert!(perf_available());
    let mut problems = Vec::new();
    let mut compared = 0;
    let spin = Selection {
        dso: "ld-linux-x86-64.so.2",
        symbols: ["_dl_map_object", "_dl_sysdep_start"],
    };
    let anon = Selection {
        dso: "libc.so.6",
        symbols: ["__GI___execve", "_dl_start_user"],
    };
    for (f, select) in [
        ("file-callgraph-fp.data", &spin),
        ("anon-secret.data", &anon),
    ] {
        compared += compare_views(&fixtures_dir().join(f), select, &[], &[], &mut problems);
    }
    // The dwarf fixture with the binary it was recorded from: every stack unwound whole
    // (main, mid and leaf under _start), by both.
    let dwarf = fixtures_dir().join("file-callgraph-dwarf.data");
    let symfs = fixtures_dir().join("symfs");
    let symfs = ["--symfs", symfs.to_str().expect("utf-8 path")];
    let said = unwind_summary(&dwarf, &symfs);
    assert!(
        said.contains("unwound 50 samples whole, 0 cut, 0 not unwound"),
        "{said}"
    );
    let own = Selection {
        dso: "perfdata-spin",
        symbols: ["leaf", "main"],
    };
    compared += compare_views(&dwarf, &own, &symfs, &[], &mut problems);
    let text = our_text(
        &dwarf,
        &[&["--no-children", "-g", "caller"][..], &symfs].concat(),
    );
    assert!(
        text.contains("---_start\n               main\n               mid\n               leaf\n"),
        "{text}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(compared, 57, "{compared} reports compared");
}

/// The corpus's `--call-graph lbr` recording: perf builds each sample's user frames
/// from its branch stack (recorded in call-stack mode), walked in the graph's order
/// (from the caller end, the kernel frames are looked up as user addresses), and
/// for the samples with an empty stack reads the next record's bytes as a frame.
/// Every view and two filters, byte for byte.
#[perfdata_oracle::needs(perf, corpus)]
#[test]
fn lbr_call_stacks_equal_perfs_in_every_view() {
    assert!(perf_available());
    let corpus = perfdata_tests::corpus_dir().expect("PERFDATA_CORPUS is set");
    let lbr = corpus.join("KDAB-vector_static_gcc-perf.lbr.data");
    // perf's --max-stack bounds only where PERF_CONTEXT_USER is looked for in the
    // recorded chain: the branch stack's frames are not cut, and a chain whose marker
    // lies past the bound is the recorded one, cut (planted: cutting LBR chains moved
    // 50-146 lines of these views; ignoring the bound, 72-568).
    let more: [&[&str]; 6] = [
        &["--no-children", "-g", "caller"],
        &["--percent-limit", "5"],
        &["--sort", "dso,sym", "-g", "caller,0.5,callee"],
        &["--max-stack", "3"],
        &["--max-stack", "1"],
        &["--no-children", "--max-stack", "2", "-g", "caller"],
    ];
    let problems: Vec<String> = VIEWS
        .iter()
        .chain(&more)
        .filter_map(|view| differs(&lbr, view, view))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The frames are the branch stack's: 0x42089e (a call recorded only there) is
    // under every user sample, and the frame read past a sample (its next record's
    // pid and tid) is one of the Children rows walked from the callee.
    let callee = our_text(&lbr, &["-g", "callee"]);
    assert!(
        callee.contains(
            "96.24%     0.00%  vector_static_g  vector_static_gcc_v9.1.0  [.] 0x000000000042089e"
        ),
        "{callee}"
    );
    assert!(callee.contains("[k] 0x00358b2300358b23"), "{callee}");
}

/// The page-fault recording with DWARF stacks the deterministic tests make: one sample a
/// fault, and a 4 MiB buffer that holds every sample's stack copy (with perf's default
/// 512 KiB a loaded machine lost some).
pub(crate) const PAGE_FAULTS_DWARF: [&str; 8] = [
    "-m",
    "1024",
    "-e",
    "page-faults",
    "-c",
    "1",
    "--call-graph",
    "dwarf",
];

/// tests/callgraph/NAME.c compiled by gcc with `flags` into `dir`; the executable's path.
pub(crate) fn compile(dir: &Path, name: &str, flags: &[&str]) -> std::path::PathBuf {
    let exe = dir.join(name);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/callgraph/{name}.c"));
    workload::run(
        Command::new("gcc")
            .args(flags)
            .arg("-o")
            .arg(&exe)
            .arg(&src),
    );
    exe
}

/// tests/callgraph/levels.c compiled here and recorded with `-g` and with
/// `--call-graph dwarf`.
#[perfdata_oracle::needs(perf)]
#[test]
fn call_graphs_equal_perfs_on_recordings_made_here() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = compile(
        dir.path(),
        "levels",
        &["-O1", "-g", "-fno-omit-frame-pointer"],
    );
    let exe = exe.to_str().expect("utf-8 path");
    let event = ["-e", "cpu-clock", "-c", "200000"];
    let select = Selection {
        dso: "levels",
        symbols: ["leaf", "main"],
    };
    // Up to three recordings: on a loaded machine perf's own unwinder now and then
    // gives up on one sample of a fresh dwarf recording (99.75% where perfdata unwinds
    // 99.81%), or two graph lines tie at one percentage and perf orders them by its
    // tree. A difference of perfdata's is in every recording; one of perf's moods is
    // not in the next (stderr shows each retried one).
    let mut fp = None;
    let mut problems = Vec::new();
    for attempt in 1..=3 {
        let rec = |name: &str, how: &[&str]| {
            let args = [&event[..], how].concat();
            workload::record(
                dir.path(),
                &format!("{attempt}-{name}"),
                &args,
                &[exe, "3000"],
            )
        };
        let this_fp = rec("fp.data", &["-g"]);
        let dwarf = rec("dwarf.data", &["--call-graph", "dwarf,8192"]);
        problems.clear();
        compare_views(&this_fp, &select, &[], &[], &mut problems);
        compare_views(&dwarf, &select, &[], &[], &mut problems);
        fp = Some(this_fp);
        if problems.is_empty() {
            break;
        }
        eprintln!("recording {attempt} differs:\n{}", problems.join("\n"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let fp = fp.expect("recorded");
    // The tree has the levels' shape: heavy's share under main, recursion and all.
    let text = our_text(&fp, &["--no-children", "-g", "caller"]);
    assert!(text.contains("--heavy\n"), "{text}");
    assert!(
        text.contains("middle\n") && text.contains("leaf\n"),
        "{text}"
    );
}

/// Call-graph branches of one percentage naming inlined functions, in perf's order:
/// A pipe-mode `-g` recording (`perf record -o -`), read from a file and from standard
/// input: perf draws the call graph (its events are unknown when it sets the report up,
/// so it keeps the graph) but drops the Children column, the graph's order chosen as
/// for children (caller).
#[perfdata_oracle::needs(perf)]
#[test]
fn call_graphs_of_a_pipe_recording_equal_perfs() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let pipe = dir.path().join("pipe-g.data");
    let out = Command::new("perf")
        .args([
            "record",
            "-N",
            "-q",
            "-g",
            "-e",
            "cpu-clock",
            "-c",
            "100000",
        ])
        .args(["-o", "-", "--", &spin])
        .stdout(std::fs::File::create(&pipe).expect("pipe file"))
        .output()
        .expect("perf record runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let select = Selection {
        dso: "spin",
        symbols: ["leaf", "main"],
    };
    let mut problems = Vec::new();
    compare_views(&pipe, &select, &[], &[], &mut problems);
    // The same stream on standard input, as `perf record -o - | perf report` reads it.
    let stdin = |cmd: &mut Command| -> String {
        let out = cmd
            .stdin(std::fs::File::open(&pipe).expect("pipe file"))
            .output()
            .expect("runs");
        assert!(out.status.success(), "{cmd:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for view in [&[][..], &["--no-children"], &["-g", "callee"]] {
        let perf = stdin(
            Command::new("perf")
                .args(["report", "--stdio", "-i", "-"])
                .args(view),
        );
        let perf = perf.split("#\n# (Tip:").next().expect("text").to_string();
        let ours = stdin(
            Command::new(env!("CARGO_BIN_EXE_perfdata"))
                .args(["report", "-"])
                .args(view),
        );
        let ties = Ties::GraphLinesAsSets;
        if canonical(&perf, ties) != canonical(&ours, ties) {
            problems.push(format!("stdin {view:?}:\nperf:\n{perf}\nours:\n{ours}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The graph is there, under Overhead alone, walked from the callers.
    let text = our_text(&pipe, &[]);
    assert!(text.contains("# Overhead  Command"), "{text}");
    assert!(text.contains("---__libc_start_call_main\n"), "{text}");
}

/// perf's `--time` percent forms (`perf_time__percent_parse_str`): slices `P%/N`, lists
/// of them, ranges `A%-B%`, lists of those, a lone `P%`, each of the samples' time
/// span as the SAMPLE_TIME feature gives it; on a pipe (no SAMPLE_TIME before the
/// samples) both refuse them.
#[perfdata_oracle::needs(perf)]
#[test]
fn time_percent_slices_equal_perfs() {
    assert!(perf_available());
    let forms = [
        "10%/2",
        "10%/1,10%/3",
        "0%-10%",
        "10%-20%,30%-40%",
        "25%",
        "50%-100%",
    ];
    let mut problems = Vec::new();
    let mut compared = 0;
    for f in [
        "file-callgraph-fp.data",
        "anon-secret.data",
        "file-multi-event.data",
        "file-cpu-clock.data",
    ] {
        let input = fixtures_dir().join(f);
        for t in forms {
            for view in [&["--time", t][..], &["--no-children", "--time", t]] {
                problems.extend(differs(&input, view, view));
                compared += 1;
            }
        }
    }
    // The slices select: the slice's sample count is perf's, not the whole recording's.
    let fp = fixtures_dir().join("file-callgraph-fp.data");
    let whole = our_text(&fp, &[]);
    let slice = our_text(&fp, &["--time", "10%/2"]);
    let samples = |t: &str| {
        t.lines()
            .find(|l| l.starts_with("# Samples"))
            .map(str::to_string)
    };
    assert_ne!(samples(&whole), samples(&slice));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(compared, 48);
    // A pipe has no sample time span before its samples: refused, as perf refuses it.
    let pipe = fixtures_dir().join("pipe-cpu-clock.data");
    let perf = Command::new("perf")
        .args(["report", "--stdio", "--time", "10%/2", "-i"])
        .arg(&pipe)
        .output()
        .expect("perf runs");
    let ours = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["report", "--time", "10%/2"])
        .arg(&pipe)
        .output()
        .expect("perfdata runs");
    assert!(!perf.status.success() && !ours.status.success());
}

/// The comparison fails on a planted difference: a percentage off by one hundredth, an
/// entry's graph lines in another order.
#[test]
fn the_comparison_sees_percentages_and_order() {
    let perf = "# x\n    10.00%  a\n            |\n            ---f\n               |--6.00%--g\n                --4.00%--h\n\n";
    for ties in [
        Ties::InOrder,
        Ties::AsSets,
        Ties::InlinedAsSets,
        Ties::GraphLinesAsSets,
    ] {
        let canonical = |t: &str| canonical(t, ties);
        assert_eq!(canonical(perf), canonical(perf));
        let pct = perf.replace("6.00%", "6.01%");
        assert_ne!(canonical(perf), canonical(&pct));
        let order = perf
            .replace("--6.00%--g\n", "--TMP--\n")
            .replace("--4.00%--h", "--6.00%--g")
            .replace("--TMP--", "--4.00%--h");
        assert_ne!(canonical(perf), canonical(&order));
    }
    // Entries of equal overhead: in either order the same as sets, not in order.
    let two = "    5.00%  a\n    5.00%  b\n";
    let swapped = "    5.00%  b\n    5.00%  a\n";
    assert_eq!(
        canonical(two, Ties::AsSets),
        canonical(swapped, Ties::AsSets)
    );
    assert_ne!(
        canonical(two, Ties::InOrder),
        canonical(swapped, Ties::InOrder)
    );
    assert_ne!(
        canonical(two, Ties::GraphLinesAsSets),
        canonical(swapped, Ties::GraphLinesAsSets)
    );
    // As sets only where an inlined entry ties.
    assert_ne!(
        canonical(two, Ties::InlinedAsSets),
        canonical(swapped, Ties::InlinedAsSets)
    );
    let inl = two.replace("  b\n", "  b (inlined)\n");
    let inl_swapped = swapped.replace("  b\n", "  b (inlined)\n");
    assert_eq!(
        canonical(&inl, Ties::InlinedAsSets),
        canonical(&inl_swapped, Ties::InlinedAsSets)
    );
}
