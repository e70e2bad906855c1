//! /proc/kallsyms text read into a [`SymbolTable`]: lines in the shape the kernel
//! writes them are read in one pass each, any other shape the general way.

use super::{Binding, Gathered, SymbolTable};

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
            // The name is copied once, into the table's text.
            match module {
                Some(module) => self
                    .syms
                    .push(start, start, &[name, " ", module], false, binding),
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
