//! Symbol tables as perf builds them: function symbols from an ELF file's .symtab (or
//! .dynsym) in file-offset space, or the kernel's from kallsyms; duplicates at one
//! address reduced to the best one and zero sizes extended to the next symbol (perf's
//! `symbols__fixup_duplicate` and `symbols__fixup_end`).

mod dso_symbols;
mod elf;
mod kallsyms;
mod rbtree;

pub(crate) use kallsyms::KallsymsLines;
pub use kallsyms::KernelSymbols;
#[cfg(test)]
use kallsyms::{kernel_shaped, split_kallsyms_line};

/// A function found in a table ([`SymbolTable::find`]): `[start, end)` in the table's
/// address space and its name.
#[derive(Debug, Clone, Copy)]
pub struct Symbol<'a> {
    /// First address of the function.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    name: &'a str,
}

impl<'a> Symbol<'a> {
    /// Its name, demangled as perf prints it.
    pub fn name(&self) -> &'a str {
        self.name
    }
}

/// One function as a table keeps it: its name is a range of the table's text. The
/// kernel's 120,000 symbols each with a name of their own were 120,000 allocations
/// and 64 bytes a symbol, moved through the table's growth, sort and reduction: two
/// fifths of the cycles of reading /proc/kallsyms beyond the kernel's own.
#[derive(Debug, Clone, Copy)]
struct Entry {
    start: u64,
    end: u64,
    /// Where the name starts in the table's text, and its length.
    name: usize,
    len: u32,
    /// Whether the name is demangled on first use (ELF symbols: a large library has
    /// hundreds of thousands, a profile touches a few hundred, and demangling them all
    /// cost more than the rest of a system-wide report) or printed as it is.
    mangled: bool,
    binding: Binding,
}

/// Symbols being gathered: the entries and the text their names are in.
#[derive(Debug, Default)]
struct Gathered {
    entries: Vec<Entry>,
    text: String,
}

impl Gathered {
    /// Add a symbol named `parts` one after the other.
    fn push(&mut self, start: u64, end: u64, parts: &[&str], mangled: bool, binding: Binding) {
        let name = self.text.len();
        for part in parts {
            self.text.push_str(part);
        }
        // A name longer than 4 GiB is cut (none is).
        let len = u32::try_from(self.text.len() - name).unwrap_or(u32::MAX);
        self.entries.push(Entry {
            start,
            end,
            name,
            len,
            mangled,
            binding,
        });
    }
}

/// The name of `e` as written in `text`.
fn raw_name<'t>(text: &'t str, e: &Entry) -> &'t str {
    text.get(e.name..e.name + e.len as usize)
        .unwrap_or_default()
}

/// ELF binding, in perf's order of preference for symbols at the same address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Binding {
    Local,
    Weak,
    Global,
}

/// A DSO's functions, sorted by start.
#[derive(Debug, Clone, Default)]
pub struct SymbolTable {
    entries: Vec<Entry>,
    /// Each symbol's start, apart: a lookup's binary search touches one cache line a
    /// step in the 120,000 kernel symbols, not a whole symbol each (that search was 1.5%
    /// of a listing's cycles).
    starts: Vec<u64>,
    /// The names, one after the other.
    text: String,
    /// Each mangled name demangled, once asked for (none for a table of no mangled
    /// names).
    demangled: Vec<std::sync::OnceLock<Box<str>>>,
    /// perf's tree over `entries`, where symbols overlap: which of them names an
    /// address is the first on the path of perf's walk down it.
    tree: Option<Tree>,
}

/// perf's rb-tree of a table's symbols, as it was left by the insertions and erasures
/// that built it (see `rbtree`), with nodes numbered as `entries`.
#[derive(Debug, Clone)]
struct Tree {
    root: u32,
    /// Each symbol's left and right child, or `rbtree::NIL`.
    children: Box<[(u32, u32)]>,
}

impl SymbolTable {
    /// The same symbols `delta` lower (a kallsyms file of the kernel loaded elsewhere).
    pub fn moved_down(mut self, delta: u64) -> SymbolTable {
        // The running kernel's own file (delta 0) stays as it is: a pass over its
        // 120,000 symbols was 1% of a listing's cycles, on the replaying thread.
        if delta == 0 {
            return self;
        }
        for e in &mut self.entries {
            e.start = e.start.wrapping_sub(delta);
            e.end = e.end.wrapping_sub(delta);
        }
        let mut tree = self.tree.take();
        // Only a move across the address space's end changes the order, and then the
        // tree's order is no longer the table's.
        if !self.entries.is_sorted_by_key(|e| e.start) {
            self.entries.sort_by_key(|e| e.start);
            tree = None;
        }
        let mut table = Self::of(Gathered {
            entries: self.entries,
            text: self.text,
        });
        table.tree = tree;
        table
    }

    /// The table of `g`, its entries sorted by start.
    fn of(g: Gathered) -> SymbolTable {
        let starts = g.entries.iter().map(|e| e.start).collect();
        let demangled = if g.entries.iter().any(|e| e.mangled) {
            std::iter::repeat_with(Default::default)
                .take(g.entries.len())
                .collect()
        } else {
            Vec::new()
        };
        SymbolTable {
            entries: g.entries,
            starts,
            text: g.text,
            demangled,
            tree: None,
        }
    }

    /// The name of entry `i`, demangled as perf prints it.
    fn name(&self, i: usize) -> &str {
        let e = &self.entries[i];
        let raw = raw_name(&self.text, e);
        match self.demangled.get(i) {
            Some(d) if e.mangled => d.get_or_init(|| demangle(raw).into()),
            _ => raw,
        }
    }

    /// Entry `i` as a [`Symbol`].
    fn symbol(&self, i: usize) -> Symbol<'_> {
        let e = &self.entries[i];
        Symbol {
            start: e.start,
            end: e.end,
            name: self.name(i),
        }
    }

    /// The function containing `addr`: where symbols overlap, the one perf's
    /// `symbols__find` meets first on its walk down its tree.
    pub fn find(&self, addr: u64) -> Option<Symbol<'_>> {
        if let Some(tree) = &self.tree {
            let mut n = tree.root;
            while let Some(s) = self.entries.get(n as usize) {
                let (left, right) = tree.children[n as usize];
                n = if addr < s.start {
                    left
                } else if addr > s.end || (addr == s.end && addr != s.start) {
                    right
                } else {
                    return Some(self.symbol(n as usize));
                };
            }
            return None;
        }
        let i = self.starts.partition_point(|&s| s <= addr).checked_sub(1)?;
        (addr < self.entries[i].end).then(|| self.symbol(i))
    }

    /// [`SymbolTable::find`] of `addr`, and the addresses around it that find the
    /// same answer: those of the symbol found, or of the gap between two symbols; in a
    /// table with perf's tree, those whose walk takes the same path.
    pub fn find_span(&self, addr: u64) -> (Option<Symbol<'_>>, std::ops::Range<u64>) {
        if let Some(tree) = &self.tree {
            return self.walk_span(tree, addr);
        }
        let i = self.starts.partition_point(|&s| s <= addr);
        // From the next start on, another symbol is the candidate.
        let next = self.starts.get(i).copied().unwrap_or(u64::MAX);
        let Some(i) = i.checked_sub(1) else {
            return (None, 0..next);
        };
        let e = &self.entries[i];
        if addr < e.end {
            (Some(self.symbol(i)), e.start..e.end.min(next))
        } else {
            (None, e.end.max(e.start)..next)
        }
    }

    /// [`SymbolTable::find_span`] by perf's walk down `tree`: each node parts the
    /// addresses in three ranges (below its start: left; its own: found; above: right),
    /// so those that take the same turns as `addr` at every node are the meet of the
    /// ranges taken.
    fn walk_span(&self, tree: &Tree, addr: u64) -> (Option<Symbol<'_>>, std::ops::Range<u64>) {
        let (mut lo, mut hi) = (0, u64::MAX);
        let mut n = tree.root;
        while let Some(s) = self.entries.get(n as usize) {
            let (left, right) = tree.children[n as usize];
            if addr < s.start {
                hi = hi.min(s.start);
                n = left;
            } else if addr > s.end || (addr == s.end && addr != s.start) {
                // Above the start, all go right past an end before it, those past it
                // for a symbol of size 0, those from it for a sized one.
                let from = match s.end.cmp(&s.start) {
                    std::cmp::Ordering::Less => s.start,
                    std::cmp::Ordering::Equal => s.end.saturating_add(1),
                    std::cmp::Ordering::Greater => s.end,
                };
                lo = lo.max(from);
                n = right;
            } else {
                let end = if s.end == s.start {
                    s.start.saturating_add(1)
                } else {
                    s.end
                };
                return (Some(self.symbol(n as usize)), lo.max(s.start)..hi.min(end));
            }
        }
        (None, lo..hi)
    }

    /// The start of the first symbol named `name` (a kallsyms table's `_text`).
    pub fn start_of(&self, name: &str) -> Option<u64> {
        (0..self.entries.len())
            .find(|&i| self.name(i) == name)
            .map(|i| self.entries[i].start)
    }

    /// Number of functions.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the table has no function.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl SymbolTable {
    /// A JIT's functions from a perf map file (`/tmp/perf-PID.map`: `START SIZE NAME`
    /// lines, START and SIZE hex without `0x`), read as perf 6.1's `dso__load_perf_map`
    /// reads it: each number is the hex digits at its place (a line whose numbers do not
    /// leave room for a name is skipped), the name the rest of the line, kept as written
    /// (not demangled), each inserted into perf's tree in the file's order and no end
    /// or duplicate fixed: a symbol of size 0 holds its start alone, and where entries
    /// overlap or share a start (code JIT-compiled again at one place) the one perf's
    /// walk meets first names the address. None if no functions.
    pub fn from_perf_map(text: &str) -> Option<SymbolTable> {
        // perf's hex2u64: the hex digits there, as many as there are (none: 0).
        // Bytes, not a `str`: `at` may fall inside a multi-byte character.
        fn hex_at(line: &str, at: usize) -> (u64, usize) {
            let bytes = &line.as_bytes()[at.min(line.len())..];
            let digits = bytes.iter().take_while(|b| b.is_ascii_hexdigit()).count();
            // More than 16 digits wrap in perf's shifts; keep the low 64 bits likewise.
            let value = bytes[..digits].iter().fold(0u64, |v, &b| {
                (v << 4) | u64::from((b as char).to_digit(16).unwrap_or(0))
            });
            (value, digits)
        }
        let mut symbols = dso_symbols::DsoSymbols::default();
        for line in text.lines() {
            let (start, n) = hex_at(line, 0);
            let at = n + 1;
            if at + 2 >= line.len() {
                continue;
            }
            let (size, n) = hex_at(line, at);
            let at = at + n + 1;
            if at + 2 >= line.len() || !line.is_char_boundary(at) {
                continue;
            }
            let end = start.wrapping_add(size);
            symbols.insert(start, end, &[&line[at..]], false, Binding::Global);
        }
        symbols.table()
    }

    /// perf's order: sort by start (stable, as its tree inserts equal starts after),
    /// extend zero sizes to the next symbol, then keep one symbol per address. Since the
    /// ends are fixed first, of two aliases the last one gets the size and so wins.
    fn fixed_up(mut syms: Gathered, kallsyms: bool) -> SymbolTable {
        // Sorted already, as kallsyms lines are, it is not moved.
        if !syms.entries.is_sorted_by_key(|s| s.start) {
            syms.entries.sort_by_key(|s| s.start);
        }
        let Gathered { entries, text } = &mut syms;
        // Zero-sized symbols reach the next one; kallsyms do not bridge kernel to module
        // (whether a name has one is looked at only for kallsyms, once a name).
        let in_module =
            |s: &Entry| kallsyms && memchr::memchr(b'[', raw_name(text, s).as_bytes()).is_some();
        let mut next_in_module = entries.first().is_some_and(in_module);
        for i in 1..entries.len() {
            let next = entries[i].start;
            let prev_in_module = std::mem::replace(&mut next_in_module, in_module(&entries[i]));
            let prev = &mut entries[i - 1];
            if prev.end == prev.start {
                let crosses = prev_in_module != next_in_module;
                prev.end = if kallsyms && crosses {
                    round_up_page(prev.end.saturating_add(4096))
                } else {
                    next
                };
            }
        }
        if let Some(last) = entries.last_mut() {
            if last.end == last.start {
                last.end = round_up_page(last.start).saturating_add(4096);
            }
        }
        // One symbol per address: sized over empty, non-weak over weak, global over
        // local, fewer leading underscores, then the longer name (the first on a tie).
        // In place: the better of two goes where the first was.
        entries.dedup_by(|s, kept| {
            if s.start != kept.start {
                return false;
            }
            if better(s, kept, text) {
                std::mem::swap(s, kept);
            }
            true
        });
        Self::of(syms)
    }
}

fn round_up_page(x: u64) -> u64 {
    x.div_ceil(4096).saturating_mul(4096)
}

/// perf's `choose_best_symbol`: is `b` better than the kept `a` (names in `text`)?
fn better(b: &Entry, a: &Entry, text: &str) -> bool {
    let (a_sized, b_sized) = (a.end > a.start, b.end > b.start);
    if a_sized != b_sized {
        return b_sized;
    }
    let (a_weak, b_weak) = (a.binding == Binding::Weak, b.binding == Binding::Weak);
    if a_weak != b_weak {
        return a_weak;
    }
    let (a_global, b_global) = (a.binding == Binding::Global, b.binding == Binding::Global);
    if a_global != b_global {
        return b_global;
    }
    // The names as perf prints them (demangled: perf demangles as it loads); a
    // .dynsym symbol is most often a .symtab one again, its name demangled once.
    let a_name = printed(a, text);
    let b_name = (raw_name(text, a) != raw_name(text, b) || a.mangled != b.mangled)
        .then(|| printed(b, text));
    let (a, b) = (&*a_name, b_name.as_deref().unwrap_or(&a_name));
    let underscores = |s: &str| s.bytes().take_while(|&c| c == b'_').count();
    if underscores(a) != underscores(b) {
        return underscores(b) < underscores(a);
    }
    if a.len() != b.len() {
        return b.len() > a.len();
    }
    // arch__choose_best_symbol: the kept one unless it is a "SyS" syscall alias.
    a.starts_with("SyS") || a.starts_with("compat_SyS")
}

/// The name of `e` in `text` as perf prints it.
fn printed<'t>(e: &Entry, text: &'t str) -> std::borrow::Cow<'t, str> {
    let raw = raw_name(text, e);
    if e.mangled {
        demangle(raw).into()
    } else {
        raw.into()
    }
}

/// Rust symbols demangled without their hash; C++ (Itanium ABI, `_Z...`) as perf 6.1
/// demangles by default (`DMGL_NO_OPTS`: no parameter list, no return type); anything
/// else, or what does not demangle, as it is.
pub fn demangle(name: &str) -> String {
    // A v0 name's `.suffix` (`.warm`, `.cold`, `.llvm.N`: a split or local copy) is
    // dropped by libiberty, perf's demangler, which stops at the first `.`.
    if let Some(base) = name
        .starts_with("_R")
        .then(|| name.split_once('.'))
        .flatten()
        .map(|(base, _)| base)
    {
        if let Ok(d) = rustc_demangle::try_demangle(base) {
            return format!("{d:#}");
        }
    }
    // A legacy (`_ZN...E`) name is Rust's only with its hash (`17h` and 16 hex
    // digits): perf hands a name to its Rust demangler only when libiberty's C++
    // rendering ends in one (`rust_is_mangled`); `_ZN12_GLOBAL__N_13fooE` is C++.
    if let Some(d) = rustc_demangle::try_demangle(name)
        .ok()
        .filter(|d| name.starts_with("_R") || format!("{d}") != format!("{d:#}"))
    {
        let mut out = format!("{d:#}");
        // A suffix after the legacy name's closing `E` (`.0`, `.2983`: a local copy)
        // is printed as it is; libiberty, perf's demangler, drops it.
        if let Some(at) = name.strip_prefix("_ZN").and_then(|r| r.rfind("E.")) {
            let suffix = &name[3 + at + 1..];
            if out.ends_with(suffix) {
                out.truncate(out.len() - suffix.len());
            }
        }
        return out;
    }
    if name.starts_with("_Z") {
        let opts = cpp_demangle::DemangleOptions::new()
            .no_params()
            .no_return_type();
        if let Some(d) = crate::libiberty::demangled(name, &opts) {
            return crate::libiberty::restyle(name, d);
        }
    }
    name.to_string()
}

#[cfg(test)]
#[path = "symtab_tests.rs"]
mod tests;
