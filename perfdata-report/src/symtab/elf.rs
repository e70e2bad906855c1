//! A DSO's ELF symbols loaded as perf 6.1's `dso__load_sym` loads them, into perf's
//! tree in perf's order: the `.symtab` pass, `symbols__fixup_end` and
//! `symbols__fixup_duplicate`; the `.dynsym` pass (perf reads both since 5.14) and the
//! same fixups; then the PLT entries (`dso__synthesize_plt_symbols`).
//!
//! What perf keeps: functions (`STT_FUNC`, `STT_GNU_IFUNC`) and objects of any
//! section; labels (`STT_NOTYPE`, not hidden or internal) of a section whose name has
//! `text` or `data` in it; never an undefined, absolute or unnamed symbol, nor one of
//! a section that is not loaded (`SHF_ALLOC` clear), nor an ARM mapping symbol.

use super::rbtree::{RbTree, NIL};
use super::{better, demangle, Binding, Symbol, SymbolTable};
use object::{
    elf, Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable, SectionFlags,
    SectionIndex, SymbolFlags, SymbolSection,
};

/// perf's symbols of one DSO while it loads them: `syms[i]` is tree node `i`.
struct Loader {
    tree: RbTree,
    syms: Vec<Symbol>,
}

impl Loader {
    fn insert(&mut self, sym: Symbol) {
        let (start, syms) = (sym.start, &self.syms);
        self.tree.insert(|other| start < syms[other as usize].start);
        self.syms.push(sym);
    }

    /// The nodes in order.
    fn in_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.syms.len());
        let mut n = self.tree.first();
        while n != NIL {
            order.push(n);
            n = self.tree.next(n);
        }
        order
    }

    /// `symbols__fixup_end` (not kallsyms): a symbol of size 0 reaches the next one in
    /// the tree (itself, when that starts at the same place); the last one reaches the
    /// page after its own.
    fn fixup_end(&mut self) {
        let order = self.in_order();
        for pair in order.windows(2) {
            let next = self.syms[pair[1] as usize].start;
            let prev = &mut self.syms[pair[0] as usize];
            if prev.end == prev.start {
                prev.end = next;
            }
        }
        if let Some(&last) = order.last() {
            let last = &mut self.syms[last as usize];
            if last.end == last.start {
                last.end = super::round_up_page(last.start).wrapping_add(4096);
            }
        }
    }

    /// `symbols__fixup_duplicate`: of symbols at one start the best stays
    /// (`choose_best_symbol`), the others are erased from the tree.
    fn fixup_duplicate(&mut self) {
        let mut curr = self.tree.first();
        while curr != NIL {
            let next = self.tree.next(curr);
            if next == NIL {
                break;
            }
            let (a, b) = (&self.syms[curr as usize], &self.syms[next as usize]);
            if a.start != b.start {
                curr = next;
            } else if better(b, a) {
                self.tree.erase(curr);
                curr = next;
            } else {
                // Compared again with the one after.
                self.tree.erase(next);
            }
        }
    }

    /// The table: symbols in order, and the tree when symbols overlap (elsewhere a
    /// binary search finds what perf's walk finds).
    fn table(self) -> Option<SymbolTable> {
        let order = self.in_order();
        if order.is_empty() {
            return None;
        }
        let mut index = vec![NIL; self.syms.len()];
        for (i, &n) in order.iter().enumerate() {
            index[n as usize] = i as u32;
        }
        let at = |n: u32| if n == NIL { NIL } else { index[n as usize] };
        let children: Box<[(u32, u32)]> = order
            .iter()
            .map(|&n| {
                let (l, r) = self.tree.children(n);
                (at(l), at(r))
            })
            .collect();
        let root = at(self.tree.root());
        let mut slots: Vec<Option<Symbol>> = self.syms.into_iter().map(Some).collect();
        let syms: Vec<Symbol> = order
            .iter()
            .filter_map(|&n| slots[n as usize].take())
            .collect();
        let overlaps = syms.windows(2).any(|w| w[0].end > w[1].start);
        let mut table = SymbolTable::of(syms);
        if overlaps {
            table.tree = Some(super::Tree { root, children });
        }
        Some(table)
    }
}

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
    loader: &mut Loader,
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
        loader.insert(Symbol::new(start, end, &name, true, binding));
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
        let mut loader = Loader {
            tree: RbTree::new(),
            syms: Vec::new(),
        };
        for table in [file.symbol_table(), file.dynamic_symbol_table()]
            .into_iter()
            .flatten()
        {
            if load_pass(&mut loader, file, &table, runtime, &loads) > 0 {
                loader.fixup_end();
                loader.fixup_duplicate();
            }
        }
        if loader.syms.is_empty() {
            return None;
        }
        for plt in plt_symbols(runtime) {
            loader.insert(plt);
        }
        loader.table()
    }
}

/// perf's synthesized `name@plt` symbols (`dso__synthesize_plt_symbols`): one PLT entry
/// per `.rela.plt` relocation, in order, named after the relocation's dynamic symbol (none
/// for IRELATIVE slots); in
/// `.plt.sec` when there is one, else in `.plt` after its header entry. 64-bit ELF only.
fn plt_symbols(file: &object::File<'_>) -> Vec<Symbol> {
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
    let entry = |sec: &object::Section<'_, '_>| match sec.flags() {
        SectionFlags::Elf { .. } => sec.align().max(16),
        _ => 16,
    };
    let (first, size) = match file.section_by_name(".plt.sec") {
        Some(sec) => (sec.file_range().map_or(0, |r| r.0), entry(&sec)),
        None => {
            let size = entry(&plt);
            (plt.file_range().map_or(0, |r| r.0) + size, size)
        }
    };
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
            Some(Symbol::new(start, end, &name, false, Binding::Global))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(start: u64, size: u64, name: &str, binding: Binding) -> Symbol {
        Symbol::new(start, start + size, name, false, binding)
    }

    /// `syms` inserted in this order, as one pass of dso__load_sym, and fixed up.
    fn loaded(syms: Vec<Symbol>) -> SymbolTable {
        let mut loader = Loader {
            tree: RbTree::new(),
            syms: Vec::new(),
        };
        for s in syms {
            loader.insert(s);
        }
        loader.fixup_end();
        loader.fixup_duplicate();
        loader.table().expect("symbols")
    }

    fn name(t: &SymbolTable, addr: u64) -> Option<&str> {
        t.find(addr).map(|s| s.name())
    }

    /// A function [0x100, 0x140) with a label at 0x110 that fixup_end extends to the
    /// next symbol, 0x200: between 0x110 and 0x140 both hold the address, and perf's
    /// walk names it after whichever is higher in its tree. Three ascending inserts
    /// rotate the middle one to the root: with `before` first the function is the
    /// root, without it the label is.
    #[test]
    fn a_label_inside_a_function_is_named_by_the_trees_shape() {
        let before = || sym(0x0, 0x10, "before", Binding::Global);
        let function = || sym(0x100, 0x40, "function", Binding::Global);
        let label = || sym(0x110, 0, "label", Binding::Local);
        let next = |size| sym(0x200, size, "next", Binding::Global);
        let t = loaded(vec![before(), function(), label(), next(0x10)]);
        assert_eq!(name(&t, 0x100), Some("function"));
        assert_eq!(name(&t, 0x120), Some("function"));
        assert_eq!(name(&t, 0x13f), Some("function"));
        assert_eq!(name(&t, 0x140), Some("label"));
        assert_eq!(name(&t, 0x1ff), Some("label"));
        assert_eq!(name(&t, 0x200), Some("next"));
        assert_eq!(name(&t, 0x210), None);
        assert_eq!(name(&t, 0xff), None);
        let t = loaded(vec![function(), label(), next(0)]);
        assert_eq!(name(&t, 0x10f), Some("function"));
        assert_eq!(name(&t, 0x110), Some("label"));
        assert_eq!(name(&t, 0x120), Some("label"));
        assert_eq!(name(&t, 0x13f), Some("label"));
        // The last symbol, of size 0, reaches the page after its start's: 0x2000.
        assert_eq!(name(&t, 0x1fff), Some("next"));
        assert_eq!(name(&t, 0x2000), None);
    }

    /// Symbols at one address: a sized one over a size-0 one inserted before it (which
    /// ends at the sized one's start, so stays empty), then non-weak over weak,
    /// global over local, fewer leading underscores, the longer name, the first.
    #[test]
    fn duplicates_keep_perfs_best() {
        // Another symbol after: the last one would get a size (see below).
        let at = |mut syms: Vec<Symbol>| {
            syms.push(sym(0x1000, 8, "after", Binding::Global));
            let t = loaded(syms);
            assert_eq!(t.len(), 2);
            name(&t, 0x100).map(str::to_string)
        };
        let s = |size, name, b| sym(0x100, size, name, b);
        use Binding::{Global, Local, Weak};
        assert_eq!(
            at(vec![s(0, "empty", Global), s(8, "sized", Local)]),
            Some("sized".into())
        );
        // Ends are fixed first: a size-0 symbol inserted after a sized one at its
        // address reaches the next address, so is sized too, and wins as global.
        assert_eq!(
            at(vec![s(8, "sized", Local), s(0, "empty", Global)]),
            Some("empty".into())
        );
        assert_eq!(
            at(vec![s(8, "weak", Weak), s(8, "local", Local)]),
            Some("local".into())
        );
        assert_eq!(
            at(vec![s(8, "local", Local), s(8, "global", Global)]),
            Some("global".into())
        );
        assert_eq!(
            at(vec![s(8, "__x", Global), s(8, "_y", Global)]),
            Some("_y".into())
        );
        assert_eq!(
            at(vec![s(8, "ab", Global), s(8, "abc", Global)]),
            Some("abc".into())
        );
        assert_eq!(
            at(vec![s(8, "one", Global), s(8, "two", Global)]),
            Some("one".into())
        );
        assert_eq!(
            at(vec![s(8, "SyS_a", Global), s(8, "sys_a", Global)]),
            Some("sys_a".into())
        );
        // Likewise the last symbol of size 0, which reaches the next page.
        let t = loaded(vec![s(8, "sized", Local), s(0, "last", Global)]);
        assert_eq!(name(&t, 0x100), Some("last"));
    }
}
