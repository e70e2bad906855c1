//! The lines perf 6.1's `perf script` prints for an unwound frame with functions inlined
//! at its address ([`crate::inlines`]): one per entry, each with the frame's address and
//! offset; an inlined function's with ` (inlined)` (after the srcline, if asked) in place
//! of the DSO, as `sample__fprintf_callchain` prints a symbol marked inlined.

use super::fields::{Field, Fields};
use super::{line, Printer};
use crate::inlines::inline_entries;
use crate::process::{Location, Machine};

/// The field bits of a frame text with its inlined entries in [`super::names`]' table,
/// apart from the same frame's text alone.
const WITH_INLINES: u32 = 1 << 31;

impl Printer<'_> {
    /// Write the text after the first line's address of an unwound frame, if perf
    /// lists inlined functions at it, and say so; else write nothing (the frame is
    /// printed alone).
    pub(super) fn inlined(&mut self, m: &Machine, at: &Location, f: Fields) -> bool {
        let Some(d) = at.dso.filter(|&d| m.dsos[d].ksymbols.is_empty()) else {
            return false;
        };
        let key = f.0 | WITH_INLINES;
        if let Some(text) = self.names.get(d, at.addr, key) {
            self.buf.extend_from_slice(text);
            return !text.is_empty();
        }
        let dso = &m.dsos[d];
        let symbols = self.symbols(m);
        let entries = match symbols.function(d, dso, at.addr) {
            Some((start, name)) => {
                let name = name.to_string();
                Some(start).zip(Some(inline_entries(symbols, d, dso, at.addr, &name)))
            }
            None => None,
        };
        let from = self.buf.len();
        if let Some((start, entries)) = entries.filter(|(_, e)| !e.is_empty()) {
            for (i, e) in entries.iter().enumerate() {
                if i > 0 {
                    self.buf.extend_from_slice(b"\n\t");
                    line::hex(&mut self.buf, at.addr, 16);
                }
                if !e.inlined {
                    // The frame's own text, but the entry's srcline.
                    self.frame_names(m, at, Fields(f.0 & !(Field::Srcline as u32)));
                } else if f.has(Field::Sym) {
                    self.buf.push(b' ');
                    self.buf.extend_from_slice(e.name.as_bytes());
                    if f.has(Field::Symoff) {
                        self.buf.extend_from_slice(b"+0x");
                        line::hex(&mut self.buf, at.addr.wrapping_sub(start), 0);
                    }
                }
                if f.has(Field::Srcline) {
                    self.buf.extend_from_slice(b"\n  ");
                    self.buf.extend_from_slice(e.srcline.as_bytes());
                }
                if e.inlined {
                    self.buf.extend_from_slice(b" (inlined)");
                }
            }
        }
        self.names.put_exact(d, at.addr, key, &self.buf[from..]);
        self.buf.len() > from
    }
}
