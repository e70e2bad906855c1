//! A DSO's DWARF looked up one compile unit at a time: each unit's abbreviations, line
//! program and functions are parsed the first time an address in it is asked about.
//!
//! `addr2line::Context::from_dwarf` parses every unit's abbreviations and line program
//! header up front: libc's debug file has 2,063 units, which took 35 MB and a sixth of
//! a report's time, for the few dozen that samples land in. Here the units are found by
//! address from `.debug_aranges` and each gets a context of its own, made over the
//! sections with `.debug_info` cut to that unit. That gives the same answers only where
//! no DIE refers into another unit; a DSO whose abbreviations use a form that can (a
//! section offset, a type signature, a supplementary file), that has partial, split or
//! skeleton units, or a unit with code that `.debug_aranges` does not cover is looked up
//! through one context over all its units, as addr2line does.

use std::cell::OnceCell;

use gimli::{Reader as _, SectionId};

use super::Reader;

/// How a DSO's addresses are looked up.
pub(super) enum Lookups {
    /// One context over every unit.
    Whole(Box<addr2line::Context<Reader>>),
    /// A context per unit, made on first use.
    ByUnit(ByUnit),
}

/// The units of a DSO whose DIEs refer only within their own unit.
pub(super) struct ByUnit {
    /// Every section as loaded (`.debug_info` whole).
    sections: Vec<(SectionId, Reader)>,
    /// Each unit's offset and length (header included) in `.debug_info`.
    units: Vec<(usize, usize)>,
    /// The units' address ranges, as addr2line orders them.
    ranges: Vec<UnitRange>,
    contexts: Vec<OnceCell<Option<addr2line::Context<Reader>>>>,
    /// An empty section, for `.debug_aranges` in a unit's context (its offsets are of the
    /// whole `.debug_info`).
    empty: Reader,
}

/// addr2line's UnitRange: sorted by `end`, each with the least `begin` of those after it.
struct UnitRange {
    begin: u64,
    end: u64,
    min_begin: u64,
    unit: usize,
}

impl Lookups {
    /// The lookups over `sections` (every section gimli asks for, loaded), `empty` an
    /// empty reader of the same byte order.
    pub(super) fn new(sections: Vec<(SectionId, Reader)>, empty: Reader) -> Option<Lookups> {
        let dwarf = load(&sections, |_, r| Ok(r.clone()))?;
        match index(&dwarf, &sections) {
            Some((units, ranges)) => Some(Lookups::ByUnit(ByUnit {
                contexts: units.iter().map(|_| OnceCell::new()).collect(),
                sections,
                units,
                ranges,
                empty,
            })),
            None => addr2line::Context::from_dwarf(dwarf)
                .ok()
                .map(|c| Lookups::Whole(Box::new(c))),
        }
    }

    /// The contexts that may know `probe` (an ELF virtual address), in the order
    /// addr2line tries its units: the first that has a function or a line for it is
    /// the answer.
    pub(super) fn candidates(
        &self,
        probe: u64,
    ) -> Box<dyn Iterator<Item = &addr2line::Context<Reader>> + '_> {
        match self {
            Lookups::Whole(c) => Box::new(std::iter::once(&**c)),
            Lookups::ByUnit(u) => {
                // addr2line's find_range: from the first range that ends after the
                // probe, while a range after it may begin at or before it.
                let from = u.ranges.partition_point(|r| r.end <= probe);
                let mut seen = Vec::new();
                Box::new(
                    u.ranges[from..]
                        .iter()
                        .take_while(move |r| probe >= r.min_begin)
                        .filter(move |r| r.begin <= probe && probe < r.end)
                        .filter_map(move |r| {
                            if seen.contains(&r.unit) {
                                return None;
                            }
                            seen.push(r.unit);
                            u.context(r.unit)
                        }),
                )
            }
        }
    }
}

impl ByUnit {
    /// The context of unit `i`, made on first use.
    fn context(&self, i: usize) -> Option<&addr2line::Context<Reader>> {
        self.contexts[i]
            .get_or_init(|| {
                let (offset, len) = self.units[i];
                let dwarf = load(&self.sections, |id, r| match id {
                    SectionId::DebugInfo => {
                        let mut unit = r.clone();
                        unit.skip(offset)?;
                        unit.split(len)
                    }
                    SectionId::DebugAranges => Ok(self.empty.clone()),
                    _ => Ok(r.clone()),
                })?;
                addr2line::Context::from_dwarf(dwarf).ok()
            })
            .as_ref()
    }
}

/// A `gimli::Dwarf` of `sections`, each given by `pick` (the section's id and reader).
fn load(
    sections: &[(SectionId, Reader)],
    pick: impl Fn(SectionId, &Reader) -> gimli::Result<Reader>,
) -> Option<gimli::Dwarf<Reader>> {
    gimli::Dwarf::load(|id| {
        let r = sections
            .iter()
            .find(|(s, _)| *s == id)
            .map(|(_, r)| r)
            .ok_or(gimli::Error::Io)?;
        pick(id, r)
    })
    .ok()
}

/// The units (offset and length) and their ranges, if every unit can be looked up
/// alone (see the module's comment); None otherwise.
#[allow(clippy::type_complexity)]
fn index(
    dwarf: &gimli::Dwarf<Reader>,
    sections: &[(SectionId, Reader)],
) -> Option<(Vec<(usize, usize)>, Vec<UnitRange>)> {
    let mut units = Vec::new();
    let mut abbrevs = Vec::new();
    let mut headers = dwarf.units();
    while let Some(h) = headers.next().ok()? {
        match h.type_() {
            gimli::UnitType::Compilation => {}
            gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. } => continue,
            _ => return None,
        }
        let offset = h.offset().as_debug_info_offset()?.0;
        abbrevs.push(h.debug_abbrev_offset().0);
        units.push((offset, h.length_including_self(), h));
    }
    let abbrev = sections
        .iter()
        .find(|(s, _)| *s == SectionId::DebugAbbrev)?
        .1
        .bytes();
    abbrevs.sort_unstable();
    abbrevs.dedup();
    if abbrevs
        .iter()
        .any(|&at| refers_out(abbrev.get(at..).unwrap_or_default()).unwrap_or(true))
    {
        return None;
    }
    // .debug_aranges: the ranges of each unit it covers, by the unit's offset.
    let mut covered: Vec<(usize, gimli::Range)> = Vec::new();
    let mut sets = dwarf.debug_aranges.headers();
    while let Some(set) = sets.next().ok()? {
        let unit = set.debug_info_offset().0;
        let mut entries = set.entries();
        while let Some(e) = entries.next().ok()? {
            if e.length() != 0 {
                covered.push((unit, e.range()));
            }
        }
    }
    covered.sort_by_key(|c| c.0);
    let mut ranges = Vec::new();
    for (i, (offset, _, header)) in units.iter().enumerate() {
        let from = covered.partition_point(|c| c.0 < *offset);
        let mine = covered[from..].iter().take_while(|c| c.0 == *offset);
        let before = ranges.len();
        ranges.extend(mine.map(|(_, r)| UnitRange {
            begin: r.begin,
            end: r.end,
            min_begin: 0,
            unit: i,
        }));
        if ranges.len() == before {
            // Not in .debug_aranges: a unit without code is skipped, one with code
            // (its own ranges, or a line program addr2line would take them from) is not
            // looked up alone.
            let unit = dwarf.unit(header.clone()).ok()?;
            let mut own = dwarf.unit_ranges(&unit).ok()?;
            if own.next().ok()?.is_some() || has_code(unit.line_program) {
                return None;
            }
        }
    }
    // addr2line's order: by end (stably, so units in order where ends tie), each with
    // the least begin from it on.
    ranges.sort_by_key(|r| r.end);
    let mut min = u64::MAX;
    for r in ranges.iter_mut().rev() {
        min = min.min(r.begin);
        r.min_begin = min;
    }
    let units = units.into_iter().map(|(o, l, _)| (o, l)).collect();
    Some((units, ranges))
}

/// Whether a unit's line program (where addr2line finds the ranges of a unit that
/// declares none) has rows for some address range; a program that cannot be read is
/// taken to.
fn has_code(program: Option<gimli::IncompleteLineProgram<Reader>>) -> bool {
    let Some(program) = program else {
        return false;
    };
    match program.sequences() {
        Ok((_, sequences)) => sequences.iter().any(|s| s.start < s.end),
        Err(_) => true,
    }
}

/// Whether the abbreviation table at the start of `table` lets a DIE refer outside its
/// unit: an attribute of form `DW_FORM_ref_addr`, `ref_sig8`, `ref_sup4`/`8`,
/// `GNU_ref_alt`, or `indirect` (whose form is in the DIE). Read as bytes, nothing kept;
/// an error is a table that could not be read.
fn refers_out(table: &[u8]) -> gimli::Result<bool> {
    let mut r = gimli::EndianSlice::new(table, gimli::LittleEndian);
    loop {
        if r.read_uleb128()? == 0 {
            return Ok(false);
        }
        r.read_uleb128()?; // tag
        r.read_u8()?; // children
        loop {
            let name = r.read_uleb128()?;
            let form = gimli::DwForm(u16::try_from(r.read_uleb128()?).unwrap_or(u16::MAX));
            if name == 0 && form.0 == 0 {
                break;
            }
            if form == gimli::DW_FORM_implicit_const {
                r.read_sleb128()?;
            }
            if matches!(
                form,
                gimli::DW_FORM_ref_addr
                    | gimli::DW_FORM_ref_sig8
                    | gimli::DW_FORM_ref_sup4
                    | gimli::DW_FORM_ref_sup8
                    | gimli::DW_FORM_GNU_ref_alt
                    | gimli::DW_FORM_indirect
            ) || form.0 == u16::MAX
            {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::refers_out;

    /// One abbreviation (code 1, DW_TAG_subprogram, no children) with `attrs` (name and
    /// form bytes, with an implicit constant's value where the form is one), then the
    /// table's end.
    fn table(attrs: &[u8]) -> Vec<u8> {
        let mut t = vec![0x01, 0x2e, 0x00];
        t.extend_from_slice(attrs);
        t.extend_from_slice(&[0x00, 0x00, 0x00]);
        t
    }

    #[test]
    fn a_reference_within_the_unit_keeps_it_alone() {
        // DW_AT_name strp, DW_AT_abstract_origin ref4.
        assert_eq!(
            refers_out(&table(&[0x03, 0x0e, 0x31, 0x13])).ok(),
            Some(false)
        );
    }

    #[test]
    fn a_section_offset_reference_does_not() {
        // DW_AT_abstract_origin ref_addr (dwz, LTO).
        assert_eq!(
            refers_out(&table(&[0x03, 0x0e, 0x31, 0x10])).ok(),
            Some(true)
        );
        // ref_sig8, GNU_ref_alt (two-byte LEB128), indirect.
        assert_eq!(refers_out(&table(&[0x49, 0x20])).ok(), Some(true));
        assert_eq!(refers_out(&table(&[0x31, 0xa0, 0x3e])).ok(), Some(true));
        assert_eq!(refers_out(&table(&[0x31, 0x16])).ok(), Some(true));
    }

    #[test]
    fn an_implicit_constant_is_skipped_as_a_value() {
        // DW_AT_decl_file implicit_const 5, then DW_AT_stmt_list (0x10) sec_offset: read
        // as name and form without the value skipped, 5 and 0x10 would be a ref_addr.
        assert_eq!(
            refers_out(&table(&[0x3a, 0x21, 0x05, 0x10, 0x17])).ok(),
            Some(false)
        );
    }

    #[test]
    fn a_table_cut_short_is_an_error() {
        assert!(refers_out(&[0x01, 0x2e, 0x00, 0x03]).is_err());
    }
}
