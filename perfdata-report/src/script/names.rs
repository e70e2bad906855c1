//! The text perf script prints after a frame's address (` sym+0xoff (dso)`), written by
//! `Printer::frame_names` and kept two ways: for the last two spans of addresses named
//! (a function, or a gap between two) with the offset left to write, and per (DSO,
//! address, fields) in a table of fixed size. A listing names the same few thousand
//! addresses over and over, and finding the symbol (a table per DSO, a binary search)
//! and writing its name and offset were 12% of the cycles; the table's slot was then a
//! cache miss for most samples (a slot for each of 7,663 addresses, 86% of them in one
//! stripped library's few gaps), which the spans, hot, mostly answer. A slot holds the
//! last address that fell in it, so memory is bounded whatever the recording.

use crate::process::{DsoId, Location, Machine};

use super::fields::{Field, Fields};
use super::{line, Printer};
use crate::srcline::symbol_file::SymbolAnswer;
use crate::symbolize::Symbolizer;

/// Slots in the table (a power of two).
const SLOTS: usize = 1 << 14;

/// A frame's text, and the addresses around its own that print the same text but for
/// the offset from the symbol's start.
#[derive(Debug, Default)]
pub(super) struct FrameText {
    /// The text at the address it was made for.
    pub(super) text: Vec<u8>,
    /// The addresses served: `[start, end)`.
    pub(super) span: (u64, u64),
    /// The symbol's start, where the text has an offset from it (between `head` and
    /// `tail`).
    pub(super) offset_from: Option<u64>,
    pub(super) head: usize,
    pub(super) tail: usize,
}

/// By hand for `clone_from`, which the derived one leaves to `clone`: a span takes a
/// table slot's text at each hit there (most of a callchain's frames), and a new text
/// made and the old one freed each time is an allocation a frame.
impl Clone for FrameText {
    fn clone(&self) -> Self {
        let mut copy = FrameText::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.text.clone_from(&source.text);
        self.span = source.span;
        self.offset_from = source.offset_from;
        self.head = source.head;
        self.tail = source.tail;
    }
}

impl FrameText {
    /// Append the text of `addr` (in the span).
    #[inline]
    fn write(&self, buf: &mut Vec<u8>, addr: u64) {
        match self.offset_from {
            None => buf.extend_from_slice(&self.text),
            Some(from) => {
                buf.extend_from_slice(&self.text[..self.head]);
                line::hex(buf, addr.wrapping_sub(from), 0);
                buf.extend_from_slice(&self.text[self.tail..]);
            }
        }
    }
}

/// One remembered frame text.
#[derive(Default)]
struct Slot {
    key: Option<(DsoId, u64, u32)>,
    text: FrameText,
}

/// A span remembered, by DSO and field bits.
#[derive(Default)]
struct Span {
    key: Option<(DsoId, u32)>,
    text: FrameText,
}

/// Frame texts by (DSO, DSO-relative address, field bits).
pub(super) struct FrameNames {
    slots: Vec<Slot>,
    /// The spans used last, the latest first: samples in time order alternate between
    /// the CPUs, so two.
    spans: [Span; 2],
}

impl FrameNames {
    pub(super) fn new() -> Self {
        FrameNames {
            slots: std::iter::repeat_with(Slot::default).take(SLOTS).collect(),
            spans: Default::default(),
        }
    }

    fn index(dso: DsoId, addr: u64, fields: u32) -> usize {
        let h = (addr ^ ((dso as u64) << 40) ^ (u64::from(fields) << 20))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - SLOTS.trailing_zeros())) as usize
    }

    /// Append the text of the key to `buf` if a span or the table holds it; false if
    /// neither does.
    #[inline]
    pub(super) fn write(&mut self, buf: &mut Vec<u8>, dso: DsoId, addr: u64, fields: u32) -> bool {
        let key = Some((dso, fields));
        let covers = |s: &Span| s.key == key && s.text.span.0 <= addr && addr < s.text.span.1;
        if !covers(&self.spans[0]) {
            if covers(&self.spans[1]) {
                self.spans.swap(0, 1);
            } else {
                let slot = &self.slots[Self::index(dso, addr, fields)];
                if slot.key != Some((dso, addr, fields)) {
                    return false;
                }
                buf.extend_from_slice(&slot.text.text);
                // Its span is remembered too: the next addresses in it are answered
                // without the table.
                self.spans.swap(0, 1);
                self.spans[0].key = key;
                self.spans[0].text.clone_from(&slot.text);
                return true;
            }
        }
        self.spans[0].text.write(buf, addr);
        true
    }

    /// The text remembered for the key by [`FrameNames::put_exact`], if its slot holds
    /// it (the spans aside: the text of an address alone).
    pub(super) fn get(&self, dso: DsoId, addr: u64, fields: u32) -> Option<&[u8]> {
        let slot = &self.slots[Self::index(dso, addr, fields)];
        (slot.key == Some((dso, addr, fields))).then_some(slot.text.text.as_slice())
    }

    /// Remember `text` for the key, for that address alone, in place of what its slot
    /// held.
    pub(super) fn put_exact(&mut self, dso: DsoId, addr: u64, fields: u32, text: &[u8]) {
        let slot = &mut self.slots[Self::index(dso, addr, fields)];
        slot.key = Some((dso, addr, fields));
        slot.text.text.clear();
        slot.text.text.extend_from_slice(text);
        slot.text.span = (addr, addr.saturating_add(1));
        slot.text.offset_from = None;
    }

    /// Remember `text` for the key, in place of what its slot held, and as the span
    /// used last.
    pub(super) fn put(&mut self, dso: DsoId, addr: u64, fields: u32, text: &FrameText) {
        let slot = &mut self.slots[Self::index(dso, addr, fields)];
        slot.key = Some((dso, addr, fields));
        slot.text.clone_from(text);
        self.spans.swap(0, 1);
        self.spans[0].key = Some((dso, fields));
        self.spans[0].text.clone_from(text);
    }
}

impl Printer<'_> {
    /// ` sym+0xoff (dso)` of an address, as the fields ask, then its srcline.
    pub(super) fn frame_names(&mut self, m: &Machine, at: &Location, f: Fields) {
        const NAMED: u32 = Field::Sym as u32 | Field::Symoff as u32 | Field::Dso as u32;
        // A DSO's symbols are fixed once loaded, but for those KSYMBOL and jitdump
        // records add to as the replay goes: those are named each time.
        let fixed = at.dso.filter(|&d| m.dsos[d].ksymbols.is_empty());
        match fixed {
            Some(d) if f.0 & NAMED != 0 => {
                if !self.names.write(&mut self.buf, d, at.addr, f.0 & NAMED) {
                    let from = self.buf.len();
                    let mut text = self.sym_dso(m, at, f);
                    text.text.extend_from_slice(&self.buf[from..]);
                    self.names.put(d, at.addr, f.0 & NAMED, &text);
                }
            }
            _ => {
                self.sym_dso(m, at, f);
            }
        }
        if let (true, Some(d)) = (f.has(Field::Srcline), at.dso) {
            // perf's map__fprintf_srcline: `file:line`, else `sym+off`, else `dso[addr]`;
            // nothing where addr2line knows no line (`??:0`).
            if let Some(line) = srcline(self.symbols(m), d, &m.dsos[d], at.addr) {
                self.buf.extend_from_slice(b"\n  ");
                self.buf.extend_from_slice(line.as_bytes());
            }
        }
    }

    /// ` sym+0xoff (dso)` of an address, as the fields ask, found now; and the span of
    /// addresses around it with the same text but for the offset (its text left empty,
    /// for the caller to fill from the buffer).
    fn sym_dso(&mut self, m: &Machine, at: &Location, f: Fields) -> FrameText {
        let from = self.buf.len();
        // Without the symbol, the text is the DSO's at every address.
        let mut text = FrameText {
            span: (0, u64::MAX),
            ..Default::default()
        };
        if f.has(Field::Sym) {
            self.symbols(m);
            let (symbols, buf) = (self.symbols.as_mut().expect("made above"), &mut self.buf);
            buf.push(b' ');
            let (named, span) = match at.dso {
                Some(d) => symbols.function_span(d, &m.dsos[d], at.addr),
                None => (None, at.addr..at.addr.saturating_add(1)),
            };
            text.span = (span.start, span.end);
            match named {
                Some((start, name)) => {
                    buf.extend_from_slice(name.as_bytes());
                    if f.has(Field::Symoff) {
                        buf.extend_from_slice(b"+0x");
                        text.head = buf.len() - from;
                        line::hex(buf, at.addr.wrapping_sub(start), 0);
                        text.tail = buf.len() - from;
                        text.offset_from = Some(start);
                    }
                }
                None => buf.extend_from_slice(b"[unknown]"),
            }
        }
        if f.has(Field::Dso) {
            self.buf.extend_from_slice(b" (");
            // perf's `dso->name`: the path of a file, `[name]` of a kernel module its
            // MMAP named (one the BUILD_ID feature named first keeps its path).
            let name = at.dso.map_or("[unknown]", |d| m.dsos[d].name.as_str());
            self.buf.extend_from_slice(name.as_bytes());
            self.buf.push(b')');
        }
        text
    }
}

/// perf script's srcline (`map__srcline`, no symbol given): `file:line` from DWARF; where
/// DWARF has no frame, binutils' symbol-table answer: `file:0` for a symbol with a file,
/// None (nothing printed: perf reads addr2line's `??:?` as its SRCLINE_UNKNOWN) for a
/// symbol without one or a DWARF frame without a line; else (addr2line knew nothing,
/// or perf runs none: the kernel's) `dso[addr]`.
fn srcline(
    symbols: &mut Symbolizer,
    d: crate::process::DsoId,
    dso: &crate::process::Dso,
    addr: u64,
) -> Option<String> {
    let frames = symbols.source_frames(d, dso, addr);
    let (line, found) = (
        frames
            .first()
            .and_then(crate::srcline::SourceFrame::srcline),
        !frames.is_empty(),
    );
    match line {
        Some(l) => Some(l),
        None if dso.kernel => Some(format!("{}[{addr:x}]", dso.short_name)),
        None if found => None,
        None => match symbols.symbol_answer(d, dso, addr) {
            SymbolAnswer::Symbol(Some(file)) => Some(crate::srcline::file_line(&file, 0)),
            SymbolAnswer::Symbol(None) => None,
            SymbolAnswer::Unknown => {
                Some(symbols.unknown_srcline(d, dso, addr, crate::symbolize::Unknown::Address))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &[u8], span: (u64, u64)) -> FrameText {
        FrameText {
            text: text.to_vec(),
            span,
            ..FrameText::default()
        }
    }

    fn write(names: &mut FrameNames, dso: DsoId, addr: u64, fields: u32) -> Option<Vec<u8>> {
        let mut buf = Vec::new();
        names.write(&mut buf, dso, addr, fields).then_some(buf)
    }

    #[test]
    fn a_slot_gives_back_only_its_own_key() {
        let mut names = FrameNames::new();
        assert_eq!(write(&mut names, 1, 0x1000, 3), None);
        names.put(
            1,
            0x1000,
            3,
            &plain(b" main+0x10 (/bin/x)", (0x1000, 0x1001)),
        );
        assert_eq!(
            write(&mut names, 1, 0x1000, 3).as_deref(),
            Some(&b" main+0x10 (/bin/x)"[..])
        );
        assert_eq!(write(&mut names, 2, 0x1000, 3), None);
        assert_eq!(write(&mut names, 1, 0x1001, 3), None);
        assert_eq!(write(&mut names, 1, 0x1000, 1), None);
        // Many keys: each slot keeps the last of those that fell in it, and no key is
        // answered with another's text.
        for a in 0..(4 * SLOTS as u64) {
            names.put(7, a, 3, &plain(&a.to_le_bytes(), (a, a + 1)));
        }
        let mut held = 0;
        for a in 0..(4 * SLOTS as u64) {
            if let Some(t) = write(&mut names, 7, a, 3) {
                assert_eq!(t, a.to_le_bytes());
                held += 1;
            }
        }
        assert!(held > SLOTS / 2 && held <= SLOTS, "{held}");
    }

    #[test]
    fn a_span_answers_its_addresses_with_their_offsets() {
        let mut names = FrameNames::new();
        // ` f+0x10 (/bin/x)` made at 0x1010, f at 0x1000..0x1100; and an unknown gap.
        let f = FrameText {
            text: b" f+0x10 (/bin/x)".to_vec(),
            span: (0x1000, 0x1100),
            offset_from: Some(0x1000),
            head: 5,
            tail: 7,
        };
        names.put(1, 0x1010, 3, &f);
        names.put(
            1,
            0x2000,
            3,
            &plain(b" [unknown] (/bin/x)", (0x1100, 0x3000)),
        );
        let text = |names: &mut FrameNames, a| write(names, 1, a, 3).map(String::from_utf8);
        assert_eq!(text(&mut names, 0x1000), Some(Ok(" f+0x0 (/bin/x)".into())));
        assert_eq!(
            text(&mut names, 0x10ff),
            Some(Ok(" f+0xff (/bin/x)".into()))
        );
        assert_eq!(
            text(&mut names, 0x2fff),
            Some(Ok(" [unknown] (/bin/x)".into()))
        );
        assert_eq!(
            text(&mut names, 0x1100),
            Some(Ok(" [unknown] (/bin/x)".into()))
        );
        // Past both spans, or in another DSO or with other fields: not known.
        assert_eq!(text(&mut names, 0x3000), None);
        assert_eq!(text(&mut names, 0xfff), None);
        assert_eq!(write(&mut names, 2, 0x1010, 3), None);
        assert_eq!(write(&mut names, 1, 0x1010, 1), None);
        // A third span pushes out the one used longest ago; the table still has its
        // address, which brings its span back.
        names.put(1, 0x5000, 3, &plain(b" g (/bin/x)", (0x5000, 0x5100)));
        // A text of its address alone, apart from the spans.
        names.put_exact(1, 0x5010, 9, b" g, inlined");
        assert_eq!(names.get(1, 0x5010, 9), Some(&b" g, inlined"[..]));
        assert_eq!(names.get(1, 0x5011, 9), None);
        assert_eq!(
            text(&mut names, 0x1100),
            Some(Ok(" [unknown] (/bin/x)".into()))
        );
        assert_eq!(
            text(&mut names, 0x1010),
            Some(Ok(" f+0x10 (/bin/x)".into()))
        );
        assert_eq!(
            text(&mut names, 0x1020),
            Some(Ok(" f+0x20 (/bin/x)".into()))
        );
    }
}
