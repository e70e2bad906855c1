//! The file binutils 2.40's addr2line (the one perf 6.1 runs for its srclines) names for
//! a line row at the start of a DWARF 5 sequence.
//!
//! The line-number state machine starts each sequence with file register 1, which in
//! DWARF 5 is entry 1 of the file table (entry 0 is the unit's own file). binutils before
//! 2.42 (its PR 30783) started a DWARF 5 sequence with entry 0's name instead, until the
//! sequence's first `DW_LNS_set_file`. Where entry 1 is another file than entry 0 (a
//! header whose code comes first, as glibc's `dl-cacheinfo.h` in
//! `dl-get-cpu-features.c`), perf prints `dl-get-cpu-features.c:333` for a row DWARF
//! gives as `dl-cacheinfo.h:333`; the line is the row's either way. perfdata's srclines
//! print what perf prints; exports keep DWARF's file.

use gimli::Reader as _;

use super::Reader;

/// The address ranges of one unit's rows that binutils names by file entry 0 though
/// DWARF says entry 1, and that file's path.
#[derive(Debug, Default)]
pub(super) struct FirstFile {
    /// Sorted, disjoint `[start, end)` ranges.
    ranges: Vec<(u64, u64)>,
    /// Entry 0's path as addr2line renders it (directory, then name).
    path: String,
}

impl FirstFile {
    /// The ranges of `unit`'s line program; empty (nothing renamed) for a program before
    /// DWARF 5, or whose entries 0 and 1 are one file.
    pub(super) fn of(unit: gimli::UnitRef<'_, Reader>) -> FirstFile {
        scan(unit).unwrap_or_default()
    }

    /// The file binutils names for the row at `probe`, where it differs from DWARF's.
    pub(super) fn file_at(&self, probe: u64) -> Option<&str> {
        let i = self.ranges.partition_point(|&(_, end)| end <= probe);
        let &(start, end) = self.ranges.get(i)?;
        (start <= probe && probe < end).then_some(self.path.as_str())
    }
}

fn scan(unit: gimli::UnitRef<'_, Reader>) -> Option<FirstFile> {
    let mut program = unit.line_program.clone()?;
    let header = program.header().clone();
    if header.version() < 5 {
        return None;
    }
    let path = |i: u64| -> Option<String> {
        let entry = header.file(i)?;
        let name = unit.attr_string(entry.path_name()).ok()?;
        let name = name.to_string_lossy().ok()?.into_owned();
        let dir = entry
            .directory(&header)
            .and_then(|d| unit.attr_string(d).ok())
            .and_then(|d| Some(d.to_string_lossy().ok()?.into_owned()));
        Some(match dir {
            Some(d) if !name.starts_with('/') && !d.is_empty() => format!("{d}/{name}"),
            _ => name,
        })
    };
    let (first, second) = (path(0)?, path(1)?);
    if first == second {
        return None;
    }
    let mut ranges: Vec<(u64, u64)> = Vec::new();
    let mut instructions = header.instructions();
    let mut row = gimli::LineRow::new(&header);
    // The file register was set in this sequence; the last row's address and whether
    // binutils names it by entry 0.
    let mut set = false;
    let mut last: Option<(u64, bool)> = None;
    // gimli's LineRows::next_row: a row's reset is done before the next instruction.
    let mut emitted = false;
    while let Some(instruction) = instructions.next_instruction(&header).ok()? {
        if emitted {
            row.reset(&header);
            emitted = false;
        }
        if matches!(instruction, gimli::LineInstruction::SetFile(_)) {
            set = true;
        }
        if !row.execute(instruction, &mut program).ok()? {
            continue;
        }
        emitted = true;
        if let Some((start, true)) = last {
            if row.address() > start {
                push(&mut ranges, start, row.address());
            }
        }
        last = Some((row.address(), !set));
        if row.end_sequence() {
            last = None;
            set = false;
        }
    }
    ranges.sort_unstable();
    ranges.dedup();
    (!ranges.is_empty()).then_some(FirstFile {
        ranges,
        path: first,
    })
}

/// Add `[start, end)` to `ranges`, joined to the last one where they meet.
fn push(ranges: &mut Vec<(u64, u64)>, start: u64, end: u64) {
    match ranges.last_mut() {
        Some(last) if last.1 == start => last.1 = end,
        _ => ranges.push((start, end)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_probe_is_renamed_only_inside_a_range() {
        let f = FirstFile {
            ranges: vec![(0x10, 0x20), (0x30, 0x31)],
            path: "./a.c".into(),
        };
        assert_eq!(f.file_at(0x0f), None);
        assert_eq!(f.file_at(0x10), Some("./a.c"));
        assert_eq!(f.file_at(0x1f), Some("./a.c"));
        assert_eq!(f.file_at(0x20), None);
        assert_eq!(f.file_at(0x30), Some("./a.c"));
        assert_eq!(f.file_at(0x31), None);
        assert_eq!(FirstFile::default().file_at(0x10), None);
    }

    #[test]
    fn ranges_that_meet_are_joined() {
        let mut r = Vec::new();
        push(&mut r, 1, 2);
        push(&mut r, 2, 5);
        push(&mut r, 7, 9);
        assert_eq!(r, [(1, 5), (7, 9)]);
    }
}
