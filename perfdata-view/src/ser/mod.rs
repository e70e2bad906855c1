//! The serde serializer of every view's JSON, writing straight into a byte buffer, with
//! no `serde_json::Value` in between: building a `Value` per record (map inserts, key
//! hashing, an allocation per field) was most of `dump`'s time. `dump`'s text form
//! ([`crate::dump`]) writes its scalars and lists with it too.
//!
//! It writes what serde_json writes, and more: addresses the models mark
//! ([`perfdata_core::mark::ADDRESS`]) as `"0x..."` strings, opaque bytes
//! ([`perfdata_core::mark::bytes`]) as lowercase hex strings, integers above 2^53 as
//! strings in the `--json` form, null fields of objects left out where [`Form`] says
//! (dump's absent options). A field turning out null is only known once its value is
//! serialised, so its key is written first and the buffer cut back when nothing
//! followed: hence a `Vec<u8>`, not any writer.

use std::fmt;
use std::io::Write as _;

use serde::ser::{self, Serialize};

pub(crate) use perfdata_core::mark::ADDRESS;

/// The largest integer a double holds exactly, and every smaller one too
/// (JavaScript's `Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

/// `addr` as [`crate::json::addr_string`] writes it (`0x` and lowercase hex), in `buf`: formatted on the stack, as `dump`
/// writes millions of these (a `format!` per address was 6% of `dump --json`,
/// profiled).
pub fn addr_str(addr: u64, buf: &mut [u8; 18]) -> &str {
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

/// Append the lowercase hex of `bytes` to `out`.
fn push_hex(out: &mut Vec<u8>, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(2 * bytes.len());
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 0xf)]);
    }
}

/// Lowercase hex of `bytes`, as the views print opaque bytes.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(2 * bytes.len());
    push_hex(&mut out, bytes);
    // Only ASCII was written.
    String::from_utf8(out).unwrap_or_default()
}

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

/// Whether `s` is an address as [`crate::json::addr_string`] writes it.
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

/// How [`Json`] writes: the `--json` form makes big integers strings (`safe`); the
/// text form's lists keep exact numbers. `dump` leaves null fields out of objects; the
/// other views keep them (`nulls`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Form {
    /// Whether integers a double cannot hold become decimal strings.
    pub safe: bool,
    /// Whether an object's null fields are written (`"key":null`) rather than left out.
    pub nulls: bool,
}

impl Form {
    /// `dump --json`: big integers as strings, null fields left out.
    pub const DUMP: Form = Form {
        safe: true,
        nulls: false,
    };
    /// `dump`'s text form and its `Value`s: exact numbers, null fields left out.
    pub const DUMP_EXACT: Form = Form {
        safe: false,
        nulls: false,
    };
    /// Every other `--json` document: big integers as strings, nulls kept.
    pub const DOCUMENT: Form = Form {
        safe: true,
        nulls: true,
    };
    /// A `Value` as serde_json makes one (exact numbers, nulls kept), addresses as
    /// `"0x..."`.
    pub const EXACT: Form = Form {
        safe: false,
        nulls: true,
    };
}

/// JSON, written as [`Form`] says.
pub struct Json<'a> {
    /// Where the JSON goes.
    pub out: &'a mut Vec<u8>,
    /// How numbers and nulls are written.
    pub form: Form,
    /// Whether the value is an address ([`perfdata_core::mark::ADDRESS`]).
    pub addr: bool,
}

impl<'a> Json<'a> {
    /// A serializer of one value into `out`.
    pub fn new(out: &'a mut Vec<u8>, form: Form) -> Self {
        Json {
            out,
            form,
            addr: false,
        }
    }
}

/// The methods of a serde serializer that widen a value to another kind: the
/// narrower integers to 64 bits, `f32` to `f64`, a `char` to a `str`.
macro_rules! widening {
    ($ok:ty) => {
        fn serialize_i8(self, v: i8) -> Result<$ok, Error> {
            self.serialize_i64(v.into())
        }
        fn serialize_i16(self, v: i16) -> Result<$ok, Error> {
            self.serialize_i64(v.into())
        }
        fn serialize_i32(self, v: i32) -> Result<$ok, Error> {
            self.serialize_i64(v.into())
        }
        fn serialize_u8(self, v: u8) -> Result<$ok, Error> {
            self.serialize_u64(v.into())
        }
        fn serialize_u16(self, v: u16) -> Result<$ok, Error> {
            self.serialize_u64(v.into())
        }
        fn serialize_u32(self, v: u32) -> Result<$ok, Error> {
            self.serialize_u64(v.into())
        }
        fn serialize_f32(self, v: f32) -> Result<$ok, Error> {
            self.serialize_f64(v.into())
        }
        fn serialize_char(self, v: char) -> Result<$ok, Error> {
            self.serialize_str(v.encode_utf8(&mut [0; 4]))
        }
    };
}
pub(crate) use widening;

/// The methods the JSON and the text serializer share: absent values are
/// [`Wrote::Null`], options and newtypes their inner value (an address newtype,
/// [`ADDRESS`], sets `addr` for it), unit variants their name, tuples lists.
macro_rules! value_forms {
    ($seq:ty) => {
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
            name: &'static str,
            v: &T,
        ) -> Result<Wrote, Error> {
            let addr = name == $crate::ser::ADDRESS;
            v.serialize(Self { addr, ..self })
        }
        fn serialize_tuple(self, len: usize) -> Result<$seq, Error> {
            self.serialize_seq(Some(len))
        }
        fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<$seq, Error> {
            self.serialize_seq(Some(len))
        }
    };
}
pub(crate) use value_forms;

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

    widening!(Wrote);
    value_forms!(JsonSeq<'a>);

    fn serialize_bool(self, v: bool) -> Result<Wrote, Error> {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(Wrote::Other)
    }
    fn serialize_i64(self, v: i64) -> Result<Wrote, Error> {
        if self.form.safe && v.unsigned_abs() > MAX_SAFE_INTEGER {
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
    fn serialize_u64(self, v: u64) -> Result<Wrote, Error> {
        if self.addr {
            return self.serialize_str(addr_str(v, &mut [0; 18]));
        }
        if self.form.safe && v > MAX_SAFE_INTEGER {
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
    fn serialize_f64(self, v: f64) -> Result<Wrote, Error> {
        Ok(if float(self.out, v)? {
            Wrote::Other
        } else {
            Wrote::Null
        })
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
        // Opaque bytes ([`perfdata_core::mark::bytes`]) as lowercase hex: nothing to
        // escape.
        self.out.push(b'"');
        push_hex(self.out, v);
        self.out.push(b'"');
        Ok(Wrote::Other)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Wrote, Error> {
        use ser::SerializeMap;
        let mut obj = JsonObj::open(self.out, self.form, b"}");
        obj.serialize_entry(variant, v)?;
        obj.end()
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<JsonSeq<'a>, Error> {
        Ok(JsonSeq::open(self.out, self.form, b"]"))
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
        Ok(JsonSeq::open(self.out, self.form, b"]}"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<JsonObj<'a>, Error> {
        Ok(JsonObj::open(self.out, self.form, b"}"))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<JsonObj<'a>, Error> {
        Ok(JsonObj::open(self.out, self.form, b"}"))
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
        Ok(JsonObj::open(self.out, self.form, b"}}"))
    }
}

/// A JSON array being written.
pub struct JsonSeq<'a> {
    out: &'a mut Vec<u8>,
    form: Form,
    close: &'static [u8],
    /// Elements written so far.
    pub count: usize,
    /// Whether every element so far was an address string.
    pub all_addresses: bool,
}

impl<'a> JsonSeq<'a> {
    fn open(out: &'a mut Vec<u8>, form: Form, close: &'static [u8]) -> Self {
        out.push(b'[');
        JsonSeq {
            out,
            form,
            close,
            count: 0,
            all_addresses: true,
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let wrote = element(self.out, self.form, self.count, v)?;
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
    form: Form,
    index: usize,
    v: &T,
) -> Result<Wrote, Error> {
    if index > 0 {
        out.push(b',');
    }
    let wrote = v.serialize(Json::new(out, form))?;
    if wrote == Wrote::Null {
        // A null element stays in an array, as in a `Value`.
        out.extend_from_slice(b"null");
    }
    Ok(wrote)
}

/// A JSON object being written; a field whose value is null is cut back out unless
/// the form keeps nulls.
pub struct JsonObj<'a> {
    out: &'a mut Vec<u8>,
    form: Form,
    close: &'static [u8],
    empty: bool,
    /// Where the entry being written began (before its comma), to cut a null back out.
    mark: usize,
}

impl<'a> JsonObj<'a> {
    fn open(out: &'a mut Vec<u8>, form: Form, close: &'static [u8]) -> Self {
        out.push(b'{');
        let mark = out.len();
        JsonObj {
            out,
            form,
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
        let wrote = v.serialize(Json::new(self.out, self.form))?;
        if wrote != Wrote::Null {
            self.empty = false;
        } else if self.form.nulls {
            self.out.extend_from_slice(b"null");
            self.empty = false;
        } else {
            self.out.truncate(self.mark);
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

mod key;
pub(crate) use key::KeySer;

struct_impls!(JsonObj: SerializeStruct, SerializeStructVariant);

/// Write `s` as the text form quotes a string (Rust's `{:?}`).
pub(crate) fn debug_str(out: &mut Vec<u8>, s: &str) {
    let _ = write!(out, "{s:?}");
}
