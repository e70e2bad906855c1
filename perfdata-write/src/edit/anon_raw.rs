//! RAW tracepoint payloads rebuilt from what their event format vouches for, for
//! [`Anonymize`](super::Anonymize): the payload is rewritten into zeros, field by field,
//! copying numbers (ints, pids, pointers, arrays of them), renaming strings (`char
//! comm[16]`, `__data_loc char[] filename`) in place with their pseudonyms cut to the
//! room they had, and leaving byte buffers (`u8 buf[N]`, `__data_loc u8[]`) and
//! whatever no field describes zero. A payload keeps its size and layout, so perf
//! prints it as before, with the names replaced.

use binrw::Endian;
use perfdata_core::tracing::{tracepoint_fields, tracing_blob, FormatField};
use perfdata_core::Metadata;

use super::pseudonym::Pseudonyms;

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

/// The layouts of the RAW payloads of a recording's events.
#[derive(Debug, Clone, Default)]
pub(super) struct RawFormats {
    /// By event index: the fields of its tracepoint, when the tracing data has them.
    by_event: Vec<Option<Vec<Field>>>,
    endian: Option<Endian>,
}

impl RawFormats {
    pub(super) fn new(meta: &Metadata) -> Self {
        let formats = tracing_blob(meta)
            .and_then(tracepoint_fields)
            .unwrap_or_default();
        let by_event = meta
            .attrs
            .iter()
            .map(|ev| {
                if ev.attr.type_ != PERF_TYPE_TRACEPOINT {
                    return None;
                }
                let (_, fields) = formats.iter().find(|(id, _)| *id == ev.attr.config)?;
                Some(
                    fields
                        .iter()
                        .map(|f| Field {
                            offset: f.offset,
                            size: f.size,
                            kind: kind_of(f),
                        })
                        .collect(),
                )
            })
            .collect();
        RawFormats {
            by_event,
            endian: Some(meta.endian),
        }
    }

    /// `data` (the RAW payload of a sample of `event`) rebuilt; `None` when the event
    /// has no known format.
    pub(super) fn rebuild(&self, event: usize, data: &[u8], names: &Pseudonyms) -> Option<Vec<u8>> {
        let fields = self.by_event.get(event)?.as_ref()?;
        let endian = self.endian?;
        let mut out = vec![0u8; data.len()];
        for f in fields {
            let Some(src) = data.get(f.offset..f.offset + f.size) else {
                continue;
            };
            match f.kind {
                Kind::Copy => out[f.offset..f.offset + f.size].copy_from_slice(src),
                Kind::Text { comm } => {
                    put_text(&mut out[f.offset..f.offset + f.size], src, comm, names)
                }
                Kind::LocText { .. } | Kind::LocZero => {
                    out[f.offset..f.offset + f.size].copy_from_slice(src);
                    let Kind::LocText { comm, rel } = f.kind else {
                        continue;
                    };
                    let Ok(word) = <[u8; 4]>::try_from(&src[..4.min(src.len())]) else {
                        continue;
                    };
                    let loc = match endian {
                        Endian::Little => u32::from_le_bytes(word),
                        Endian::Big => u32::from_be_bytes(word),
                    };
                    let base = if rel { f.offset + f.size } else { 0 };
                    let start = base + (loc & 0xffff) as usize;
                    let end = start + (loc >> 16) as usize;
                    if let Some(text) = data.get(start..end) {
                        put_text(&mut out[start..end], text, comm, names);
                    }
                }
                Kind::Zero => {}
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
