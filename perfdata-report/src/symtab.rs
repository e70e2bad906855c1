//! Symbol tables as perf builds them: function symbols from an ELF file's .symtab (or
//! .dynsym) in file-offset space, or the kernel's from kallsyms; duplicates at one
//! address reduced to the best one and zero sizes extended to the next symbol (perf's
//! `symbols__fixup_duplicate` and `symbols__fixup_end`).

mod dso_symbols;
mod elf;
mod rbtree;

/// One function: `[start, end)` in the table's address space.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// First address of the function.
    pub start: u64,
    /// One past its last address.
    pub end: u64,
    /// The name as the file has it.
    raw: Box<str>,
    /// Whether `raw` is demangled on first use (ELF symbols: a large library has
    /// hundreds of thousands, a profile touches a few hundred, and demangling them all
    /// cost more than the rest of a system-wide report) or printed as it is.
    mangled: bool,
    demangled: std::sync::OnceLock<Box<str>>,
    binding: Binding,
}

impl Symbol {
    fn new(start: u64, end: u64, raw: &str, mangled: bool, binding: Binding) -> Symbol {
        Symbol {
            start,
            end,
            raw: raw.into(),
            mangled,
            demangled: std::sync::OnceLock::new(),
            binding,
        }
    }

    /// Its name, demangled as perf prints it.
    pub fn name(&self) -> &str {
        if !self.mangled {
            return &self.raw;
        }
        self.demangled.get_or_init(|| demangle(&self.raw).into())
    }
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
    syms: Vec<Symbol>,
    /// Each symbol's start, apart: a lookup's binary search touches one cache line a
    /// step in the 120,000 kernel symbols, not a whole symbol each (that search was 1.5%
    /// of a listing's cycles).
    starts: Vec<u64>,
    /// perf's tree over `syms`, where symbols overlap: which of them names an address
    /// is the first on the path of perf's walk down it.
    tree: Option<Tree>,
}

/// perf's rb-tree of a table's symbols, as it was left by the insertions and erasures
/// that built it (see `rbtree`), with nodes numbered as `syms`.
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
        for s in &mut self.syms {
            s.start = s.start.wrapping_sub(delta);
            s.end = s.end.wrapping_sub(delta);
        }
        // Only a move across the address space's end changes the order.
        if !self.syms.is_sorted_by_key(|s| s.start) {
            self.syms.sort_by_key(|s| s.start);
            // The tree's order is no longer the table's.
            return Self::of(self.syms);
        }
        let tree = self.tree.take();
        SymbolTable {
            tree,
            ..Self::of(self.syms)
        }
    }

    /// The table of `syms`, sorted by start.
    fn of(syms: Vec<Symbol>) -> SymbolTable {
        let starts = syms.iter().map(|s| s.start).collect();
        SymbolTable {
            syms,
            starts,
            tree: None,
        }
    }

    /// The function containing `addr`: where symbols overlap, the one perf's
    /// `symbols__find` meets first on its walk down its tree.
    pub fn find(&self, addr: u64) -> Option<&Symbol> {
        if let Some(tree) = &self.tree {
            let mut n = tree.root;
            while let Some(s) = self.syms.get(n as usize) {
                let (left, right) = tree.children[n as usize];
                n = if addr < s.start {
                    left
                } else if addr > s.end || (addr == s.end && addr != s.start) {
                    right
                } else {
                    return Some(s);
                };
            }
            return None;
        }
        let i = self.starts.partition_point(|&s| s <= addr);
        self.syms[..i].last().filter(|s| addr < s.end)
    }

    /// The start of the first symbol named `name` (a kallsyms table's `_text`).
    pub fn start_of(&self, name: &str) -> Option<u64> {
        self.syms.iter().find(|s| s.name() == name).map(|s| s.start)
    }

    /// Number of functions.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether the table has no function.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// The kernel's functions from /proc/kallsyms text (`addr type name [module]`): text,
    /// weak, data and bss types as perf keeps them. None if every address is zero
    /// (kptr_restrict).
    pub fn from_kallsyms(text: &str) -> Option<SymbolTable> {
        let mut lines = KallsymsLines::default();
        lines.add(text);
        lines.table()
    }
}

/// /proc/kallsyms text read a block of whole lines at a time, as it comes: the table is
/// that of all the lines added ([`SymbolTable::from_kallsyms`] of their text).
#[derive(Debug, Default)]
pub(crate) struct KallsymsLines {
    syms: Vec<Symbol>,
    any_address: bool,
}

impl KallsymsLines {
    /// Read the lines of `text` (whole lines: a line cut in two reads as two).
    pub fn add(&mut self, text: &str) {
        // 122,000 lines on this machine: each is read in the shape the kernel writes
        // (`kernel_shaped`), one pass over its bytes; a line of any other shape goes
        // the general way (`split_kallsyms_line`), which reads those the same.
        self.syms.reserve(text.len() / 40);
        let mut rest = text;
        while !rest.is_empty() {
            let end = memchr::memchr(b'\n', rest.as_bytes()).unwrap_or(rest.len());
            let line = &rest[..end];
            rest = rest.get(end + 1..).unwrap_or_default();
            let Some((start, t, name, module)) =
                kernel_shaped(line).or_else(|| split_kallsyms_line(line))
            else {
                continue;
            };
            self.any_address |= start != 0;
            if !matches!(t.to_ascii_uppercase(), b'T' | b'W' | b'D' | b'B') {
                continue;
            }
            let binding = match t {
                b'W' | b'w' => Binding::Weak,
                c if c.is_ascii_uppercase() => Binding::Global,
                _ => Binding::Local,
            };
            // The name is copied once, into the symbol.
            let with_module;
            let name = match module {
                Some(module) => {
                    with_module = format!("{name} {module}");
                    with_module.as_str()
                }
                None => name,
            };
            self.syms
                .push(Symbol::new(start, start, name, false, binding));
        }
    }

    /// The table of the lines added ([`SymbolTable::from_kallsyms`]).
    pub fn table(self) -> Option<SymbolTable> {
        (self.any_address && !self.syms.is_empty()).then(|| SymbolTable::fixed_up(self.syms, true))
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
            symbols.insert(Symbol::new(start, end, &line[at..], false, Binding::Global));
        }
        symbols.table()
    }

    /// perf's order: sort by start (stable, as its tree inserts equal starts after),
    /// extend zero sizes to the next symbol, then keep one symbol per address. Since the
    /// ends are fixed first, of two aliases the last one gets the size and so wins.
    fn fixed_up(mut syms: Vec<Symbol>, kallsyms: bool) -> SymbolTable {
        syms.sort_by_key(|s| s.start);
        // Zero-sized symbols reach the next one; kallsyms do not bridge kernel to module
        // (whether a name has one is looked at only for kallsyms, once a name).
        let in_module = |s: &Symbol| kallsyms && memchr::memchr(b'[', s.raw.as_bytes()).is_some();
        let mut next_in_module = syms.first().is_some_and(in_module);
        for i in 1..syms.len() {
            let next = syms[i].start;
            let prev_in_module = std::mem::replace(&mut next_in_module, in_module(&syms[i]));
            let prev = &mut syms[i - 1];
            if prev.end == prev.start {
                let crosses = prev_in_module != next_in_module;
                prev.end = if kallsyms && crosses {
                    round_up_page(prev.end.saturating_add(4096))
                } else {
                    next
                };
            }
        }
        if let Some(last) = syms.last_mut() {
            if last.end == last.start {
                last.end = round_up_page(last.start).saturating_add(4096);
            }
        }
        // One symbol per address: sized over empty, non-weak over weak, global over
        // local, fewer leading underscores, then the longer name (the first on a tie).
        let mut kept: Vec<Symbol> = Vec::with_capacity(syms.len());
        for s in syms {
            match kept.last_mut() {
                Some(prev) if prev.start == s.start => {
                    if better(&s, prev) {
                        *prev = s;
                    }
                }
                _ => kept.push(s),
            }
        }
        Self::of(kept)
    }
}

/// A kallsyms line (`\n` gone) as the kernel writes it: `%px %c %s`, and `\t[%s]` after
/// a module's symbol; its address, type, name and module. None for any other shape.
fn kernel_shaped(line: &str) -> Option<(u64, u8, &str, Option<&str>)> {
    let b = line.as_bytes();
    let mut start = 0u64;
    let mut n = 0;
    while n < b.len() && n < 17 {
        let digit = match b[n] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            c @ b'A'..=b'F' => c - b'A' + 10,
            _ => break,
        };
        start = start << 4 | u64::from(digit);
        n += 1;
    }
    // 17 digits may overflow: the general way decides.
    if n == 0 || n > 16 || b.get(n) != Some(&b' ') || b.get(n + 2) != Some(&b' ') {
        return None;
    }
    let t = b[n + 1];
    if !t.is_ascii_graphic() {
        return None;
    }
    let from = n + 3;
    let to = b[from..]
        .iter()
        .position(|c| c.is_ascii_whitespace())
        .map_or(b.len(), |i| from + i);
    if to == from {
        return None;
    }
    let module = match b.get(to) {
        None => None,
        Some(b'\t') => {
            let m = &line[to + 1..];
            if m.is_empty() || m.bytes().any(|c| c.is_ascii_whitespace()) {
                return None;
            }
            Some(m)
        }
        Some(_) => return None,
    };
    Some((start, t, &line[from..to], module))
}

/// A kallsyms line of any shape, split at ASCII whitespace (a `\r` before the `\n`
/// dropped, as `str::lines` does): its address, the first byte of its type, its name
/// and module, the fourth word. None without three words or a hex address.
fn split_kallsyms_line(line: &str) -> Option<(u64, u8, &str, Option<&str>)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut parts = line.split_ascii_whitespace();
    let (addr, ty, name) = (parts.next()?, parts.next()?, parts.next()?);
    let start = u64::from_str_radix(addr, 16).ok()?;
    Some((start, ty.as_bytes()[0], name, parts.next()))
}

fn round_up_page(x: u64) -> u64 {
    x.div_ceil(4096).saturating_mul(4096)
}

/// perf's `choose_best_symbol`: is `b` better than the kept `a`?
fn better(b: &Symbol, a: &Symbol) -> bool {
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
    let underscores = |s: &Symbol| s.name().bytes().take_while(|&c| c == b'_').count();
    if underscores(a) != underscores(b) {
        return underscores(b) < underscores(a);
    }
    if a.name().len() != b.name().len() {
        return b.name().len() > a.name().len();
    }
    // arch__choose_best_symbol: the kept one unless it is a "SyS" syscall alias.
    a.name().starts_with("SyS") || a.name().starts_with("compat_SyS")
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
        if let Some(d) = cpp_demangle::Symbol::new(name)
            .ok()
            .and_then(|sym| sym.demangle(&opts).ok())
        {
            return crate::libiberty::restyle(name, d);
        }
    }
    name.to_string()
}

#[cfg(test)]
#[path = "symtab_tests.rs"]
mod tests;
