//! Signal frames: a walk through a signal handler reaches the sigreturn trampoline the
//! handler returns to (glibc's `__restore_rt` on x86_64, the vDSO's
//! `__kernel_rt_sigreturn` on arm64), whose CFI is a DWARF expression framehop does not
//! evaluate. The trampoline is known by its code, as libunwind and perf's libdw path know
//! it, and the interrupted registers are read from the `ucontext` the kernel put on the
//! stack just above it (the handler's return pops only the return address).

use super::regs::{AllRegs, Arch};

/// x86_64 `mov $0xf,%rax; syscall` (rt_sigreturn is 15).
const X86_64_SIGRETURN: &[u8] = &[0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05];
/// arm64 `mov x8, #139; svc #0` (0xd2801168, 0xd4000001, little-endian).
const ARM64_SIGRETURN: &[u8] = &[0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4];

/// Trampolines kept per DSO: a libc has one; the rest is a bound against a hostile file.
pub(crate) const MAX_TRAMPOLINES: usize = 8;

/// The sigreturn trampoline's code for `arch`.
pub(crate) fn trampoline_code(arch: Arch) -> &'static [u8] {
    match arch {
        Arch::X86_64 => X86_64_SIGRETURN,
        Arch::Aarch64 => ARM64_SIGRETURN,
    }
}

/// The offsets in `code` where `arch`'s trampoline starts (at most [`MAX_TRAMPOLINES`]).
pub(crate) fn find_trampolines(code: &[u8], arch: Arch) -> Vec<u64> {
    memchr::memmem::find_iter(code, trampoline_code(arch))
        .take(MAX_TRAMPOLINES)
        .map(|at| at as u64)
        .collect()
}

/// Where the kernel's signal frame keeps the interrupted registers, from the stack
/// pointer at the trampoline (the handler's entry stack pointer plus what its return
/// popped):
///
/// - x86_64: `struct rt_sigframe { char *pretcode; struct ucontext uc; siginfo_t info; }`,
///   the return pops `pretcode`, so sp is `&uc`. `uc_mcontext` is at 40 (after
///   `uc_flags`, `uc_link` and the 24-byte `uc_stack`), its `gregs` in the order R8..R15,
///   RDI, RSI, RBP, RBX, RDX, RAX, RCX, RSP, RIP: RBP at 40+10*8, RSP at 40+15*8, RIP at
///   40+16*8.
/// - arm64: `struct rt_sigframe { struct siginfo info; struct ucontext uc; }` at sp (the
///   return is through lr, nothing popped): `info` is 128 bytes, `uc_mcontext` at 176 in
///   `uc` (`uc_flags`, `uc_link`, `uc_stack`, `uc_sigmask`, 120 unused bytes, aligned to
///   16), and `struct sigcontext { fault_address; regs[31]; sp; pc; pstate; }`: x29 at
///   128+176+8+29*8, x30 after it, sp at 128+176+256, pc after it (libunwind's
///   src/aarch64/offsets.h says the same: `LINUX_UC_MCONTEXT_OFF` 0xb0, `LINUX_SC_X29_OFF`
///   0xf0, `LINUX_SC_SP_OFF` 0x100, `LINUX_SC_PC_OFF` 0x108). The x86_64 offsets were
///   checked on a live recording (`unwind_oracle`'s signal handler workload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Interrupted {
    /// The interrupted instruction's address (exact, not a return address).
    pub(crate) ip: u64,
    /// Its stack pointer.
    pub(crate) sp: u64,
    /// Its frame pointer (rbp, x29).
    pub(crate) fp: u64,
    /// Its link register (x30; arm64 only, 0 on x86_64).
    pub(crate) lr: u64,
    /// Every integer register the signal frame saved (those in the stack copy), for a
    /// CFI row that needs more than the four above ([`super::row`]).
    pub(crate) all: AllRegs,
}

/// x86_64's `gregs` as DWARF numbers, in the order the kernel saves them: R8..R15, RDI,
/// RSI, RBP, RBX, RDX, RAX, RCX, RSP, RIP (at `uc_mcontext`, 40 bytes into `uc`).
const X86_64_GREGS: [u16; 17] = [8, 9, 10, 11, 12, 13, 14, 15, 5, 4, 6, 3, 1, 0, 2, 7, 16];
/// arm64's sigcontext `regs[0]` from sp: siginfo (128), `uc_mcontext` (176), its
/// `fault_address` (8); x0..x30 then sp and pc follow.
const ARM64_X0: u64 = 128 + 176 + 8;

/// The registers of the interrupted code, read from the signal frame at `sp` (the stack
/// pointer at the trampoline) with `read`; None where a word is not in the stack copy.
pub(crate) fn interrupted(
    arch: Arch,
    sp: u64,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<Interrupted> {
    let mut at = |offset: u64| read(sp.checked_add(offset)?).ok();
    let mut all = AllRegs::new(arch);
    match arch {
        Arch::X86_64 => {
            for (i, dwarf) in (0u64..).zip(X86_64_GREGS) {
                all.set(dwarf, at(40 + i * 8));
            }
        }
        Arch::Aarch64 => {
            // x0..x30, then sp (DWARF 31).
            for r in 0..=31u16 {
                all.set(r, at(ARM64_X0 + u64::from(r) * 8));
            }
            all.set_pc(at(ARM64_X0 + 32 * 8));
        }
    }
    Some(match arch {
        Arch::X86_64 => Interrupted {
            ip: at(168)?,
            sp: at(160)?,
            fp: at(120)?,
            lr: 0,
            all,
        },
        Arch::Aarch64 => Interrupted {
            ip: at(568)?,
            sp: at(560)?,
            fp: at(544)?,
            lr: at(552)?,
            all,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trampolines_are_found_by_their_code() {
        // glibc 2.36's __restore_rt as objdump shows it, after the nop its FDE starts at.
        let mut code = vec![0x90; 16];
        code.extend_from_slice(&[0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05]);
        code.extend_from_slice(&[0x0f, 0x1f, 0x80, 0, 0, 0, 0]);
        assert_eq!(find_trampolines(&code, Arch::X86_64), [16]);
        assert_eq!(find_trampolines(&code, Arch::Aarch64), [] as [u64; 0]);
        // `mov $0xf,%eax; syscall` (another encoding) is not the trampoline libunwind knows.
        assert_eq!(
            find_trampolines(&[0xb8, 0x0f, 0, 0, 0, 0x0f, 0x05], Arch::X86_64),
            [] as [u64; 0]
        );
        let arm = [
            0x1f, 0x20, 0x03, 0xd5, 0x68, 0x11, 0x80, 0xd2, 0x01, 0, 0, 0xd4,
        ];
        assert_eq!(find_trampolines(&arm, Arch::Aarch64), [4]);
        // A hostile file full of them: a bounded list.
        assert_eq!(
            find_trampolines(&X86_64_SIGRETURN.repeat(1000), Arch::X86_64).len(),
            MAX_TRAMPOLINES
        );
    }

    #[test]
    fn the_interrupted_registers_are_read_from_the_signal_frame() {
        let sp = 0x7ffc_0000_1000u64;
        // Each word holds its own offset from sp.
        let mut read = |addr: u64| {
            if addr - sp < 1024 {
                Ok(addr - sp)
            } else {
                Err(())
            }
        };
        let x86 = interrupted(Arch::X86_64, sp, &mut read).expect("in the copy");
        assert_eq!((x86.ip, x86.sp, x86.fp), (168, 160, 120));
        let arm = interrupted(Arch::Aarch64, sp, &mut read).expect("in the copy");
        // libunwind's offsets (src/aarch64/offsets.h) after the 128-byte siginfo.
        let sc = 128 + 0xb0;
        let want = (sc + 0x108, sc + 0x100, sc + 0xf0, sc + 0xf8);
        assert_eq!((arm.ip, arm.sp, arm.fp, arm.lr), want);
        // The whole set agrees: x86_64's rdi (DWARF 5) is gregs[8], rbx (3) gregs[11];
        // arm64's x0 is sigcontext.regs[0].
        assert_eq!(x86.all.get(5), Some(40 + 8 * 8));
        assert_eq!(x86.all.get(3), Some(40 + 11 * 8));
        assert_eq!(
            (x86.all.ip(), x86.all.get(7), x86.all.get(6)),
            (Some(168), Some(160), Some(120))
        );
        assert_eq!(arm.all.get(0), Some(sc + 8));
        assert_eq!(
            (
                arm.all.ip(),
                arm.all.get(31),
                arm.all.get(29),
                arm.all.get(30)
            ),
            (Some(want.0), Some(want.1), Some(want.2), Some(want.3))
        );
        let mut short = |addr: u64| if addr - sp < 164 { Ok(0) } else { Err(()) };
        assert_eq!(
            interrupted(Arch::X86_64, sp, &mut short),
            None,
            "rip outside"
        );
        assert_eq!(interrupted(Arch::X86_64, u64::MAX - 8, &mut read), None);
    }
}
