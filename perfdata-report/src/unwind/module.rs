//! A DSO's unwind tables (`.eh_frame` with `.eh_frame_hdr`, else `.debug_frame`), read
//! once per DSO from the files symbolisation finds ([`crate::symbolize`]'s lookup), and
//! handed to framehop as the module of each map of the DSO.

use std::ops::Range;
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment};

use crate::process::{Dso, Map};
use crate::symbolize::{self, SymbolOptions};

/// Section bytes shared by every map (in every process) of one DSO.
pub(crate) type Bytes = Arc<[u8]>;

/// Why a DSO has no unwind tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// No file of it was found (path, `--symfs`, build-id cache, debug directories).
    Binary,
    /// A file is at its path but its build id is not the recording's.
    BuildIdDiffers,
    /// Its files have no CFI (`.eh_frame` or `.debug_frame`).
    NoCfi,
}

/// One section: its address in the file (svma) and its bytes.
#[derive(Debug, Clone)]
struct Section {
    svma: Range<u64>,
    data: Option<Bytes>,
}

/// What framehop needs of a DSO.
#[derive(Debug)]
pub(crate) struct DsoUnwind {
    eh_frame: Option<Section>,
    eh_frame_hdr: Option<Section>,
    debug_frame: Option<Section>,
    text: Option<Section>,
    got: Option<Section>,
    /// The PT_LOAD segments: (file offset, vaddr, file size), to place a map's start.
    loads: Vec<(u64, u64, u64)>,
}

impl DsoUnwind {
    /// The unwind tables of `dso`, from the first of its candidate files that has them.
    pub(crate) fn load(dso: &Dso, opts: &SymbolOptions) -> Result<DsoUnwind, Missing> {
        if dso.kernel || !dso.ksymbols.is_empty() {
            return Err(Missing::Binary);
        }
        let files = symbolize::read_candidates(dso, opts);
        let parsed: Vec<object::File<'_>> = files
            .iter()
            .filter_map(|d| object::File::parse(&**d).ok())
            .collect();
        if parsed.is_empty() {
            let at_path = symbolize::on_disk(dso, opts);
            return Err(match at_path.is_some_and(|p| p.is_file()) {
                true if dso.build_id.is_some() => Missing::BuildIdDiffers,
                _ => Missing::Binary,
            });
        }
        let section = |f: &object::File<'_>, name: &str, data: bool| -> Option<Section> {
            let s = f.section_by_name(name)?;
            // A debug file's copies of the loaded sections are NOBITS: no file range.
            let bytes = if data {
                s.file_range()?;
                Some(Bytes::from(s.uncompressed_data().ok()?.as_ref()))
            } else {
                None
            };
            Some(Section {
                svma: s.address()..s.address() + s.size(),
                data: bytes,
            })
        };
        let first = |name: &str, data: bool| parsed.iter().find_map(|f| section(f, name, data));
        let eh_frame = first(".eh_frame", true);
        // The index and the table come from the same file, or the index is not used.
        let eh_frame_hdr = parsed
            .iter()
            .find(|f| section(f, ".eh_frame", true).is_some())
            .and_then(|f| section(f, ".eh_frame_hdr", true));
        let debug_frame = first(".debug_frame", true);
        if eh_frame.is_none() && debug_frame.is_none() {
            return Err(Missing::NoCfi);
        }
        let runtime = parsed
            .iter()
            .find(|f| f.segments().next().is_some())
            .unwrap_or(&parsed[0]);
        let loads = runtime
            .segments()
            .map(|s| {
                let (offset, size) = s.file_range();
                (offset, s.address(), size)
            })
            .collect();
        Ok(DsoUnwind {
            eh_frame,
            eh_frame_hdr,
            debug_frame,
            text: first(".text", false),
            got: first(".got", false),
            loads,
        })
    }

    /// The process address of the DSO's address 0 (framehop's base avma) when `map`
    /// maps it: the map's start is its pgoff's place in the PT_LOAD segment it maps.
    /// The loader maps a segment from its offset rounded down to a page, so a page can
    /// hold the end of one segment and the start of the next (lld lays out
    /// `R` to 0x13018, `R E` from 0x13020): the last segment whose page-rounded start
    /// is at or before pgoff is the one mapped.
    pub(crate) fn base_avma(&self, map: &Map) -> u64 {
        const PAGE: u64 = 0x1000;
        let svma = self
            .loads
            .iter()
            .filter(|&&(off, _, size)| off & !(PAGE - 1) <= map.pgoff && map.pgoff < off + size)
            .max_by_key(|&&(off, _, _)| off)
            .map_or(map.pgoff, |&(off, vaddr, _)| {
                vaddr.wrapping_sub(off.wrapping_sub(map.pgoff))
            });
        map.start.wrapping_sub(svma)
    }
}

/// framehop's view of a [`DsoUnwind`] (ELF: base svma 0).
pub(crate) struct SectionInfo(pub(crate) Arc<DsoUnwind>);

impl SectionInfo {
    fn named(&self, name: &[u8]) -> Option<&Section> {
        let d = &self.0;
        match name {
            b".eh_frame" => d.eh_frame.as_ref(),
            b".eh_frame_hdr" => d.eh_frame_hdr.as_ref(),
            b".debug_frame" => d.debug_frame.as_ref(),
            b".text" => d.text.as_ref(),
            b".got" => d.got.as_ref(),
            _ => None,
        }
    }
}

impl framehop::ModuleSectionInfo<Bytes> for SectionInfo {
    fn base_svma(&self) -> u64 {
        0
    }

    fn section_svma_range(&mut self, name: &[u8]) -> Option<Range<u64>> {
        self.named(name).map(|s| s.svma.clone())
    }

    fn section_data(&mut self, name: &[u8]) -> Option<Bytes> {
        self.named(name).and_then(|s| s.data.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_loads(loads: Vec<(u64, u64, u64)>) -> DsoUnwind {
        DsoUnwind {
            eh_frame: None,
            eh_frame_hdr: None,
            debug_frame: None,
            text: None,
            got: None,
            loads,
        }
    }

    fn map(start: u64, pgoff: u64) -> Map {
        Map {
            start,
            end: start + 0x10000,
            pgoff,
            dso: 0,
            identity: false,
        }
    }

    #[test]
    fn a_map_is_placed_by_the_segment_it_maps() {
        // lld's layout (a Rust release binary): R to 0x13018, R E from file offset
        // 0x13020 at vaddr 0x14020; the exec map starts at the page 0x13000, which is
        // vaddr 0x14000.
        let lld = with_loads(vec![
            (0, 0, 0x13018),
            (0x13020, 0x14020, 0x3dc40),
            (0x50c60, 0x52c60, 0x2798),
        ]);
        assert_eq!(
            lld.base_avma(&map(0x5555_0001_3000, 0x13000)),
            0x5555_0000_0000 - 0x1000
        );
        assert_eq!(lld.base_avma(&map(0x5555_0000_0000, 0)), 0x5555_0000_0000);
        // GNU ld: offsets are vaddrs, each segment page aligned.
        let ld = with_loads(vec![(0, 0, 0x628), (0x1000, 0x1000, 0x1d5)]);
        assert_eq!(ld.base_avma(&map(0x7000_1000, 0x1000)), 0x7000_0000);
    }
}
