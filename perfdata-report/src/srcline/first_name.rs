//! The name binutils' addr2line gives the innermost function at an address the first
//! time it is asked about it, where DWARF gives that function no linkage name.
//!
//! binutils 2.40's `_bfd_dwarf2_find_nearest_line_with_alt`: when the innermost function
//! at the address (its `funcinfo`, one per DW_TAG_subprogram or inlined_subroutine DIE)
//! is not `is_linkage` (it has no DW_AT_linkage_name, directly or through its abstract
//! origin or specification, and its unit's language is one binutils demangles), it names the
//! address by the ELF symbol covering it (`_bfd_elf_find_function`); when that symbol
//! starts at the function's low address the function takes the symbol's name for good;
//! either way it is then marked `is_linkage`, so every later address in it is named by
//! DWARF (or by the symbol, renamed). perf 6.1 keeps one addr2line per DSO for the
//! session, so what it prints depends on the order it first asks addresses: the first
//! address of each such inlined instance shows the frame's own symbol (a plain frame,
//! not ` (inlined)`), the later ones the DWARF name. Most libstdc++ templates inlined in
//! `g++ -O2` code (`std::__unguarded_partition<...>`) are such functions.

use std::cell::RefCell;
use std::collections::HashMap;

use super::{Reader, SourceFrame};

/// A function DIE: the context's address and the DIE's offset in its `.debug_info`.
pub(super) type DieKey = (usize, usize);

/// What bfd knows of the innermost function at an address.
#[derive(Debug, Clone, Copy)]
pub(super) struct Innermost {
    /// The function's DIE.
    pub(super) die: DieKey,
    /// bfd's `is_linkage` as the DWARF sets it: a linkage name, or a unit whose
    /// language does not mangle (C, assembler).
    pub(super) linkage: bool,
    /// The function's low address (bfd's `arange.low`: its DW_AT_low_pc, or the first
    /// of its DW_AT_ranges), an ELF virtual address.
    pub(super) low: Option<u64>,
}

/// The functions one addr2line process has named so far (bfd's `is_linkage` set by a
/// lookup), each with the symbol name it took for good, if it did.
#[derive(Debug, Default)]
pub(super) struct FirstNames {
    named: RefCell<HashMap<DieKey, Option<String>>>,
}

impl FirstNames {
    /// Name `frames` (innermost first, `dies` their DIEs) as addr2line answers them now:
    /// the innermost by `elf` (the name and start of the ELF symbol covering the
    /// address, if any) the first time, and any function renamed earlier by its symbol.
    pub(super) fn answer(
        &self,
        frames: &mut [SourceFrame],
        dies: &[Option<DieKey>],
        innermost: Option<Innermost>,
        elf: Option<(&str, u64)>,
    ) {
        let mut named = self.named.borrow_mut();
        let mut first = false;
        if let (Some(f), Some(inner)) = (frames.first_mut(), innermost) {
            if f.function.is_some() && !inner.linkage && !named.contains_key(&inner.die) {
                // Without a symbol binutils keeps DWARF's name, and marks it all the same.
                let renamed = elf.and_then(|(name, start)| {
                    f.function = Some(name.to_string());
                    (Some(start) == inner.low).then(|| name.to_string())
                });
                named.insert(inner.die, renamed);
                first = true;
            }
        }
        // A renamed function is the renamed name wherever addr2line prints it: as the
        // innermost answer, or as the caller of one inlined into it.
        for (i, (f, die)) in frames.iter_mut().zip(dies).enumerate() {
            if first && i == 0 {
                continue;
            }
            if let Some(Some(name)) = die.and_then(|d| named.get(&d)) {
                if f.function.is_some() {
                    f.function = Some(name.clone());
                }
            }
        }
    }
}

/// The DW_LANG codes for which binutils 2.40's `mangle_style` is 0: their DW_AT_name
/// counts as the linkage name (`is_linkage`), so bfd never looks for a symbol for them.
/// It lists assembler (libc's `.S` functions keep their DWARF name) and no longer Ada.
fn unmangled(lang: u16) -> bool {
    use gimli::constants as c;
    // DW_LANG_Upc, DW_LANG_HP_Basic91, DW_LANG_HP_IMacro, DW_LANG_HP_Assembler: vendor
    // codes gimli does not name.
    const VENDOR: [u16; 4] = [0x8765, 0x8004, 0x8006, 0x8007];
    [
        c::DW_LANG_C89,
        c::DW_LANG_C,
        c::DW_LANG_Cobol74,
        c::DW_LANG_Cobol85,
        c::DW_LANG_Fortran77,
        c::DW_LANG_Pascal83,
        c::DW_LANG_PLI,
        c::DW_LANG_C99,
        c::DW_LANG_UPC,
        c::DW_LANG_C11,
        c::DW_LANG_Mips_Assembler,
    ]
    .iter()
    .map(|l| l.0)
    .chain(VENDOR)
    .any(|l| l == lang)
}

/// What bfd knows of the function whose DIE is at `at` in `unit` (see [`Innermost`]).
pub(super) fn innermost(
    unit: gimli::UnitRef<'_, Reader>,
    at: gimli::UnitOffset<usize>,
    die: DieKey,
) -> Innermost {
    let lang = {
        let mut entries = unit.entries();
        match entries.next_dfs() {
            Ok(Some((_, root))) => match root.attr_value(gimli::DW_AT_language) {
                Ok(Some(gimli::AttributeValue::Language(l))) => Some(l.0),
                _ => None,
            },
            _ => None,
        }
    };
    let low = unit.entry(at).ok().and_then(|entry| {
        let mut ranges = unit.die_ranges(&entry).ok()?;
        ranges.next().ok().flatten().map(|r| r.begin)
    });
    Innermost {
        die,
        linkage: lang.is_some_and(unmangled) || has_linkage_name(unit, at),
        low,
    }
}

/// Whether the DIE at `at`, or its abstract origin or specification, has a
/// DW_AT_linkage_name (or DW_AT_MIPS_linkage_name): bfd's `is_linkage` from DWARF.
fn has_linkage_name(unit: gimli::UnitRef<'_, Reader>, at: gimli::UnitOffset<usize>) -> bool {
    super::along_origins(unit, at, |entry| {
        [gimli::DW_AT_linkage_name, gimli::DW_AT_MIPS_linkage_name]
            .into_iter()
            .any(|a| matches!(entry.attr_value(a), Ok(Some(_))))
            .then_some(())
    })
    .is_some()
}
