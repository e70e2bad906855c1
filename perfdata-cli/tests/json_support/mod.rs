//! Reading perfdata's `--json` outputs as their documented form says (README, JSON
//! output): addresses are `"0x..."` strings, other integers numbers up to 2^53 - 1 and
//! decimal strings above. These readers accept exactly that and panic on anything else,
//! so a test that uses them also checks the form.
// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use serde_json::Value;

/// The largest integer a double holds exactly (JavaScript's Number.MAX_SAFE_INTEGER).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// An address field: a `"0x..."` string of lowercase hex.
pub fn addr(v: &Value) -> u64 {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("an address is a string: {v}"));
    let hex = s
        .strip_prefix("0x")
        .unwrap_or_else(|| panic!("an address starts with 0x: {s}"));
    assert!(
        !hex.is_empty()
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "an address is lowercase hex: {s}"
    );
    u64::from_str_radix(hex, 16).unwrap()
}

/// An unsigned integer field: a number up to 2^53 - 1, or the decimal string of a
/// larger one (never a string for a small one).
pub fn uint(v: &Value) -> u64 {
    match v {
        Value::Number(n) => {
            let n = n
                .as_u64()
                .unwrap_or_else(|| panic!("an unsigned integer: {v}"));
            assert!(n <= MAX_SAFE_INTEGER, "{n} is above 2^53 - 1 as a number");
            n
        }
        Value::String(s) => {
            let n: u64 = s
                .parse()
                .unwrap_or_else(|_| panic!("a decimal string: {s:?}"));
            assert!(
                n > MAX_SAFE_INTEGER,
                "{n} is a string but a double holds it"
            );
            n
        }
        other => panic!("an unsigned integer: {other}"),
    }
}

/// [`uint`] of a field that may be absent (null).
pub fn opt_uint(v: &Value) -> Option<u64> {
    (!v.is_null()).then(|| uint(v))
}
