//! The x86_64 walk through code its binary's table has no FDE for (a binary's `.fini`,
//! node's builtins), where perf 6.1's libunwind (1.6.2, src/x86_64/Gstep.c) guesses by
//! the frame pointer (perfdata-report/src/unwind/frame_chain.rs), on real x86_64 CFI:
//! Debian 12's coreutils 9.1 `cat` as fixtures/unwind/symfs/usr/bin/cat keeps it (its
//! `.eh_frame` and `.eh_frame_hdr`, the code left out; fixtures/README.md). In it:
//!
//! - `.fini` at 0x6da0 (`sub $8,%rsp; add $8,%rsp; ret`): no FDE covers it;
//! - the function at 0x6a80, whose `call fileno@plt` at 0x6a87 returns to 0x6a8c: from
//!   0x6a84 its row is CFA rsp+32, the return address at CFA-8.
//!
//! The samples are built as perf records one with `--call-graph dwarf` on x86_64
//! (REGS_USER with mask 0xff0fff, the stack copy from rsp), in `.fini`'s first
//! instruction, the shape of the `true` sample unwind_fork_oracle once failed on: at the
//! stack pointer the return address of the real caller, at rbp a frame record further
//! up. libunwind takes the frame record (where framehop's own rule took the word at the
//! stack pointer), and its caller's stack pointer is the frame's plus 16, not rbp+16.

use perfdata_report::unwind::{Arch, UserState};

mod walk;

/// Where `cat` is mapped (one read-execute map of its first 0x8000 bytes, at offset 0).
const BASE: u64 = 0x5555_0000_0000;
/// The stack pointer of the samples.
const SP: u64 = 0x7ffc_0000_1000;
/// perf's `sample_regs_user` for `--call-graph dwarf` on x86_64: ax..ss, r8..r15.
const X86_MASK: u64 = 0xff0fff;
/// `.fini`'s first instruction.
const FINI: u64 = BASE + 0x6da0;
/// The word at the stack pointer: a return address into `cat` (after the `call` at
/// 0x36dd), which framehop's rule took and libunwind does not.
const AT_SP: u64 = BASE + 0x36e2;
/// The return address in the frame record: after `call fileno@plt` at 0x6a87.
const AT_RBP: u64 = BASE + 0x6a8c;

/// A sample at `ip` with frame pointer `rbp`, stack pointer [`SP`]; the other registers
/// hold values no frame uses.
fn sample(ip: u64, rbp: u64, stack: &[u64]) -> UserState {
    // ax, bx, cx, dx, si, di, bp, sp, ip, flags, cs, ss, r8..r15.
    let mut regs: Vec<u64> = (0..6).map(|r| 0xdead_0000 + r).collect();
    regs.extend([rbp, SP, ip, 0x206, 0x33, 0x2b]);
    regs.extend((8..16).map(|r| 0xdead_0000 + r));
    UserState {
        abi: 2,
        mask: X86_MASK,
        regs,
        stack: stack.iter().flat_map(|w| w.to_le_bytes()).collect(),
        stack_size: 8192,
    }
}

/// The stack from [`SP`]: the return address at the stack pointer, a word, the frame
/// record at SP+16 (a saved rbp of 0, then [`AT_RBP`]), then the function at 0x6a80's
/// frame as libunwind places it (its stack pointer SP+16, so its CFA SP+48): at SP+40,
/// its return address, 1 (what `__run_exit_handlers`' slot held in the dash recording).
fn stack() -> Vec<u64> {
    vec![AT_SP, 0x2222, 0, AT_RBP, 0x3333, 1, 0x4444, 0x5555]
}

/// perfdata's user frames of `user`.
fn unwind(user: &UserState) -> Vec<u64> {
    walk::unwind("unwind/symfs/usr/bin/cat", BASE, 0x8000, Arch::X86_64, user).0
}

#[test]
fn code_without_an_fde_is_walked_by_its_frame_pointer_and_no_frame_of_address_0_is_given() {
    let frames = unwind(&sample(FINI, SP + 16, &stack()));
    // `.fini`, then the frame record's return address less one; its caller's return
    // address, read at libunwind's CFA-8, is 1: a frame of address 0, which perf prints
    // no entry for, and then no map (the walk ends).
    assert_eq!(frames, [FINI, AT_RBP - 1], "{frames:x?}");
}

#[test]
fn code_without_an_fde_and_rbp_0_ends_the_stack() {
    // rbp 0 is the x86_64 ABI's end of the chain (ld.so's `_start` as exec leaves it):
    // libunwind stops; the word at the stack pointer is not a return address to it.
    let frames = unwind(&sample(FINI, 0, &stack()));
    assert_eq!(frames, [FINI], "{frames:x?}");
}

#[test]
fn a_frame_pointer_below_the_stack_pointer_is_not_believed() {
    // libunwind's "incorrect guess": rbp below its CFA (the stack pointer here).
    let frames = unwind(&sample(FINI, SP - 16, &stack()));
    assert_eq!(frames, [FINI], "{frames:x?}");
}
