//! Tracepoint samples decoded as perf script shows them: the RAW payload read with the
//! event's format from the tracing data (its `field:` lines), and the `print fmt:` line
//! evaluated over those fields ([`super::print`]).
//!
//! Field layout (the kernel's trace_events format files, libtraceevent's reading of
//! them): numbers of 1, 2, 4 or 8 bytes in the recording's byte order, sign-extended
//! when `signed:1`; `char name[N]` a NUL-padded string; `__data_loc` a u32 whose low 16
//! bits are the offset of the data in the payload and high 16 bits its length
//! (`__rel_loc`: the offset counts from the end of the field); other arrays as bytes.

use std::collections::HashMap;

use super::print::{PrintFmt, Val};
use perfdata_core::tracing::{event_formats, FormatField};

/// One field's value in a tracepoint's RAW payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue {
    /// A number: its bits (sign-extended for signed fields) and whether it is signed.
    Int {
        /// The value as 64 bits; a signed field is sign-extended.
        bits: u64,
        /// Whether the format says `signed:1`.
        signed: bool,
    },
    /// A string: a `char` array or `__data_loc char[]`, up to its first NUL.
    Str(String),
    /// Any other array, as its bytes.
    Bytes(Vec<u8>),
}

impl FieldValue {
    /// The value as JSON: a number (signed or not), a string, or the bytes as hex.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            FieldValue::Int { bits, signed: true } => (*bits as i64).into(),
            FieldValue::Int { bits, .. } => (*bits).into(),
            FieldValue::Str(s) => s.clone().into(),
            FieldValue::Bytes(b) => crate::ser::hex(b).into(),
        }
    }

    fn to_val(&self) -> Val {
        match self {
            FieldValue::Int { bits, .. } => Val::Int(*bits),
            FieldValue::Str(s) => Val::Str(s.clone()),
            FieldValue::Bytes(_) => Val::Int(0),
        }
    }
}

/// A field of an event format with what decoding needs beyond [`FormatField`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Field {
    format: FormatField,
    signed: bool,
}

/// One tracepoint's format: its fields and its print format.
#[derive(Debug, Clone)]
pub struct TraceEvent {
    /// The subsystem (`sched`).
    pub system: String,
    /// The tracepoint's name (`sched_switch`).
    pub name: String,
    fields: Vec<Field>,
    print: Option<PrintFmt>,
}

/// A tracepoint sample's payload decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedTrace {
    /// The fields by name in format order, the `common_*` fields left out (as perf
    /// script leaves them out).
    pub fields: Vec<(String, FieldValue)>,
    /// The payload as perf script prints it: the print format evaluated, or
    /// `name=value` for each field when the print format uses what is not understood.
    pub text: String,
}

/// The event formats of a tracing data blob, by tracepoint id.
#[derive(Debug, Clone, Default)]
pub struct TraceEvents {
    by_id: HashMap<u64, TraceEvent>,
    big: bool,
}

impl TraceEvents {
    /// Read every event format of a tracing data blob; `None` if the blob does not parse.
    pub fn parse(blob: &[u8]) -> Option<Self> {
        let mut by_id = HashMap::new();
        let big = event_formats(blob, |system, text| {
            let text = String::from_utf8_lossy(text);
            if let Some((id, event)) = parse_format(&String::from_utf8_lossy(system), &text) {
                by_id.insert(id, event);
            }
        })?;
        Some(TraceEvents { by_id, big })
    }

    /// The format of tracepoint `id` (an attr's config).
    pub fn event(&self, id: u64) -> Option<&TraceEvent> {
        self.by_id.get(&id)
    }

    /// Decode the RAW payload of a sample of tracepoint `id`.
    pub fn decode(&self, id: u64, raw: &[u8]) -> Option<DecodedTrace> {
        let event = self.event(id)?;
        let values = self.values(event, raw);
        let text = render(event, &values);
        let fields = printed(&values)
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect();
        Some(DecodedTrace { fields, text })
    }

    /// The payload of a sample of tracepoint `id` as perf prints it
    /// ([`DecodedTrace::text`]), without the field list [`TraceEvents::decode`] makes.
    pub fn text(&self, id: u64, raw: &[u8]) -> Option<String> {
        let event = self.event(id)?;
        Some(render(event, &self.values(event, raw)))
    }

    /// Every field of `event`'s format read from `raw`, by name.
    fn values<'e>(&self, event: &'e TraceEvent, raw: &[u8]) -> Vec<(&'e str, FieldValue)> {
        event
            .fields
            .iter()
            .map(|f| (f.format.name.as_str(), self.value(f, raw)))
            .collect()
    }

    fn value(&self, f: &Field, raw: &[u8]) -> FieldValue {
        let decl = f.format.decl.as_str();
        let bytes = raw
            .get(f.format.offset..f.format.offset.saturating_add(f.format.size))
            .unwrap_or(&[]);
        let dynamic = decl.starts_with("__data_loc") || decl.starts_with("__rel_loc");
        let is_char = decl.contains("char");
        if dynamic {
            let loc = self.uint(bytes) as u32;
            let mut start = (loc & 0xffff) as usize;
            if decl.starts_with("__rel_loc") {
                start += f.format.offset + f.format.size;
            }
            let data = raw
                .get(start..start.saturating_add((loc >> 16) as usize))
                .unwrap_or(&[]);
            return array_value(data, is_char);
        }
        if decl.contains('[') {
            return array_value(bytes, is_char);
        }
        let bits = self.uint(bytes);
        let bits = match (f.signed, bytes.len()) {
            (true, n @ 1..=7) => {
                let shift = 64 - 8 * n as u32;
                (((bits << shift) as i64) >> shift) as u64
            }
            _ => bits,
        };
        FieldValue::Int {
            bits,
            signed: f.signed,
        }
    }

    /// Up to 8 bytes as an unsigned number in the blob's byte order.
    fn uint(&self, bytes: &[u8]) -> u64 {
        let b = &bytes[..bytes.len().min(8)];
        let fold = |acc: u64, x: &u8| (acc << 8) | u64::from(*x);
        if self.big {
            b.iter().fold(0, fold)
        } else {
            b.iter().rev().fold(0, fold)
        }
    }
}

fn array_value(data: &[u8], is_char: bool) -> FieldValue {
    if is_char {
        FieldValue::Str(perfdata_core::text::c_str_lossy(data))
    } else {
        FieldValue::Bytes(data.to_vec())
    }
}

/// `name=value` for each field: what libtraceevent prints for an event whose print
/// format it cannot evaluate.
/// The fields perf script prints: all but the `common_*` ones.
fn printed<'a>(
    values: &'a [(&'a str, FieldValue)],
) -> impl Iterator<Item = (&'a str, &'a FieldValue)> {
    values
        .iter()
        .filter(|(n, _)| !n.starts_with("common_"))
        .map(|(n, v)| (*n, v))
}

/// The text of `event`'s sample whose fields are `values`: the print format evaluated,
/// or `name=value` of each printed field where the format is not understood.
fn render(event: &TraceEvent, values: &[(&str, FieldValue)]) -> String {
    let lookup = |name: &str| {
        values
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.to_val())
    };
    event
        .print
        .as_ref()
        .and_then(|p| p.render(&lookup))
        .unwrap_or_else(|| plain_text(printed(values)))
}

fn plain_text<'a>(fields: impl Iterator<Item = (&'a str, &'a FieldValue)>) -> String {
    let parts: Vec<String> = fields
        .map(|(n, v)| match v {
            FieldValue::Int { bits, signed: true } => format!("{n}={}", *bits as i64),
            FieldValue::Int { bits, .. } => format!("{n}={bits}"),
            FieldValue::Str(s) => format!("{n}={s}"),
            FieldValue::Bytes(b) => format!("{n}={}", crate::ser::hex(b)),
        })
        .collect();
    parts.join(" ")
}

/// One event format's text: (id, event).
fn parse_format(system: &str, text: &str) -> Option<(u64, TraceEvent)> {
    let line = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::trim)
    };
    let id = line("ID:")?.parse().ok()?;
    let name = line("name:")?.to_string();
    let fields = text
        .lines()
        .filter_map(|l| {
            let format = FormatField::parse(l)?;
            let signed = l
                .split(';')
                .find_map(|p| p.trim().strip_prefix("signed:"))
                .is_some_and(|s| s.trim() == "1");
            Some(Field { format, signed })
        })
        .collect();
    let print = line("print fmt:").and_then(PrintFmt::parse);
    Some((
        id,
        TraceEvent {
            system: system.to_string(),
            name,
            fields,
            print,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sched_switch's format as the kernel 6.18 of the fixtures gives it.
    const SCHED_SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

    fn payload(prev_state: i64) -> Vec<u8> {
        let mut p = vec![0u8; 64];
        p[0..2].copy_from_slice(&372u16.to_le_bytes());
        p[8..10].copy_from_slice(b"sh");
        p[24..28].copy_from_slice(&5511i32.to_le_bytes());
        p[28..32].copy_from_slice(&120i32.to_le_bytes());
        p[32..40].copy_from_slice(&prev_state.to_le_bytes());
        p[40..47].copy_from_slice(b"swapper");
        p[56..60].copy_from_slice(&(-1i32).to_le_bytes());
        p[60..64].copy_from_slice(&120i32.to_le_bytes());
        p
    }

    #[test]
    fn sched_switch_reads_as_perf_script_prints_it() {
        let (id, event) = parse_format("sched", SCHED_SWITCH).unwrap();
        let events = TraceEvents {
            by_id: [(id, event)].into(),
            big: false,
        };
        let d = events.decode(372, &payload(2)).unwrap();
        assert_eq!(
            d.text,
            "prev_comm=sh prev_pid=5511 prev_prio=120 prev_state=D ==> \
             next_comm=swapper next_pid=-1 next_prio=120"
        );
        assert_eq!(
            d.fields[0],
            ("prev_comm".into(), FieldValue::Str("sh".into()))
        );
        assert_eq!(
            d.fields[5],
            (
                "next_pid".into(),
                FieldValue::Int {
                    bits: u64::MAX,
                    signed: true
                }
            )
        );
        // Running (0) prints R; the preempted bit (256) adds "+"; flags join with "|".
        let text = |s| events.decode(372, &payload(s)).unwrap().text;
        assert!(text(0).contains("prev_state=R ==>"), "{}", text(0));
        assert!(text(256).contains("prev_state=R+ ==>"), "{}", text(256));
        assert!(text(3).contains("prev_state=S|D ==>"), "{}", text(3));
        assert_eq!(events.decode(1, &payload(0)), None);
    }
}
