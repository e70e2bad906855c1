//! What binutils' addr2line answers where DWARF has no line for an address: the ELF
//! symbol before it and the file of the `STT_FILE` symbol before that one.
//!
//! perf 6.1 runs binutils' addr2line for every srcline it prints, on the file its
//! symbols came from, whether or not that file has DWARF. Where DWARF (the file's own or
//! its separate debug file's) does not cover the address, binutils falls back on the
//! file's symbol table (`_bfd_elf_find_function`, binutils 2.40): the function-like
//! symbol of the address's section that starts last at or before it, however far before
//! (its size is not a bound), with the name of the `STT_FILE` symbol before it in the
//! table for a local symbol, or for any symbol if no file symbol came after another
//! symbol; the line is unknown. perf prints that as `FILE:0`, as `:0` for a file
//! symbol with an empty name (ld.so's `_start`), and treats a symbol without a file
//! (`??:?`) as unknown: nothing in perf script, `??:0` in perf report. Where no symbol
//! comes before the address either, addr2line knows nothing and perf prints the DSO and
//! address.

use std::cell::OnceCell;
use std::sync::Arc;

use object::elf;
use object::{Object, ObjectSection, ObjectSymbol, SectionFlags, SymbolFlags, SymbolSection};

/// binutils' relocation-expression symbol types (elf/common.h), never functions.
const STT_RELC: u8 = 8;
const STT_SRELC: u8 = 9;

/// What binutils' symbol-table fallback says of an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymbolAnswer {
    /// A symbol covers it; the file symbol's name for it, if any (line unknown).
    Symbol(Option<String>),
    /// No symbol of its section starts at or before it: addr2line's `??`.
    Unknown,
}

/// A file addr2line would be run on, its symbols indexed on first use.
pub struct SymbolFile {
    map: Arc<memmap2::Mmap>,
    /// The runtime image's LOAD segments: (virtual address, size, file offset).
    loads: Vec<(u64, u64, u64)>,
    index: OnceCell<Index>,
}

impl std::fmt::Debug for SymbolFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymbolFile").finish_non_exhaustive()
    }
}

/// One symbol binutils' `maybe_function_sym` accepts.
#[derive(Debug, Clone)]
struct Sym {
    section: usize,
    value: u64,
    /// Its size, 1 for a symbol of size 0 (binutils never uses 0).
    size: u64,
    /// STT_FUNC or STT_GNU_IFUNC (bfd's BSF_FUNCTION).
    function: bool,
    notype: bool,
    /// The file name binutils gives it, an index into `Index::files`.
    file: Option<usize>,
    /// Its name as the table has it (mangled).
    name: Box<str>,
}

#[derive(Debug, Default)]
struct Index {
    /// Allocated sections in section order: (address, size, index).
    sections: Vec<(u64, u64, usize)>,
    /// Sorted by section and value; equal ones in table order.
    syms: Vec<Sym>,
    files: Vec<String>,
}

impl SymbolFile {
    /// The symbols of the ELF file `map` (parsed when first asked), its offsets turned
    /// into addresses by `loads` (the runtime image's [`super::load_segments`]).
    pub fn new(map: Arc<memmap2::Mmap>, loads: Vec<(u64, u64, u64)>) -> SymbolFile {
        SymbolFile {
            map,
            loads,
            index: OnceCell::new(),
        }
    }

    /// binutils' answer for `offset`, a DSO-relative address (a file offset).
    pub fn answer(&self, offset: u64) -> SymbolAnswer {
        let vaddr = super::vaddr_of(&self.loads, offset);
        let index = self.index.get_or_init(|| {
            object::File::parse(&**self.map)
                .map(|f| Index::of(&f))
                .unwrap_or_default()
        });
        index.answer(vaddr)
    }

    /// The symbol binutils' `_bfd_elf_find_function` names `offset` (a DSO-relative
    /// address) by, as the table has it, and its start (an ELF virtual address); None
    /// where it knows no symbol for it.
    pub fn function(&self, offset: u64) -> Option<(&str, u64)> {
        let vaddr = super::vaddr_of(&self.loads, offset);
        let index = self.index.get_or_init(|| {
            object::File::parse(&**self.map)
                .map(|f| Index::of(&f))
                .unwrap_or_default()
        });
        index.best(vaddr).map(|s| (&*s.name, s.value))
    }
}

impl Index {
    fn of(file: &object::File<'_>) -> Index {
        let sections = file
            .sections()
            .filter(|s| match s.flags() {
                SectionFlags::Elf { sh_flags } => sh_flags & u64::from(elf::SHF_ALLOC) != 0,
                _ => false,
            })
            .map(|s| (s.address(), s.size(), s.index().0))
            .collect();
        // addr2line reads the static symbols, the dynamic ones where there are none.
        let mut index = Index {
            sections,
            ..Index::default()
        };
        if file.symbols().next().is_some() {
            index.add(file.symbols());
        } else {
            index.add(file.dynamic_symbols());
        }
        index.syms.sort_by_key(|s| (s.section, s.value));
        index
    }

    /// Read `symbols` in table order, as `_bfd_elf_find_function` walks them.
    fn add<'a>(&mut self, symbols: impl Iterator<Item = object::Symbol<'a, 'a>>) {
        #[derive(PartialEq)]
        // binutils' nothing_seen, symbol_seen and file_after_symbol_seen.
        enum State {
            Nothing,
            Symbol,
            FileAfterSymbol,
        }
        let mut state = State::Nothing;
        let mut file: Option<usize> = None;
        for sym in symbols {
            let SymbolFlags::Elf { st_info, st_other } = sym.flags() else {
                continue;
            };
            let kind = st_info & 0xf;
            if kind == elf::STT_FILE {
                self.files.push(sym.name().unwrap_or("").to_string());
                file = Some(self.files.len() - 1);
                if state == State::Symbol {
                    state = State::FileAfterSymbol;
                }
                continue;
            }
            if state == State::Nothing {
                state = State::Symbol;
            }
            let SymbolSection::Section(section) = sym.section() else {
                continue;
            };
            let excluded = [
                elf::STT_SECTION,
                elf::STT_OBJECT,
                elf::STT_COMMON,
                elf::STT_TLS,
                STT_RELC,
                STT_SRELC,
            ];
            let local = st_info >> 4 == elf::STB_LOCAL;
            // Zero-sized hidden local untyped symbols are annobin's notes, not functions.
            let annobin = sym.size() == 0
                && local
                && kind == elf::STT_NOTYPE
                && st_other & 0x3 == elf::STV_HIDDEN;
            if excluded.contains(&kind) || annobin {
                continue;
            }
            self.syms.push(Sym {
                section: section.0,
                value: sym.address(),
                size: sym.size().max(1),
                function: kind == elf::STT_FUNC || kind == elf::STT_GNU_IFUNC,
                notype: kind == elf::STT_NOTYPE,
                file: file.filter(|_| local || state != State::FileAfterSymbol),
                name: sym.name().unwrap_or("").into(),
            });
        }
    }

    fn answer(&self, vaddr: u64) -> SymbolAnswer {
        match self.best(vaddr) {
            Some(best) => SymbolAnswer::Symbol(best.file.map(|f| self.files[f].clone())),
            None => SymbolAnswer::Unknown,
        }
    }

    /// The symbol `_bfd_elf_find_function` picks for `vaddr`, if any.
    fn best(&self, vaddr: u64) -> Option<&Sym> {
        // addr2line's find_address_in_section: the first allocated section holding it.
        let &(_, _, section) = self
            .sections
            .iter()
            .find(|&&(at, size, _)| vaddr >= at && vaddr - at < size)?;
        let end = self
            .syms
            .partition_point(|s| (s.section, s.value) <= (section, vaddr));
        let last = end.checked_sub(1).map(|i| &self.syms[i])?;
        if last.section != section {
            return None;
        }
        // Those starting where the last one does, in table order: binutils' better_fit
        // chooses among them (any that starts before loses to them).
        let start =
            self.syms[..end].partition_point(|s| (s.section, s.value) < (section, last.value));
        let mut best = &self.syms[start];
        for sym in &self.syms[start + 1..end] {
            if better_fit(best, sym, vaddr) {
                best = sym;
            }
        }
        Some(best)
    }
}

/// binutils 2.40's `better_fit` for two symbols starting at one address.
fn better_fit(best: &Sym, sym: &Sym, offset: u64) -> bool {
    if best.value.saturating_add(best.size) < offset {
        return sym.size > best.size;
    }
    if sym.value.saturating_add(sym.size) < offset {
        return false;
    }
    if best.function != sym.function {
        return sym.function;
    }
    if best.notype != sym.notype {
        return !sym.notype;
    }
    sym.size < best.size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(section: usize, value: u64, size: u64, function: bool, file: Option<usize>) -> Sym {
        Sym {
            section,
            value,
            size,
            function,
            notype: !function,
            file,
            name: "f".into(),
        }
    }

    fn index(syms: Vec<Sym>) -> Index {
        Index {
            sections: vec![(0x1000, 0x1000, 1), (0x2000, 0x100, 2)],
            syms,
            files: vec!["a.c".into(), String::new()],
        }
    }

    #[test]
    fn the_last_symbol_before_the_address_answers_however_far_before() {
        let i = index(vec![
            sym(1, 0x1100, 0x10, true, Some(0)),
            sym(1, 0x1200, 0x10, true, None),
            sym(2, 0x2000, 0x10, false, Some(1)),
        ]);
        assert_eq!(i.answer(0x10ff), SymbolAnswer::Unknown);
        assert_eq!(i.answer(0x1100), SymbolAnswer::Symbol(Some("a.c".into())));
        assert_eq!(i.answer(0x11ff), SymbolAnswer::Symbol(Some("a.c".into())));
        assert_eq!(i.answer(0x1fff), SymbolAnswer::Symbol(None));
        assert_eq!(i.answer(0x2050), SymbolAnswer::Symbol(Some(String::new())));
        assert_eq!(i.answer(0x2100), SymbolAnswer::Unknown, "in no section");
    }

    #[test]
    fn among_symbols_at_one_address_a_function_then_the_smaller_wins() {
        let i = index(vec![
            sym(1, 0x1100, 0x40, false, None),
            sym(1, 0x1100, 0x40, true, Some(0)),
            sym(1, 0x1100, 0x80, true, Some(1)),
        ]);
        assert_eq!(i.answer(0x1110), SymbolAnswer::Symbol(Some("a.c".into())));
        // Past both sizes: the one reaching further.
        assert_eq!(i.answer(0x1500), SymbolAnswer::Symbol(Some(String::new())));
    }
}
