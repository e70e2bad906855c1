//! The aarch64 walk (issue #26 says x86_64 and aarch64; the recordings the other unwind
//! tests make are x86_64's), on real aarch64 CFI: fixtures/unwind/arm64/frames, four
//! functions assembled by llvm-mc from frames.s and laid out by link.py (no aarch64
//! compiler or linker here). `llvm-objdump -d` and `llvm-dwarfdump --eh-frame` of it:
//!
//! - `_start` 0x100: `bl outer` at 0x104; its row says x30 undefined (the first frame);
//! - `outer` 0x110: `sub sp, sp, #32; stp x29, x30, [sp, #16]; add x29, sp, #16`,
//!   `bl middle` at 0x11c; from 0x118 CFA=sp+32, x29 at CFA-16, x30 at CFA-8 (GCC's
//!   shape);
//! - `middle` 0x130: `stp x29, x30, [sp, #-16]!` (from 0x134 CFA=sp+16, x29 and x30
//!   saved), `mov x29, sp` (from 0x138 CFA=x29+16: clang's shape), `bl leaf` at 0x138;
//! - `leaf` 0x150: no frame, the return address in x30 (the CIE's CFA=sp).
//!
//! A sample is built as perf records one on arm64: REGS_USER with perf's mask for
//! `--call-graph dwarf` (x0..x30, sp, pc: PERF_REG_ARM64_X0..PC, 0..32) and the stack
//! copy from sp, holding what those prologues stored. The frames expected follow from
//! the code: the sampled pc, then each return address (the instruction after a `bl`)
//! less one, as perf gives them.

use perfdata_report::unwind::{Arch, UserState};

mod walk;

/// Where the binary is mapped (one read-execute map of the whole file, at offset 0).
const BASE: u64 = 0x5555_0000_0000;
/// The stack pointer of the samples.
const SP: u64 = 0x7ffc_0000_1000;
/// perf's `sample_regs_user` for `--call-graph dwarf` on arm64: x0..x30, sp, pc.
const ARM64_MASK: u64 = (1 << 33) - 1;

/// A sample at `pc` with frame pointer `x29` and link register `x30`, stack pointer
/// [`SP`]; x0..x28 hold values no frame uses, so that a register taken for another is
/// seen.
fn sample(pc: u64, x29: u64, x30: u64, stack: &[u64]) -> UserState {
    let mut regs: Vec<u64> = (0..29).map(|r| 0xdead_0000 + r).collect();
    regs.extend([x29, x30, SP, pc]);
    UserState {
        abi: 2,
        mask: ARM64_MASK,
        regs,
        stack: stack.iter().flat_map(|w| w.to_le_bytes()).collect(),
        stack_size: 8192,
    }
}

/// The stack above the leaf: `middle`'s frame record at SP ([SP] its caller's x29,
/// outer's SP+32, [SP+8] the return address into `outer`), `outer`'s 32 bytes at SP+16
/// (locals, then its frame record at SP+32: `_start`'s x29 0 and the return address
/// into `_start`), then what was on the stack at `_start` (argc).
fn stack() -> Vec<u64> {
    vec![SP + 32, BASE + 0x120, 0x1111, 0x2222, 0, BASE + 0x108, 1, 0]
}

/// perfdata's user frames of `user`, and how the walk ended (whole or not).
fn unwind(user: &UserState) -> (Vec<u64>, bool) {
    walk::unwind("unwind/arm64/frames", BASE, 0x1000, Arch::Aarch64, user)
}

#[test]
fn a_leaf_under_frame_pointer_and_stack_pointer_frames_unwinds_to_start() {
    // In `leaf` (its second instruction), called from `middle` (x29 = SP, its frame
    // record), called from `outer`, called from `_start`.
    let user = sample(BASE + 0x154, SP, BASE + 0x13c, &stack());
    let (frames, whole) = unwind(&user);
    assert_eq!(
        frames,
        [BASE + 0x154, BASE + 0x13b, BASE + 0x11f, BASE + 0x107],
        "leaf, middle, outer, _start: {frames:x?}"
    );
    assert!(whole, "the walk ends at _start's undefined return address");
}

#[test]
fn a_sample_in_a_prologue_takes_the_return_address_from_the_stack() {
    // In `middle` just after its `stp` (0x134): the frame record is stored, x29 is
    // still outer's, and the CFA is sp+16; x30 still holds the return address too, but
    // the row says it is at CFA-8. Without the leaf, middle's frame is the first.
    let user = sample(BASE + 0x134, SP + 32, BASE + 0x120, &stack());
    let (frames, whole) = unwind(&user);
    assert_eq!(
        frames,
        [BASE + 0x134, BASE + 0x11f, BASE + 0x107],
        "middle, outer, _start: {frames:x?}"
    );
    assert!(whole);
}
