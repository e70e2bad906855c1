//! The walk of one sample's stack, frame by frame with framehop's `unwind_frame` (so that
//! the registers are at hand at each frame): through a signal frame the walk goes on from
//! the registers the kernel saved ([`super::signal`]), where framehop alone stops.

use framehop::aarch64::UnwindRegsAarch64;
use framehop::x86_64::UnwindRegsX86_64;
use framehop::{Error as WalkError, FrameAddress};

use super::regs::Arch;
use super::signal::{self, Interrupted};
use super::Cut;

/// The end of a walk.
pub(super) enum End {
    Whole,
    /// Cut, and the DSO of the frame it was cut at (when a binary is to blame).
    Cut(Cut, Option<crate::process::DsoId>),
}

/// What to do after a frame.
pub(super) enum Step {
    /// Unwind it with its CFI.
    Go,
    /// It is a sigreturn trampoline: go on from the signal frame's registers.
    Signal,
    /// Stop here.
    End(End),
}

/// An architecture's unwind registers, as the walk needs them.
pub(super) trait Regs {
    /// The architecture whose signal frame layout applies.
    const ARCH: Arch;
    /// The stack pointer.
    fn sp(&self) -> u64;
    /// The registers of the code a signal interrupted.
    fn interrupted(at: &Interrupted) -> Self;
}

impl Regs for UnwindRegsX86_64 {
    const ARCH: Arch = Arch::X86_64;
    fn sp(&self) -> u64 {
        UnwindRegsX86_64::sp(self)
    }
    fn interrupted(at: &Interrupted) -> Self {
        UnwindRegsX86_64::new(at.ip, at.sp, at.fp)
    }
}

impl Regs for UnwindRegsAarch64 {
    const ARCH: Arch = Arch::Aarch64;
    fn sp(&self) -> u64 {
        UnwindRegsAarch64::sp(self)
    }
    fn interrupted(at: &Interrupted) -> Self {
        UnwindRegsAarch64::new(at.lr, at.sp, at.fp)
    }
}

/// Walk from `ip` and `regs`, handing each frame to `frame`, which says how to go on;
/// `copy_end` is the address just past the stack copy (a read at or past it is the copy
/// being too short, not the CFI being wrong).
pub(super) fn walk<U>(
    unwinder: &U,
    ip: u64,
    mut regs: U::UnwindRegs,
    cache: &mut U::Cache,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
    frame: &mut impl FnMut(FrameAddress) -> Step,
    copy_end: u64,
) -> End
where
    U: framehop::Unwinder,
    U::UnwindRegs: Regs,
{
    let mut address = FrameAddress::InstructionPointer(ip);
    loop {
        match frame(address) {
            Step::End(end) => return end,
            Step::Signal => {
                let arch = <U::UnwindRegs as Regs>::ARCH;
                let Some(at) = signal::interrupted(arch, regs.sp(), read) else {
                    return End::Cut(Cut::SignalFrameOutsideCopy, None);
                };
                // The interrupted instruction is exact (perf gives it as is, not less
                // one), and its registers are all known: a first frame's.
                regs = U::UnwindRegs::interrupted(&at);
                address = FrameAddress::InstructionPointer(at.ip);
                continue;
            }
            Step::Go => {}
        }
        match unwinder.unwind_frame(address, &mut regs, cache, read) {
            Ok(Some(ra)) => match FrameAddress::from_return_address(ra) {
                Some(next) => address = next,
                None => return End::Cut(Cut::NoCfi, None),
            },
            Ok(None) => return End::Whole,
            Err(WalkError::CouldNotReadStack(addr)) if addr >= copy_end => {
                return End::Cut(Cut::StackTooShort, None)
            }
            Err(_) => return End::Cut(Cut::NoCfi, None),
        }
    }
}
