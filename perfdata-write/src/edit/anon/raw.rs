//! RAW tracepoint payloads rebuilt from what their event format vouches for, for
//! [`Anonymize`](super::Anonymize): the payload is rewritten into zeros, field by field,
//! copying numbers (ints, pids, pointers), renaming strings (`char comm[16]`,
//! `__data_loc char[] filename`) in place with their pseudonyms cut to the room they
//! had, and leaving arrays of numbers (`u8 buf[N]`, `unsigned long args[6]`,
//! `__data_loc u8[]`) and whatever no field describes zero. A payload keeps its size and
//! layout, so perf prints it as before, with the names replaced.
//!
//! A field's declared type comes from the file and may be wrong: a `char prev_comm[16]`
//! declared `long prev_comm[2]` holds the comm all the same, and perf prints its bytes.
//! So no declared type lets text through: a field whose name says it holds a name or a
//! path ([`names_a_name`]) is a string whatever its type (renamed where it is an array
//! or a location, zeroed where it is one number: a pointer to a name, `const char *
//! filename`, is no name), and an array is never copied, whatever its elements (a
//! string's bytes read as numbers are the string): the names of the fields zeroed are
//! counted for the warnings. Only single numbers of 1, 2, 4 or 8 bytes are copied.
//!
//! A format is trusted only as far as it is checked: the tracing data parses (see
//! `tracing`), no other format claims its ID, its fields do not overlap and follow each
//! other with no more than alignment between them, each number is 1, 2, 4 or 8 bytes,
//! and the payload's own common_type names it. Anything else leaves the payload without
//! a format: zeroed past its common fields.

use binrw::Endian;
use perfdata_core::tracing::{data_loc, tracepoint_fields, tracing_blob, FormatField};
use perfdata_core::{u16_at, Metadata};

use super::super::pseudonym::Pseudonyms;

/// perf_event_attr.type of tracepoints.
const PERF_TYPE_TRACEPOINT: u32 = 2;

/// What becomes of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// One number: copied.
    Copy,
    /// A NUL-padded string in place (a char array, or any array whose name says it holds
    /// a name); `comm` when it holds a task's name.
    Text { comm: bool },
    /// A `__data_loc`/`__rel_loc` string: the location word is copied, the string it
    /// points at renamed.
    LocText { comm: bool, rel: bool },
    /// A `__data_loc`/`__rel_loc` buffer of anything else: the location word copied,
    /// the bytes left zero.
    LocZero,
    /// Left zero: an array of numbers (or bytes), or one number whose name says it
    /// holds a name.
    Zero,
}

#[derive(Debug, Clone)]
struct Field {
    offset: usize,
    size: usize,
    kind: Kind,
}

/// Suffixes of the names the kernel's tracepoints give fields that hold a task's name,
/// a file's, a device's or another name (`comm`, `prev_comm`, `parent_comm`, `name`,
/// `filename`, `pathname`, `dev_name`, `fname`, `path`, `dst_path`), and whole names of
/// others that hold a path or text (`interp`, `cgroup`, `msg`): from the formats of
/// Linux 6.18 (`/sys/kernel/tracing/events/*/*/format`, 21,094 fields).
const NAME_SUFFIXES: [&str; 3] = ["comm", "name", "path"];
const NAMES: [&str; 3] = ["interp", "cgroup", "msg"];
/// Numbers the kernel names like names: setsockopt's and getsockopt's option.
const NUMBERS: [&str; 1] = ["optname"];

/// Whether a field's name says it holds a name or a path (ASCII case ignored).
fn names_a_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !NUMBERS.contains(&name.as_str())
        && (NAME_SUFFIXES.iter().any(|s| name.ends_with(s)) || NAMES.contains(&name.as_str()))
}

fn kind_of(f: &FormatField) -> Kind {
    let decl = f.decl.as_str();
    let comm = f.name.to_ascii_lowercase().contains("comm");
    let named = names_a_name(&f.name);
    let loc = decl.starts_with("__data_loc") || decl.starts_with("__rel_loc");
    let chars = decl.contains("char") && !decl.contains("unsigned char") && !decl.contains('*');
    if loc {
        return if (chars || named) && decl.contains("[]") {
            Kind::LocText {
                comm,
                rel: decl.starts_with("__rel_loc"),
            }
        } else {
            Kind::LocZero
        };
    }
    let array = decl.contains('[');
    if array && (chars || named) {
        Kind::Text { comm }
    } else if array || named {
        // An array of numbers, or one number said to hold a name.
        Kind::Zero
    } else {
        Kind::Copy
    }
}

/// Whether a format's fields can be trusted to lay out a payload: sorted by offset they
/// do not overlap, each starts within alignment (8 bytes) of the end of the one before
/// (so a field whose offset was changed cannot reach into the strings that follow the
/// fixed part), numbers are 1, 2, 4 or 8 bytes wide, location words 4.
fn trusted(fields: &[Field]) -> bool {
    let mut order: Vec<&Field> = fields.iter().collect();
    order.sort_by_key(|f| f.offset);
    let mut end = 0;
    for f in order {
        if f.offset < end || f.offset - end >= 8 {
            return false;
        }
        end = f.offset + f.size;
        let ok = match f.kind {
            _ if f.size == 0 => true,
            Kind::Copy => [1, 2, 4, 8].contains(&f.size),
            Kind::LocText { .. } | Kind::LocZero => f.size == 4,
            Kind::Text { .. } | Kind::Zero => true,
        };
        if !ok {
            return false;
        }
    }
    true
}

/// One event's layout: its tracepoint id and fields.
#[derive(Debug, Clone)]
struct Layout {
    id: u64,
    fields: Vec<Field>,
    /// The event's name and those of the fields left zero, for the warnings.
    event: String,
    zeroed: Vec<String>,
}

/// What an event's RAW payloads are rebuilt from.
#[derive(Debug, Clone)]
enum EventRaw {
    /// Not a tracepoint: no format describes its payloads (bpf-output, AMD IBS).
    NoFormat,
    /// A tracepoint, laid out by the tracing data.
    Layout(Layout),
    /// A tracepoint whose format is not there or cannot be trusted: why.
    Unvouched(&'static str),
}

/// A payload rebuilt: its bytes, its event's name, and the fields left zero.
pub(super) struct Rebuilt<'a> {
    pub data: Vec<u8>,
    pub event: &'a str,
    pub zeroed: &'a [String],
}

/// The layouts of the RAW payloads of a recording's events.
#[derive(Debug, Clone, Default)]
pub(super) struct RawFormats {
    by_event: Vec<EventRaw>,
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
            .enumerate()
            .map(|(i, ev)| {
                if ev.attr.type_ != PERF_TYPE_TRACEPOINT {
                    return EventRaw::NoFormat;
                }
                let id = ev.attr.config;
                let mut claims = formats.iter().filter(|(fid, _)| *fid == id);
                let Some((_, decls)) = claims.next() else {
                    return EventRaw::Unvouched("the tracing data has no format for its event");
                };
                if claims.next().is_some() {
                    return EventRaw::Unvouched("two formats of the tracing data claim its event");
                }
                let kinds: Vec<Kind> = decls.iter().map(kind_of).collect();
                let fields: Vec<Field> = decls
                    .iter()
                    .zip(&kinds)
                    .map(|(f, &kind)| Field {
                        offset: f.offset,
                        size: f.size,
                        kind,
                    })
                    .collect();
                if !trusted(&fields) {
                    return EventRaw::Unvouched("its event's format does not lay out a payload");
                }
                let zeroed = decls
                    .iter()
                    .zip(&kinds)
                    .filter(|(f, k)| matches!(k, Kind::Zero | Kind::LocZero) && f.size > 0)
                    .map(|(f, _)| f.name.clone())
                    .collect();
                EventRaw::Layout(Layout {
                    id,
                    fields,
                    event: meta.event_name(i),
                    zeroed,
                })
            })
            .collect();
        RawFormats {
            by_event,
            endian: Some(meta.endian),
        }
    }

    /// `data` (the RAW payload of a sample of `event`) rebuilt. Not rebuilt: `None`
    /// when the event is no tracepoint (nothing describes its payloads), else why not
    /// (no format to trust, the payload's common_type names another tracepoint).
    pub(super) fn rebuild(
        &self,
        event: usize,
        data: &[u8],
        names: &Pseudonyms,
    ) -> Result<Rebuilt<'_>, Option<&'static str>> {
        let layout = match self.by_event.get(event) {
            Some(EventRaw::Layout(l)) => l,
            Some(EventRaw::NoFormat) => return Err(None),
            Some(EventRaw::Unvouched(why)) => return Err(Some(why)),
            None => return Err(Some("its event came after the tracing data was read")),
        };
        let endian = self.endian.ok_or(None)?;
        if u16_at(data, 0, endian).map(u64::from) != Some(layout.id & 0xffff) {
            return Err(Some("its common_type names another tracepoint"));
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
                let rel = matches!(f.kind, Kind::LocText { rel: true, .. });
                let Some(std::ops::Range { start, end }) =
                    data_loc(data, f.offset, f.size, rel, endian)
                else {
                    continue;
                };
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
        Ok(Rebuilt {
            data: out,
            event: &layout.event,
            zeroed: &layout.zeroed,
        })
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
    fn fields_are_copied_renamed_or_zeroed_by_their_type_and_name() {
        let (copy, zero) = (Kind::Copy, Kind::Zero);
        let text = |comm| Kind::Text { comm };
        let loc = |comm, rel| Kind::LocText { comm, rel };
        // Declarations of Linux 6.18's formats (/sys/kernel/tracing/events).
        let cases = [
            // Numbers: pids, prio, state, addresses, counts, a socket option.
            ("int common_pid", 4, copy),
            ("pid_t prev_pid", 4, copy),
            ("int prev_prio", 4, copy),
            ("long prev_state", 8, copy),
            ("unsigned long call_site", 8, copy),
            ("const void * ptr", 8, copy),
            ("size_t bytes_alloc", 8, copy),
            ("int optname", 8, copy),
            ("char wasdel", 1, copy),
            ("unsigned int namelen", 4, copy),
            // Strings.
            ("char prev_comm[16]", 16, text(true)),
            ("char name[32]", 32, text(false)),
            ("char rwbs[10]", 10, text(false)),
            ("__data_loc char[] filename", 4, loc(false, false)),
            ("__rel_loc char[] comm", 4, loc(true, true)),
            // Arrays of numbers and buffers: zero.
            ("unsigned long args[6]", 48, zero),
            ("unsigned long caller[8]", 64, zero),
            ("u8 fsid[16]", 16, zero),
            ("unsigned char addr[6]", 6, zero),
            ("__data_loc u8[] buf", 4, Kind::LocZero),
            ("__data_loc u64[] dma_addrs", 4, Kind::LocZero),
            // Pointers to names: no name, and no number to keep.
            ("const char * filename", 8, zero),
            ("const char * pathname", 8, zero),
            ("char * dev_name", 8, zero),
            ("struct user_msghdr * msg", 8, zero),
            // A string declared as numbers (a damaged or hostile format): a string
            // still, where it is an array or a location; zero where one number.
            ("long prev_comm[2]", 16, text(true)),
            ("int comm[4]", 16, text(true)),
            ("pid_t next_comm[8]", 16, text(true)),
            ("short prev_comm[2]", 16, text(true)),
            ("u64 Next_Comm[2]", 16, text(true)),
            ("__u64 prev_comm", 8, zero),
            ("s64 comm", 8, zero),
            ("int filename", 4, zero),
            ("__data_loc u8[] parent_comm", 4, loc(true, false)),
            ("__data_loc int[] filename", 4, loc(false, false)),
            ("u32 path", 4, zero),
            // Renamed too: an array of numbers, whatever it holds.
            ("long args[2]", 16, zero),
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
