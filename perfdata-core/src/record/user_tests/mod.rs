//! Hand-built records of perf's own types (65 to 86): decoded field values, then the
//! encoding checked against the input bytes. The byte builder and round-trip helpers are
//! here; the tests are grouped by the kind of record.

mod general;
mod headers;
mod sched;
mod stat;

use binrw::Endian;

use super::*;

/// Builds a record's bytes in either byte order.
struct Rec {
    endian: Endian,
    body: Vec<u8>,
}

impl Rec {
    fn new(endian: Endian) -> Self {
        Rec {
            endian,
            body: Vec::new(),
        }
    }
    fn le() -> Self {
        Self::new(Endian::Little)
    }
    fn u8(mut self, v: u8) -> Self {
        self.body.push(v);
        self
    }
    fn u16(mut self, v: u16) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn bytes(mut self, b: &[u8]) -> Self {
        self.body.extend_from_slice(b);
        self
    }
    /// `s` NUL-padded to exactly `len` bytes.
    fn str(self, s: &str, len: usize) -> Self {
        let mut b = s.as_bytes().to_vec();
        b.resize(len, 0);
        self.bytes(&b)
    }
    /// The whole record: header (type, misc, size) then the body.
    fn record(self, ty: u32, misc: u16) -> Vec<u8> {
        let size = (8 + self.body.len()) as u16;
        let mut out = Rec::new(self.endian).u32(ty).u16(misc).u16(size).body;
        out.extend_from_slice(&self.body);
        out
    }
}

/// Decode `bytes`, check it encodes back to them, and return the record.
fn round_trip(bytes: &[u8], endian: Endian) -> Record {
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian,
        events: &events,
    };
    let r = Record::decode(bytes, &[], 0, &ctx).unwrap();
    assert_eq!(r.encode(endian).unwrap(), bytes, "{:?}", r.body);
    r
}

fn decode_err(bytes: &[u8]) -> crate::Error {
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian: Endian::Little,
        events: &events,
    };
    Record::decode(bytes, &[], 64, &ctx).unwrap_err()
}
