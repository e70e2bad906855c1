//! CFI rows framehop cannot express: framehop's walk keeps only ip, sp and the frame
//! pointer (and lr on arm64), so a row whose CFA or return address is in another
//! register is beyond it. glibc's `__vfork` is the one every vforking program hits
//! (`pop %rdi; syscall; push %rdi`, its CFI `DW_CFA_register: r16 (rip) in r5 (rdi)`
//! while the return address is off the stack), and the samples in it are most of a
//! vforking program's: framehop would read the return address from the stack where it is
//! not. perf's libunwind tracks every register and goes on.
//!
//! Such rows are found once per DSO (the FDEs whose instructions name an untracked
//! register, and of their rows those that need one) and evaluated here where the walk
//! has the frame's whole register set ([`AllRegs`]: the sampled frame, and the frame a
//! signal interrupted); elsewhere the walk is cut and counted as such
//! ([`super::Cut::UntrackedRegister`]), never as a missing CFI.

use std::ops::Range;

use gimli::{
    BaseAddresses, CallFrameInstruction, CfaRule, CieOrFde, EndianSlice, LittleEndian, Register,
    RegisterRule, UnwindContext, UnwindSection, UnwindTableRow,
};

use super::regs::{AllRegs, Arch};
use super::regs::{
    DWARF_ARM64_FP, DWARF_ARM64_LR, DWARF_ARM64_SP, DWARF_X86_BP, DWARF_X86_RA, DWARF_X86_SP,
};

/// Rows kept per DSO: a glibc has a few; the rest is a bound against a hostile file.
pub(crate) const MAX_ROWS: usize = 1024;

/// Where a register of the caller is, as far as the walk needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Not said: the caller's value is lost (the return address: the outermost frame).
    Undefined,
    /// Unchanged.
    Same,
    /// Saved at CFA + offset.
    Offset(i64),
    /// It is CFA + offset.
    ValOffset(i64),
    /// In that register (DWARF number).
    Register(u16),
    /// A DWARF expression or another rule this walk does not evaluate.
    Other,
}

impl Rule {
    fn from_gimli<T: gimli::ReaderOffset>(rule: &RegisterRule<T>) -> Rule {
        match rule {
            RegisterRule::Undefined => Rule::Undefined,
            RegisterRule::SameValue => Rule::Same,
            RegisterRule::Offset(o) => Rule::Offset(*o),
            RegisterRule::ValOffset(o) => Rule::ValOffset(*o),
            RegisterRule::Register(r) => Rule::Register(r.0),
            _ => Rule::Other,
        }
    }
}

/// One row of a frame's CFI: the CFA and the rules for the return address and the frame
/// pointer (all the walk goes on with).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Row {
    /// CFA = register + offset; None: an expression.
    pub(crate) cfa: Option<(u16, i64)>,
    /// The return address column's rule (x86_64's rip, arm64's x30).
    pub(crate) ra: Rule,
    /// The frame pointer's rule (rbp, x29).
    pub(crate) fp: Rule,
}

/// What evaluating a row gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// The caller's frame: its return address, stack pointer (the CFA) and frame pointer.
    Caller { ra: u64, sp: u64, fp: u64 },
    /// The return address is undefined: this is the outermost frame.
    Outermost,
}

/// Why a row could not be evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fail {
    /// It needs a register not known here (or an expression).
    Untracked,
    /// The stack word at this address could not be read.
    Read(u64),
}

/// The registers framehop's walk keeps, for `arch`: (sp, fp, the return address column).
fn tracked(arch: Arch) -> [u16; 3] {
    match arch {
        Arch::X86_64 => [DWARF_X86_SP, DWARF_X86_BP, DWARF_X86_RA],
        Arch::Aarch64 => [DWARF_ARM64_SP, DWARF_ARM64_FP, DWARF_ARM64_LR],
    }
}

impl Row {
    fn from_gimli<S: gimli::UnwindContextStorage<usize>>(
        row: &UnwindTableRow<usize, S>,
        arch: Arch,
    ) -> Row {
        let [_, fp, ra] = tracked(arch);
        Row {
            cfa: match row.cfa() {
                CfaRule::RegisterAndOffset { register, offset } => Some((register.0, *offset)),
                CfaRule::Expression(_) => None,
            },
            ra: Rule::from_gimli(&row.register(Register(ra))),
            fp: Rule::from_gimli(&row.register(Register(fp))),
        }
    }

    /// Whether the row needs a register framehop's walk does not keep.
    pub(crate) fn needs_untracked(&self, arch: Arch) -> bool {
        let kept = tracked(arch);
        let untracked = |r: u16| !kept.contains(&r);
        self.cfa.is_some_and(|(r, _)| untracked(r))
            || [self.ra, self.fp]
                .iter()
                .any(|rule| matches!(*rule, Rule::Register(r) if untracked(r)))
    }

    /// The caller's frame, from this frame's registers `regs` and its stack (`read`);
    /// `sampled`: `regs` are the ones the sample (or a signal frame) recorded, not ones
    /// walked to ([`saved`]).
    pub(crate) fn apply(
        &self,
        regs: &AllRegs,
        sampled: bool,
        read: &mut impl FnMut(u64) -> Result<u64, ()>,
    ) -> Result<Outcome, Fail> {
        let (base, offset) = self.cfa.ok_or(Fail::Untracked)?;
        let cfa = regs
            .get(base)
            .ok_or(Fail::Untracked)?
            .wrapping_add(offset as u64);
        let mut value = |rule: Rule, reg: u16| -> Result<Option<u64>, Fail> {
            match rule {
                Rule::Undefined => Ok(None),
                Rule::Same => Ok(regs.get(reg)),
                Rule::Offset(o) => {
                    let at = cfa.wrapping_add(o as u64);
                    saved(regs, reg, at, sampled, read)
                        .map(Some)
                        .map_err(|()| Fail::Read(at))
                }
                Rule::ValOffset(o) => Ok(Some(cfa.wrapping_add(o as u64))),
                Rule::Register(r) => regs.get(r).map(Some).ok_or(Fail::Untracked),
                Rule::Other => Err(Fail::Untracked),
            }
        };
        let ra = match (self.ra, regs.arch) {
            (Rule::Undefined, _) => return Ok(Outcome::Outermost),
            // x86_64's rip "unchanged" would name this frame again: not a caller.
            (Rule::Same, Arch::X86_64) => return Err(Fail::Untracked),
            (rule, _) => value(rule, regs.ra_reg())?.ok_or(Fail::Untracked)?,
        };
        // A frame pointer the row does not restore is the caller's too (as framehop
        // takes it).
        let fp = match self.fp {
            Rule::Undefined => regs.get(regs.fp_reg()),
            rule => value(rule, regs.fp_reg())?,
        };
        Ok(Outcome::Caller {
            ra,
            sp: cfa,
            fp: fp.unwrap_or(0),
        })
    }
}

/// A frame's whole CFI row: the CFA and the rule of each register it names, for the walk
/// that restores every register (where a row needs one framehop's walk let go of).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FullRow {
    cfa: Option<(u16, i64)>,
    rules: Vec<(u16, Rule)>,
}

impl FullRow {
    pub(crate) fn from_gimli<S: gimli::UnwindContextStorage<usize>>(
        row: &UnwindTableRow<usize, S>,
    ) -> FullRow {
        FullRow {
            cfa: match row.cfa() {
                CfaRule::RegisterAndOffset { register, offset } => Some((register.0, *offset)),
                CfaRule::Expression(_) => None,
            },
            rules: row
                .registers()
                .map(|(r, rule)| (r.0, Rule::from_gimli(rule)))
                .collect(),
        }
    }

    /// The caller's registers: those the row names restored, the others kept (the
    /// callee-saved ones are unchanged by convention), the stack pointer the CFA, the
    /// instruction pointer the return address column's value. None: the CFA or the
    /// return address not known (a rule beyond this walk, a word outside the copy) or
    /// the outermost frame. Another register whose rule cannot be followed is not known
    /// in the caller, as libdw leaves it unset: only a frame that needs it is cut (ld.so's
    /// `do_lookup_x` sampled at its `ret`, every callee-saved slot below the stack
    /// pointer, under `_dl_lookup_symbol_x` and `_dl_fixup`, which saved rbx again).
    /// `sampled`: `regs` are the ones the sample (or a signal frame) recorded ([`saved`]).
    pub(crate) fn caller(
        &self,
        regs: &AllRegs,
        sampled: bool,
        read: &mut impl FnMut(u64) -> Result<u64, ()>,
    ) -> Option<AllRegs> {
        let (base, offset) = self.cfa?;
        let cfa = regs.get(base)?.wrapping_add(offset as u64);
        let mut caller = *regs;
        let mut ra = None;
        for &(reg, rule) in &self.rules {
            let value = match rule {
                Rule::Undefined | Rule::Other => None,
                Rule::Same => regs.get(reg),
                Rule::Offset(o) => saved(regs, reg, cfa.wrapping_add(o as u64), sampled, read).ok(),
                Rule::ValOffset(o) => Some(cfa.wrapping_add(o as u64)),
                Rule::Register(r) => regs.get(r),
            };
            if reg == regs.ra_reg() {
                ra = Some(value?);
            }
            caller.set(reg, value);
        }
        caller.set(regs.sp_reg(), Some(cfa));
        let ra = ra?;
        match regs.arch {
            Arch::X86_64 => caller.set(regs.ra_reg(), Some(ra)),
            Arch::Aarch64 => caller.set_pc(Some(ra)),
        }
        Some(caller)
    }
}

/// Register `reg`'s value saved at `at` by frame `regs`: the stack word there; or, in
/// the sampled frame (`sampled`), where `at` is below the stack pointer (so outside the
/// stack copy, which starts there), the register itself. An epilogue's row may still
/// say a callee-saved register is at the slot its `pop` left (GCC's x86_64 CFI does not
/// mark a popped register restored: ld.so's `_dl_fixup` at 0xff99, after `pop %rbx`,
/// says rbx at CFA-40, 8 bytes below rsp); the slot is below the stack pointer because
/// the register was loaded from it and the stack pointer moved past it, so the register
/// holds the saved value. framehop takes the frame pointer so in the first frame, for
/// the same reason. The return address is never taken so (a row that puts it below the
/// stack pointer is wrong, and the register would name this frame again).
fn saved(
    regs: &AllRegs,
    reg: u16,
    at: u64,
    sampled: bool,
    read: &mut impl FnMut(u64) -> Result<u64, ()>,
) -> Result<u64, ()> {
    read(at).or_else(|()| {
        let popped = sampled && reg != regs.ra_reg() && regs.sp().is_some_and(|sp| at < sp);
        regs.get(reg).filter(|_| popped).ok_or(())
    })
}

/// The rows of one DSO's CFI that need an untracked register, by address (svma),
/// sorted; at most [`MAX_ROWS`].
#[derive(Debug, Clone, Default)]
pub(crate) struct Rows(Vec<(Range<u64>, Row)>);

impl Rows {
    /// The rows of `.eh_frame` (`data`, at `svma`; `text` and `got` the svmas its
    /// pointers may be relative to) that need an untracked register.
    pub(crate) fn of_eh_frame(data: &[u8], svma: u64, text: u64, got: u64, arch: Arch) -> Rows {
        let section = gimli::EhFrame::new(data, LittleEndian);
        let bases = BaseAddresses::default()
            .set_eh_frame(svma)
            .set_text(text)
            .set_got(got);
        Rows::scan(&section, &bases, arch)
    }

    /// The same for a `.debug_frame` (no pointer bases).
    pub(crate) fn of_debug_frame(data: &[u8], arch: Arch) -> Rows {
        let mut section = gimli::DebugFrame::new(data, LittleEndian);
        section.set_address_size(8);
        Rows::scan(&section, &BaseAddresses::default(), arch)
    }

    fn scan<'a, S>(section: &S, bases: &BaseAddresses, arch: Arch) -> Rows
    where
        S: UnwindSection<EndianSlice<'a, LittleEndian>>,
    {
        let mut found = Vec::new();
        let mut ctx = Box::new(UnwindContext::<usize>::new());
        let mut entries = section.entries(bases);
        // A damaged entry ends the scan (framehop's lookups will not find past it either).
        while let Ok(Some(entry)) = entries.next() {
            let CieOrFde::Fde(partial) = entry else {
                continue;
            };
            let Ok(fde) = partial.parse(S::cie_from_offset) else {
                continue;
            };
            let instructions = [
                fde.cie().instructions(section, bases),
                fde.instructions(section, bases),
            ];
            if !any_untracked(instructions, arch) {
                continue;
            }
            let Ok(mut table) = fde.rows(section, bases, &mut ctx) else {
                continue;
            };
            while let Ok(Some(row)) = table.next_row() {
                let r = Row::from_gimli(row, arch);
                if r.needs_untracked(arch) {
                    found.push((row.start_address()..row.end_address(), r));
                    if found.len() >= MAX_ROWS {
                        break;
                    }
                }
            }
            if found.len() >= MAX_ROWS {
                break;
            }
        }
        found.sort_by_key(|(range, _)| range.start);
        Rows(found)
    }

    /// The row covering `svma`, if it is one that needs an untracked register.
    pub(crate) fn at(&self, svma: u64) -> Option<Row> {
        let i = self.0.partition_point(|(range, _)| range.start <= svma);
        let (range, row) = self.0.get(i.checked_sub(1)?)?;
        range.contains(&svma).then_some(*row)
    }

    /// How many rows.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Whether an instruction of `iters` (a CIE's initial instructions, its FDE's) puts the
/// CFA in an untracked register, or a tracked one's value in an untracked one: a cheap
/// test, before the FDE's rows are computed.
fn any_untracked(
    iters: [gimli::CallFrameInstructionIter<'_, EndianSlice<'_, LittleEndian>>; 2],
    arch: Arch,
) -> bool {
    let kept = tracked(arch);
    let untracked = |r: Register| !kept.contains(&r.0);
    for mut iter in iters {
        while let Ok(Some(i)) = iter.next() {
            let hit = match i {
                CallFrameInstruction::DefCfa { register, .. }
                | CallFrameInstruction::DefCfaSf { register, .. }
                | CallFrameInstruction::DefCfaRegister { register } => untracked(register),
                CallFrameInstruction::Register {
                    dest_register,
                    src_register,
                } => kept.contains(&dest_register.0) && untracked(src_register),
                _ => false,
            };
            if hit {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
#[path = "row_tests.rs"]
mod tests;
