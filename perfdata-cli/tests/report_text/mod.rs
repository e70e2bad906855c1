//! The text reports the report text oracles compare: perf's `perf report --stdio` and
//! `perfdata report`, run on one input with the same options.

use std::path::Path;
use std::process::Command;

use perfdata_tests::name;

/// `perf report --stdio -i INPUT ARGS`, without the random tip it ends with (`#`,
/// `# (Tip: ...)`, `#`); its exit status checked.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn perf_stdio(input: &Path, args: &[&str]) -> String {
    perf_stdio_unless_killed(input, args)
        .unwrap_or_else(|| panic!("perf report {args:?} on {} was killed", name(input)))
}

/// As [`perf_stdio`], but `None` where perf is killed by a signal: perf 6.1 dies of
/// SIGPIPE when the `addr2line` it starts for source lines exits at once, as it does
/// where a recorded binary is missing (the fixtures' /tmp/perfdata-spin on a machine
/// that has not built it).
#[allow(dead_code)] // not every test that shares this module uses it
pub fn perf_stdio_unless_killed(input: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("perf")
        .args(["report", "--stdio", "-i"])
        .arg(input)
        .args(args)
        .output()
        .expect("perf report runs");
    out.status.code()?;
    assert!(
        out.status.success(),
        "perf report {args:?} on {}",
        name(input)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines: Vec<&str> = text.lines().collect();
    if let [.., a, tip, b] = lines.as_slice() {
        if *a == "#" && tip.starts_with("# (Tip:") && *b == "#" {
            lines.truncate(lines.len() - 3);
        }
    }
    Some(lines.iter().map(|l| format!("{l}\n")).collect())
}

/// `perfdata report INPUT ARGS`, its exit status checked (its stderr in the panic).
pub fn perfdata_report(input: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("report")
        .arg(input)
        .args(args)
        .output()
        .expect("perfdata runs");
    assert!(
        out.status.success(),
        "perfdata report {args:?} on {}: {}",
        name(input),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[allow(dead_code)] // not every test that shares this module uses it
/// Whether a line is an entry's line (` 12.34%` first).
pub fn is_entry(line: &str) -> bool {
    let t = line.trim_start();
    line.starts_with(' ')
        && t.split_whitespace()
            .next()
            .is_some_and(|w| w.ends_with('%') && w[..w.len() - 1].parse::<f64>().is_ok())
        && !line.starts_with("           ") // flat's value lines are indented 11
}

#[allow(dead_code)] // not every test that shares this module uses it
/// How [`canonical`] takes runs of entries of equal overhead.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Ties {
    /// In the order printed.
    InOrder,
    /// Every run as a set (sorted).
    AsSets,
    /// As a set only a run that holds an inlined entry (`... (inlined)` on an entry's
    /// line): perf's `_sort__sym_cmp` compares an inlined symbol with another by name
    /// and two others by address, an order that is not transitive, so its rb-tree of
    /// entries can miss an entry it holds and make a second one, whose callchain depth
    /// is lost when the two are merged; the depth `__hpp__sort_acc` orders ties by then
    /// depends on the tree's shape (seen: ld.so's `_dl_sysdep_start` above or below
    /// `_dl_start_final (inlined)` in recordings of one program, two of six).
    InlinedAsSets,
    /// Entries in the order printed, but the lines of each entry's call graph as a set
    /// (sorted): for the live pipe recording of report_graph_oracle, whose graphs once
    /// had siblings of equal percentage in another order than perfdata's in CI
    /// (`elf_load` and `_start` at 50.00%: see `GRAPH_TIES_AS_SETS` there). Names,
    /// percentages and the entries' order are still compared.
    GraphLinesAsSets,
}

#[allow(dead_code)] // not every test that shares this module uses it
/// The text with each run of entries of equal overhead (an entry is its line and the
/// call graph lines under it) sorted as `ties` says, and the blank lines of each run
/// counted after it; `[...] (inlined)` read as `[...]`.
pub fn canonical(text: &str, ties: Ties) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<Vec<String>> = Vec::new();
    let mut blanks = 0;
    let flush = |run: &mut Vec<Vec<String>>, blanks: &mut usize, out: &mut Vec<String>| {
        if run.is_empty() && *blanks == 0 {
            return;
        }
        let inlined = || run.iter().any(|e| e[0].contains(" (inlined)"));
        if ties == Ties::AsSets || (ties == Ties::InlinedAsSets && inlined()) {
            run.sort();
        }
        if ties == Ties::GraphLinesAsSets {
            for entry in run.iter_mut() {
                entry[1..].sort();
            }
        }
        out.extend(run.drain(..).flatten());
        out.push(format!("<{blanks} blank lines>"));
        *blanks = 0;
    };
    for line in text.lines() {
        let line = line.replace("[...] (inlined)", "[...]");
        if is_entry(&line) {
            let key = |l: &str| l.split_whitespace().next().map(str::to_string);
            if run.last().is_some_and(|b| key(&b[0]) != key(&line)) {
                flush(&mut run, &mut blanks, &mut out);
            }
            run.push(vec![line]);
        } else if line.starts_with('#') || run.is_empty() {
            flush(&mut run, &mut blanks, &mut out);
            out.push(line);
        } else if line.is_empty() {
            blanks += 1;
        } else {
            run.last_mut().expect("an entry").push(line);
        }
    }
    flush(&mut run, &mut blanks, &mut out);
    out
}
