//! `struct perf_header_string` and string lists, kept byte for byte.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

/// `{u32 len; char str[len]}`: a NUL-terminated string padded with zeros.
///
/// perf pads to a multiple of 64 and `len` counts the padding; other writers pad
/// differently (quipper to 8). `bytes` holds all `len` bytes as read, so writing it back
/// reproduces the section exactly.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PerfString {
    #[bw(try_calc = u32::try_from(bytes.len()))]
    len: u32,
    #[br(parse_with = bounded::bytes, args(len as usize))]
    /// The string with its NUL and padding, as stored.
    pub bytes: Vec<u8>,
}

impl PerfString {
    /// A string padded as perf pads it: NUL-terminated, then zeros to a multiple of 64.
    pub fn new(s: &str) -> Self {
        let padded = (s.len() + 1).div_ceil(64) * 64;
        let mut bytes = s.as_bytes().to_vec();
        bytes.resize(padded, 0);
        PerfString { bytes }
    }
}

crate::text::c_string_text!(PerfString);

/// `{u32 nr; perf_header_string strings[nr]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct StringList {
    #[bw(try_calc = u32::try_from(strings.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 4))]
    /// The strings, in order.
    pub strings: Vec<PerfString>,
}

impl StringList {
    /// A string list of these strings.
    pub fn new(strings: Vec<PerfString>) -> Self {
        StringList { strings }
    }

    /// The strings as text.
    pub fn to_strings(&self) -> Vec<String> {
        self.strings.iter().map(PerfString::as_str_lossy).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, encode};
    use binrw::Endian;

    #[test]
    fn keeps_len_and_padding() {
        // quipper-style: padded to 8, not 64.
        let mut raw = 8u32.to_le_bytes().to_vec();
        raw.extend_from_slice(b"host\0\0\0\0");
        let s: PerfString = decode(&raw, Endian::Little, (), 0, "test").unwrap();
        assert_eq!(s.as_str_lossy(), "host");
        assert_eq!(encode(&s, Endian::Little, ()).unwrap(), raw);
        assert_eq!(PerfString::new("x").bytes.len(), 64);
    }

    #[test]
    fn corrupt_len_does_not_allocate() {
        let raw = u32::MAX.to_le_bytes();
        let r: crate::Result<PerfString> =
            decode(&raw, Endian::Little, (), 100, "feature HOSTNAME");
        let e = r.unwrap_err();
        assert_eq!(e.offset(), Some(104));
    }
}
