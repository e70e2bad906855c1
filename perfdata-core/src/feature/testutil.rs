//! Test helpers: build feature bytes by hand in either byte order, and check that a model
//! decodes them and encodes them back unchanged.

use binrw::{BinRead, BinWrite, Endian};

use crate::codec;

/// A byte buffer written field by field in one byte order.
pub struct Bytes {
    pub v: Vec<u8>,
    endian: Endian,
}

impl Bytes {
    pub fn new(endian: Endian) -> Self {
        Bytes {
            v: Vec::new(),
            endian,
        }
    }

    pub fn le() -> Self {
        Bytes::new(Endian::Little)
    }

    pub fn u8(&mut self, x: u8) -> &mut Self {
        self.v.push(x);
        self
    }

    pub fn u16(&mut self, x: u16) -> &mut Self {
        let b = match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        };
        self.raw(&b)
    }

    pub fn u32(&mut self, x: u32) -> &mut Self {
        let b = match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        };
        self.raw(&b)
    }

    pub fn u64(&mut self, x: u64) -> &mut Self {
        let b = match self.endian {
            Endian::Little => x.to_le_bytes(),
            Endian::Big => x.to_be_bytes(),
        };
        self.raw(&b)
    }

    pub fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.v.extend_from_slice(b);
        self
    }

    /// A perf_header_string of `len` bytes: `s`, a NUL, zeros.
    pub fn str_padded(&mut self, s: &str, len: usize) -> &mut Self {
        assert!(len > s.len());
        self.u32(len as u32);
        let mut b = s.as_bytes().to_vec();
        b.resize(len, 0);
        self.raw(&b)
    }

    /// A perf_header_string padded as perf pads it (to 64).
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.str_padded(s, (s.len() + 1).div_ceil(64) * 64)
    }

    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.v)
    }
}

/// Decode `bytes` as a `T` that must use all of them, check that encoding gives them back,
/// and return the model.
pub fn round_trip<T>(bytes: &[u8], endian: Endian, args: <T as BinRead>::Args<'_>) -> T
where
    T: BinRead + BinWrite,
    for<'a> <T as BinWrite>::Args<'a>: Default,
{
    let (value, used) = codec::decode_prefix::<T>(bytes, endian, args, 0, "test").unwrap();
    assert_eq!(used, bytes.len(), "the model left bytes unread");
    assert_eq!(
        codec::encode(&value, endian, Default::default()).unwrap(),
        bytes,
        "re-encoding changed the bytes"
    );
    value
}

/// Encode a little-endian model as big-endian, decode that, and check the model is the same
/// (and that big-endian bytes round-trip too).
pub fn same_in_big_endian<T>(value: &T, args: <T as BinRead>::Args<'_>)
where
    T: BinRead + BinWrite + PartialEq + std::fmt::Debug,
    for<'a> <T as BinWrite>::Args<'a>: Default,
{
    let be = codec::encode(value, Endian::Big, Default::default()).unwrap();
    let back: T = round_trip(&be, Endian::Big, args);
    assert_eq!(&back, value);
}
