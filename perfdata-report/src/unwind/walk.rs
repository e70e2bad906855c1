//! The walk of one sample's stack, frame by frame with framehop's `unwind_frame` (so that
//! the registers are at hand at each frame): through a signal frame the walk goes on from
//! the registers the kernel saved ([`super::signal`]), where framehop alone stops.

use framehop::aarch64::UnwindRegsAarch64;
use framehop::x86_64::UnwindRegsX86_64;
use framehop::FrameAddress;

use super::frame_chain::{self, Stop};
use super::regs::{AllRegs, Arch};
use super::row::{Fail, FullRow, Outcome, Row};
use super::signal::{self, Interrupted};
use super::Cut;

/// The end of a walk.
pub(super) enum End {
    Whole,
    /// A return address read as 0 (in the copy, or as perf reads a word beyond it): perf's
    /// libunwind steps to it, perf gives it as a frame of address 0 less one, and its
    /// next step finds no map there and ends the stack.
    ZeroReturn,
    /// Cut, and the DSO of the frame it was cut at (when a binary is to blame).
    Cut(Cut, Option<crate::process::DsoId>),
}

/// What to do after a frame.
pub(super) enum Step {
    /// Unwind it with its CFI.
    Go,
    /// It is a sigreturn trampoline: go on from the signal frame's registers.
    Signal,
    /// Its CFI row needs a register framehop does not keep: evaluate it here.
    Row(Row),
    /// Its binary's table has no FDE for it: libunwind's frame-chain guess
    /// ([`super::frame_chain`]; x86_64).
    FrameChain,
    /// Stop here.
    End(End),
}

/// An architecture's unwind registers, as the walk needs them.
pub(super) trait Regs {
    /// The architecture whose signal frame layout applies.
    const ARCH: Arch;
    /// The stack pointer.
    fn sp(&self) -> u64;
    /// The frame pointer.
    fn fp(&self) -> u64;
    /// The registers of the code a signal interrupted.
    fn interrupted(at: &Interrupted) -> Self;
    /// A caller's registers, from its return address, stack and frame pointer (arm64's
    /// lr is the return address, as framehop leaves it).
    fn caller(ra: u64, sp: u64, fp: u64) -> Self;
}

impl Regs for UnwindRegsX86_64 {
    const ARCH: Arch = Arch::X86_64;
    fn sp(&self) -> u64 {
        UnwindRegsX86_64::sp(self)
    }
    fn fp(&self) -> u64 {
        UnwindRegsX86_64::bp(self)
    }
    fn interrupted(at: &Interrupted) -> Self {
        UnwindRegsX86_64::new(at.ip, at.sp, at.fp)
    }
    fn caller(ra: u64, sp: u64, fp: u64) -> Self {
        UnwindRegsX86_64::new(ra, sp, fp)
    }
}

impl Regs for UnwindRegsAarch64 {
    const ARCH: Arch = Arch::Aarch64;
    fn sp(&self) -> u64 {
        UnwindRegsAarch64::sp(self)
    }
    fn fp(&self) -> u64 {
        UnwindRegsAarch64::fp(self)
    }
    fn interrupted(at: &Interrupted) -> Self {
        UnwindRegsAarch64::new(at.lr, at.sp, at.fp)
    }
    fn caller(ra: u64, sp: u64, fp: u64) -> Self {
        UnwindRegsAarch64::new(ra, sp, fp)
    }
}

/// Walk from `ip` and `regs` (`all`: the sampled frame's whole register set), handing
/// each frame to `frame`, which says how to go on; `past_end` counts the words read at or
/// past the copy's end (a walk ending after one ends for the copy being too short, not
/// for the CFI being wrong). `full_row` gives a frame's whole CFI row: where a row needs a register
/// framehop let go of (glibc's `_dl_runtime_resolve`, its CFA in rbx, mid-stack), the
/// frames since the last whole register set are walked again with every register.
#[allow(clippy::too_many_arguments)] // the walk's state, each a different thing
pub(super) fn walk<U>(
    unwinder: &U,
    ip: u64,
    mut regs: U::UnwindRegs,
    all: AllRegs,
    cache: &mut U::Cache,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
    frame: &mut impl FnMut(FrameAddress) -> Step,
    full_row: &mut impl FnMut(FrameAddress) -> Option<FullRow>,
    past_end: &dyn Fn() -> u32,
) -> End
where
    U: framehop::Unwinder,
    U::UnwindRegs: Regs,
{
    let mut address = FrameAddress::InstructionPointer(ip);
    // The last frame whose registers are all known, and the frames walked since.
    let mut since = (all, Vec::new());
    loop {
        match frame(address) {
            Step::End(end) => return end,
            Step::Signal => {
                let arch = <U::UnwindRegs as Regs>::ARCH;
                let before = past_end();
                let at = signal::interrupted(arch, regs.sp(), read);
                // Registers read beyond the copy are perf's zeros, not the signal
                // frame's: counted as the frame outside the copy, as before.
                let Some(at) = at.filter(|_| past_end() == before) else {
                    return End::Cut(Cut::SignalFrameOutsideCopy, None);
                };
                // The interrupted instruction is exact (perf gives it as is, not less
                // one), and its registers are all known: a first frame's.
                regs = U::UnwindRegs::interrupted(&at);
                address = FrameAddress::InstructionPointer(at.ip);
                since = (at.all, Vec::new());
                continue;
            }
            Step::Row(row) => {
                // Only a frame whose registers are all known can be unwound by it.
                let Some(known) = recover(&since, full_row, read)
                    .filter(|k| k.ip() == Some(address.address()) && k.sp() == Some(regs.sp()))
                else {
                    return End::Cut(Cut::UntrackedRegister, None);
                };
                // The sampled (or interrupted) frame itself: its registers are recorded.
                let sampled = since.1.is_empty();
                since.1.push(address);
                let (ra, sp, fp) = match row.apply(&known, sampled, read) {
                    Ok(Outcome::Caller { ra, sp, fp }) => (ra, sp, fp),
                    Ok(Outcome::Outermost) => return End::Whole,
                    Err(Fail::Untracked) => return End::Cut(Cut::UntrackedRegister, None),
                    Err(Fail::Read(_)) if past_end() > 0 => {
                        return End::Cut(Cut::StackTooShort, None)
                    }
                    Err(Fail::Read(_)) => return End::Cut(Cut::NoCfi, None),
                };
                // Neither the address nor the stack moved: a loop, as framehop says.
                if Some(ra) == known.ip() && Some(sp) == known.get(known.sp_reg()) {
                    return End::Cut(Cut::NoCfi, None);
                }
                if ra == 0 {
                    return End::ZeroReturn;
                }
                regs = U::UnwindRegs::caller(ra, sp, fp);
                match FrameAddress::from_return_address(ra) {
                    Some(next) => address = next,
                    None => return End::Cut(Cut::NoCfi, None),
                }
                continue;
            }
            Step::FrameChain => {
                // Past it only ip, sp and the frame pointer are known (libunwind marks
                // every other register unsaved), so no later row can recover them.
                since.1.push(address);
                let caller = match frame_chain::caller(regs.sp(), regs.fp(), read) {
                    Ok(caller) => caller,
                    Err(Stop::Unread(_)) if past_end() > 0 => {
                        return End::Cut(Cut::StackTooShort, None)
                    }
                    Err(_) => return End::Cut(Cut::NoCfi, None),
                };
                if caller.ra == 0 {
                    return End::ZeroReturn;
                }
                regs = U::UnwindRegs::caller(caller.ra, caller.sp, caller.bp);
                match FrameAddress::from_return_address(caller.ra) {
                    Some(next) => address = next,
                    None => return End::Cut(Cut::NoCfi, None),
                }
                continue;
            }
            Step::Go => {}
        }
        // Past this frame only ip, sp and the frame pointer are known.
        since.1.push(address);
        // framehop ends the stack at a return address of 0 as at one the CFI leaves
        // undefined; its last read of a step is the return address, so a step that read
        // a 0 last and ended read a return address of 0.
        let mut last = None;
        let mut reading = |addr| {
            let word = read(addr);
            last = Some(word);
            word
        };
        match unwinder.unwind_frame(address, &mut regs, cache, &mut reading) {
            Ok(Some(0)) => return End::ZeroReturn,
            Ok(Some(ra)) => match FrameAddress::from_return_address(ra) {
                Some(next) => address = next,
                None => return End::Cut(Cut::NoCfi, None),
            },
            Ok(None) if last == Some(Ok(0)) => return End::ZeroReturn,
            Ok(None) => return End::Whole,
            Err(_) if past_end() > 0 => return End::Cut(Cut::StackTooShort, None),
            Err(_) => return End::Cut(Cut::NoCfi, None),
        }
    }
}

/// The whole register set of the frame after `since`'s path: the registers of its first
/// frame, carried through each frame's whole CFI row (None where a row is not known).
fn recover(
    since: &(AllRegs, Vec<FrameAddress>),
    full_row: &mut impl FnMut(FrameAddress) -> Option<FullRow>,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Option<AllRegs> {
    let (mut regs, path) = (since.0, &since.1);
    for (i, &at) in path.iter().enumerate() {
        regs = full_row(at)?.caller(&regs, i == 0, read)?;
    }
    Some(regs)
}
