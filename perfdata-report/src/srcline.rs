//! Source lines and inlined frames from a DSO's DWARF (perf's srcline.c), read in process
//! with `addr2line` over `gimli` instead of running binutils' addr2line per address.
//!
//! Addresses come in as the report's DSO-relative addresses (file offsets, as perf's
//! `map_ip` gives them) and are turned back into the ELF's virtual addresses through the
//! loaded file's program headers, as perf's `map__rip_2objdump` does before it asks
//! addr2line.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::{Deref, Range};
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment};

type Reader = gimli::EndianReader<gimli::RunTimeEndian, SectionBytes>;

/// A DWARF section's bytes, shared by the readers over it: a range of the debug file's
/// map where the section is stored as it is (only the pages the lookups touch are read
/// and resident: a few of libpython's 17 MB of DWARF), or its expansion on the heap
/// where it is compressed (SHF_COMPRESSED, as Debian's debug files have), made once.
#[derive(Debug, Clone)]
pub(crate) enum SectionBytes {
    /// Stored as it is: this range of the map (checked to be inside it).
    Mapped(Arc<memmap2::Mmap>, Range<usize>),
    /// Expanded, or empty.
    Owned(Arc<Vec<u8>>),
}

impl Deref for SectionBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            SectionBytes::Mapped(map, range) => &map[range.clone()],
            SectionBytes::Owned(bytes) => bytes,
        }
    }
}

// SAFETY: the bytes are behind an Arc (the map's or the vector's), which neither moving
// nor cloning a SectionBytes moves, and nothing writes to them while it is shared.
unsafe impl gimli::StableDeref for SectionBytes {}
// SAFETY: as above; a clone shares the same Arc, so it derefs to the same address.
unsafe impl gimli::CloneStableDeref for SectionBytes {}

impl SectionBytes {
    /// The bytes of section `id` of `file` (parsed from `map`): mapped, expanded, or
    /// empty where the file has no such section (or a bad one). Location lists (where
    /// variables live) come back empty: no lookup here reads them, and they are a
    /// fifth of libpython's DWARF.
    fn of(map: &Arc<memmap2::Mmap>, file: &object::File<'_>, id: gimli::SectionId) -> Self {
        let empty = || SectionBytes::Owned(Arc::default());
        if matches!(
            id,
            gimli::SectionId::DebugLoc | gimli::SectionId::DebugLocLists
        ) {
            return empty();
        }
        let Some(section) = file.section_by_name(id.name()) else {
            return empty();
        };
        match section.compressed_file_range() {
            Ok(r) if r.format == object::CompressionFormat::None => {
                let range = usize::try_from(r.offset)
                    .ok()
                    .zip(usize::try_from(r.uncompressed_size).ok())
                    .and_then(|(start, len)| Some(start..start.checked_add(len)?))
                    .filter(|range| range.end <= map.len());
                range.map_or_else(empty, |range| SectionBytes::Mapped(Arc::clone(map), range))
            }
            _ => match section.uncompressed_data() {
                Ok(data) => SectionBytes::Owned(Arc::new(data.into_owned())),
                Err(_) => empty(),
            },
        }
    }
}

/// One frame at an address: the function (an inlined one or the one that holds it) and
/// the source position in it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourceFrame {
    /// The function's name as DWARF gives it (demangled as perf prints names), if any.
    pub function: Option<String>,
    /// The source file's full path, if known.
    pub file: Option<String>,
    /// The line, 0 if unknown.
    pub line: u32,
    /// The line the function starts at (its `DW_AT_decl_line`, of its declaration or
    /// abstract origin), 0 if unknown.
    pub start_line: u32,
    /// The file perf 6.1 prints instead of `file` in its srclines, where they differ: the
    /// unit's own file for a DWARF 5 row before its sequence's first file change, as
    /// binutils 2.40's addr2line names it (see `first_file.rs`); None elsewhere.
    pub perf_file: Option<String>,
}

impl SourceFrame {
    /// perf's srcline: `basename:line` (perf's default, without `--full-source-path`);
    /// None without a file.
    pub fn srcline(&self) -> Option<String> {
        Some(file_line(
            self.perf_file.as_deref().or(self.file.as_deref())?,
            self.line,
        ))
    }
}

/// perf's `srcline_from_fileline`: `basename:line` (perf's default, without
/// `--full-source-path`).
pub(crate) fn file_line(file: &str, line: u32) -> String {
    let base = file.rsplit('/').next().unwrap_or(file);
    format!("{base}:{line}")
}

mod first_file;
mod first_name;
pub mod symbol_file;
mod units;

/// The DWARF of one DSO, ready for lookups.
pub struct SourceLines {
    lookups: units::Lookups,
    /// The loaded file's LOAD segments: (virtual address, size, file offset).
    loads: Vec<(u64, u64, u64)>,
    /// Each unit's rows binutils names by another file, found on the unit's first
    /// lookup; keyed by the context's address and the unit's offset in it.
    first_files: RefCell<HashMap<(usize, usize), first_file::FirstFile>>,
    /// The functions binutils' addr2line has named by their ELF symbol (see
    /// [`SourceLines::inline_frames`]).
    first_names: first_name::FirstNames,
}

impl std::fmt::Debug for SourceLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceLines")
            .field("loads", &self.loads)
            .finish_non_exhaustive()
    }
}

impl SourceLines {
    /// The DWARF of `debug` (a candidate file perf would read it from, its build id
    /// already checked), with addresses mapped through `loads` (the runtime image's
    /// [`load_segments`]). None when the file has no DWARF.
    pub fn load(debug: memmap2::Mmap, loads: Vec<(u64, u64, u64)>) -> Option<SourceLines> {
        let map = Arc::new(debug);
        let file = object::File::parse(&**map).ok()?;
        if !has_dwarf(&file) {
            return None;
        }
        let endian = if file.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        // Every section gimli reads, loaded once (the units' contexts share them).
        let mut sections = Vec::new();
        gimli::Dwarf::load(|id| -> Result<Reader, gimli::Error> {
            let r = gimli::EndianReader::new(SectionBytes::of(&map, &file, id), endian);
            sections.push((id, r.clone()));
            Ok(r)
        })
        .ok()?;
        let empty = gimli::EndianReader::new(SectionBytes::Owned(Arc::default()), endian);
        let lookups = units::Lookups::new(sections, empty)?;
        Some(SourceLines {
            lookups,
            loads,
            first_files: RefCell::default(),
            first_names: first_name::FirstNames::default(),
        })
    }

    /// The ELF virtual address of a file offset (perf's `map__rip_2objdump`).
    pub fn vaddr(&self, offset: u64) -> u64 {
        vaddr_of(&self.loads, offset)
    }

    /// The frames at `offset`, innermost (the inlined code the address is in) first,
    /// then each function it was inlined into, the outermost last; each with the line
    /// it is at (for outer frames: the line of the inlined call). Empty when DWARF has
    /// nothing for the address.
    pub fn frames(&self, offset: u64) -> Vec<SourceFrame> {
        self.found(offset).0
    }

    /// [`SourceLines::frames`] named as perf's addr2line process (one per DSO for the
    /// session) answers them when asked now, the addresses asked before it having been
    /// asked in order: the innermost function, where DWARF gives it no linkage name,
    /// is named by `elf` (the name, demangled, and start, an ELF virtual address, of
    /// the symbol binutils finds covering the address) the first time an address in it
    /// is asked (see `first_name.rs`).
    pub fn inline_frames(&self, offset: u64, elf: Option<(&str, u64)>) -> Vec<SourceFrame> {
        let (mut frames, dies, innermost) = self.found(offset);
        self.first_names.answer(&mut frames, &dies, innermost, elf);
        frames
    }

    /// The frames at `offset`, their DIEs, and what bfd knows of the innermost.
    fn found(&self, offset: u64) -> Found {
        let probe = self.vaddr(offset);
        self.lookups
            .candidates(probe)
            .map(|ctx| (ctx, frames_in(ctx, probe)))
            .find(|(_, f)| !f.0.is_empty())
            .map(|(ctx, mut found)| {
                found.0[0].perf_file = self.perf_file(ctx, probe);
                found
            })
            .unwrap_or_default()
    }

    /// The file perf names for the line row at `probe` in `ctx`, where it is not DWARF's.
    fn perf_file(&self, ctx: &addr2line::Context<Reader>, probe: u64) -> Option<String> {
        let unit = ctx.find_dwarf_and_unit(probe).skip_all_loads()?;
        let offset = match unit.header.offset() {
            gimli::UnitSectionOffset::DebugInfoOffset(o) => o.0,
            gimli::UnitSectionOffset::DebugTypesOffset(o) => o.0,
        };
        let key = (std::ptr::from_ref(ctx) as usize, offset);
        let mut cache = self.first_files.borrow_mut();
        let first = cache
            .entry(key)
            .or_insert_with(|| first_file::FirstFile::of(unit));
        first.file_at(probe).map(str::to_string)
    }
}

/// Frames at an address, each one's DIE, and what bfd knows of the innermost function.
type Found = (
    Vec<SourceFrame>,
    Vec<Option<first_name::DieKey>>,
    Option<first_name::Innermost>,
);

/// What [`SourceLines::frames`] gives from the units of `ctx`, with the DIEs.
fn frames_in(ctx: &addr2line::Context<Reader>, probe: u64) -> Found {
    let mut out = Vec::new();
    let mut dies = Vec::new();
    let mut innermost = None;
    let Ok(mut frames) = ctx.find_frames(probe).skip_all_loads() else {
        return (out, dies, innermost);
    };
    let unit = ctx.find_dwarf_and_unit(probe).skip_all_loads();
    let ctx_key = std::ptr::from_ref(ctx) as usize;
    while let Ok(Some(f)) = frames.next() {
        let die = match (unit, f.dw_die_offset) {
            (Some(u), Some(at)) => {
                let unit_offset = match u.header.offset() {
                    gimli::UnitSectionOffset::DebugInfoOffset(o) => o.0,
                    gimli::UnitSectionOffset::DebugTypesOffset(o) => o.0,
                };
                let key = (ctx_key, unit_offset + at.0);
                if out.is_empty() {
                    innermost = Some(first_name::innermost(u, at, key));
                }
                Some(key)
            }
            _ => None,
        };
        dies.push(die);
        let start_line = match (unit, f.dw_die_offset) {
            (Some(u), Some(at)) => decl_line(u, at),
            _ => 0,
        };
        let function = f
            .function
            .as_ref()
            .and_then(|n| n.raw_name().ok())
            .map(|n| crate::symtab::demangle(&n[..]));
        let (file, line) = f.location.as_ref().map_or((None, 0), |l| {
            (l.file.map(str::to_string), l.line.unwrap_or(0))
        });
        out.push(SourceFrame {
            function,
            file,
            line,
            start_line,
            perf_file: None,
        });
    }
    if out.is_empty() {
        dies.clear();
        // No DW_TAG_subprogram covers it, but the line table may.
        if let Ok(Some(l)) = ctx.find_location(probe) {
            out.push(SourceFrame {
                function: None,
                file: l.file.map(str::to_string),
                line: l.line.unwrap_or(0),
                start_line: 0,
                perf_file: None,
            });
            dies.push(None);
        }
    }
    (out, dies, innermost)
}

/// The ELF virtual address of a file offset in the segments `loads` (perf's
/// `map__rip_2objdump`); the offset itself outside them.
fn vaddr_of(loads: &[(u64, u64, u64)], offset: u64) -> u64 {
    loads
        .iter()
        .find(|(_, size, off)| offset >= *off && offset - off < *size)
        .map_or(offset, |&(vaddr, _, off)| offset - off + vaddr)
}

/// Whether `file` has DWARF to look addresses up in: a `.debug_info` with contents.
pub fn has_dwarf(file: &object::File<'_>) -> bool {
    file.section_by_name(".debug_info")
        .is_some_and(|s| s.file_range().is_some_and(|(_, size)| size > 0))
}

/// The LOAD segments of `runtime` (the loaded file): (virtual address, size, file
/// offset), to turn file offsets into the ELF's addresses.
pub fn load_segments(runtime: &object::File<'_>) -> Vec<(u64, u64, u64)> {
    runtime
        .segments()
        .map(|seg| (seg.address(), seg.size(), seg.file_range().0))
        .collect()
}

/// The `DW_AT_decl_line` of the function whose DIE (a subprogram, or an inlined
/// subroutine) is at `at`, following `DW_AT_abstract_origin` and `DW_AT_specification`
/// within the unit (an inlined or out-of-line instance names its line there); 0 if none.
fn decl_line(unit: gimli::UnitRef<'_, Reader>, at: gimli::UnitOffset<usize>) -> u32 {
    along_origins(unit, at, |entry| {
        let v = entry.attr_value(gimli::DW_AT_decl_line).ok()??;
        Some(
            v.udata_value()
                .and_then(|l| u32::try_from(l).ok())
                .unwrap_or(0),
        )
    })
    .unwrap_or(0)
}

/// The first answer `f` gives for the DIE at `at` or, following `DW_AT_abstract_origin`
/// and `DW_AT_specification` within the unit, its origins (an instance, its abstract
/// origin, that one's declaration: a few hops).
pub(super) fn along_origins<T>(
    unit: gimli::UnitRef<'_, Reader>,
    mut at: gimli::UnitOffset<usize>,
    mut f: impl FnMut(&gimli::DebuggingInformationEntry<'_, '_, Reader>) -> Option<T>,
) -> Option<T> {
    for _ in 0..4 {
        let entry = unit.entry(at).ok()?;
        if let Some(answer) = f(&entry) {
            return Some(answer);
        }
        at = [gimli::DW_AT_abstract_origin, gimli::DW_AT_specification]
            .into_iter()
            .find_map(|a| match entry.attr_value(a) {
                Ok(Some(gimli::AttributeValue::UnitRef(o))) => Some(o),
                _ => None,
            })?;
    }
    None
}
