//! RAW tracepoint payloads rebuilt from what their event format vouches for, for
//! [`Anonymize`](super::Anonymize): the payload is rewritten into zeros, field by field,
//! copying numbers (ints, pids, pointers, arrays of them), renaming strings (`char
//! comm[16]`, `__data_loc char[] filename`) in place with their pseudonyms cut to the
//! room they had, and leaving byte buffers (`u8 buf[N]`, `__data_loc u8[]`) and
//! whatever no field describes zero. A payload keeps its size and layout, so perf
//! prints it as before, with the names replaced.
//!
//! A format is trusted only as far as it is checked: the tracing data parses (see
//! `tracing`), no other format claims its ID, its fields do not overlap and follow each
//! other with no more than alignment between them, each number is 1, 2, 4 or 8 bytes
//! (or an array of them), and the payload's own common_type names it. Anything else
//! leaves the payload without a format: zeroed past its common fields.

use binrw::Endian;
use perfdata_core::tracing::{tracepoint_fields, tracing_blob, FormatField};
use perfdata_core::{u16_at, u32_at, Metadata};

use super::super::pseudonym::Pseudonyms;

/// perf_event_attr.type of tracepoints.
const PERF_TYPE_TRACEPOINT: u32 = 2;

/// What becomes of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A number (or an array of numbers): copied.
    Copy,
    /// A NUL-padded char array in place; `comm` when it holds a task's name.
    Text { comm: bool },
    /// A `__data_loc`/`__rel_loc` string: the location word is copied, the string it
    /// points at renamed.
    LocText { comm: bool, rel: bool },
    /// A `__data_loc`/`__rel_loc` buffer of anything else: the location word copied,
    /// the bytes left zero.
    LocZero,
    /// Bytes: left zero.
    Zero,
}

#[derive(Debug, Clone)]
struct Field {
    offset: usize,
    size: usize,
    kind: Kind,
}

fn kind_of(f: &FormatField) -> Kind {
    let decl = f.decl.as_str();
    let comm = f.name.contains("comm");
    let loc = decl.starts_with("__data_loc") || decl.starts_with("__rel_loc");
    let chars = decl.contains("char") && !decl.contains("unsigned char");
    if loc {
        return if chars && decl.contains("[]") {
            Kind::LocText {
                comm,
                rel: decl.starts_with("__rel_loc"),
            }
        } else {
            Kind::LocZero
        };
    }
    let Some(bounds) = decl.split('[').nth(1) else {
        return Kind::Copy;
    };
    if chars && !decl.contains('*') {
        return Kind::Text { comm };
    }
    // An array: numbers unless its elements are bytes.
    let n: usize = bounds
        .split(']')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    if n > 0 && f.size / n > 1 {
        Kind::Copy
    } else {
        Kind::Zero
    }
}

/// Whether a format's fields can be trusted to lay out a payload: sorted by offset they
/// do not overlap, each starts within alignment (8 bytes) of the end of the one before
/// (so a field whose offset was changed cannot reach into the strings that follow the
/// fixed part), numbers are 1, 2, 4 or 8 bytes wide (arrays: a whole number of them),
/// location words 4.
fn trusted(fields: &[Field], decls: &[FormatField]) -> bool {
    let mut order: Vec<(&Field, &FormatField)> = fields.iter().zip(decls).collect();
    order.sort_by_key(|(f, _)| f.offset);
    let mut end = 0;
    for (f, d) in order {
        if f.offset < end || f.offset - end >= 8 {
            return false;
        }
        end = f.offset + f.size;
        let ok = match f.kind {
            _ if f.size == 0 => true,
            Kind::Copy => match array_len(d) {
                Some(n) if n > 0 => f.size % n == 0 && [1, 2, 4, 8].contains(&(f.size / n)),
                _ => [1, 2, 4, 8].contains(&f.size),
            },
            Kind::LocText { .. } | Kind::LocZero => f.size == 4,
            Kind::Text { .. } | Kind::Zero => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// The element count of an array declaration (`unsigned long args[6]`: 6).
fn array_len(f: &FormatField) -> Option<usize> {
    f.decl.split('[').nth(1)?.split(']').next()?.parse().ok()
}

/// One event's layout: its tracepoint id and fields.
#[derive(Debug, Clone)]
struct Layout {
    id: u64,
    fields: Vec<Field>,
}

/// The layouts of the RAW payloads of a recording's events.
#[derive(Debug, Clone, Default)]
pub(super) struct RawFormats {
    /// By event index: its tracepoint's layout, when the tracing data has one to trust.
    by_event: Vec<Option<Layout>>,
    endian: Option<Endian>,
}

impl RawFormats {
    /// The layouts of `meta`'s tracepoint events, from tracing data that parses.
    pub(super) fn new(meta: &Metadata, names: &Pseudonyms) -> Self {
        let formats = tracing_blob(meta)
            .filter(|blob| super::tracing::rewrite(blob, names).is_some())
            .and_then(tracepoint_fields)
            .unwrap_or_default();
        let by_event = meta
            .attrs()
            .iter()
            .map(|ev| {
                if ev.attr.type_ != PERF_TYPE_TRACEPOINT {
                    return None;
                }
                let id = ev.attr.config;
                let mut claims = formats.iter().filter(|(fid, _)| *fid == id);
                let (_, decls) = claims.next()?;
                if claims.next().is_some() {
                    return None; // two formats claim the id: neither is its
                }
                let fields: Vec<Field> = decls
                    .iter()
                    .map(|f| Field {
                        offset: f.offset,
                        size: f.size,
                        kind: kind_of(f),
                    })
                    .collect();
                trusted(&fields, decls).then_some(Layout { id, fields })
            })
            .collect();
        RawFormats {
            by_event,
            endian: Some(meta.endian),
        }
    }

    /// `data` (the RAW payload of a sample of `event`) rebuilt; `None` when the event
    /// has no format to trust, or the payload's common_type names another tracepoint.
    pub(super) fn rebuild(&self, event: usize, data: &[u8], names: &Pseudonyms) -> Option<Vec<u8>> {
        let layout = self.by_event.get(event)?.as_ref()?;
        let endian = self.endian?;
        if u64::from(u16_at(data, 0, endian)?) != layout.id & 0xffff {
            return None;
        }
        let mut out = vec![0u8; data.len()];
        // Numbers and location words first; names over them, then what locations name,
        // so that nothing copied can stand where a name or a buffer is.
        let mut names_at = Vec::new();
        for f in &layout.fields {
            let Some(src) = data.get(f.offset..f.offset + f.size) else {
                continue;
            };
            match f.kind {
                Kind::Copy | Kind::LocText { .. } | Kind::LocZero => {
                    out[f.offset..f.offset + f.size].copy_from_slice(src)
                }
                Kind::Text { comm } => names_at.push((f.offset, f.offset + f.size, comm, true)),
                Kind::Zero => {}
            }
            if let Kind::LocText { .. } | Kind::LocZero = f.kind {
                let Some(loc) = u32_at(data, f.offset, endian) else {
                    continue;
                };
                let base = match f.kind {
                    Kind::LocText { rel: true, .. } => f.offset + f.size,
                    _ => 0,
                };
                let start = base + (loc & 0xffff) as usize;
                let end = start + (loc >> 16) as usize;
                match f.kind {
                    Kind::LocText { comm, .. } => names_at.push((start, end, comm, true)),
                    _ => names_at.push((start, end, false, false)),
                }
            }
        }
        for (start, end, comm, text) in names_at {
            let (Some(src), Some(dst)) = (data.get(start..end), out.get_mut(start..end)) else {
                continue;
            };
            match text {
                true => put_text(dst, src, comm, names),
                false => dst.fill(0),
            }
        }
        Some(out)
    }
}

/// Write the pseudonym of the C string in `src` into `dst` (as long as `src`), cut to
/// leave room for a NUL.
fn put_text(dst: &mut [u8], src: &[u8], comm: bool, names: &Pseudonyms) {
    let end = src.iter().position(|&b| b == 0).unwrap_or(src.len());
    let text = &src[..end];
    let new = if text.is_empty() {
        None
    } else if text.starts_with(b"/") {
        names.path(text)
    } else if comm {
        names.comm(text)
    } else {
        Some(names.word(text))
    };
    let new = new.map_or_else(|| text.to_vec(), String::into_bytes);
    let n = new.len().min(dst.len().saturating_sub(1));
    dst[..n].copy_from_slice(&new[..n]);
    dst[n..].fill(0);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(decl: &str, size: usize) -> FormatField {
        FormatField {
            decl: decl.into(),
            name: decl
                .split_whitespace()
                .last()
                .unwrap()
                .split('[')
                .next()
                .unwrap()
                .into(),
            offset: 0,
            size,
        }
    }

    #[test]
    fn fields_are_copied_renamed_or_zeroed_by_their_type() {
        let cases = [
            ("int common_pid", 4, Kind::Copy),
            ("const char * name", 8, Kind::Copy),
            ("unsigned long args[6]", 48, Kind::Copy),
            ("char prev_comm[16]", 16, Kind::Text { comm: true }),
            ("char name[32]", 32, Kind::Text { comm: false }),
            ("u8 data[16]", 16, Kind::Zero),
            ("unsigned char mac[6]", 6, Kind::Zero),
            (
                "__data_loc char[] filename",
                4,
                Kind::LocText {
                    comm: false,
                    rel: false,
                },
            ),
            (
                "__rel_loc char[] comm",
                4,
                Kind::LocText {
                    comm: true,
                    rel: true,
                },
            ),
            ("__data_loc u8[] buf", 4, Kind::LocZero),
        ];
        for (decl, size, kind) in cases {
            assert_eq!(kind_of(&field(decl, size)), kind, "{decl}");
        }
    }

    #[test]
    fn strings_keep_their_room() {
        let names = Pseudonyms::new("s1", vec!["/usr/lib".into()], vec!["keep".into()]).unwrap();
        let mut dst = [0xffu8; 6];
        put_text(&mut dst, b"zqxsecret\0", true, &names);
        // `printf 's1\0zqxsecret' | sha1sum`: 20e6959e...
        assert_eq!(&dst, b"20e69\0");
        put_text(&mut dst, b"keep\0\0", true, &names);
        assert_eq!(&dst, b"keep\0\0");
        let mut dst = [0xffu8; 24];
        put_text(&mut dst, b"/usr/lib/x.so\0", false, &names);
        assert_eq!(&dst[..14], b"/usr/lib/x.so\0");
        assert!(dst[14..].iter().all(|&b| b == 0));
    }
}
