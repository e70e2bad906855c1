//! /proc/kallsyms text read into a [`SymbolTable`]: lines in the shape the kernel
//! writes them are read in one pass each, any other shape the general way.

use std::collections::HashMap;

use super::{raw_name, Binding, Entry, Gathered, SymbolTable};

impl SymbolTable {
    /// The kernel's functions from /proc/kallsyms text (`addr type name [module]`): text,
    /// weak, data and bss types as perf keeps them. None if every address is zero
    /// (kptr_restrict).
    pub fn from_kallsyms(text: &str) -> Option<SymbolTable> {
        let mut lines = KallsymsLines::default();
        lines.add(text);
        lines.table()
    }
}

/// A kallsyms table split as perf 6.1's `maps__split_kallsyms` splits it: the kernel
/// image's symbols, and each module's apart, by the module's short name.
#[derive(Debug, Clone, Default)]
pub struct KernelSymbols {
    /// The kernel image's symbols (kallsyms' lines without a module).
    pub kernel: SymbolTable,
    /// Each module's symbols by its short name (`[foo]`, as kallsyms writes it), at
    /// kallsyms' absolute addresses, their names cut at the tab. perf moves them into
    /// the DSO of the kernel map of that short name (`maps__find_by_name`), or drops them
    /// where there is none; a module's DSO asks here by its short name, and no other
    /// module's symbols are ever asked for.
    pub modules: HashMap<String, SymbolTable>,
}

impl SymbolTable {
    /// This kallsyms table ([`SymbolTable::from_kallsyms`]) split into the kernel's and
    /// each module's symbols. Their ends were fixed before, over all of them, as perf
    /// fixes them before splitting (a module's last symbol may so reach into the next
    /// module); perf moves the kernel's symbols by the relocation delta only, so
    /// [`SymbolTable::moved_down`] is for `kernel` alone.
    pub fn split_modules(self) -> KernelSymbols {
        let mut kernel = Gathered {
            entries: Vec::new(),
            text: self.text,
        };
        let mut modules: HashMap<&str, Vec<Entry>> = HashMap::new();
        for mut e in self.entries {
            let name = raw_name(&kernel.text, &e);
            match name.find('\t') {
                None => kernel.entries.push(e),
                Some(tab) => {
                    let module = &kernel.text[e.name + tab + 1..e.name + name.len()];
                    // The name is cut in place: the module's table copies it below.
                    e.len = tab as u32;
                    modules.entry(module).or_default().push(e);
                }
            }
        }
        let modules = modules
            .into_iter()
            .map(|(module, entries)| {
                let mut g = Gathered::default();
                for e in entries {
                    let name = raw_name(&kernel.text, &e);
                    g.push(e.start, e.end, &[name], e.mangled, e.binding);
                }
                (module.to_string(), SymbolTable::of(g))
            })
            .collect();
        KernelSymbols {
            kernel: SymbolTable::of(kernel),
            modules,
        }
    }
}

/// /proc/kallsyms text read a block of whole lines at a time, as it comes: the table is
/// that of all the lines added ([`SymbolTable::from_kallsyms`] of their text).
#[derive(Debug, Default)]
pub(crate) struct KallsymsLines {
    syms: Gathered,
    any_address: bool,
}

impl KallsymsLines {
    /// Read the lines of `text` (whole lines: a line cut in two reads as two).
    pub fn add(&mut self, text: &str) {
        // 122,000 lines on this machine: each is read in the shape the kernel writes
        // (`kernel_shaped`), one pass over its bytes; a line of any other shape goes
        // the general way (`split_kallsyms_line`), which reads those the same. Room is
        // made for that many at once (memory is not touched until used): the table
        // grown block by block was copied whole at each doubling.
        if self.syms.entries.capacity() == 0 {
            self.syms.entries.reserve(1 << 18);
            self.syms.text.reserve(4 << 20);
        }
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
            // The name is copied once, into the table's text. A module's symbol keeps its
            // module after a tab, as perf's kallsyms__parse keeps the rest of the line:
            // the ends and duplicates are fixed up with it (the `[` tells a module's
            // symbol; the longer name wins a tie), and `split_modules` cuts it.
            match module {
                Some(module) => self
                    .syms
                    .push(start, start, &[name, "\t", module], false, binding),
                None => self.syms.push(start, start, &[name], false, binding),
            }
        }
    }

    /// The table of the lines added ([`SymbolTable::from_kallsyms`]).
    pub fn table(self) -> Option<SymbolTable> {
        (self.any_address && !self.syms.entries.is_empty())
            .then(|| SymbolTable::fixed_up(self.syms, true))
    }
}

/// A kallsyms line (`\n` gone) as the kernel writes it: `%px %c %s`, and `\t[%s]` after
/// a module's symbol; its address, type, name and module. None for any other shape.
pub(super) fn kernel_shaped(line: &str) -> Option<(u64, u8, &str, Option<&str>)> {
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
pub(super) fn split_kallsyms_line(line: &str) -> Option<(u64, u8, &str, Option<&str>)> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let mut parts = line.split_ascii_whitespace();
    let (addr, ty, name) = (parts.next()?, parts.next()?, parts.next()?);
    let start = u64::from_str_radix(addr, 16).ok()?;
    Some((start, ty.as_bytes()[0], name, parts.next()))
}
