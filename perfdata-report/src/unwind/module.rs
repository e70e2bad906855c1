//! A DSO's unwind tables (`.eh_frame` with `.eh_frame_hdr`, else `.debug_frame`), read
//! once per DSO from the files symbolisation finds ([`crate::symbolize`]'s lookup), and
//! handed to framehop as the module of each map of the DSO.

use std::ops::Range;
use std::sync::Arc;

use object::{Object, ObjectSection, ObjectSegment};

use super::regs::Arch;
use super::row::{FullRow, Row, Rows};

/// `.eh_frame` as gimli reads it here.
type EhFrame<'a> = gimli::EhFrame<gimli::EndianSlice<'a, gimli::LittleEndian>>;
/// One of its FDEs.
type Fde<'a> = gimli::FrameDescriptionEntry<gimli::EndianSlice<'a, gimli::LittleEndian>>;
use super::signal;
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
    /// Where the sigreturn trampoline's code starts (svmas; [`signal`]).
    trampolines: Vec<u64>,
    /// The rows of the CFI framehop uses that need a register its walk does not keep
    /// ([`super::row`]).
    rows: Rows,
    /// The ELF entry point (svma), where a process's (or ld.so's) first frame is.
    entry: Option<u64>,
}

/// Bytes of entry code from the entry point: glibc's `_start` calls on within them
/// (x86_64 crt1's `_start` is 0x22 to 0x26 bytes, ld.so's calls `_dl_start` at 3;
/// aarch64's are under 0x30), and the next function starts at the 16-byte boundary
/// after them or later.
const ENTRY_CODE: u64 = 0x30;

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
            .and_then(|f| section(f, ".eh_frame_hdr", true))
            .filter(|hdr| eh_frame.as_ref().is_some_and(|eh| index_fits(hdr, eh)));
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
        let text = first(".text", false);
        let got = first(".got", false);
        let start = |s: &Option<Section>| s.as_ref().map_or(0, |s| s.svma.start);
        let arch = match runtime.architecture() {
            object::Architecture::Aarch64 => Some(Arch::Aarch64),
            object::Architecture::X86_64 => Some(Arch::X86_64),
            _ => None,
        };
        // framehop's choice: `.eh_frame` where there is one, else `.debug_frame`.
        let cfi = eh_frame.as_ref().or(debug_frame.as_ref());
        let rows = match (arch, cfi.and_then(|s| Some((s, s.data.as_deref()?)))) {
            (Some(arch), Some((s, data))) if eh_frame.is_some() => {
                Rows::of_eh_frame(data, s.svma.start, start(&text), start(&got), arch)
            }
            (Some(arch), Some((_, data))) => Rows::of_debug_frame(data, arch),
            _ => Rows::default(),
        };
        Ok(DsoUnwind {
            eh_frame,
            eh_frame_hdr,
            debug_frame,
            text,
            got,
            loads,
            trampolines: trampolines(&parsed),
            rows,
            entry: Some(runtime.entry()).filter(|&e| e != 0),
        })
    }

    /// Whether `svma` is in a sigreturn trampoline: at its start when it is a return
    /// address (the handler returns to the trampoline's first instruction), anywhere in
    /// it when it is the sampled instruction.
    pub(crate) fn in_trampoline(&self, svma: u64, sampled: bool, arch: Arch) -> bool {
        let len = signal::trampoline_code(arch).len() as u64;
        self.trampolines.iter().any(|&t| match sampled {
            true => (t..t + len).contains(&svma),
            false => t == svma,
        })
    }

    /// The row of the CFI at `svma` when it is one framehop's walk cannot follow (it
    /// needs a register other than ip, sp and the frame pointer).
    pub(crate) fn untracked_row(&self, svma: u64) -> Option<Row> {
        self.rows.at(svma)
    }

    /// Whether `svma` is in the entry code (`_start`): the outermost frame of a process,
    /// so a walk that ends there is whole, whatever the CFI says about its caller (ld.so's
    /// `_start` has no CFI at all).
    pub(crate) fn is_entry_code(&self, svma: u64) -> bool {
        self.entry
            .is_some_and(|e| (e..e.saturating_add(ENTRY_CODE)).contains(&svma))
    }

    /// Whether an FDE covers `svma`, as `.eh_frame_hdr`'s index says (true where there
    /// is no index to ask: the walk then goes on as framehop goes).
    pub(crate) fn has_fde(&self, svma: u64) -> bool {
        self.with_fde(svma, |fde| fde.is_some()).unwrap_or(true)
    }

    /// The whole CFI row at `svma` (None: no index, no FDE, or a damaged one).
    pub(crate) fn full_row(&self, svma: u64) -> Option<FullRow> {
        self.with_fde(svma, |fde| {
            let (eh_frame, bases, fde) = fde?;
            let mut ctx = Box::new(gimli::UnwindContext::<usize>::new());
            let row = fde
                .unwind_info_for_address(eh_frame, bases, &mut ctx, svma)
                .ok()?;
            Some(FullRow::from_gimli(row))
        })
        .flatten()
    }

    /// `f` of the FDE `.eh_frame_hdr`'s index gives for `svma` (None: none covers it);
    /// None where there is no index to ask.
    fn with_fde<T>(
        &self,
        svma: u64,
        f: impl FnOnce(Option<(&EhFrame<'_>, &gimli::BaseAddresses, &Fde<'_>)>) -> T,
    ) -> Option<T> {
        let (hdr, eh) = (self.eh_frame_hdr.as_ref()?, self.eh_frame.as_ref()?);
        let (hdr_data, eh_data) = (hdr.data.as_deref()?, eh.data.as_deref()?);
        let start = |s: &Option<Section>| s.as_ref().map_or(0, |s| s.svma.start);
        let bases = gimli::BaseAddresses::default()
            .set_eh_frame_hdr(hdr.svma.start)
            .set_eh_frame(eh.svma.start)
            .set_text(start(&self.text))
            .set_got(start(&self.got));
        let eh_frame = gimli::EhFrame::new(eh_data, gimli::LittleEndian);
        let parsed = gimli::EhFrameHdr::new(hdr_data, gimli::LittleEndian)
            .parse(&bases, 8)
            .ok()?;
        let table = parsed.table()?;
        let fde = table
            .fde_for_address(&eh_frame, &bases, svma, |s, b, o| {
                gimli::UnwindSection::cie_from_offset(s, b, o)
            })
            .ok();
        Some(f(fde.as_ref().map(|fde| (&eh_frame, &bases, fde))))
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

/// The sigreturn trampolines in the code of the first of `files` that holds its code (a
/// debug file's code sections are NOBITS), for the architecture the file is of.
fn trampolines(files: &[object::File<'_>]) -> Vec<u64> {
    for f in files {
        let arch = match f.architecture() {
            object::Architecture::X86_64 => Arch::X86_64,
            object::Architecture::Aarch64 => Arch::Aarch64,
            _ => return Vec::new(),
        };
        let code: Vec<_> = f
            .sections()
            .filter(|s| s.kind() == object::SectionKind::Text && s.file_range().is_some())
            .collect();
        if code.is_empty() {
            continue;
        }
        return code
            .iter()
            .filter_map(|s| Some((s.address(), s.data().ok()?)))
            .flat_map(|(at, data)| {
                let found = signal::find_trampolines(data, arch);
                found.into_iter().map(move |off| at + off)
            })
            .take(signal::MAX_TRAMPOLINES)
            .collect();
    }
    Vec::new()
}

/// Whether the `.eh_frame_hdr` index `hdr` points into `eh_frame` as the linker writes
/// it (version 1, `eh_frame_ptr` pc-relative sdata4, the count udata4, the table of
/// datarel sdata4 pairs): its pointer is the table's address, the table fits the
/// section, and every FDE it names lies in `.eh_frame`. A damaged index (a byte flipped
/// on disk, a hostile file) is not used: the unwinder's lookup subtracts these addresses
/// unchecked (gimli's `EhHdrTable`, an overflow panic in a debug build, wrong FDEs in a
/// release one), and `.eh_frame` alone still unwinds. An index of other encodings (which
/// no linker writes) is not used either.
fn index_fits(hdr: &Section, eh_frame: &Section) -> bool {
    let Some(data) = hdr.data.as_deref() else {
        return false;
    };
    let u32_at = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let head = data.get(..4).and_then(|h| <[u8; 4]>::try_from(h).ok());
    let (Some([version, ptr_enc, count_enc, table_enc]), Some(ptr), Some(count)) =
        (head, u32_at(4), u32_at(8))
    else {
        return false;
    };
    if version != 1 {
        return false;
    }
    if (ptr_enc, count_enc, table_enc) != (0x1b, 0x03, 0x3b) {
        // Not the linker's layout: not checked, so not used (gimli's lookup multiplies
        // an absptr count of 2^64 unchecked: the fuzz target's first finding).
        return false;
    }
    let base = hdr.svma.start;
    let target = base.wrapping_add(4).wrapping_add(ptr as i32 as i64 as u64);
    let table = 12usize;
    let fits = (count as usize)
        .checked_mul(8)
        .and_then(|n| n.checked_add(table))
        .is_some_and(|end| end <= data.len());
    fits && target == eh_frame.svma.start
        && (0..count as usize).all(|i| {
            u32_at(table + i * 8 + 4)
                .map(|fde| base.wrapping_add(fde as i32 as i64 as u64))
                .is_some_and(|at| eh_frame.svma.contains(&at))
        })
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

    /// The index of this test binary (the linker's layout) fits; one with its table
    /// pointer or an FDE pointer moved out of `.eh_frame` does not.
    #[test]
    fn a_damaged_eh_frame_hdr_is_not_used() {
        let data = std::fs::read("/proc/self/exe").expect("the test binary");
        let file = object::File::parse(&*data).expect("ELF");
        let get = |name: &str| {
            let s = file.section_by_name(name).expect(name);
            Section {
                svma: s.address()..s.address() + s.size(),
                data: Some(Bytes::from(s.data().expect("data"))),
            }
        };
        let (hdr, eh) = (get(".eh_frame_hdr"), get(".eh_frame"));
        assert!(index_fits(&hdr, &eh));
        let damaged = |at: usize, value: u32| {
            let mut bytes = hdr.data.as_deref().expect("data").to_vec();
            bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
            Section {
                svma: hdr.svma.clone(),
                data: Some(Bytes::from(bytes)),
            }
        };
        // The attack's eh_frame_ptr of -0x7fffffff, a count past the section, an FDE
        // pointer far outside .eh_frame.
        assert!(!index_fits(&damaged(4, 0x8000_0001), &eh));
        assert!(!index_fits(&damaged(8, u32::MAX), &eh));
        assert!(!index_fits(&damaged(16, 0x7000_0000), &eh));
        // The fuzz target's finding: the count's encoding absptr (8 bytes, read from the
        // count and the first table entry: about 2^35 entries) made gimli's lookup
        // overflow `count / 2 * 8` in a debug build. Any layout other than the linker's
        // is not used.
        for head in [
            [1, 0x1b, 0x00, 0x3b],
            [1, 0x1b, 0x03, 0x34],
            [1, 0x03, 0x03, 0x3b],
        ] {
            let mut bytes = hdr.data.as_deref().expect("data").to_vec();
            bytes[..4].copy_from_slice(&head);
            let other = Section {
                svma: hdr.svma.clone(),
                data: Some(Bytes::from(bytes)),
            };
            assert!(!index_fits(&other, &eh), "{head:x?}");
        }
    }

    fn with_loads(loads: Vec<(u64, u64, u64)>) -> DsoUnwind {
        DsoUnwind {
            eh_frame: None,
            eh_frame_hdr: None,
            debug_frame: None,
            text: None,
            got: None,
            loads,
            trampolines: Vec::new(),
            rows: Rows::default(),
            entry: None,
        }
    }

    /// The entry code is `_start` (dash's: 0x4760..0x4782, its call's return address
    /// less one at 0x4781), not the function after it at the next 16-byte boundary.
    #[test]
    fn entry_code_is_start_up_to_the_next_function() {
        let dso = DsoUnwind {
            entry: Some(0x4760),
            ..with_loads(Vec::new())
        };
        for (svma, is) in [
            (0x475f, false),
            (0x4760, true),
            (0x4781, true),
            (0x4790, false),
        ] {
            assert_eq!(dso.is_entry_code(svma), is, "{svma:#x}");
        }
        assert!(!with_loads(Vec::new()).is_entry_code(0));
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
