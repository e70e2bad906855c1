//! The JSON form of every `--json` output, made to survive readers that hold numbers as
//! doubles (jq, JavaScript, Python's `json` with `parse_int=float`), which round
//! integers above 2^53 silently: `18446744073709551104` (PERF_CONTEXT_USER) comes back as
//! `18446744073709552000`.
//!
//! Two rules, whatever the output:
//! - **Addresses are `"0x..."` strings** (lowercase hex, no padding), always: sample ip,
//!   addr and phys_addr, callchain entries (PERF_CONTEXT_* markers included), branch
//!   from and to, register values, map starts, lengths and page offsets (MMAP, MMAP2),
//!   KSYMBOL and TEXT_POKE addresses, AUXTRACE_ERROR ip. The models mark these fields
//!   as addresses ([`perfdata_core::mark`]); the serialisers of [`crate::dump`] print
//!   them so.
//! - **Every other integer is a number when a double holds it exactly**, that is when
//!   its magnitude is at most [`MAX_SAFE_INTEGER`] (2^53 - 1), and a decimal string
//!   otherwise ([`safe`]). A value is never both: a reader that wants a u64 parses the
//!   string or takes the number.
//!
//! The text forms keep exact numbers; only the JSON written out goes through [`safe`].

use std::io::{self, Write};

use serde::Serialize;
use serde_json::Value;

#[cfg(test)]
use crate::ser::addr_str;
use crate::ser::{self, Form, Json, Wrote};

pub use crate::ser::MAX_SAFE_INTEGER;

/// An address as JSON shows it: `0x` and lowercase hex.
pub fn addr_string(addr: u64) -> String {
    format!("{addr:#x}")
}

/// Whether `n` is an integer a double cannot hold exactly.
fn is_unsafe_integer(n: &serde_json::Number) -> bool {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u > MAX_SAFE_INTEGER,
        (None, Some(i)) => i.unsigned_abs() > MAX_SAFE_INTEGER,
        // A float: already a double.
        (None, None) => false,
    }
}

/// `value` with every integer of magnitude above [`MAX_SAFE_INTEGER`] replaced by its
/// decimal string, at any depth.
pub fn safe(value: Value) -> Value {
    match value {
        Value::Number(n) if is_unsafe_integer(&n) => Value::String(n.to_string()),
        Value::Array(items) => Value::Array(items.into_iter().map(safe).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, safe(v))).collect()),
        other => other,
    }
}

/// `value` serialised in `form` by the view's serializer ([`crate::ser`]) into bytes.
fn to_bytes<T: Serialize + ?Sized>(value: &T, form: Form) -> Result<Vec<u8>, ser::Error> {
    let mut buf = Vec::new();
    if value.serialize(Json::new(&mut buf, form))? == Wrote::Null {
        buf.extend_from_slice(b"null");
    }
    Ok(buf)
}

/// `value` as a `Value` serialised in `form`: marked addresses as `"0x..."` strings.
pub(crate) fn value_in<T: Serialize + ?Sized>(value: &T, form: Form) -> serde_json::Result<Value> {
    let bytes = to_bytes(value, form).map_err(serde::ser::Error::custom)?;
    serde_json::from_slice(&bytes)
}

/// `value` as a `Value` with exact numbers, as serde_json makes one, except that the
/// addresses the models mark ([`perfdata_core::mark`]) are `"0x..."` strings.
pub fn exact_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    value_in(value, Form::EXACT)
}

/// `value`'s serde form ([`exact_value`]) made [`safe`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    value_in(value, Form::DOCUMENT)
}

/// Write `value` [`safe`], pretty-printed as serde_json pretty-prints, and a newline
/// (one document).
pub fn write_pretty<W, T>(out: &mut W, value: &T) -> io::Result<()>
where
    W: Write + ?Sized,
    T: Serialize + ?Sized,
{
    let bytes = to_bytes(value, Form::DOCUMENT).map_err(io::Error::other)?;
    out.write_all(&pretty(&bytes))?;
    writeln!(out)
}

/// Write `value` [`safe`], pretty-printed as [`write_pretty`] prints it where it stands
/// `depth` levels deep in a document, without a newline: for documents written a piece
/// at a time (a report's rows), which are then byte for byte those printed whole.
pub fn write_pretty_at<W, T>(out: &mut W, value: &T, depth: usize) -> io::Result<()>
where
    W: Write + ?Sized,
    T: Serialize + ?Sized,
{
    let bytes = to_bytes(value, Form::DOCUMENT).map_err(io::Error::other)?;
    out.write_all(&pretty_at(&bytes, depth))
}

/// Write `value` [`safe`] on one line, and a newline (one line of JSON Lines).
pub fn write_line<W: Write + ?Sized, T: Serialize + ?Sized>(
    out: &mut W,
    value: &T,
) -> io::Result<()> {
    let mut bytes = to_bytes(value, Form::DOCUMENT).map_err(io::Error::other)?;
    bytes.push(b'\n');
    out.write_all(&bytes)
}

/// Compact JSON laid out as serde_json's pretty printer lays it out: two spaces of
/// indent, `"key": value`, each element and field on its own line, `[]` and `{}` for
/// empty containers.
fn pretty(compact: &[u8]) -> Vec<u8> {
    pretty_at(compact, 0)
}

/// [`pretty`] for a value `depth` levels deep: its inner lines indented as there.
fn pretty_at(compact: &[u8], mut depth: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 2);
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + 2 * depth, b' ');
    };
    let (mut in_string, mut escaped) = (false, false);
    let mut i = 0;
    while i < compact.len() {
        let b = compact[i];
        i += 1;
        if in_string {
            out.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => {
                in_string = true;
                out.push(b);
            }
            b'[' | b'{' => {
                out.push(b);
                if matches!(compact.get(i), Some(b']' | b'}')) {
                    out.push(compact[i]);
                    i += 1;
                } else {
                    depth += 1;
                    newline(&mut out, depth);
                }
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(b);
            }
            b',' => {
                out.push(b);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            _ => out.push(b),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A document written in pieces, each at its depth, is the document written whole.
    #[test]
    fn pieces_at_their_depth_are_the_whole_document() {
        let rows = [
            json!({"x": 1, "y": [2, MAX_SAFE_INTEGER + 1], "z": {"w": "a,b:{"}}),
            json!({}),
            json!([]),
        ];
        let whole = json!({"rows": rows, "none": [], "n": u64::MAX});
        let mut expected = Vec::new();
        write_pretty(&mut expected, &whole).unwrap();
        let mut pieces: Vec<u8> = b"{\n  \"rows\": [".to_vec();
        for (i, r) in rows.iter().enumerate() {
            pieces.extend_from_slice(if i == 0 { b"\n    " } else { b",\n    " });
            write_pretty_at(&mut pieces, r, 2).unwrap();
        }
        pieces.extend_from_slice(b"\n  ],\n  \"none\": ");
        write_pretty_at(&mut pieces, &json!([]), 1).unwrap();
        pieces.extend_from_slice(b",\n  \"n\": ");
        write_pretty_at(&mut pieces, &u64::MAX, 1).unwrap();
        pieces.extend_from_slice(b"\n}\n");
        assert_eq!(
            String::from_utf8(pieces).unwrap(),
            String::from_utf8(expected).unwrap()
        );
    }

    #[derive(Serialize)]
    struct Marked {
        #[serde(serialize_with = "perfdata_core::mark::address")]
        ip: u64,
        #[serde(serialize_with = "perfdata_core::mark::address")]
        maybe: Option<u64>,
        #[serde(serialize_with = "perfdata_core::mark::address")]
        none: Option<u64>,
        #[serde(serialize_with = "perfdata_core::mark::address")]
        ips: Vec<u64>,
        count: u64,
        big: u64,
        neg: i64,
        #[serde(serialize_with = "perfdata_core::mark::bytes")]
        id: Vec<u8>,
        #[serde(serialize_with = "perfdata_core::mark::c_string")]
        comm: [u8; 8],
    }

    #[test]
    fn addresses_and_bytes_are_hex_and_big_integers_strings() {
        let v = to_value(&Marked {
            ip: 0xffff_ffff_8100_0000,
            maybe: Some(0),
            none: None,
            ips: vec![0xffff_ffff_ffff_fe00, 0x401000],
            count: MAX_SAFE_INTEGER,
            big: MAX_SAFE_INTEGER + 1,
            neg: i64::MIN,
            id: vec![0x0a, 0xff, 0],
            comm: *b"perf\0ab\0",
        })
        .unwrap();
        assert_eq!(
            v,
            json!({
                "ip": "0xffffffff81000000",
                "maybe": "0x0",
                "none": null,
                "ips": ["0xfffffffffffffe00", "0x401000"],
                "count": 9007199254740991u64,
                "big": "9007199254740992",
                "neg": "-9223372036854775808",
                "id": "0aff00",
                "comm": "perf",
            })
        );
    }

    #[test]
    fn addresses_on_the_stack_as_format_writes_them() {
        for a in [
            0,
            1,
            0xf,
            0x10,
            0x401000,
            u64::MAX,
            1 << 63,
            0xffff_ffff_8100_0000,
        ] {
            assert_eq!(addr_str(a, &mut [0; 18]), format!("{a:#x}"));
        }
    }

    #[test]
    fn documents_are_written_as_serde_json_writes_them() {
        let doc = json!({
            "a": [1.5, {"b": u64::MAX, "e": {}, "f": []}, "q\"uo,te:{[", null],
            "c": -(1i64 << 53),
            "d": {"nested": {"x": true, "y": "\\"}},
            "empty": "",
        });
        let mut pretty = Vec::new();
        write_pretty(&mut pretty, &doc).unwrap();
        let mut expect = serde_json::to_string_pretty(&safe(doc.clone())).unwrap();
        expect.push('\n');
        assert_eq!(String::from_utf8(pretty).unwrap(), expect);
        let mut line = Vec::new();
        write_line(&mut line, &doc).unwrap();
        let mut expect = serde_json::to_string(&safe(doc)).unwrap();
        expect.push('\n');
        assert_eq!(String::from_utf8(line).unwrap(), expect);
    }

    #[test]
    fn floats_and_nested_values_pass() {
        let v = safe(json!({"a": [1.5, {"b": u64::MAX}], "c": -(1i64 << 53)}));
        assert_eq!(
            v,
            json!({"a": [1.5, {"b": "18446744073709551615"}], "c": "-9007199254740992"})
        );
    }
}
