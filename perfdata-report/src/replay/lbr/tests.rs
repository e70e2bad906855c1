//! The expected frames are derived by hand from perf 6.1's util/machine.c
//! (resolve_lbr_callchain_sample, lbr_callchain_add_kernel_ip, lbr_callchain_add_lbr_ip,
//! add_callchain_ip's cpumode switches).

use super::*;
use crate::process::Machine;
use crate::replay::chain::resolve_chain;

const K1: u64 = 0xffff_ffff_8100_0010;
const K2: u64 = 0xffff_ffff_8100_0020;
/// The user frame the kernel recorded: perf does not use it for an LBR call stack.
const RECORDED_USER: u64 = 0x7f00_0000_1234;
/// Branch entries (from, to), the most recent first: the sampled function was called
/// from F0 (at T0), its caller from F1, and so on.
const BRANCHES: [(u64, u64); 3] = [
    (0x40_1581, 0x41_b3b0),
    (0x42_089e, 0x40_14e0),
    (0x40_1b68, 0x42_0410),
];

fn chain() -> Vec<u64> {
    vec![
        PERF_CONTEXT_KERNEL,
        K1,
        K2,
        PERF_CONTEXT_USER,
        RECORDED_USER,
    ]
}

fn words(branches: &[(u64, u64)], first_to: u64, order: Order) -> Option<Vec<u64>> {
    let mut out = vec![99];
    lbr_callchain(&chain(), branches, first_to, order, MAX_FRAMES, &mut out).then_some(out)
}

/// The frames `words` resolve to: (ip, looked up in kernel mode), leaf first.
fn frames(words: &[u64]) -> Vec<(u64, bool)> {
    let mut m = Machine::new();
    let mut f = Vec::new();
    resolve_chain(&mut m, 1, 1, words, 0, &mut f);
    f.iter().map(|l| (l.ip, l.kernel)).collect()
}

#[test]
fn callee_walk_is_the_kernel_part_then_the_first_to_then_every_from() {
    let w = words(&BRANCHES, 0, Order::Callee).unwrap();
    // add_kernel_ip walks ips[0..=3] (KERNEL: kernel mode; USER: user mode), then
    // add_lbr_ip adds entries[0].to and from[0], from[1], from[2], all in user mode.
    assert_eq!(
        frames(&w),
        [
            (K1, true),
            (K2, true),
            (0x41_b3b0, false),
            (0x40_1581, false),
            (0x42_089e, false),
            (0x40_1b68, false),
        ]
    );
}

#[test]
fn caller_walk_looks_the_kernel_entries_up_as_user_addresses() {
    let w = words(&BRANCHES, 0, Order::Caller).unwrap();
    // add_lbr_ip walks from[2], from[1], from[0], then entries[0].to; add_kernel_ip
    // then walks ips[3] (USER), ips[2], ips[1] in user mode, and ips[0] (KERNEL) last.
    // Printed from the leaf, as every chain is kept here.
    assert_eq!(
        frames(&w),
        [
            (K1, false),
            (K2, false),
            (0x41_b3b0, false),
            (0x40_1581, false),
            (0x42_089e, false),
            (0x40_1b68, false),
        ]
    );
}

#[test]
fn an_empty_stack_reads_entries0_to_only_walked_from_the_callee() {
    let past = 0xffff_ffff_8da7_8b04;
    let w = words(&[], past, Order::Callee).unwrap();
    assert_eq!(frames(&w), [(K1, true), (K2, true), (past, false)]);
    let w = words(&[], past, Order::Caller).unwrap();
    assert_eq!(frames(&w), [(K1, false), (K2, false)]);
}

#[test]
fn markers_among_the_branches_switch_the_mode_or_give_the_recorded_chain_back() {
    // A `to` that is PERF_CONTEXT_KERNEL is a marker to add_callchain_ip: the froms
    // after it are looked up in kernel mode.
    let w = words(&[], PERF_CONTEXT_KERNEL, Order::Callee).unwrap();
    assert_eq!(frames(&w), [(K1, true), (K2, true)]);
    let b = [(0x40_1581, PERF_CONTEXT_KERNEL), (0x42_089e, 0x40_14e0)];
    let w = words(&b, 0, Order::Callee).unwrap();
    assert_eq!(
        frames(&w),
        [(K1, true), (K2, true), (0x40_1581, true), (0x42_089e, true)]
    );
    // Any other marker ends perf's LBR walk, which then resolves the recorded chain.
    assert_eq!(words(&[(u64::MAX, 0x1000)], 0, Order::Callee), None);
    // As does a chain without PERF_CONTEXT_USER in its first 127 entries.
    let mut out = Vec::new();
    assert!(!lbr_callchain(
        &[PERF_CONTEXT_KERNEL, K1],
        &BRANCHES,
        0,
        Order::Callee,
        MAX_FRAMES,
        &mut out
    ));
    let mut long = vec![PERF_CONTEXT_KERNEL];
    long.extend(std::iter::repeat_n(K1, 126));
    long.push(PERF_CONTEXT_USER);
    assert!(!lbr_callchain(
        &long,
        &BRANCHES,
        0,
        Order::Callee,
        MAX_FRAMES,
        &mut out
    ));
    assert!(out.is_empty());
    // perf's --max-stack bounds that search alone: with 2, PERF_CONTEXT_USER third is
    // not found; with 3 it is, and the branch stack is then used whole.
    let kernel_two = [PERF_CONTEXT_KERNEL, K1, PERF_CONTEXT_USER, 0x40_0000];
    assert!(!lbr_callchain(
        &kernel_two,
        &BRANCHES,
        0,
        Order::Callee,
        2,
        &mut out
    ));
    assert!(lbr_callchain(
        &kernel_two,
        &BRANCHES,
        0,
        Order::Callee,
        3,
        &mut out
    ));
    assert_eq!(out.len(), 3 + 1 + BRANCHES.len());
}

#[test]
fn the_word_past_a_record_comes_from_the_records_after_it() {
    // A 16-byte record whose (empty) entries would start at its end: entries[0].to is
    // bytes 8..16 of what follows.
    let record = [0u8; 16];
    let mut b = match Beyond::first_to(&record, 16, Endian::Little, &chain(), 0) {
        Err(b) => b,
        Ok(w) => panic!("read {w:#x} inside the record"),
    };
    // An 8-byte record (FINISHED_ROUND) first, then another: the word is the second's
    // first 8 bytes.
    assert_eq!(
        b.feed(&[8, 0, 0, 0, 0, 0, 8, 0], Order::Callee, MAX_FRAMES),
        None
    );
    let next = 0x41_b3b0u64.to_le_bytes();
    let w = b.feed(&next, Order::Callee, MAX_FRAMES).unwrap();
    assert_eq!(frames(&w), [(K1, true), (K2, true), (0x41_b3b0, false)]);
    // Where the word lies inside the record (fields after the branch stack), it is
    // read there.
    let mut record = [0u8; 32];
    record[16..24].copy_from_slice(&0x1234u64.to_be_bytes());
    assert_eq!(
        Beyond::first_to(&record, 8, Endian::Big, &chain(), 0).ok(),
        Some(0x1234)
    );
}

#[test]
fn a_waiting_sample_takes_the_next_records_bytes_of_its_stream_only() {
    let mut c = CallStacks::new(Order::Callee, None);
    let beyond = |stream| match Beyond::first_to(&[0; 8], 8, Endian::Little, &chain(), stream) {
        Err(b) => b,
        Ok(_) => unreachable!(),
    };
    c.wait(beyond(0), 7);
    let mut next = [0u8; 16];
    next[8..].copy_from_slice(&0x40_14e0u64.to_le_bytes());
    let (held, w) = c.feed(&next, 0).unwrap();
    assert_eq!(held, 7);
    assert_eq!(w.last(), Some(&0x40_14e0));
    // Fed once: nothing waits any more.
    assert_eq!(c.feed(&next, 0), None);
    // Another data file's record is not what perf read after it.
    c.wait(beyond(0), 7);
    assert_eq!(c.feed(&next, 1), None);
    assert_eq!(c.feed(&next, 0), None);
    // A round may let the sample out: it waits no more.
    c.wait(beyond(0), 7);
    c.round();
    assert_eq!(c.feed(&next, 0), None);
}
