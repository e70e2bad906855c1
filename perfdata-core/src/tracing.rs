//! The tracing data blob (TRACING_DATA feature, HEADER_TRACING_DATA payload): only what
//! naming tracepoints needs, the `name:` and `ID:` lines of each event format.
//!
//! Layout (perf's trace-event-info.c): "\x17\x08\x44tracing", a NUL-terminated version,
//! u8 big_endian, u8 long_size, u32 page_size, "header_page\0" u64 size + text,
//! "header_event\0" u64 size + text, u32 nr ftrace formats (u64 size + text each), u32 nr
//! systems each {system name\0, u32 nr, nr x (u64 size + text)}, then kallsyms and
//! printk formats. Integers are in the order the big_endian byte says.

use crate::feature::{Feature, FeatureId};
use crate::meta::Metadata;

mod readable;
pub use readable::unreadable;

/// The tracing blob of a recording, if it has one.
pub fn tracing_blob(meta: &Metadata) -> Option<&[u8]> {
    match meta.feature(FeatureId::TracingData)? {
        Feature::TracingData(bytes) | Feature::Raw(bytes) => Some(bytes),
        _ => None,
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    big: bool,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.b.get(self.pos..)?;
        let n = rest.iter().position(|&c| c == 0)?;
        self.pos += n + 1;
        Some(&rest[..n])
    }
    fn u32(&mut self) -> Option<u32> {
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(if self.big {
            u32::from_be_bytes(b)
        } else {
            u32::from_le_bytes(b)
        })
    }
    fn u64(&mut self) -> Option<u64> {
        let b: [u8; 8] = self.take(8)?.try_into().ok()?;
        Some(if self.big {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        })
    }
    fn sized_text(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }
}

/// Walk the blob's header and event formats, calling `on_format` with each event
/// format's system and text; the cursor is left after the last system, where kallsyms,
/// printk formats and saved_cmdlines follow. Also returns the version.
fn walk<'a>(
    blob: &'a [u8],
    mut on_format: impl FnMut(&'a [u8], &'a [u8]),
) -> Option<(Cursor<'a>, &'a [u8])> {
    let mut c = Cursor {
        b: blob,
        pos: 0,
        big: false,
    };
    if c.take(10)? != b"\x17\x08\x44tracing" {
        return None;
    }
    let version = c.cstr()?;
    c.big = c.take(1)?[0] != 0;
    c.take(1)?; // long size
    c.u32()?; // page size
    if c.cstr()? != b"header_page" {
        return None;
    }
    c.sized_text()?;
    if c.cstr()? != b"header_event" {
        return None;
    }
    c.sized_text()?;
    for _ in 0..c.u32()? {
        c.sized_text()?;
    }
    for _ in 0..c.u32()? {
        let system = c.cstr()?;
        for _ in 0..c.u32()? {
            on_format(system, c.sized_text()?);
        }
    }
    Some((c, version))
}

/// Call `on_format` with the system and text of each event format in the blob, in
/// order; returns whether the blob's integers are big-endian, `None` if it does not
/// parse.
pub fn event_formats<'a>(
    blob: &'a [u8],
    on_format: impl FnMut(&'a [u8], &'a [u8]),
) -> Option<bool> {
    walk(blob, on_format).map(|(c, _)| c.big)
}

/// Every (system, name, id) in the blob's event formats.
pub fn tracepoints(blob: &[u8]) -> Option<Vec<(String, String, u64)>> {
    let mut out = Vec::new();
    walk(blob, |system, text| {
        let text = String::from_utf8_lossy(text);
        let field = |key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_string()))
        };
        if let (Some(name), Some(id)) = (field("name:"), field("ID:")) {
            if let Ok(id) = id.parse() {
                out.push((String::from_utf8_lossy(system).into_owned(), name, id));
            }
        }
    })?;
    Some(out)
}

/// Where the blob's saved_cmdlines section is (the `pid comm` lines of the tasks ftrace
/// saw, which name processes): `size_at` is the offset of its u64 size, `text` the
/// range of the lines; `big` whether the size is big-endian. `None` for blobs before
/// version 0.6, which have no such section, and blobs that do not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedCmdlines {
    /// Offset of the section's u64 size in the blob.
    pub size_at: usize,
    /// Where the `pid comm` lines are in the blob.
    pub text: std::ops::Range<usize>,
    /// Whether the size is big-endian.
    pub big: bool,
}

/// The saved_cmdlines section of a tracing blob; see [`SavedCmdlines`].
pub fn saved_cmdlines(blob: &[u8]) -> Option<SavedCmdlines> {
    blob_tail(blob)?.saved_cmdlines
}

/// Where the parts after the event formats of a tracing blob are: everything before
/// `kallsyms` is the header and the formats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobTail {
    /// kallsyms, its u32 size included (perf since 4.x writes a size of 0).
    pub kallsyms: std::ops::Range<usize>,
    /// The printk formats, their u32 size included.
    pub printk: std::ops::Range<usize>,
    /// saved_cmdlines (version 0.6 and later).
    pub saved_cmdlines: Option<SavedCmdlines>,
    /// Where the last part ends; what follows (perf's padding to 8 bytes) is no part.
    pub end: usize,
    /// Whether the blob's integers are big-endian.
    pub big: bool,
}

/// The parts after the event formats of a tracing blob; `None` when it does not parse
/// that far.
pub fn blob_tail(blob: &[u8]) -> Option<BlobTail> {
    let (mut c, version) = walk(blob, |_, _| {})?;
    let sized = |c: &mut Cursor| {
        let at = c.pos;
        let n = c.u32()? as usize;
        c.take(n)?;
        Some(at..c.pos)
    };
    let kallsyms = sized(&mut c)?;
    let printk = sized(&mut c)?;
    let version: f64 = std::str::from_utf8(version).ok()?.trim().parse().ok()?;
    let saved_cmdlines = if version < 0.6 {
        None
    } else {
        let size_at = c.pos;
        let text = c.sized_text()?;
        let start = size_at + 8;
        Some(SavedCmdlines {
            size_at,
            text: start..start + text.len(),
            big: c.big,
        })
    };
    Some(BlobTail {
        kallsyms,
        printk,
        saved_cmdlines,
        end: c.pos,
        big: c.big,
    })
}

/// Where the bytes of a dynamic array field (`__data_loc`, `__rel_loc`) are in a RAW
/// payload: its u32 word at `at` holds the length (high half) and the offset (low half),
/// counted from the payload's start, or for `__rel_loc` (`rel`) from the end of the
/// word's field (`at + size`). `None` when the payload has no room for the word; the
/// range may lie past the payload's end (a caller checks it).
pub fn data_loc(
    raw: &[u8],
    at: usize,
    size: usize,
    rel: bool,
    endian: binrw::Endian,
) -> Option<std::ops::Range<usize>> {
    let loc = crate::codec::u32_at(raw, at, endian)?;
    let base = if rel { at + size } else { 0 };
    let start = base + (loc & 0xffff) as usize;
    Some(start..start + (loc >> 16) as usize)
}

/// One field of a tracepoint's format, from its line
/// `field:DECL;\toffset:O;\tsize:S;\tsigned:X;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatField {
    /// The C declaration: `char prev_comm[16]`, `__data_loc char[] filename`, `int pid`.
    pub decl: String,
    /// The field's name: the declaration's last word without its array bounds.
    pub name: String,
    /// Where the field is in the RAW payload, and its bytes.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
}

impl FormatField {
    /// Read a `field:` line; `None` for any other line.
    pub fn parse(line: &str) -> Option<Self> {
        let mut parts = line.trim().strip_prefix("field:")?.split(';');
        let decl = parts.next()?.trim().to_string();
        let mut value = |key: &str| -> Option<usize> {
            parts
                .find_map(|p| p.trim().strip_prefix(key))?
                .trim()
                .parse()
                .ok()
        };
        let offset = value("offset:")?;
        let size = value("size:")?;
        let last = decl.split_whitespace().last()?;
        let name = last.split('[').next()?.to_string();
        Some(FormatField {
            decl,
            name,
            offset,
            size,
        })
    }
}

/// The fields of every event format in the blob, by tracepoint id (the `ID:` line).
pub fn tracepoint_fields(blob: &[u8]) -> Option<Vec<(u64, Vec<FormatField>)>> {
    let mut out = Vec::new();
    walk(blob, |_, text| {
        let text = String::from_utf8_lossy(text);
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("ID:"))
            .and_then(|v| v.trim().parse().ok());
        if let Some(id) = id {
            out.push((id, text.lines().filter_map(FormatField::parse).collect()));
        }
    })?;
    Some(out)
}

/// "system:name" of the tracepoint with this id.
pub fn tracepoint_name(blob: &[u8], id: u64) -> Option<String> {
    tracepoints(blob)?
        .into_iter()
        .find(|(_, _, i)| *i == id)
        .map(|(sys, name, _)| format!("{sys}:{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_tracepoint_ids() {
        let mut b = b"\x17\x08\x44tracing0.6\0".to_vec();
        b.push(0); // little endian
        b.push(8);
        b.extend_from_slice(&4096u32.to_le_bytes());
        b.extend_from_slice(b"header_page\0");
        b.extend_from_slice(&2u64.to_le_bytes());
        b.extend_from_slice(b"hp");
        b.extend_from_slice(b"header_event\0");
        b.extend_from_slice(&0u64.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes()); // no ftrace formats
        b.extend_from_slice(&1u32.to_le_bytes()); // one system
        b.extend_from_slice(b"sched\0");
        b.extend_from_slice(&1u32.to_le_bytes());
        let fmt = b"name: sched_switch\nID: 316\nformat:\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:__data_loc char[] f;\toffset:24;\tsize:4;\tsigned:0;\n";
        b.extend_from_slice(&(fmt.len() as u64).to_le_bytes());
        b.extend_from_slice(fmt);
        assert_eq!(
            tracepoint_name(&b, 316).as_deref(),
            Some("sched:sched_switch")
        );
        assert_eq!(tracepoint_name(&b, 1), None);
        let fields = tracepoint_fields(&b).unwrap();
        assert_eq!(fields.len(), 1);
        assert_eq!(fields[0].0, 316);
        let f = &fields[0].1;
        assert_eq!(
            (f[0].name.as_str(), f[0].offset, f[0].size),
            ("prev_comm", 8, 16)
        );
        assert_eq!(f[1].decl, "__data_loc char[] f");
        assert_eq!((f[1].name.as_str(), f[1].offset, f[1].size), ("f", 24, 4));
        assert_eq!(saved_cmdlines(&b), None, "no kallsyms: cut short");
        b.extend_from_slice(&3u32.to_le_bytes());
        b.extend_from_slice(b"k s");
        b.extend_from_slice(&0u32.to_le_bytes());
        let lines = b"42 secret\n";
        b.extend_from_slice(&(lines.len() as u64).to_le_bytes());
        let size_at = b.len() - 8;
        b.extend_from_slice(lines);
        let s = saved_cmdlines(&b).unwrap();
        assert_eq!((s.size_at, s.big), (size_at, false));
        assert_eq!(&b[s.text], lines);
    }
}
