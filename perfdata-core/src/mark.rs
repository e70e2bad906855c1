//! What a field *is*, told to serialisers, so that a view can choose how to print it
//! without the model choosing for it.
//!
//! - Opaque bytes (build ids, BPF tags, an undecoded section) are serialised as bytes
//!   ([`bytes`], serde's `serialize_bytes`): serde_json shows a list of numbers, the
//!   views of perfdata-view lowercase hex.
//! - C char buffers are text ([`c_string`]): the characters before the first NUL.
//! - Addresses are marked, below.
//!
//! The models mark their address fields (sample ip, callchain entries, branch ends,
//! register values, map starts and lengths...) with
//! `#[serde(serialize_with = "crate::mark::address")]`. Each address is serialised as a
//! newtype struct named [`ADDRESS`] around its `u64`: a serialiser that does not know
//! the name (serde_json's, any other) sees the plain number; one that knows it (the
//! `--json` and text forms of perfdata-view) prints it as an address.

use serde::{Serialize, Serializer};

/// The newtype-struct name an address is serialised under.
pub const ADDRESS: &str = "perfdata_core::mark::Address";

/// Serialise an address field (`u64`, `Option<u64>`, `Vec<u64>`) with each address
/// marked [`ADDRESS`].
pub fn address<S: Serializer, A: Addresses + ?Sized>(value: &A, s: S) -> Result<S::Ok, S::Error> {
    value.serialize_marked(s)
}

/// Values that are addresses or hold them, serialised by [`address`].
pub trait Addresses {
    /// Serialise with every address marked [`ADDRESS`].
    fn serialize_marked<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

impl Addresses for u64 {
    fn serialize_marked<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_newtype_struct(ADDRESS, self)
    }
}

impl<T: Addresses> Addresses for Option<T> {
    fn serialize_marked<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Some(v) => s.serialize_some(&Marked(v)),
            None => s.serialize_none(),
        }
    }
}

impl<T: Addresses> Addresses for [T] {
    fn serialize_marked<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Marked))
    }
}

impl<T: Addresses> Addresses for Vec<T> {
    fn serialize_marked<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize_marked(s)
    }
}

/// Serialise opaque bytes (a `Vec<u8>`, an array) as bytes, not as a list of numbers.
pub fn bytes<S: Serializer, B: AsRef<[u8]>>(value: &B, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(value.as_ref())
}

/// Serialise a fixed or variable C char buffer as the text before its first NUL
/// (invalid UTF-8 replaced).
pub fn c_string<S: Serializer, B: AsRef<[u8]>>(value: &B, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::text::c_str_lossy(value.as_ref()))
}

/// Adapter: an [`Addresses`] value as a `Serialize` one.
struct Marked<'a, T: ?Sized>(&'a T);

impl<T: Addresses + ?Sized> Serialize for Marked<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_marked(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Serialize)]
    struct Marks {
        #[serde(serialize_with = "address")]
        ip: u64,
        #[serde(serialize_with = "address")]
        none: Option<u64>,
        #[serde(serialize_with = "address")]
        ips: Vec<u64>,
    }

    #[test]
    fn a_serialiser_that_does_not_know_the_mark_sees_numbers() {
        let v = serde_json::to_value(Marks {
            ip: u64::MAX,
            none: None,
            ips: vec![1, 0x401000],
        })
        .unwrap();
        assert_eq!(
            v,
            serde_json::json!({"ip": u64::MAX, "none": null, "ips": [1, 0x401000]})
        );
    }
}
