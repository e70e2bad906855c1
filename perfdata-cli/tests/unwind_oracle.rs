//! DWARF unwinding (issue #26) against perf 6.1, run live on recordings made here with
//! `perf record --call-graph dwarf`: a C program built `gcc -O2 -fomit-frame-pointer`
//! (tests/unwind/levels.c), a Rust release binary (tests/unwind/levels.rs) and
//! `ls -R /usr` (libc).
//!
//! - `perfdata report --children --sort comm,dso,sym -n` against `perf report --children`:
//!   every row above 0.1% with the same samples, self period and percentages, both ways;
//!   with the functions perf names inlined at unwound frames from DWARF
//!   (`__libc_start_main_impl (inlined)`, `__libc_malloc (inlined)` for `malloc`, whose
//!   DWARF name is not its symbol's) and without them (`--no-inline`, given to both).
//!   (c) A row may differ by the samples whose unwound stacks differ between perf script
//!   and our folded export (a few in a thousand, bounded by the next test; perf's
//!   libunwind gives up on a stack now and then where framehop goes on), never more:
//!   a planted bug moves rows by hundreds of samples.
//! - The folded export of each recording against `perf script --no-inline`'s unwound
//!   callchains, folded: equal for at least 99% of the samples.
//! - A program busy in a SIGPROF handler (tests/unwind/signals.c): the stacks through
//!   the handler go on past the sigreturn trampoline into the interrupted code, as
//!   perf's do, at each call depth, and its rows are perf's as the others' are.
//! - The binary deleted after recording: a warning naming it with the samples it cut
//!   (perf script's count of samples with a frame in it), exit 0, the kernel's and
//!   libc's rows as before.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{name, perf_available, perf_output, run_perfdata};

use crate::report_rows;
use crate::unwind;
use crate::unwind_compare;

use report_rows::our_children_rows;
use unwind::{record_uncached, recordings, unwind_stats};
use unwind_compare::{agreeing, compare_children, our_folded, perf_script_folded};

#[perfdata_oracle::needs(perf)]
#[test]
fn dwarf_children_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut failures = Vec::new();
    let mut compared = 0;
    for input in recordings(dir.path()) {
        let (problems, n) = check_children(&input);
        compared += n;
        if !problems.is_empty() {
            failures.push((name(&input), problems));
        }
    }
    // A recording that differs is made again, once, and must agree then: on a loaded
    // machine (the whole suite on two cores) perf report's Children of a live `ls -R`
    // recording were twice far below ours (45% where perfdata had 95% under
    // `__libc_start_main_impl`), as if perf had unwound half the samples only; alone,
    // never. A difference of perfdata's is in every recording; the first one is kept
    // for a look.
    if !failures.is_empty() {
        let again = tempfile::tempdir().expect("temp dir");
        let retried: Vec<_> = recordings(again.path())
            .into_iter()
            .filter(|i| failures.iter().any(|(n, _)| *n == name(i)))
            .map(|i| (name(&i), check_children(&i).0))
            .collect();
        let kept = dir.keep();
        for (n, first) in &failures {
            eprintln!(
                "{n} differed (kept in {}), made again:\n{}",
                kept.display(),
                first.join("\n")
            );
        }
        let still: Vec<String> = retried
            .into_iter()
            .filter(|(_, p)| !p.is_empty())
            .map(|(n, p)| format!("{n}:\n{}", p.join("\n")))
            .collect();
        assert!(still.is_empty(), "{}", still.join("\n"));
    }
    eprintln!("{compared} rows compared");
}

/// One recording's Children rows against perf's, and its unwinding counts: the
/// problems found and the rows compared.
fn check_children(input: &Path) -> (Vec<String>, usize) {
    let (mut problems, n) = compare_children(input, true);
    // Each recording has the user frames only unwinding gives.
    assert!(n > 8, "{}: {n} rows compared", name(input));
    // Most stacks are whole; `ls -R` recurses past the 8 KiB copy now and then. A
    // sample whose copy is empty (dyn_size 0, now and then at a process's exit) is
    // not unwound, as perf gives it no user frames: a handful at most.
    let stats = unwind_stats(input);
    let count = |k: &str| stats[k].as_u64().expect("a count");
    if !(count("whole") > 2 * count("cut")
        && count("not_unwound") * 100 <= count("whole") + count("cut"))
    {
        problems.push(format!("unwinding counts: {stats}"));
    }
    assert_eq!(stats["missing_binaries"], serde_json::json!({}), "{stats}");
    (problems, n)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn dwarf_folded_stacks_match_perf_script() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    for input in recordings(dir.path()) {
        let perf = perf_script_folded(&input);
        let ours = our_folded(&input, &[]);
        let (same, total) = agreeing(&perf, &ours);
        let differ: Vec<String> = perf
            .keys()
            .chain(ours.keys())
            .filter(|k| perf.get(*k) != ours.get(*k))
            .take(20)
            .map(|k| format!("    {k}: perf {:?}, ours {:?}", perf.get(k), ours.get(k)))
            .collect();
        eprintln!("{}: {same} of {total} samples' stacks equal", name(&input));
        assert!(
            same * 100 >= total * 99 && total > 100,
            "{}: {same} of {total} samples' stacks equal; first differences:\n{}",
            name(&input),
            differ.join("\n")
        );
        if name(&input) == "signals.data" {
            through_signal_frames(&perf, &ours);
        }
        // Unwinding off: the stacks are the recorded ones, which perf's unwinding
        // mostly lengthens.
        let (plain, _) = agreeing(&perf, &our_folded(&input, &["--no-unwind"]));
        assert!(
            plain * 2 < total,
            "{}: {plain} of {total} without unwinding",
            name(&input)
        );
    }
}

/// The signal handler's recording: most samples are in the handler, and their stacks go
/// on past glibc's sigreturn trampoline (`[unknown]`: perf names the frame by the
/// return address less one, the nop before `__restore_rt`, which no symbol covers) into
/// the code the signal interrupted, at each of its call depths, down to `main`; the same
/// samples on both sides, per depth.
fn through_signal_frames(perf: &BTreeMap<String, u64>, ours: &BTreeMap<String, u64>) {
    let total: u64 = perf.values().sum();
    let per_depth = |folded: &BTreeMap<String, u64>| -> BTreeMap<usize, u64> {
        let mut depths = BTreeMap::new();
        for (stack, n) in folded {
            let Some((interrupted, _)) = stack.split_once(";[unknown];on_prof;in_handler;") else {
                continue;
            };
            if interrupted.contains(";main;") && interrupted.ends_with(";spin_leaf") {
                *depths
                    .entry(interrupted.matches(";spin_at").count())
                    .or_insert(0) += n;
            }
        }
        depths
    };
    let (theirs, mine) = (per_depth(perf), per_depth(ours));
    let in_handler: u64 = theirs.values().sum();
    assert!(
        in_handler * 2 > total && theirs.len() == 4,
        "perf: {in_handler} of {total} samples through the handler into main, by depth {theirs:?}"
    );
    assert_eq!(
        mine, theirs,
        "samples through the handler, by the interrupted depth"
    );
}

/// Samples of `input` whose unwound callchain (perf script's) has a frame in `binary`.
fn perf_samples_through(input: &Path, binary: &Path) -> u64 {
    let out = perf_output(&["script", "--no-inline", "-F", "comm,ip,dso"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let needle = format!("({})", binary.display());
    let mut count = 0;
    let mut hit = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            count += u64::from(hit);
            hit = false;
        } else if line.starts_with('\t') && line.ends_with(&needle) {
            hit = true;
        }
    }
    count + u64::from(hit)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_deleted_binary_is_named_with_the_samples_it_cut() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    // The binary is in no build-id cache, where it would be found.
    let (c, input) = record_uncached(dir.path());
    let through = perf_samples_through(&input, &c);
    assert!(through > 100, "{through} samples through {}", c.display());
    let before = our_children_rows(&input, "comm,dso,sym");
    std::fs::remove_file(&c).expect("binary removed");
    let args = [
        OsStr::new("report"),
        OsStr::new("--children"),
        input.as_os_str(),
    ];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let named: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(c.to_str().expect("utf-8")))
        .collect();
    assert_eq!(
        named,
        [format!(
            "perfdata: warning: {}: not found, {through} samples' stacks cut there",
            c.display()
        )],
        "{stderr}"
    );
    assert!(stderr.contains("binary missing: "), "{stderr}");
    // The kernel's rows, and libc's memset (the frame below the missing binary), are
    // what they were.
    let after = our_children_rows(&input, "comm,dso,sym");
    let mut kept = 0;
    for (ev, rows) in &before {
        for (cells, v) in rows {
            let kernel = cells[1] == "[kernel.kallsyms]";
            let memset = cells[1] == "libc.so.6" && cells[2].contains("memset");
            if kernel || memset {
                assert_eq!(after[ev].get(cells), Some(v), "{cells:?}");
                kept += 1;
            }
        }
    }
    assert!(kept > 1, "{kept} rows kept");
}
