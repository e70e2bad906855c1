//! DWARF unwinding of programs that fork (issue #26's open gaps), against perf 6.1, on
//! recordings made here with `perf record --call-graph dwarf`:
//!
//! - A C program that vforks in a loop (tests/unwind/vfork.c, `gcc -O2
//!   -fomit-frame-pointer`, the child `_exit`s at once): most samples are in glibc's
//!   `__vfork`, whose CFI keeps the return address in rdi (`DW_CFA_register rip in rdi`)
//!   while the parent waits, a row framehop's walk cannot express. The folded stacks
//!   equal perf script's for at least 99% of the samples, most of them through
//!   `main;outer;spawn;__vfork`, and `report --children --sort comm,dso,sym -n` gives
//!   perf's rows above 0.1% (as unwind_oracle.rs compares them).

use std::collections::BTreeMap;

use perfdata_tests::{name, perf_available};

mod report_rows;
mod unwind;
mod unwind_compare;
mod workload;

use unwind::{build_vfork, record_dwarf, unwind_stats};
use unwind_compare::{agreeing, compare_children, our_folded, perf_script_folded};

/// Samples of `folded` whose stack has `part`.
fn through(folded: &BTreeMap<String, u64>, part: &str) -> u64 {
    folded
        .iter()
        .filter(|(stack, _)| stack.contains(part))
        .map(|(_, n)| n)
        .sum()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn vfork_stacks_go_on_past_the_return_address_in_a_register() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = build_vfork(dir.path());
    // A sample every 30 us of task clock: about 4,000 samples (the children run too
    // briefly to be sampled much). --max-size bounds a busy machine's surprise.
    let input = record_dwarf(
        dir.path(),
        "vfork.data",
        &["-N", "-c", "30000", "--max-size", "300M"],
        &[exe.to_str().expect("utf-8 path"), "3000"],
    );
    let perf = perf_script_folded(&input);
    let ours = our_folded(&input, &[]);
    let (same, total) = agreeing(&perf, &ours);
    let in_vfork = "vfork;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;outer;spawn;__vfork";
    let (theirs, mine) = (through(&perf, in_vfork), through(&ours, in_vfork));
    eprintln!(
        "{same} of {total} samples' stacks equal; through __vfork: perf {theirs}, ours {mine}"
    );
    assert!(total > 1000, "{total} samples");
    assert!(
        theirs * 2 > total,
        "perf: {theirs} of {total} through __vfork"
    );
    assert!(
        same * 100 >= total * 99,
        "{same} of {total} samples' stacks equal"
    );
    assert_eq!(mine, theirs, "samples through __vfork");
    let (problems, compared) = compare_children(&input);
    assert!(compared > 8, "{compared} rows compared");
    assert!(
        problems.is_empty(),
        "{}:\n{}",
        name(&input),
        problems.join("\n")
    );
    // Nothing is cut for want of a register: the rows are evaluated where the sample's
    // registers are all known (stacks cut at ld.so's `_start`, code without CFI, are
    // the process's start-up, a few in a thousand).
    let stats = unwind_stats(&input);
    let count = |k: &str| stats[k].as_u64().expect("a count");
    assert_eq!(stats["cut_by"].get("untracked_register"), None, "{stats}");
    assert!(count("cut") * 50 < count("whole"), "{stats}");
}
