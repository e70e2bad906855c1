//! BPF_PROG_INFO and BPF_BTF: the BPF programs loaded while recording and their type
//! information, so that samples in BPF code can be symbolised later.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::{binrw, Endian};
use serde::Serialize;

use crate::bounded;
use crate::codec::{u32_at, u64_at};
use crate::text::c_str_bytes as c_str;

/// BPF_PROG_INFO: `u32 count, count x program`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct BpfProgInfo {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(programs.len()))]
    count: u32,
    #[br(parse_with = bounded::vec, args(count as usize, 16))]
    /// The programs loaded while recording.
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
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The program's bpf_prog_info fields.
    pub info: Vec<u8>,
    #[br(parse_with = bounded::bytes, args(data_len as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The variable-size data bpf_prog_info points to (jited symbols, function info, tags).
    pub data: Vec<u8>,
}

impl BpfProgInfo {
    /// A BPF_PROG_INFO feature of these programs.
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
    /// The BTF objects.
    pub btfs: Vec<Btf>,
}

/// One BTF object.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Btf {
    /// The BTF object's id.
    pub id: u32,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(data.len()))]
    size: u32,
    /// The raw BTF blob (it starts with its own magic 0xeb9f).
    #[br(parse_with = bounded::bytes, args(size as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    pub data: Vec<u8>,
}

impl BpfBtf {
    /// A BPF_BTF feature of these objects.
    pub fn new(btfs: Vec<Btf>) -> Self {
        BpfBtf { btfs }
    }
}

/// Offsets in the kernel's `struct bpf_prog_info` of the fields perf reads.
pub mod prog_info {
    /// bpf_prog_info field offset: id.
    pub const ID: usize = 4;
    /// bpf_prog_info field offset: name.
    pub const NAME: usize = 64;
    /// bpf_prog_info field offset: nr_jited_ksyms.
    pub const NR_JITED_KSYMS: usize = 104;
    /// bpf_prog_info field offset: nr_jited_func_lens.
    pub const NR_JITED_FUNC_LENS: usize = 108;
    /// bpf_prog_info field offset: jited_ksyms.
    pub const JITED_KSYMS: usize = 112;
    /// bpf_prog_info field offset: jited_func_lens.
    pub const JITED_FUNC_LENS: usize = 120;
    /// bpf_prog_info field offset: btf_id.
    pub const BTF_ID: usize = 128;
    /// bpf_prog_info field offset: func_info_rec_size.
    pub const FUNC_INFO_REC_SIZE: usize = 132;
    /// bpf_prog_info field offset: func_info.
    pub const FUNC_INFO: usize = 136;
    /// bpf_prog_info field offset: nr_func_info.
    pub const NR_FUNC_INFO: usize = 144;
    /// bpf_prog_info field offset: nr_prog_tags.
    pub const NR_PROG_TAGS: usize = 180;
    /// bpf_prog_info field offset: prog_tags.
    pub const PROG_TAGS: usize = 184;
}

/// `PERF_BPIL_*` bits of `arrays`: which pointer fields hold offsets into `data`.
pub const BPIL_JITED_KSYMS: u32 = 3;
/// See [`BPIL_JITED_KSYMS`].
pub const BPIL_JITED_FUNC_LENS: u32 = 4;
/// See [`BPIL_JITED_KSYMS`].
pub const BPIL_FUNC_INFO: u32 = 5;
/// See [`BPIL_JITED_KSYMS`].
pub const BPIL_PROG_TAGS: u32 = 8;

/// A typed view of one program's `struct bpf_prog_info` and data, read in the
/// recording's byte order ([`BpfProgram::view`]). perf zero-fills an info shorter than
/// its own `struct bpf_prog_info`, so missing fields read as 0.
pub struct ProgInfoView<'a> {
    p: &'a BpfProgram,
    endian: Endian,
}

impl BpfProgram {
    /// Read this program's info fields in the recording's byte order `endian`.
    pub fn view(&self, endian: Endian) -> ProgInfoView<'_> {
        ProgInfoView { p: self, endian }
    }
}

impl<'a> ProgInfoView<'a> {
    /// A byte-array field of `struct bpf_prog_info` (zeros past what the file has).
    pub fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0u8; N];
        if let Some(s) = self.p.info.get(at..at + N) {
            b.copy_from_slice(s);
        }
        b
    }

    /// A field of `struct bpf_prog_info`; 0 past the end of what the file has (an
    /// older kernel's shorter struct).
    pub fn u32(&self, at: usize) -> u32 {
        u32_at(&self.p.info, at, self.endian).unwrap_or(0)
    }

    /// A u64 field of `struct bpf_prog_info`; 0 past the end of what the file has.
    pub fn u64(&self, at: usize) -> u64 {
        u64_at(&self.p.info, at, self.endian).unwrap_or(0)
    }

    /// Array `bit` (its pointer field at `field`): `n` elements of `size` bytes in `data`.
    pub fn array(&self, bit: u32, field: usize, n: usize, size: usize) -> Option<&'a [u8]> {
        if self.p.arrays & (1 << bit) == 0 {
            return None;
        }
        let start = usize::try_from(self.u64(field)).ok()?;
        self.p
            .data
            .get(start..start.checked_add(n.checked_mul(size)?)?)
    }

    /// Element `i` of a u32 array returned by [`Self::array`].
    pub fn data_u32(&self, bytes: &[u8], i: usize) -> u32 {
        u32_at(bytes, i * 4, self.endian).expect("the array holds element i")
    }

    /// Element `i` of a u64 array returned by [`Self::array`].
    pub fn data_u64(&self, bytes: &[u8], i: usize) -> u64 {
        u64_at(bytes, i * 8, self.endian).expect("the array holds element i")
    }
}

/// Just enough of a BTF object to name a type: where each type record starts, and the
/// string section.
pub struct BtfTypes<'a> {
    types: Vec<usize>,
    data: &'a [u8],
    strs: &'a [u8],
    endian: Endian,
}

impl<'a> BtfTypes<'a> {
    /// libbpf's `btf__new` for a standalone object; `None` where libbpf would fail.
    pub fn parse(data: &'a [u8]) -> Option<Self> {
        // The magic 0xeb9f in the producer's order says the order.
        let endian = match data.get(0..2)? {
            [0x9f, 0xeb] => Endian::Little,
            [0xeb, 0x9f] => Endian::Big,
            _ => return None,
        };
        let rd = |at: usize| u32_at(data, at, endian);
        let hdr_len = rd(4)? as usize;
        let (type_off, type_len) = (rd(8)? as usize, rd(12)? as usize);
        let (str_off, str_len) = (rd(16)? as usize, rd(20)? as usize);
        let types_at = hdr_len.checked_add(type_off)?;
        let types_end = types_at.checked_add(type_len)?;
        let strs_at = hdr_len.checked_add(str_off)?;
        let strs = data.get(strs_at..strs_at.checked_add(str_len)?)?;
        data.get(types_at..types_end)?;
        let mut btf = BtfTypes {
            types: Vec::new(),
            data,
            strs,
            endian,
        };
        let mut at = types_at;
        while at < types_end {
            let info = btf.u32(at + 4)?;
            let vlen = (info & 0xffff) as usize;
            let extra = match (info >> 24) & 0x1f {
                2 | 7..=12 | 16 | 18 => 0,
                1 | 14 | 17 => 4,
                3 => 12,
                4 | 5 | 15 | 19 => vlen * 12,
                6 | 13 => vlen * 8,
                _ => return None,
            };
            btf.types.push(at);
            at += 12 + extra;
        }
        (at == types_end).then_some(btf)
    }

    fn u32(&self, at: usize) -> Option<u32> {
        u32_at(self.data, at, self.endian)
    }

    /// The name of type `id` (1-based; 0 is void, which has none).
    pub fn type_name(&self, id: u32) -> Option<String> {
        let name_off = match id {
            0 => 0,
            id => self.u32(*self.types.get(id as usize - 1)?)? as usize,
        };
        let s = self.strs.get(name_off..)?;
        Some(String::from_utf8_lossy(c_str(s)).into_owned())
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

#[cfg(test)]
mod btf_tests {
    use super::*;

    fn btf_with_func(name: &str) -> Vec<u8> {
        let mut strs = vec![0u8];
        strs.extend_from_slice(name.as_bytes());
        strs.push(0);
        let mut types = Vec::new();
        // [1] INT "" size 4, [2] FUNC name_off 1.
        for w in [0u32, 1 << 24, 4, 0x20] {
            types.extend_from_slice(&w.to_le_bytes());
        }
        for w in [1u32, 12 << 24, 0] {
            types.extend_from_slice(&w.to_le_bytes());
        }
        let mut b = vec![0x9f, 0xeb, 1, 0];
        for w in [
            24u32,
            0,
            types.len() as u32,
            types.len() as u32,
            strs.len() as u32,
        ] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&types);
        b.extend_from_slice(&strs);
        b
    }

    #[test]
    fn btf_names_types() {
        let data = btf_with_func("fentry_x");
        let btf = BtfTypes::parse(&data).unwrap();
        assert_eq!(btf.type_name(2).as_deref(), Some("fentry_x"));
        assert_eq!(btf.type_name(1).as_deref(), Some(""));
        assert!(btf.type_name(3).is_none());
        assert!(BtfTypes::parse(&data[..30]).is_none());
    }
}
