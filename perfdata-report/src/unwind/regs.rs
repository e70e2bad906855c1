//! A sample's user registers and stack copy (REGS_USER, STACK_USER), and which of perf's
//! register numbers (arch/*/include/uapi/asm/perf_regs.h) the unwinder needs per
//! architecture.

/// The architectures whose user stacks can be unwound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    /// x86_64: the unwinder needs IP, SP and BP.
    X86_64,
    /// arm64: the unwinder needs PC, SP, FP (x29) and LR (x30).
    Aarch64,
}

impl Arch {
    /// The architecture the ARCH feature (`uname -m` of the recording machine) names.
    pub fn from_uname(machine: &str) -> Option<Arch> {
        match machine {
            "x86_64" | "amd64" => Some(Arch::X86_64),
            "aarch64" | "arm64" => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// This machine's architecture (for recordings without an ARCH feature: pipe mode).
    pub fn host() -> Option<Arch> {
        Arch::from_uname(std::env::consts::ARCH)
    }
}

/// PERF_SAMPLE_REGS_ABI_NONE: the sample has no user registers.
pub(crate) const ABI_NONE: u64 = 0;
/// PERF_SAMPLE_REGS_ABI_64: the sample's user registers are a 64-bit process's.
pub(crate) const ABI_64: u64 = 2;

/// perf's register numbers: PERF_REG_X86_{BP,SP,IP}.
pub(crate) const X86_BP: u32 = 6;
pub(crate) const X86_SP: u32 = 7;
pub(crate) const X86_IP: u32 = 8;
/// PERF_REG_ARM64_{X29,LR,SP,PC}.
pub(crate) const ARM64_FP: u32 = 29;
pub(crate) const ARM64_LR: u32 = 30;
pub(crate) const ARM64_SP: u32 = 31;
pub(crate) const ARM64_PC: u32 = 32;

/// DWARF register numbers the walk gives special meaning: x86_64's return address
/// column (rip), stack and frame pointer; arm64's sp, x29 and x30 (whose column is the
/// return address).
pub(crate) const DWARF_X86_RA: u16 = 16;
pub(crate) const DWARF_X86_SP: u16 = 7;
pub(crate) const DWARF_X86_BP: u16 = 6;
pub(crate) const DWARF_ARM64_FP: u16 = 29;
pub(crate) const DWARF_ARM64_LR: u16 = 30;
pub(crate) const DWARF_ARM64_SP: u16 = 31;
/// Where [`AllRegs`] keeps arm64's pc (DWARF gives it no column; the return address is
/// x30's).
const ARM64_PC_SLOT: usize = 32;

/// perf's x86_64 register numbers (AX, BX, CX, DX, SI, DI, BP, SP, IP, then R8..R15 at
/// 16..23) as DWARF's (rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8..r15
/// 8..15, the return address rip 16).
const X86_PERF_TO_DWARF: [(u32, u16); 17] = [
    (0, 0),
    (1, 3),
    (2, 2),
    (3, 1),
    (4, 4),
    (5, 5),
    (6, 6),
    (7, 7),
    (8, DWARF_X86_RA),
    (16, 8),
    (17, 9),
    (18, 10),
    (19, 11),
    (20, 12),
    (21, 13),
    (22, 14),
    (23, 15),
];

/// A frame's whole integer register set, by DWARF register number, as the walk has it
/// where every register is known: the sampled frame (REGS_USER) and the frame a signal
/// interrupted (the kernel's sigcontext). framehop's walk keeps only ip, sp and the frame
/// pointer (and lr), so a CFI row that needs another register (glibc's `__vfork` keeps
/// its return address in rdi) is evaluated with these ([`super::row`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AllRegs {
    pub(crate) arch: Arch,
    values: [Option<u64>; 33],
}

impl AllRegs {
    /// No register known yet.
    pub(crate) fn new(arch: Arch) -> AllRegs {
        AllRegs {
            arch,
            values: [None; 33],
        }
    }

    /// The registers a sample recorded (those its mask sampled).
    pub(crate) fn from_user(arch: Arch, user: &UserState) -> AllRegs {
        let mut all = AllRegs::new(arch);
        match arch {
            Arch::X86_64 => {
                for (perf, dwarf) in X86_PERF_TO_DWARF {
                    all.set(dwarf, user.reg(perf));
                }
            }
            Arch::Aarch64 => {
                // perf numbers x0..x30 and sp as DWARF does; its pc (32) is kept apart.
                for r in 0..=ARM64_SP {
                    all.set(r as u16, user.reg(r));
                }
                all.values[ARM64_PC_SLOT] = user.reg(ARM64_PC);
            }
        }
        all
    }

    /// Register `dwarf` (DWARF's number), if known.
    pub(crate) fn get(&self, dwarf: u16) -> Option<u64> {
        let slot = match (self.arch, dwarf) {
            // arm64's pc has no DWARF column; 32 is v0 there, which is not kept.
            (Arch::Aarch64, 32) => return None,
            _ => dwarf as usize,
        };
        self.values.get(slot).copied().flatten()
    }

    /// Set register `dwarf` (out of range: ignored).
    pub(crate) fn set(&mut self, dwarf: u16, value: Option<u64>) {
        if let Some(slot) = self.values.get_mut(dwarf as usize) {
            *slot = value;
        }
    }

    /// Set arm64's pc.
    pub(crate) fn set_pc(&mut self, value: Option<u64>) {
        self.values[ARM64_PC_SLOT] = value;
    }

    /// The frame's instruction pointer.
    pub(crate) fn ip(&self) -> Option<u64> {
        match self.arch {
            Arch::X86_64 => self.get(DWARF_X86_RA),
            Arch::Aarch64 => self.values[ARM64_PC_SLOT],
        }
    }

    /// The stack pointer.
    pub(crate) fn sp(&self) -> Option<u64> {
        self.get(self.sp_reg())
    }

    /// The stack pointer's DWARF number.
    pub(crate) fn sp_reg(&self) -> u16 {
        match self.arch {
            Arch::X86_64 => DWARF_X86_SP,
            Arch::Aarch64 => DWARF_ARM64_SP,
        }
    }

    /// The frame pointer's DWARF number.
    pub(crate) fn fp_reg(&self) -> u16 {
        match self.arch {
            Arch::X86_64 => DWARF_X86_BP,
            Arch::Aarch64 => DWARF_ARM64_FP,
        }
    }

    /// The return address column's DWARF number.
    pub(crate) fn ra_reg(&self) -> u16 {
        match self.arch {
            Arch::X86_64 => DWARF_X86_RA,
            Arch::Aarch64 => DWARF_ARM64_LR,
        }
    }
}

/// What a sample recorded of its user state, as the replay keeps it until the sample's
/// turn: only the valid part (`dyn_size` bytes) of the stack copy is kept.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserState {
    /// PERF_SAMPLE_REGS_ABI_* (0: no user registers, e.g. a kernel thread).
    pub abi: u64,
    /// The attr's sample_regs_user: which registers `regs` holds, lowest bit first.
    pub mask: u64,
    /// The registers, in mask order.
    pub regs: Vec<u64>,
    /// The stack copy from the stack pointer up, cut to its dyn_size.
    pub stack: Vec<u8>,
    /// The stack copy's full size (the attr's sample_stack_user, as recorded).
    pub stack_size: u64,
}

impl UserState {
    /// Register `reg` (perf's number), if the mask sampled it and the registers are
    /// the 64-bit ABI's (PERF_SAMPLE_REGS_ABI_64): a 32-bit process's (ABI_32) are
    /// another architecture's, whose register numbers and tables these are not, so its
    /// samples are not unwound (perf 6.1 gives them no user frames either).
    pub fn reg(&self, reg: u32) -> Option<u64> {
        if self.abi != ABI_64 || reg >= 64 || self.mask & (1 << reg) == 0 {
            return None;
        }
        let below = (self.mask & ((1u64 << reg) - 1)).count_ones() as usize;
        self.regs.get(below).copied()
    }

    /// The u64 at `addr` of the stack copy (which starts at `sp`), little-endian.
    pub fn read(&self, sp: u64, addr: u64) -> Option<u64> {
        let at = usize::try_from(addr.checked_sub(sp)?).ok()?;
        let b = self.stack.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(b.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_are_found_by_their_rank_in_the_mask() {
        // perf's default x86_64 mask for --call-graph dwarf: 0xff0fff (AX..SS, R8..R15).
        let s = UserState {
            abi: 2,
            mask: 0xff0fff,
            regs: (0..20).map(|i| 100 + i).collect(),
            ..Default::default()
        };
        assert_eq!(s.reg(X86_BP), Some(106));
        assert_eq!(s.reg(X86_SP), Some(107));
        assert_eq!(s.reg(X86_IP), Some(108));
        // R8 is bit 16, the 13th register sampled.
        assert_eq!(s.reg(16), Some(112));
        assert_eq!(s.reg(12), None, "DS is not in the mask");
        let compat = UserState {
            abi: 1,
            ..s.clone()
        };
        assert_eq!(
            compat.reg(X86_IP),
            None,
            "ABI 32: another architecture's registers"
        );
        let none = UserState { abi: 0, ..s };
        assert_eq!(none.reg(X86_IP), None, "ABI 0: no registers");
    }

    /// Each sampled register lands on its DWARF number, written here from the two
    /// numberings (perf_regs.h: AX BX CX DX SI DI BP SP IP = 0..8, R8..R15 = 16..23; the
    /// x86-64 psABI's DWARF: rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7,
    /// r8..r15 8..15, the return address 16). A CFI row that restores rbx or computes
    /// the CFA from it reads the wrong register otherwise; no recording of the tests
    /// has one in its sampled frames, so only this test sees a swap.
    #[test]
    fn perfs_x86_64_registers_are_dwarfs_by_name() {
        let s = UserState {
            abi: 2,
            mask: 0xff0fff,
            // Register perf number N holds 1000 + N.
            regs: (0..12).chain(16..24).map(|n| 1000 + n).collect(),
            ..Default::default()
        };
        let all = AllRegs::from_user(Arch::X86_64, &s);
        let by_name = [
            ("rax", 0, 0),
            ("rdx", 1, 3),
            ("rcx", 2, 2),
            ("rbx", 3, 1),
            ("rsi", 4, 4),
            ("rdi", 5, 5),
            ("rbp", 6, 6),
            ("rsp", 7, 7),
            ("r8", 8, 16),
            ("r15", 15, 23),
            ("rip", 16, 8),
        ];
        for (name, dwarf, perf) in by_name {
            assert_eq!(all.get(dwarf), Some(1000 + perf), "{name}");
        }
    }

    #[test]
    fn the_stack_copy_is_read_from_sp_up() {
        let mut stack = vec![0u8; 16];
        stack[8..].copy_from_slice(&0x1122u64.to_le_bytes());
        let s = UserState {
            stack,
            ..Default::default()
        };
        assert_eq!(s.read(0x1000, 0x1008), Some(0x1122));
        assert_eq!(s.read(0x1000, 0x1009), None, "past the copy");
        assert_eq!(s.read(0x1000, 0xff8), None, "below sp");
    }
}
