//! A DSO's ELF symbols loaded as perf 6.1's `dso__load_sym` loads them, into perf's
//! tree in perf's order: the `.symtab` pass, `symbols__fixup_end` and
//! `symbols__fixup_duplicate`; the `.dynsym` pass (perf reads both since 5.14) and the
//! same fixups; then the PLT entries (`dso__synthesize_plt_symbols`).
//!
//! What perf keeps: functions (`STT_FUNC`, `STT_GNU_IFUNC`) and objects of any
//! section; labels (`STT_NOTYPE`, not hidden or internal) of a section whose name has
//! `text` or `data` in it; never an undefined, absolute or unnamed symbol, nor one of
//! a section that is not loaded (`SHF_ALLOC` clear), nor an ARM mapping symbol.

use super::dso_symbols::DsoSymbols;
use super::{demangle, Binding, SymbolTable};
use object::{
    elf, Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable, SectionFlags,
    SectionIndex, SymbolFlags, SymbolSection,
};

/// A section header's fields perf looks at.
struct Shdr<'n> {
    name: &'n [u8],
    flags: u64,
    nobits: bool,
    addr: u64,
    offset: u64,
}

fn shdr<'d>(file: &object::File<'d>, index: SectionIndex) -> Option<Shdr<'d>> {
    let sec = file.section_by_index(index).ok()?;
    let SectionFlags::Elf { sh_flags } = sec.flags() else {
        return None;
    };
    let nobits = sec.file_range().is_none();
    Some(Shdr {
        name: sec.name_bytes().unwrap_or_default(),
        flags: sh_flags,
        nobits,
        addr: sec.address(),
        // A NOBITS section has no file range; perf reads its sh_offset, which only
        // matters where no program header holds the symbol.
        offset: sec.file_range().map_or(0, |r| r.0),
    })
}

/// One pass of `dso__load_sym_internal` over `table`; the number of symbols added.
fn load_pass<'d>(
    symbols: &mut DsoSymbols,
    file: &object::File<'d>,
    table: &object::SymbolTable<'d, '_>,
    runtime: &object::File<'_>,
    loads: &[(u64, u64, u64)],
) -> usize {
    let arm = matches!(
        file.architecture(),
        object::Architecture::Arm | object::Architecture::Aarch64
    );
    let mut added = 0;
    for s in table.symbols() {
        let SymbolFlags::Elf { st_info, st_other } = s.flags() else {
            continue;
        };
        let Ok(name) = s.name_bytes() else { continue };
        let SymbolSection::Section(index) = s.section() else {
            // Undefined, absolute, common: perf skips them all.
            continue;
        };
        if name.is_empty() {
            continue;
        }
        let kind = st_info & 0xf;
        let visibility = st_other & 3;
        let is_label = kind == elf::STT_NOTYPE
            && visibility != elf::STV_HIDDEN
            && visibility != elf::STV_INTERNAL;
        let is_kept = matches!(kind, elf::STT_FUNC | elf::STT_GNU_IFUNC | elf::STT_OBJECT);
        if !is_label && !is_kept {
            continue;
        }
        if arm && name.first() == Some(&b'$') && is_arm_mapping(name) {
            continue;
        }
        let Some(mut sh) = shdr(file, index) else {
            continue;
        };
        if sh.flags & u64::from(elf::SHF_ALLOC) == 0 {
            continue;
        }
        // A NOBITS section of a debug file: its offset and name are the runtime's.
        if sh.nobits {
            match shdr(runtime, index) {
                Some(run) => sh = run,
                None => continue,
            }
        }
        if is_label && !contains(sh.name, b"text") && !contains(sh.name, b"data") {
            continue;
        }
        let value = s.address();
        let start = match loads
            .iter()
            .find(|(vaddr, size, _)| value >= *vaddr && value - vaddr < *size)
        {
            Some(&(vaddr, _, offset)) => value.wrapping_sub(vaddr.wrapping_sub(offset)),
            None => value.wrapping_sub(sh.addr.wrapping_sub(sh.offset)),
        };
        let binding = match st_info >> 4 {
            elf::STB_WEAK => Binding::Weak,
            elf::STB_GLOBAL => Binding::Global,
            // Local, and GNU unique: neither weak nor global to choose_best_symbol.
            _ => Binding::Local,
        };
        let end = match s.size() {
            0 => start,
            size => start.wrapping_add(size),
        };
        let name = String::from_utf8_lossy(name);
        symbols.insert(start, end, &[&name], true, binding);
        added += 1;
    }
    added
}

/// ARM's `$a`, `$d`, `$t`, `$x` (and `$x.N`...) mapping symbols, which perf rejects.
fn is_arm_mapping(name: &[u8]) -> bool {
    name.len() >= 2 && b"adtx".contains(&name[1]) && (name.len() == 2 || name[2] == b'.')
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl SymbolTable {
    /// The symbols perf 6.1 loads from an ELF file, with addresses turned into file
    /// offsets through the program header of `runtime` that holds them (perf adjusts
    /// user-space symbols so, to match `map_ip`; a separate debug file's program
    /// headers lose their file offsets, so they come from the loaded file), in perf's
    /// tree (see the module). None if none.
    pub fn from_elf(file: &object::File<'_>, runtime: &object::File<'_>) -> Option<SymbolTable> {
        // perf's elf_read_program_header: a PT_LOAD whose larger size holds the value.
        let loads: Vec<(u64, u64, u64)> = runtime
            .segments()
            .filter_map(|seg| {
                let (offset, filesz) = seg.file_range();
                let size = seg.size().max(filesz);
                (size != 0).then_some((seg.address(), size, offset))
            })
            .collect();
        let mut symbols = DsoSymbols::default();
        for table in [file.symbol_table(), file.dynamic_symbol_table()]
            .into_iter()
            .flatten()
        {
            if load_pass(&mut symbols, file, &table, runtime, &loads) > 0 {
                symbols.fixup_end();
                symbols.fixup_duplicate();
            }
        }
        if symbols.is_empty() {
            return None;
        }
        for (start, end, name) in plt_symbols(runtime) {
            symbols.insert(start, end, &[&name], false, Binding::Global);
        }
        symbols.table()
    }
}

/// perf's synthesized `name@plt` symbols (`dso__synthesize_plt_symbols`): one PLT entry
/// per `.rela.plt` relocation, in order, named after the relocation's dynamic symbol (none
/// for IRELATIVE slots), in `.plt` after its header entry: start, end and name of each.
/// 64-bit ELF only.
///
/// perf 6.1 takes the header's and each entry's size on x86 from `.plt`'s `sh_entsize`
/// and knows no `.plt.sec` (both came with perf 6.3's `get_plt_sizes`, measured on
/// perf 6.1 live): so an lld-linked binary, whose `.plt` says `sh_entsize` 0, gets
/// empty entries at `.plt`'s start, and an IBT binary's calls through `.plt.sec`
/// stay unresolved; the entries sit in `.plt` all the same.
fn plt_symbols(file: &object::File<'_>) -> Vec<(u64, u64, String)> {
    use object::SymbolIndex;
    let (Some(rela), Some(plt), Some(dynsym)) = (
        file.section_by_name(".rela.plt"),
        file.section_by_name(".plt"),
        file.dynamic_symbol_table(),
    ) else {
        return Vec::new();
    };
    let (Ok(relocs), true) = (rela.data(), file.is_64()) else {
        return Vec::new();
    };
    let size = match file {
        object::File::Elf64(elf) => elf
            .section_by_name(".plt")
            .map_or(0, |s| s.elf_section_header().sh_entsize.get(elf.endian())),
        _ => 0,
    };
    // Entries of size 0 (lld's) all start at `.plt`'s offset: in perf's tree, they name
    // that one address and turn lookups past them away from the symbols before.
    let first = plt.file_range().map_or(0, |r| r.0) + size;
    let read_u64 = |b: &[u8]| -> u64 {
        let bytes: [u8; 8] = b.try_into().unwrap_or_default();
        if file.is_little_endian() {
            u64::from_le_bytes(bytes)
        } else {
            u64::from_be_bytes(bytes)
        }
    };
    relocs
        .chunks_exact(24)
        .enumerate()
        .filter_map(|(i, r)| {
            let index = (read_u64(&r[8..16]) >> 32) as usize;
            // IRELATIVE slots have no symbol: perf calls them plain "@plt".
            let name = match index {
                0 => "",
                _ => dynsym
                    .symbol_by_index(SymbolIndex(index))
                    .ok()?
                    .name()
                    .ok()?,
            };
            let start = first.saturating_add(i as u64 * size);
            let name = format!("{}@plt", demangle(name));
            let end = start.saturating_add(size);
            Some((start, end, name))
        })
        .collect()
}
