//! Source lines and inlined frames from a DSO's DWARF (perf's srcline.c), read in process
//! with `addr2line` over `gimli` instead of running binutils' addr2line per address.
//!
//! Addresses come in as the report's DSO-relative addresses (file offsets, as perf's
//! `map_ip` gives them) and are turned back into the ELF's virtual addresses through the
//! loaded file's program headers, as perf's `map__rip_2objdump` does before it asks
//! addr2line.

use std::borrow::Cow;
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment};

type Reader = gimli::EndianArcSlice<gimli::RunTimeEndian>;

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
}

impl SourceFrame {
    /// perf's srcline: `basename:line` (perf's default, without `--full-source-path`);
    /// None without a file.
    pub fn srcline(&self) -> Option<String> {
        let file = self.file.as_deref()?;
        let base = file.rsplit('/').next().unwrap_or(file);
        Some(format!("{base}:{}", self.line))
    }
}

/// The DWARF of one DSO, ready for lookups.
pub struct SourceLines {
    ctx: addr2line::Context<Reader>,
    /// The loaded file's LOAD segments: (virtual address, size, file offset).
    loads: Vec<(u64, u64, u64)>,
}

impl std::fmt::Debug for SourceLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceLines")
            .field("loads", &self.loads)
            .finish_non_exhaustive()
    }
}

impl SourceLines {
    /// The DWARF of the first of `files` (candidates in perf's order, build ids already
    /// checked) that has a `.debug_info`, with addresses mapped through `runtime`'s
    /// program headers. None when no file has DWARF.
    pub fn load(files: &[object::File<'_>], runtime: &object::File<'_>) -> Option<SourceLines> {
        let debug = files.iter().find(|f| {
            f.section_by_name(".debug_info")
                .is_some_and(|s| s.file_range().is_some_and(|(_, size)| size > 0))
        })?;
        let endian = if debug.is_little_endian() {
            gimli::RunTimeEndian::Little
        } else {
            gimli::RunTimeEndian::Big
        };
        let load = |id: gimli::SectionId| -> Result<Reader, gimli::Error> {
            // Compressed sections (SHF_COMPRESSED, as Debian's debug files have) are
            // expanded here, once per DSO.
            let data = debug
                .section_by_name(id.name())
                .and_then(|s| s.uncompressed_data().ok())
                .unwrap_or(Cow::Borrowed(&[]));
            Ok(gimli::EndianArcSlice::new(Arc::from(&*data), endian))
        };
        let dwarf = gimli::Dwarf::load(load).ok()?;
        let ctx = addr2line::Context::from_dwarf(dwarf).ok()?;
        let loads = runtime
            .segments()
            .map(|seg| (seg.address(), seg.size(), seg.file_range().0))
            .collect();
        Some(SourceLines { ctx, loads })
    }

    /// The ELF virtual address of a file offset (perf's `map__rip_2objdump`).
    pub fn vaddr(&self, offset: u64) -> u64 {
        self.loads
            .iter()
            .find(|(_, size, off)| offset >= *off && offset - off < *size)
            .map_or(offset, |&(vaddr, _, off)| offset - off + vaddr)
    }

    /// The frames at `offset`, innermost (the inlined code the address is in) first,
    /// then each function it was inlined into, the outermost last; each with the line
    /// it is at (for outer frames: the line of the inlined call). Empty when DWARF has
    /// nothing for the address.
    pub fn frames(&self, offset: u64) -> Vec<SourceFrame> {
        let probe = self.vaddr(offset);
        let mut out = Vec::new();
        let Ok(mut frames) = self.ctx.find_frames(probe).skip_all_loads() else {
            return out;
        };
        let unit = self.ctx.find_dwarf_and_unit(probe).skip_all_loads();
        while let Ok(Some(f)) = frames.next() {
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
            });
        }
        if out.is_empty() {
            // No DW_TAG_subprogram covers it, but the line table may.
            if let Ok(Some(l)) = self.ctx.find_location(probe) {
                out.push(SourceFrame {
                    function: None,
                    file: l.file.map(str::to_string),
                    line: l.line.unwrap_or(0),
                    start_line: 0,
                });
            }
        }
        out
    }
}

/// The `DW_AT_decl_line` of the function whose DIE (a subprogram, or an inlined
/// subroutine) is at `at`, following `DW_AT_abstract_origin` and `DW_AT_specification`
/// within the unit (an inlined or out-of-line instance names its line there); 0 if none.
fn decl_line(unit: gimli::UnitRef<'_, Reader>, mut at: gimli::UnitOffset<usize>) -> u32 {
    // A chain is an instance, its abstract origin, that one's declaration: a few hops.
    for _ in 0..4 {
        let Ok(entry) = unit.entry(at) else { return 0 };
        if let Ok(Some(v)) = entry.attr_value(gimli::DW_AT_decl_line) {
            return v
                .udata_value()
                .and_then(|l| u32::try_from(l).ok())
                .unwrap_or(0);
        }
        let origin = [gimli::DW_AT_abstract_origin, gimli::DW_AT_specification]
            .into_iter()
            .find_map(|a| match entry.attr_value(a) {
                Ok(Some(gimli::AttributeValue::UnitRef(o))) => Some(o),
                _ => None,
            });
        match origin {
            Some(o) => at = o,
            None => return 0,
        }
    }
    0
}
