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
mod tests {
    use super::*;
    use crate::unwind::regs::UserState;

    /// glibc 2.36's (Debian 12, x86_64) `.eh_frame` CIE, and its FDE of `__vfork`
    /// (0xd43b0..0xd43d2) as `readelf --debug-dump=frames` shows them, copied byte for
    /// byte; only the FDE's CIE pointer and pc-relative start are re-aimed for the
    /// section's new place (`svma`).
    fn vfork_eh_frame(svma: u64) -> Vec<u8> {
        let mut eh = vec![
            0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x7a, 0x52, 0x00, 0x01, 0x78,
            0x10, 0x01, 0x1b, 0x0c, 0x07, 0x08, 0x90, 0x01, 0x00, 0x00,
        ];
        let fde_at = eh.len() as u64;
        eh.extend_from_slice(&[
            0x18, 0x00, 0x00, 0x00, 0x44, 0x24, 0x01, 0x00, 0x28, 0x90, 0xf1, 0xff, 0x22, 0x00,
            0x00, 0x00, 0x00, 0x41, 0x0e, 0x00, 0x09, 0x10, 0x05, 0x48, 0x0e, 0x08, 0x00, 0x00,
        ]);
        let cie_pointer = (fde_at + 4) as u32;
        eh[fde_at as usize + 4..][..4].copy_from_slice(&cie_pointer.to_le_bytes());
        let field = svma + fde_at + 8;
        let start = (0xd43b0u64.wrapping_sub(field)) as u32;
        eh[fde_at as usize + 8..][..4].copy_from_slice(&start.to_le_bytes());
        eh.extend_from_slice(&[0, 0, 0, 0]);
        eh
    }

    #[test]
    fn vforks_return_address_in_rdi_is_found_and_followed() {
        let svma = 0x1a8f40;
        let rows = Rows::of_eh_frame(&vfork_eh_frame(svma), svma, 0x26000, 0x1d2000, Arch::X86_64);
        // From the `pop %rdi` on, the return address is said to be in rdi (after the
        // `push %rdi` too, where it still is, with the CFA 8 bytes up).
        assert_eq!(rows.len(), 2);
        let row = rows.at(0xd43b8).expect("the row after the syscall");
        assert_eq!(
            row,
            Row {
                cfa: Some((7, 0)),
                ra: Rule::Register(5),
                fp: Rule::Undefined
            }
        );
        assert_eq!(rows.at(0xd43b1), Some(row));
        assert_eq!(rows.at(0xd43b0), None, "before the pop: the CIE's rule");
        let pushed = rows.at(0xd43b9).expect("after the push");
        assert_eq!(pushed.cfa, Some((7, 8)));
        assert_eq!(rows.at(0xd43d1), Some(pushed));
        assert_eq!(rows.at(0xd43d2), None, "past the FDE");
        assert!(row.needs_untracked(Arch::X86_64));
        // The sample's registers: perf's default x86_64 mask (AX..SS, R8..R15), DI (5)
        // the return address, SP (7) and BP (6) as sampled.
        let mut regs: Vec<u64> = (0..20).collect();
        regs[5] = 0x5555_0000_1224;
        regs[6] = 0x7ffc_0000_2000;
        regs[7] = 0x7ffc_0000_1000;
        regs[8] = 0x7f00_000d_43b8;
        let user = UserState {
            abi: 2,
            mask: 0xff0fff,
            regs,
            ..Default::default()
        };
        let all = AllRegs::from_user(Arch::X86_64, &user);
        let mut no_stack = |_: u64| Err(());
        assert_eq!(
            row.apply(&all, true, &mut no_stack),
            Ok(Outcome::Caller {
                ra: 0x5555_0000_1224,
                sp: 0x7ffc_0000_1000,
                fp: 0x7ffc_0000_2000
            })
        );
        // A sample without DI: the walk cannot follow it, and says so.
        let without_di = UserState {
            mask: 0xff0fdf,
            regs: user
                .regs
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != 5)
                .map(|(_, r)| *r)
                .collect(),
            ..user
        };
        let all = AllRegs::from_user(Arch::X86_64, &without_di);
        assert_eq!(row.apply(&all, true, &mut no_stack), Err(Fail::Untracked));
    }

    #[test]
    fn rows_framehop_follows_are_not_kept() {
        // The CIE's rule alone (CFA rsp+8, rip at CFA-8) and a frame-pointer row.
        let cfa_in_rbp = Row {
            cfa: Some((6, 16)),
            ra: Rule::Offset(-8),
            fp: Rule::Offset(-16),
        };
        assert!(!cfa_in_rbp.needs_untracked(Arch::X86_64));
        // `_dl_runtime_resolve`'s CFA in rbx, arm64's return address in x16.
        let cfa_in_rbx = Row {
            cfa: Some((3, 8)),
            ..cfa_in_rbp
        };
        assert!(cfa_in_rbx.needs_untracked(Arch::X86_64));
        let lr_in_x16 = Row {
            cfa: Some((31, 0)),
            ra: Rule::Register(16),
            fp: Rule::Same,
        };
        assert!(lr_in_x16.needs_untracked(Arch::Aarch64));
        let mut stack = |addr: u64| if addr == 0x1000 { Ok(0x4000) } else { Err(()) };
        let mut arm = AllRegs::new(Arch::Aarch64);
        arm.set(16, Some(0x40_1234));
        arm.set(31, Some(0x1000));
        arm.set(29, Some(0x2000));
        assert_eq!(
            lr_in_x16.apply(&arm, true, &mut stack),
            Ok(Outcome::Caller {
                ra: 0x40_1234,
                sp: 0x1000,
                fp: 0x2000
            })
        );
        // A saved word outside the stack copy: named by its address.
        let saved = Row {
            cfa: Some((31, 16)),
            ra: Rule::Offset(-8),
            fp: Rule::Offset(-16),
        };
        assert_eq!(saved.apply(&arm, true, &mut stack), Err(Fail::Read(0x1008)));
        let undefined = Row {
            ra: Rule::Undefined,
            ..saved
        };
        assert_eq!(
            undefined.apply(&arm, true, &mut stack),
            Ok(Outcome::Outermost)
        );
    }

    #[test]
    fn a_whole_row_restores_every_register_it_names() {
        // ld.so's `_dl_runtime_resolve_xsavec` inside: CFA rbx+32, rbx at CFA-32, the
        // return address at CFA-8 (its FDE and the PLT's CIE).
        let row = FullRow {
            cfa: Some((3, 32)),
            rules: vec![(3, Rule::Offset(-32)), (16, Rule::Offset(-8))],
        };
        let mut regs = AllRegs::new(Arch::X86_64);
        regs.set(3, Some(0x7ffc_0000_1000));
        regs.set(7, Some(0x7ffc_0000_0800));
        regs.set(12, Some(0x1212));
        let mut stack = |addr: u64| match addr {
            0x7ffc_0000_1000 => Ok(0x7ffc_0000_2000),
            0x7ffc_0000_1018 => Ok(0x5555_0000_25f5),
            _ => Err(()),
        };
        let caller = row.caller(&regs, true, &mut stack).expect("the caller");
        assert_eq!(caller.ip(), Some(0x5555_0000_25f5));
        assert_eq!(caller.sp(), Some(0x7ffc_0000_1020));
        assert_eq!(caller.get(3), Some(0x7ffc_0000_2000), "rbx restored");
        assert_eq!(caller.get(12), Some(0x1212), "r12 unchanged");
        // Without rbx the CFA is not known; a saved word outside the copy neither.
        regs.set(3, None);
        assert_eq!(row.caller(&regs, true, &mut stack), None);
        regs.set(3, Some(0x7ffc_0000_3000));
        assert_eq!(row.caller(&regs, true, &mut stack), None);
    }

    #[test]
    fn a_register_popped_in_the_sampled_epilogue_is_its_callers() {
        // ld.so's `_dl_fixup` sampled at 0xff99, after `add $0x18,%rsp; pop %rbx`: CFA
        // rsp+32, rbx at CFA-40 (8 bytes below rsp, outside the copy), rbp, r12, r13
        // and the return address in the copy (glibc 2.36, readelf's frames-interp).
        let row = FullRow {
            cfa: Some((7, 32)),
            rules: vec![
                (3, Rule::Offset(-40)),
                (6, Rule::Offset(-32)),
                (12, Rule::Offset(-24)),
                (13, Rule::Offset(-16)),
                (16, Rule::Offset(-8)),
            ],
        };
        let sp = 0x7ffe_0000_1000u64;
        let mut regs = AllRegs::new(Arch::X86_64);
        regs.set(7, Some(sp));
        regs.set(3, Some(0x7ffe_0000_2fd0));
        let mut copy = |addr: u64| match addr.checked_sub(sp) {
            Some(at) if at < 0x2000 => Ok(0x1000 + at),
            _ => Err(()),
        };
        let caller = row.caller(&regs, true, &mut copy).expect("the caller");
        assert_eq!(caller.get(3), Some(0x7ffe_0000_2fd0), "rbx as popped");
        assert_eq!(caller.get(6), Some(0x1000), "rbp read at rsp");
        assert_eq!(caller.ip(), Some(0x1018));
        assert_eq!(caller.sp(), Some(sp + 32));
        // Walked to (not sampled), a register's value is not its slot's: not known.
        let walked = row.caller(&regs, false, &mut copy).expect("the caller");
        assert_eq!((walked.get(3), walked.get(6)), (None, Some(0x1000)));
        assert_eq!(walked.ip(), Some(0x1018));
        // A slot above the stack pointer the copy does not hold is not guessed: r13 is
        // not known, and without the return address there is no caller.
        let mut short = |addr: u64| if addr < sp + 16 { copy(addr) } else { Err(()) };
        assert_eq!(row.caller(&regs, true, &mut short), None);
        let mut no_r13 = |addr: u64| if addr == sp + 16 { Err(()) } else { copy(addr) };
        let caller = row.caller(&regs, true, &mut no_r13).expect("the caller");
        assert_eq!((caller.get(13), caller.get(12)), (None, Some(0x1008)));
        // Nor the return address below the stack pointer (the register is this frame's).
        let ra_below = FullRow {
            cfa: Some((7, 0)),
            rules: vec![(16, Rule::Offset(-8))],
        };
        regs.set(16, Some(0x7f00_0000_ff99));
        assert_eq!(ra_below.caller(&regs, true, &mut copy), None);
        // The row framehop cannot follow takes the frame pointer so too.
        let fp_below = Row {
            cfa: Some((7, 32)),
            ra: Rule::Offset(-8),
            fp: Rule::Offset(-40),
        };
        regs.set(6, Some(0x7ffe_0000_3000));
        assert_eq!(
            fp_below.apply(&regs, true, &mut copy),
            Ok(Outcome::Caller {
                ra: 0x1018,
                sp: sp + 32,
                fp: 0x7ffe_0000_3000
            })
        );
        assert_eq!(
            fp_below.apply(&regs, false, &mut copy),
            Err(Fail::Read(sp - 8))
        );
    }
}
