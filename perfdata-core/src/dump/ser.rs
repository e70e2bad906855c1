//! Serde serializers that write `dump`'s two forms of the models straight into a byte
//! buffer, with no `serde_json::Value` in between: building a `Value` per record (map
//! inserts, key hashing, an allocation per field) was most of `dump`'s time.
//!
//! They write exactly what the `Value` path wrote ([`super::record_value`] then
//! [`crate::json::safe`] or the text flattening): object fields in serialisation order,
//! fields whose value is null (absent options) left out, integers above 2^53 as strings
//! in JSON, externally tagged enums as `{"Variant": ...}`. A field turning out null is
//! only known once its value is serialised, so its key is written first and the buffer
//! cut back when nothing followed: hence a `Vec<u8>`, not any writer.

use std::fmt;
use std::io::Write as _;

use serde::ser::{self, Serialize};

use crate::json::MAX_SAFE_INTEGER;

/// A serialisation failure (a map key that cannot be a string, a 128-bit integer out
/// of range); the dump of the record fails with it.
#[derive(Debug)]
pub struct Error(String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(msg.to_string())
    }
}

/// What a serialised value was, for its container: nulls are left out of objects, and
/// the text form prints a list of addresses bare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrote {
    /// Nothing was written (None, unit, a non-finite float: JSON's null).
    Null,
    /// A string that is an address (`0x` and hex digits).
    Address,
    /// Anything else.
    Other,
}

/// Whether `s` is an address as [`crate::json::addr`] writes it.
pub fn is_address(s: &str) -> bool {
    s.strip_prefix("0x")
        .is_some_and(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn int(out: &mut Vec<u8>, v: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

fn json_str(out: &mut Vec<u8>, s: &str) -> Result<(), Error> {
    // Keys and most values need no escape: copied whole, serde_json's escaper (a fifth
    // of dump's time, profiled) only for the rest.
    if s.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
        return Ok(());
    }
    serde_json::to_writer(&mut *out, s).map_err(|e| Error(e.to_string()))
}

/// A finite float as serde_json writes it; `false` (nothing written) otherwise, as
/// serde_json makes a non-finite float null.
fn float(out: &mut Vec<u8>, v: f64) -> Result<bool, Error> {
    if !v.is_finite() {
        return Ok(false);
    }
    serde_json::to_writer(&mut *out, &v).map_err(|e| Error(e.to_string()))?;
    Ok(true)
}

fn u128_to_u64(v: u128) -> Result<u64, Error> {
    u64::try_from(v).map_err(|_| Error("number out of range".into()))
}

fn i128_to_i64(v: i128) -> Result<i64, Error> {
    i64::try_from(v).map_err(|_| Error("number out of range".into()))
}

/// JSON. `safe`: integers a double cannot hold as decimal strings (the `--json` form);
/// not safe: exact numbers (the text form's lists).
pub struct Json<'a> {
    /// Where the JSON goes.
    pub out: &'a mut Vec<u8>,
    /// Whether big integers become strings.
    pub safe: bool,
}

impl<'a> ser::Serializer for Json<'a> {
    type Ok = Wrote;
    type Error = Error;
    type SerializeSeq = JsonSeq<'a>;
    type SerializeTuple = JsonSeq<'a>;
    type SerializeTupleStruct = JsonSeq<'a>;
    type SerializeTupleVariant = JsonSeq<'a>;
    type SerializeMap = JsonObj<'a>;
    type SerializeStruct = JsonObj<'a>;
    type SerializeStructVariant = JsonObj<'a>;

    fn serialize_bool(self, v: bool) -> Result<Wrote, Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(Wrote::Other)
    }
    fn serialize_i8(self, v: i8) -> Result<Wrote, Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<Wrote, Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<Wrote, Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<Wrote, Error> {
        if self.safe && v.unsigned_abs() > MAX_SAFE_INTEGER {
            self.out.push(b'"');
            int(self.out, v);
            self.out.push(b'"');
        } else {
            int(self.out, v);
        }
        Ok(Wrote::Other)
    }
    fn serialize_i128(self, v: i128) -> Result<Wrote, Error> {
        match u64::try_from(v) {
            Ok(u) => self.serialize_u64(u),
            Err(_) => self.serialize_i64(i128_to_i64(v)?),
        }
    }
    fn serialize_u8(self, v: u8) -> Result<Wrote, Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<Wrote, Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<Wrote, Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<Wrote, Error> {
        if self.safe && v > MAX_SAFE_INTEGER {
            self.out.push(b'"');
            int(self.out, v);
            self.out.push(b'"');
        } else {
            int(self.out, v);
        }
        Ok(Wrote::Other)
    }
    fn serialize_u128(self, v: u128) -> Result<Wrote, Error> {
        self.serialize_u64(u128_to_u64(v)?)
    }
    fn serialize_f32(self, v: f32) -> Result<Wrote, Error> {
        self.serialize_f64(v.into())
    }
    fn serialize_f64(self, v: f64) -> Result<Wrote, Error> {
        Ok(if float(self.out, v)? {
            Wrote::Other
        } else {
            Wrote::Null
        })
    }
    fn serialize_char(self, v: char) -> Result<Wrote, Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<Wrote, Error> {
        if is_address(v) {
            // Nothing to escape in `0x` and hex digits.
            self.out.push(b'"');
            self.out.extend_from_slice(v.as_bytes());
            self.out.push(b'"');
            return Ok(Wrote::Address);
        }
        json_str(self.out, v)?;
        Ok(Wrote::Other)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Wrote, Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
    fn serialize_none(self) -> Result<Wrote, Error> {
        Ok(Wrote::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Wrote, Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Wrote, Error> {
        Ok(Wrote::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Wrote, Error> {
        Ok(Wrote::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Wrote, Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Wrote, Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Wrote, Error> {
        use ser::SerializeMap;
        let mut obj = JsonObj::open(self.out, self.safe, b"}");
        obj.serialize_entry(variant, v)?;
        obj.end()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<JsonSeq<'a>, Error> {
        Ok(JsonSeq::open(self.out, self.safe, b"]"))
    }
    fn serialize_tuple(self, len: usize) -> Result<JsonSeq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<JsonSeq<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<JsonSeq<'a>, Error> {
        self.out.push(b'{');
        json_str(self.out, variant)?;
        self.out.push(b':');
        Ok(JsonSeq::open(self.out, self.safe, b"]}"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<JsonObj<'a>, Error> {
        Ok(JsonObj::open(self.out, self.safe, b"}"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<JsonObj<'a>, Error> {
        Ok(JsonObj::open(self.out, self.safe, b"}"))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<JsonObj<'a>, Error> {
        self.out.push(b'{');
        json_str(self.out, variant)?;
        self.out.push(b':');
        Ok(JsonObj::open(self.out, self.safe, b"}}"))
    }
}

/// A JSON array being written.
pub struct JsonSeq<'a> {
    out: &'a mut Vec<u8>,
    safe: bool,
    close: &'static [u8],
    /// Elements written so far.
    pub count: usize,
    /// Whether every element so far was an address string.
    pub all_addresses: bool,
}

impl<'a> JsonSeq<'a> {
    fn open(out: &'a mut Vec<u8>, safe: bool, close: &'static [u8]) -> Self {
        out.push(b'[');
        JsonSeq {
            out,
            safe,
            close,
            count: 0,
            all_addresses: true,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let wrote = element(self.out, self.safe, self.count, v)?;
        self.count += 1;
        self.all_addresses &= wrote == Wrote::Address;
        Ok(())
    }

    fn close(self) -> Result<Wrote, Error> {
        self.out.extend_from_slice(self.close);
        Ok(Wrote::Other)
    }
}

/// The four array traits of a serde serializer, all one `element` and `close`
/// (shared with the text form's lists).
macro_rules! seq_impls {
    ($ty:ident: $($t:ident :: $m:ident),*) => {$(
        impl ser::$t for $ty<'_> {
            type Ok = Wrote;
            type Error = Error;
            fn $m<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
                self.element(v)
            }
            fn end(self) -> Result<Wrote, Error> {
                self.close()
            }
        }
    )*};
}
pub(crate) use seq_impls;

seq_impls!(
    JsonSeq: SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// Write the array element number `index` (its comma first) of a JSON array.
pub(crate) fn element<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    safe: bool,
    index: usize,
    v: &T,
) -> Result<Wrote, Error> {
    if index > 0 {
        out.push(b',');
    }
    let wrote = v.serialize(Json { out, safe })?;
    if wrote == Wrote::Null {
        // A null element stays in an array, as in a `Value`.
        out.extend_from_slice(b"null");
    }
    Ok(wrote)
}

/// A JSON object being written; a field whose value is null is cut back out.
pub struct JsonObj<'a> {
    out: &'a mut Vec<u8>,
    safe: bool,
    close: &'static [u8],
    empty: bool,
    /// Where the entry being written began (before its comma), to cut a null back out.
    mark: usize,
}

impl<'a> JsonObj<'a> {
    fn open(out: &'a mut Vec<u8>, safe: bool, close: &'static [u8]) -> Self {
        out.push(b'{');
        let mark = out.len();
        JsonObj {
            out,
            safe,
            close,
            empty: true,
            mark,
        }
    }

    fn key_start(&mut self) {
        self.mark = self.out.len();
        if !self.empty {
            self.out.push(b',');
        }
    }

    fn value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.out.push(b':');
        let wrote = v.serialize(Json {
            out: self.out,
            safe: self.safe,
        })?;
        if wrote == Wrote::Null {
            self.out.truncate(self.mark);
        } else {
            self.empty = false;
        }
        Ok(())
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, v: &T) -> Result<(), Error> {
        self.key_start();
        json_str(self.out, key)?;
        self.value(v)
    }

    fn close(self) -> Result<Wrote, Error> {
        self.out.extend_from_slice(self.close);
        Ok(Wrote::Other)
    }
}

impl ser::SerializeMap for JsonObj<'_> {
    type Ok = Wrote;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key_start();
        let mut k = String::new();
        key.serialize(KeySer(&mut k))?;
        json_str(self.out, &k)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.value(v)
    }
    fn end(self) -> Result<Wrote, Error> {
        self.close()
    }
}

/// The two struct traits of a serde serializer, both one `field` and `close`.
macro_rules! struct_impls {
    ($ty:ident: $($t:ident),*) => {$(
        impl ser::$t for $ty<'_> {
            type Ok = Wrote;
            type Error = Error;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                v: &T,
            ) -> Result<(), Error> {
                self.field(key, v)
            }
            fn end(self) -> Result<Wrote, Error> {
                self.close()
            }
        }
    )*};
}
pub(crate) use struct_impls;

struct_impls!(JsonObj: SerializeStruct, SerializeStructVariant);

/// A map key as a `Value`'s map keeps it: a string, or an integer or char made one.
pub(crate) struct KeySer<'a>(pub &'a mut String);

impl ser::Serializer for KeySer<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.0.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.0.push_str(itoa::Buffer::new().format(v));
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.0.push_str(itoa::Buffer::new().format(v));
        Ok(())
    }
    fn serialize_f32(self, _: f32) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_f64(self, _: f64) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.push(v);
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.push_str(v);
        Ok(())
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.serialize_str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(key_error())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

fn key_error() -> Error {
    Error("key must be a string".into())
}

/// Write `s` as the text form quotes a string (Rust's `{:?}`).
pub(crate) fn debug_str(out: &mut Vec<u8>, s: &str) {
    let _ = write!(out, "{s:?}");
}
