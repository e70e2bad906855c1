//! Finding each DSO's symbols, once per DSO, and naming addresses, once per address.
//!
//! Files are looked for where perf 6.1's `dso__load` looks, in the order of its
//! `binary_type_symtab` (tools/perf/util/symbol.c): the file the binary's `.gnu_debuglink`
//! names (see [`debuglink`]), the build-id cache (`~/.debug/.build-id/xx/rest/elf`, then
//! `.../debug`), `/usr/lib/debug` by path and by build id, then the file itself; all under
//! `--symfs DIR` when given. A file whose build id differs from the recording's is not
//! used (perf: "build id mismatch"). The first candidate with a .symtab wins, else the
//! first with a .dynsym. Kernel symbols come from a kallsyms file, as perf 6.1's
//! `dso__find_kallsyms` picks it ([`crate::model::Replay::kallsyms`]): /proc/kallsyms for
//! the running kernel (or a recording that names no kernel build id), else the copy in
//! the build-id cache (`~/.debug/[kernel.kallsyms]/<build id>/kallsyms`), else none;
//! none with `--symfs` (perf's `dso__load_kernel_sym` tries no local file then).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::inlines::InlineEntry;
use crate::model::{Kallsyms, PROC_KALLSYMS};
use crate::process::{perf_map_pid, Dso, DsoId};
use crate::srcline::symbol_file::{SymbolAnswer, SymbolFile};
use crate::srcline::{SourceFrame, SourceLines};
use crate::symtab::{KernelSymbols, SymbolTable};

pub mod debuglink;
mod kallsyms;
mod load;

pub use kallsyms::kallsyms_in_background;
use load::{
    addr2line_file, kallsyms_start, load_elf, load_kallsyms, load_lines, load_perf_map,
    split_kallsyms,
};
pub(crate) use load::{on_disk, read_candidates};

/// Where to look for symbols.
#[derive(Debug, Clone, Default)]
pub struct SymbolOptions {
    /// Prefix for every file looked up (perf's `--symfs`).
    pub symfs: Option<PathBuf>,
    /// The kallsyms file for kernel DSOs ([`crate::model::Replay::kallsyms`]); None: the
    /// kernel's addresses stay unnamed.
    pub kallsyms: Option<Kallsyms>,
    /// The build-id cache directory (perf's `~/.debug`); None for `$HOME/.debug`, or
    /// `symfs/.debug` under a symfs (perf 6.1's `symbol__config_symfs`).
    pub buildid_dir: Option<PathBuf>,
}

impl SymbolOptions {
    /// perf's defaults for `replay`'s recording: binaries under `symfs`, the kernel's
    /// symbols from the kallsyms that fit it ([`crate::model::Replay::kallsyms`]), the
    /// default build-id cache. With `symfs`, no kallsyms at all, as perf 6.1's
    /// `dso__load_kernel_sym` ("do not try local files if a symfs was given": neither
    /// /proc/kallsyms nor the build-id cache's copy; its kernel addresses stay unnamed).
    pub fn for_replay(replay: &crate::model::Replay, symfs: Option<PathBuf>) -> Self {
        SymbolOptions {
            kallsyms: symfs.is_none().then(|| replay.kallsyms(None)).flatten(),
            symfs,
            buildid_dir: None,
        }
    }
}

/// What an address of a DSO is called.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SymbolName {
    /// A function: its start (to tell same-named functions apart, as perf does) and name.
    Function {
        /// The function's first address.
        start: u64,
        /// Its name, as perf prints it.
        name: String,
    },
    /// No symbol: the DSO-relative address (perf prints it as `%#.16llx`: `0x` and 16
    /// digits, but 16 zeros alone for address 0, as C's `#` flag gives no prefix to 0).
    Address(u64),
}

impl std::fmt::Display for SymbolName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SymbolName::Function { name, .. } => f.write_str(name),
            SymbolName::Address(0) => f.write_str("0000000000000000"),
            SymbolName::Address(a) => write!(f, "{a:#018x}"),
        }
    }
}

/// Symbol tables loaded per DSO and names cached per (DSO, address).
#[derive(Debug, Default)]
pub struct Symbolizer {
    opts: SymbolOptions,
    tables: HashMap<DsoId, Option<SymbolTable>>,
    /// The kernel's and its modules' symbols from kallsyms, loaded at the first kernel
    /// DSO asked about.
    kernel: Option<Option<KernelSymbols>>,
    cache: HashMap<(DsoId, u64), SymbolName>,
    lines: HashMap<DsoId, Option<SourceLines>>,
    frames: HashMap<(DsoId, u64), Vec<SourceFrame>>,
    /// The file perf's addr2line reads each DSO's symbols from, for addresses its DWARF
    /// does not cover ([`SymbolFile`]).
    symbol_files: HashMap<DsoId, Option<SymbolFile>>,
    inlined: InlineEntries,
    /// The kind of file each user DSO's symbols came from, as perf's
    /// `dso__symtab_origin` letters it (see [`Symbolizer::symtab_origin`]).
    origins: HashMap<DsoId, char>,
}

/// The entries perf lists at frames ([`crate::inlines`]), per (DSO, address).
pub(crate) type InlineEntries = HashMap<(DsoId, u64), Vec<InlineEntry>>;

impl Symbolizer {
    /// A symbolizer that reads binaries as `opts` says.
    pub fn new(opts: SymbolOptions) -> Self {
        Symbolizer {
            opts,
            ..Default::default()
        }
    }

    /// Use `table`, read beforehand from /proc/kallsyms, for the kernel's symbols where
    /// the options name that file.
    pub fn with_kallsyms(mut self, table: Option<SymbolTable>) -> Self {
        let Some(k) = self
            .opts
            .kallsyms
            .as_ref()
            .filter(|k| k.file == Path::new(PROC_KALLSYMS))
        else {
            return self;
        };
        // Moved onto the recorded kernel's addresses, as load_kallsyms moves the file's.
        let table = match (&k.ref_reloc, table) {
            (Some((name, recorded)), Some(t)) => t
                .start_of(name)
                .or_else(|| kallsyms_start(&k.file, name))
                .map(|at| (t, at.wrapping_sub(*recorded))),
            (None, t) => t.map(|t| (t, 0)),
            (Some(_), None) => None,
        };
        self.kernel = Some(table.map(|(t, delta)| split_kallsyms(t, delta)));
        self
    }

    /// The name of `addr` (DSO-relative) in `dso`, remembered for the next time.
    pub fn name(&mut self, id: DsoId, dso: &Dso, addr: u64) -> SymbolName {
        if let Some(n) = self.cache.get(&(id, addr)) {
            return n.clone();
        }
        let name = match self.function(id, dso, addr) {
            Some((start, name)) => SymbolName::Function {
                start,
                name: name.to_string(),
            },
            None => SymbolName::Address(addr),
        };
        self.cache.insert((id, addr), name.clone());
        name
    }

    /// The start and name of the function holding `addr` (DSO-relative) in `dso`, if a
    /// symbol covers it; unlike [`Symbolizer::name`], the answer is not remembered (for
    /// callers that ask once per address and keep it themselves).
    pub fn function<'a>(
        &'a mut self,
        id: DsoId,
        dso: &'a Dso,
        addr: u64,
    ) -> Option<(u64, &'a str)> {
        self.function_span(id, dso, addr).0
    }

    /// [`Symbolizer::function`] of `addr`, and the addresses around it with the same
    /// answer (the function's, or the gap between two; only `addr` in a DSO of
    /// KSYMBOL records, which more records may change).
    pub fn function_span<'a>(
        &'a mut self,
        id: DsoId,
        dso: &'a Dso,
        addr: u64,
    ) -> (Option<(u64, &'a str)>, std::ops::Range<u64>) {
        if !dso.ksymbols.is_empty() {
            // A DSO made of KSYMBOL records (a BPF program): its symbols are the records'.
            let found = dso
                .ksymbols
                .iter()
                .find(|s| s.0 <= addr && addr < s.0 + s.1)
                .map(|(start, _, name)| (*start, name.as_str()));
            return (found, addr..addr.saturating_add(1));
        }
        let table = if dso.kernel {
            let kallsyms = &self.opts.kallsyms;
            let symbols = self
                .kernel
                .get_or_insert_with(|| kallsyms.as_ref().and_then(load_kallsyms))
                .as_ref();
            // A module's DSO has the symbols kallsyms lists under its short name; the
            // kernel image's (and any other kernel DSO's) those listed under none.
            match dso.module_start {
                Some(_) => symbols.and_then(|k| k.modules.get(&dso.short_name)),
                None => symbols.map(|k| &k.kernel),
            }
        } else {
            let opts = &self.opts;
            let origins = &mut self.origins;
            self.tables
                .entry(id)
                .or_insert_with(|| {
                    let (table, origin) = match perf_map_pid(&dso.long_name) {
                        Some(_) => (load_perf_map(dso, opts), 'j'),
                        None => match load_elf(dso, opts) {
                            Some((t, origin)) => (Some(t), origin),
                            None => (None, '!'),
                        },
                    };
                    if table.is_some() {
                        origins.insert(id, origin);
                    }
                    table
                })
                .as_ref()
        };
        // A module's addresses are relative to its load address, kallsyms' absolute.
        let base = if dso.kernel {
            dso.module_start.unwrap_or(0)
        } else {
            0
        };
        match table {
            Some(t) => {
                let (found, span) = t.find_span(addr.wrapping_add(base));
                let span = span.start.wrapping_sub(base)..span.end.wrapping_sub(base);
                (found.map(|s| (s.start.wrapping_sub(base), s.name())), span)
            }
            None => (None, 0..u64::MAX),
        }
    }

    /// The letter perf's `dso__symtab_origin` gives `dso`, whose symbols were asked for
    /// before (`perf report -v` prints it before each entry's symbol): the kind of file
    /// its symbols came from (`d` the binary itself, `B`/`D` the build-id cache's
    /// binary/debug file, `l` the debuglink's file, `f`/`b` /usr/lib/debug's by path/by
    /// build id, `j` a JIT's map, `k` kallsyms for the kernel), `!` where none was found
    /// or none was asked for. A kernel module's is `K` (`m` compressed), what perf's
    /// `dso__set_module_info` makes it, its file found or not (perf reads no kallsyms
    /// for it then).
    pub fn symtab_origin(&self, id: DsoId, dso: &Dso) -> char {
        let name = dso.long_name.as_str();
        if dso.kernel && crate::process::is_kmod(name) {
            let compressed = name.ends_with(".gz") || name.ends_with(".xz");
            return if compressed { 'm' } else { 'K' };
        }
        if dso.kernel {
            let loaded = matches!(&self.kernel, Some(Some(_)));
            return if loaded { 'k' } else { '!' };
        }
        self.origins.get(&id).copied().unwrap_or('!')
    }

    /// Let go of what was loaded for DSO `id` (its symbols, its DWARF and the frames
    /// found in it): a caller that has asked all it will ask of a DSO keeps memory to
    /// one DSO's tables at a time. Asked again, the DSO is loaded again.
    pub fn forget(&mut self, id: DsoId) {
        self.tables.remove(&id);
        self.lines.remove(&id);
        if !self.frames.is_empty() {
            self.frames.retain(|k, _| k.0 != id);
        }
        if !self.cache.is_empty() {
            self.cache.retain(|k, _| k.0 != id);
        }
        if !self.inlined.is_empty() {
            self.inlined.retain(|k, _| k.0 != id);
        }
    }

    /// The entries perf lists at `addr` (DSO-relative) of `dso`, whose symbol is
    /// `symbol` (see [`crate::inlines::inline_entries`]), found once per address (the
    /// DWARF frames are not kept: the entries hold what is printed of them).
    pub(crate) fn inline_entries(
        &mut self,
        id: DsoId,
        dso: &Dso,
        addr: u64,
        symbol: &str,
    ) -> &[InlineEntry] {
        if !self.inlined.contains_key(&(id, addr)) {
            let entries = if crate::inlines::asks_addr2line(self, id, dso) {
                // binutils names some functions by the symbol covering the address the
                // first time it is asked (see SourceLines::inline_frames): this is perf's
                // first ask of the address, in the order perf asks.
                let elf = self.symbol_file(id, dso).and_then(|f| {
                    let (name, start) = f.function(addr)?;
                    Some((crate::symtab::demangle(name), start))
                });
                let frames = self
                    .lines
                    .get(&id)
                    .and_then(Option::as_ref)
                    .map_or_else(Vec::new, |l| {
                        l.inline_frames(addr, elf.as_ref().map(|(n, s)| (n.as_str(), *s)))
                    });
                // Where DWARF has no frame, binutils answers from the symbol table.
                let file = match frames.is_empty() {
                    true => match self.symbol_answer(id, dso, addr) {
                        SymbolAnswer::Symbol(file) => file,
                        SymbolAnswer::Unknown => None,
                    },
                    false => None,
                };
                crate::inlines::entries_of(&frames, symbol, file.as_deref())
            } else {
                Vec::new()
            };
            self.inlined.insert((id, addr), entries);
        }
        &self.inlined[&(id, addr)]
    }

    /// The inline entries found so far, all else dropped.
    pub(crate) fn into_inline_entries(self) -> InlineEntries {
        self.inlined
    }

    /// Take `entries`, found by another symbolizer with the same options for DSOs of the
    /// same machine, as if found here: a report's naming so reads no DWARF its
    /// counting has read.
    pub(crate) fn adopt_inline_entries(&mut self, entries: InlineEntries) {
        self.inlined.extend(entries);
    }

    /// The DWARF frames at `addr` (DSO-relative) of `dso`, innermost first (see
    /// [`SourceLines::frames`]); empty for the kernel and for DSOs without DWARF.
    pub fn source_frames(&mut self, id: DsoId, dso: &Dso, addr: u64) -> &[SourceFrame] {
        let opts = &self.opts;
        let lines = &mut self.lines;
        self.frames.entry((id, addr)).or_insert_with(|| {
            if dso.kernel || dso.long_name.starts_with('[') {
                return Vec::new();
            }
            lines
                .entry(id)
                .or_insert_with(|| load_lines(dso, opts))
                .as_ref()
                .map_or_else(Vec::new, |l| l.frames(addr))
        })
    }

    /// Whether `dso`'s DWARF was found (where its symbols are looked for): perf 6.1 asks
    /// addr2line only of DSOs whose symbol file has line tables.
    pub fn has_source_lines(&mut self, id: DsoId, dso: &Dso) -> bool {
        if dso.kernel || dso.long_name.starts_with('[') {
            return false;
        }
        let opts = &self.opts;
        self.lines
            .entry(id)
            .or_insert_with(|| load_lines(dso, opts))
            .is_some()
    }

    /// What binutils' addr2line answers for `addr` (DSO-relative) of `dso` where its
    /// DWARF has nothing: the symbol-table fallback ([`SymbolFile`]); Unknown where perf
    /// runs no addr2line (the kernel's, `[...]` DSOs, JIT maps) or the file is missing.
    pub fn symbol_answer(&mut self, id: DsoId, dso: &Dso, addr: u64) -> SymbolAnswer {
        match self.symbol_file(id, dso) {
            Some(file) => file.answer(addr),
            None => SymbolAnswer::Unknown,
        }
    }

    /// The file binutils' addr2line would be run on for `dso`, its symbols loaded once.
    fn symbol_file(&mut self, id: DsoId, dso: &Dso) -> Option<&SymbolFile> {
        if dso.kernel || dso.long_name.starts_with('[') || perf_map_pid(&dso.long_name).is_some() {
            return None;
        }
        let opts = &self.opts;
        self.symbol_files
            .entry(id)
            .or_insert_with(|| {
                addr2line_file(dso, opts).map(|(m, loads)| SymbolFile::new(m.into(), loads))
            })
            .as_ref()
    }

    /// perf report's `srcline` cell of `addr` in `dso` (perf's `__get_srcline` without
    /// inlines): `file.c:LINE` from DWARF (the innermost frame's position); where DWARF
    /// has no frame, binutils' symbol-table answer (`FILE:0`, or `??:0` for a symbol of
    /// no file); else `symbol+OFFSET` (decimal), else `dso[vaddr]` (hex); `??:0` without
    /// a DSO.
    pub fn srcline(&mut self, dso: Option<(DsoId, &Dso)>, addr: u64) -> String {
        self.srcline_as(dso, addr, Unknown::SymbolOffset)
    }

    /// The srcline perf prints after a frame of an address-keyed call graph
    /// (callchain.c's `callchain_srcline`, which asks without the symbol's name): as
    /// [`Symbolizer::srcline`], but `+OFFSET` where that has `symbol+OFFSET`.
    pub fn graph_srcline(&mut self, dso: Option<(DsoId, &Dso)>, addr: u64) -> String {
        self.srcline_as(dso, addr, Unknown::Offset)
    }

    fn srcline_as(&mut self, dso: Option<(DsoId, &Dso)>, addr: u64, unknown: Unknown) -> String {
        let Some((id, dso)) = dso else {
            return "??:0".to_string();
        };
        let frames = self.source_frames(id, dso, addr);
        if let Some(s) = frames.first().and_then(SourceFrame::srcline) {
            return s;
        }
        if frames.is_empty() {
            if let SymbolAnswer::Symbol(file) = self.symbol_answer(id, dso, addr) {
                return file
                    .map_or_else(|| "??:0".to_string(), |f| crate::srcline::file_line(&f, 0));
            }
        }
        self.unknown_srcline(id, dso, addr, unknown)
    }

    /// perf's srcline where addr2line knew nothing, as `unknown` says where the address
    /// has a symbol; else `dso[vaddr]`.
    pub fn unknown_srcline(&mut self, id: DsoId, dso: &Dso, addr: u64, unknown: Unknown) -> String {
        if unknown != Unknown::Address {
            if let SymbolName::Function { start, name } = self.name(id, dso, addr) {
                let name = if unknown == Unknown::SymbolOffset {
                    name.as_str()
                } else {
                    ""
                };
                return format!("{name}+{}", addr - start);
            }
        }
        let vaddr = self
            .lines
            .get(&id)
            .and_then(Option::as_ref)
            .map_or(addr, |l| l.vaddr(addr));
        format!("{}[{vaddr:x}]", dso.short_name)
    }

    /// Name many addresses of one DSO: one table load, one lookup per distinct address.
    pub fn names(&mut self, id: DsoId, dso: &Dso, addrs: &[u64]) -> Vec<SymbolName> {
        addrs.iter().map(|&a| self.name(id, dso, a)).collect()
    }
}

/// What perf's srcline is where addr2line knew nothing of an address with a symbol
/// (`__get_srcline`'s `show_sym` and the symbol it is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unknown {
    /// `symbol+OFFSET`: perf report's srcline key.
    SymbolOffset,
    /// `+OFFSET`: an address-keyed call graph's frames.
    Offset,
    /// `dso[vaddr]`, the symbol not given: perf script's srcline.
    Address,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unresolved_addresses_print_as_perf_does() {
        assert_eq!(
            SymbolName::Address(0x1143).to_string(),
            "0x0000000000001143"
        );
        // printf's `#` adds no 0x to a zero.
        assert_eq!(SymbolName::Address(0).to_string(), "0000000000000000");
    }
}
