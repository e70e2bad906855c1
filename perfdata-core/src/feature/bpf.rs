//! BPF_PROG_INFO and BPF_BTF: the BPF programs loaded while recording and their type
//! information, so that samples in BPF code can be symbolised later.

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

/// BPF_PROG_INFO: `u32 count, count x program`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct BpfProgInfo {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(programs.len()))]
    count: u32,
    #[br(parse_with = bounded::vec, args(count as usize, 16))]
    pub programs: Vec<BpfProgram>,
}

/// One program: perf's `struct perf_bpil` as `write_bpf_prog_info` writes it,
/// `{u32 info_len, u32 data_len, u64 arrays, u8 info[info_len], u8 data[data_len]}`.
///
/// `info` is the kernel's `struct bpf_prog_info` (its size depends on the kernel headers
/// perf was built with, hence `info_len`); `data` holds the arrays it points into (jited
/// code, line info, function info...), with the pointers in `info` rewritten as offsets
/// into `data`. Both are kept as bytes in the producer's byte order: perf itself refuses
/// to interpret them from a machine of the other order.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BpfProgram {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(info.len()))]
    info_len: u32,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(data.len()))]
    data_len: u32,
    /// Bit i set: array i of `bpf_prog_info` is present in `data` (libbpf's
    /// `BPF_PROG_INFO_*` numbering).
    pub arrays: u64,
    #[br(parse_with = bounded::bytes, args(info_len as usize))]
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub info: Vec<u8>,
    #[br(parse_with = bounded::bytes, args(data_len as usize))]
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub data: Vec<u8>,
}

impl BpfProgInfo {
    pub fn new(programs: Vec<BpfProgram>) -> Self {
        BpfProgInfo { programs }
    }
}

/// BPF_BTF: `u32 count, count x {u32 id, u32 size, u8 data[size]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct BpfBtf {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(btfs.len()))]
    count: u32,
    #[br(parse_with = bounded::vec, args(count as usize, 8))]
    pub btfs: Vec<Btf>,
}

/// One BTF object.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Btf {
    pub id: u32,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(data.len()))]
    size: u32,
    /// The raw BTF blob (it starts with its own magic 0xeb9f).
    #[br(parse_with = bounded::bytes, args(size as usize))]
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub data: Vec<u8>,
}

impl BpfBtf {
    pub fn new(btfs: Vec<Btf>) -> Self {
        BpfBtf { btfs }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    #[test]
    fn prog_info() {
        let mut b = Bytes::le();
        b.u32(2);
        b.u32(8).u32(3).u64(0b101).raw(&[1; 8]).raw(&[9, 8, 7]);
        b.u32(4).u32(0).u64(0).raw(&[2; 4]);
        let p: BpfProgInfo = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(p.programs.len(), 2);
        assert_eq!(p.programs[0].arrays, 0b101);
        assert_eq!(p.programs[0].info, vec![1; 8]);
        assert_eq!(p.programs[0].data, vec![9, 8, 7]);
        assert_eq!(p.programs[1].info.len(), 4);
        assert!(p.programs[1].data.is_empty());
        same_in_big_endian(&p, ());
        let none: BpfProgInfo = round_trip(&0u32.to_le_bytes(), Endian::Little, ());
        assert!(none.programs.is_empty());
    }

    #[test]
    fn prog_info_lengths_past_the_end_are_errors() {
        let mut b = Bytes::le();
        b.u32(1).u32(u32::MAX).u32(0).u64(0);
        assert!(crate::codec::decode::<BpfProgInfo>(&b.v, Endian::Little, (), 0, "t").is_err());
    }

    #[test]
    fn btf() {
        let mut b = Bytes::le();
        b.u32(1).u32(77).u32(4).raw(&[0x9f, 0xeb, 1, 0]);
        let t: BpfBtf = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(t.btfs[0].id, 77);
        assert_eq!(t.btfs[0].data, vec![0x9f, 0xeb, 1, 0]);
        same_in_big_endian(&t, ());
    }
}
