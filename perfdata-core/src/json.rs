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
//!   with `#[serde(serialize_with = "crate::json::addr")]`.
//! - **Every other integer is a number when a double holds it exactly**, that is when
//!   its magnitude is at most [`MAX_SAFE_INTEGER`] (2^53 - 1), and a decimal string
//!   otherwise ([`safe`]). A value is never both: a reader that wants a u64 parses the
//!   string or takes the number.
//!
//! The text forms keep exact numbers; only the JSON written out goes through [`safe`].

use std::io::{self, Write};

use serde::{Serialize, Serializer};
use serde_json::Value;

/// The largest integer a double holds exactly, and every smaller one too
/// (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// An address as JSON shows it: `0x` and lowercase hex.
pub fn addr_string(addr: u64) -> String {
    format!("{addr:#x}")
}

/// Serialise an address field (`u64`, `Option<u64>`, `Vec<u64>`) as `"0x..."` strings.
pub fn addr<S: Serializer, A: Addresses + ?Sized>(value: &A, s: S) -> Result<S::Ok, S::Error> {
    value.serialize_hex(s)
}

/// Values that are addresses, serialised as hex strings by [`addr`].
pub trait Addresses {
    /// Serialise as `"0x..."` (a string per address).
    fn serialize_hex<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

impl Addresses for u64 {
    fn serialize_hex<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Formatted on the stack: `dump` writes millions of these (a `format!` per
        // address was 6% of `dump --json`, profiled).
        let mut buf = [0u8; 18];
        s.serialize_str(addr_str(*self, &mut buf))
    }
}

/// `addr` as [`addr_string`] writes it, in `buf`.
fn addr_str(addr: u64, buf: &mut [u8; 18]) -> &str {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digits = (16 - addr.leading_zeros() as usize / 4).max(1);
    buf[0] = b'0';
    buf[1] = b'x';
    for i in 0..digits {
        buf[1 + digits - i] = HEX[(addr >> (4 * i)) as usize & 0xf];
    }
    // Only ASCII was written.
    std::str::from_utf8(&buf[..2 + digits]).unwrap_or("0x0")
}

impl<T: Addresses> Addresses for Option<T> {
    fn serialize_hex<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => s.serialize_some(&Hex(v)),
            None => s.serialize_none(),
        }
    }
}

impl<T: Addresses> Addresses for [T] {
    fn serialize_hex<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Hex))
    }
}

impl<T: Addresses> Addresses for Vec<T> {
    fn serialize_hex<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize_hex(s)
    }
}

/// Adapter: an [`Addresses`] value as a `Serialize` one.
struct Hex<'a, T: ?Sized>(&'a T);

impl<T: Addresses + ?Sized> Serialize for Hex<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_hex(s)
    }
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

/// `value`'s serde form made [`safe`].
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    serde_json::to_value(value).map(safe)
}

/// Write `value` [`safe`], pretty-printed, and a newline (one document).
pub fn write_pretty<W, T>(out: &mut W, value: &T) -> io::Result<()>
where
    W: Write + ?Sized,
    T: Serialize + ?Sized,
{
    serde_json::to_writer_pretty(&mut *out, &to_value(value)?)?;
    writeln!(out)
}

/// Write `value` [`safe`] on one line, and a newline (one line of JSON Lines).
pub fn write_line<W: Write + ?Sized, T: Serialize + ?Sized>(
    out: &mut W,
    value: &T,
) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &to_value(value)?)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Marked {
        #[serde(serialize_with = "addr")]
        ip: u64,
        #[serde(serialize_with = "addr")]
        maybe: Option<u64>,
        #[serde(serialize_with = "addr")]
        none: Option<u64>,
        #[serde(serialize_with = "addr")]
        ips: Vec<u64>,
        count: u64,
        big: u64,
        neg: i64,
    }

    #[test]
    fn addresses_are_hex_and_big_integers_strings() {
        let v = to_value(&Marked {
            ip: 0xffff_ffff_8100_0000,
            maybe: Some(0),
            none: None,
            ips: vec![0xffff_ffff_ffff_fe00, 0x401000],
            count: MAX_SAFE_INTEGER,
            big: MAX_SAFE_INTEGER + 1,
            neg: i64::MIN,
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
    fn floats_and_nested_values_pass() {
        let v = safe(json!({"a": [1.5, {"b": u64::MAX}], "c": -(1i64 << 53)}));
        assert_eq!(
            v,
            json!({"a": [1.5, {"b": "18446744073709551615"}], "c": "-9007199254740992"})
        );
    }
}
