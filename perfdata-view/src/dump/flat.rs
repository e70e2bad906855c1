//! The text form's serializer: ` key=value` pairs, nested objects as dotted keys (the
//! fields of an object under the key `body` with no prefix), strings quoted as Rust's
//! `{:?}` unless they are addresses, lists as exact-number JSON (`[0x..,0x..]` bare when
//! every element is an address), null fields left out: what the text writer printed of
//! a `serde_json::Value`, without building one.

use serde::ser::{self, Serialize};

use crate::ser::{
    addr_str, debug_str, element, is_address, seq_impls, struct_impls, value_forms, widening,
    Error, Form, Json, KeySer, Wrote,
};

/// A value printed as ` KEY=value`, `key` its whole dotted key.
pub struct Flat<'a> {
    /// Where the text goes.
    pub out: &'a mut Vec<u8>,
    /// The value's key; objects push their fields' names onto it and take them off.
    pub key: &'a mut String,
    /// A field of this object left out (the RAW bytes of a decoded tracepoint sample).
    pub skip: Option<&'static str>,
    /// Whether the value is an address ([`perfdata_core::mark::ADDRESS`]).
    pub addr: bool,
}

/// Run `f` with `name` pushed onto `key` as a field of it (`key.name`, or `name` alone
/// under `body` or at the top), then take it off again.
fn with_key<R>(key: &mut String, name: &str, f: impl FnOnce(&mut String) -> R) -> R {
    let saved = key.len();
    let was_body = key == "body";
    if was_body {
        key.clear();
    } else if !key.is_empty() {
        key.push('.');
    }
    key.push_str(name);
    let r = f(key);
    if was_body {
        key.clear();
        key.push_str("body");
    } else {
        key.truncate(saved);
    }
    r
}

/// Write `v` as the field `name` of the value at `key`.
fn nested<T: Serialize + ?Sized>(
    out: &mut Vec<u8>,
    key: &mut String,
    name: &str,
    v: &T,
) -> Result<Wrote, Error> {
    with_key(key, name, |key| {
        v.serialize(Flat {
            out,
            key,
            skip: None,
            addr: false,
        })
    })
}

fn lead(out: &mut Vec<u8>, key: &str) {
    out.push(b' ');
    out.extend_from_slice(key.as_bytes());
    out.push(b'=');
}

impl<'a> Flat<'a> {
    /// A scalar written as JSON writes it with exact numbers; nothing for a null.
    fn scalar(self, f: impl FnOnce(Json<'_>) -> Result<Wrote, Error>) -> Result<Wrote, Error> {
        let mark = self.out.len();
        lead(self.out, self.key);
        let wrote = f(Json::new(self.out, Form::DUMP_EXACT))?;
        if wrote == Wrote::Null {
            self.out.truncate(mark);
        }
        Ok(wrote)
    }

    fn seq(self, variant: Option<&'static str>) -> FlatSeq<'a> {
        match variant {
            Some(v) => with_key(self.key, v, |k| lead(self.out, k)),
            None => lead(self.out, self.key),
        }
        let start = self.out.len();
        self.out.push(b'[');
        FlatSeq {
            out: self.out,
            start,
            count: 0,
            all_addresses: true,
        }
    }

    fn obj(self, variant: Option<&'static str>) -> FlatObj<'a> {
        let mut obj = FlatObj {
            out: self.out,
            key: self.key,
            skip: self.skip,
            variant: None,
            pending: String::new(),
        };
        if let Some(v) = variant {
            // The variant's name is one more key level, taken off at the end.
            let saved = (obj.key.len(), obj.key == "body");
            with_key_push(obj.key, v);
            obj.variant = Some(saved);
        }
        obj
    }
}

/// [`with_key`]'s push alone (for a struct variant's level, popped by [`key_pop`]).
fn with_key_push(key: &mut String, name: &str) {
    if key == "body" {
        key.clear();
    } else if !key.is_empty() {
        key.push('.');
    }
    key.push_str(name);
}

fn key_pop(key: &mut String, (len, was_body): (usize, bool)) {
    if was_body {
        key.clear();
        key.push_str("body");
    } else {
        key.truncate(len);
    }
}

impl<'a> ser::Serializer for Flat<'a> {
    type Ok = Wrote;
    type Error = Error;
    type SerializeSeq = FlatSeq<'a>;
    type SerializeTuple = FlatSeq<'a>;
    type SerializeTupleStruct = FlatSeq<'a>;
    type SerializeTupleVariant = FlatSeq<'a>;
    type SerializeMap = FlatObj<'a>;
    type SerializeStruct = FlatObj<'a>;
    type SerializeStructVariant = FlatObj<'a>;

    widening!(Wrote);
    value_forms!(FlatSeq<'a>);

    fn serialize_bool(self, v: bool) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_bool(j, v))
    }
    fn serialize_i64(self, v: i64) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_i64(j, v))
    }
    fn serialize_i128(self, v: i128) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_i128(j, v))
    }
    fn serialize_u64(self, v: u64) -> Result<Wrote, Error> {
        if self.addr {
            return self.serialize_str(addr_str(v, &mut [0; 18]));
        }
        self.scalar(|j| ser::Serializer::serialize_u64(j, v))
    }
    fn serialize_u128(self, v: u128) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_u128(j, v))
    }
    fn serialize_f64(self, v: f64) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_f64(j, v))
    }
    fn serialize_str(self, v: &str) -> Result<Wrote, Error> {
        lead(self.out, self.key);
        if is_address(v) {
            self.out.extend_from_slice(v.as_bytes());
            Ok(Wrote::Address)
        } else {
            debug_str(self.out, v);
            Ok(Wrote::Other)
        }
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Wrote, Error> {
        self.scalar(|j| ser::Serializer::serialize_bytes(j, v))
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<Wrote, Error> {
        nested(self.out, self.key, variant, v)?;
        Ok(Wrote::Other)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<FlatSeq<'a>, Error> {
        Ok(self.seq(None))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<FlatSeq<'a>, Error> {
        Ok(self.seq(Some(variant)))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<FlatObj<'a>, Error> {
        Ok(self.obj(None))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<FlatObj<'a>, Error> {
        Ok(self.obj(None))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<FlatObj<'a>, Error> {
        Ok(self.obj(Some(variant)))
    }
}

/// A list: ` key=` then exact-number JSON, its quotes dropped when all are addresses.
pub struct FlatSeq<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
    count: usize,
    all_addresses: bool,
}

impl FlatSeq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let wrote = element(self.out, Form::DUMP_EXACT, self.count, v)?;
        self.count += 1;
        self.all_addresses &= wrote == Wrote::Address;
        Ok(())
    }

    fn close(self) -> Result<Wrote, Error> {
        self.out.push(b']');
        if self.count > 0 && self.all_addresses {
            // Addresses hold no quote of their own: every quote here is one of theirs.
            let mut i = self.start;
            for j in self.start..self.out.len() {
                let b = self.out[j];
                if b != b'"' {
                    self.out[i] = b;
                    i += 1;
                }
            }
            self.out.truncate(i);
        }
        Ok(Wrote::Other)
    }
}

seq_impls!(
    FlatSeq: SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// An object: each field printed under its dotted key.
pub struct FlatObj<'a> {
    out: &'a mut Vec<u8>,
    key: &'a mut String,
    skip: Option<&'static str>,
    /// A struct variant's level, to take off the key at the end.
    variant: Option<(usize, bool)>,
    /// A map's key, until its value comes.
    pending: String,
}

impl FlatObj<'_> {
    fn field<T: Serialize + ?Sized>(&mut self, name: &str, v: &T) -> Result<(), Error> {
        if self.skip == Some(name) {
            return Ok(());
        }
        nested(self.out, self.key, name, v)?;
        Ok(())
    }

    fn close(self) -> Result<Wrote, Error> {
        if let Some(saved) = self.variant {
            key_pop(self.key, saved);
        }
        Ok(Wrote::Other)
    }
}

impl ser::SerializeMap for FlatObj<'_> {
    type Ok = Wrote;
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.pending.clear();
        key.serialize(KeySer(&mut self.pending))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        let name = std::mem::take(&mut self.pending);
        self.field(&name, v)
    }
    fn end(self) -> Result<Wrote, Error> {
        self.close()
    }
}

struct_impls!(FlatObj: SerializeStruct, SerializeStructVariant);
