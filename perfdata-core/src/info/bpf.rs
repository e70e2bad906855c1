//! BPF_PROG_INFO and BPF_BTF: perf's `print_bpf_prog_info` (through
//! `__bpf_event__print_bpf_prog_info` and `synthesize_bpf_prog_name`) and `print_bpf_btf`.
//!
//! Each program is the kernel's `struct bpf_prog_info` followed by the arrays it points
//! into, the pointers stored as offsets into those arrays. A program's name is
//! "bpf_prog_<tag>_<function>", the function name coming from the BTF object the program
//! refers to (BPF_BTF), else from the info's own 16-byte name.

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::codec::{u32_at, u64_at};
use crate::feature::{BpfBtf, BpfProgInfo, BpfProgram, Feature, FeatureId};
use crate::text::c_str_bytes as c_str;
use crate::Endian;

use super::Ctx;

/// Offsets in `struct bpf_prog_info` of the fields perf's printer reads.
mod off {
    pub const ID: usize = 4;
    pub const NAME: usize = 64;
    pub const NR_JITED_KSYMS: usize = 104;
    pub const NR_JITED_FUNC_LENS: usize = 108;
    pub const JITED_KSYMS: usize = 112;
    pub const JITED_FUNC_LENS: usize = 120;
    pub const BTF_ID: usize = 128;
    pub const FUNC_INFO_REC_SIZE: usize = 132;
    pub const FUNC_INFO: usize = 136;
    pub const NR_PROG_TAGS: usize = 180;
    pub const PROG_TAGS: usize = 184;
}

/// `PERF_BPIL_*` bits of `arrays`: which pointer fields hold offsets into `data`.
const BPIL_JITED_KSYMS: u32 = 3;
const BPIL_JITED_FUNC_LENS: u32 = 4;
const BPIL_FUNC_INFO: u32 = 5;
const BPIL_PROG_TAGS: u32 = 8;

/// A program's info and data read in the recording's byte order. perf zero-fills an info
/// shorter than its own `struct bpf_prog_info`, so missing fields read as 0.
struct Prog<'a> {
    p: &'a BpfProgram,
    endian: Endian,
}

impl<'a> Prog<'a> {
    /// A byte-array field of `struct bpf_prog_info` (zeros past what the file has).
    fn bytes<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut b = [0u8; N];
        if let Some(s) = self.p.info.get(at..at + N) {
            b.copy_from_slice(s);
        }
        b
    }

    /// A field of `struct bpf_prog_info`; 0 past the end of what the file has (an
    /// older kernel's shorter struct).
    fn u32(&self, at: usize) -> u32 {
        u32_at(&self.p.info, at, self.endian).unwrap_or(0)
    }

    fn u64(&self, at: usize) -> u64 {
        u64_at(&self.p.info, at, self.endian).unwrap_or(0)
    }

    /// Array `bit` (its pointer field at `field`): `n` elements of `size` bytes in `data`.
    fn array(&self, bit: u32, field: usize, n: usize, size: usize) -> Option<&'a [u8]> {
        if self.p.arrays & (1 << bit) == 0 {
            return None;
        }
        let start = usize::try_from(self.u64(field)).ok()?;
        self.p
            .data
            .get(start..start.checked_add(n.checked_mul(size)?)?)
    }

    fn data_u32(&self, bytes: &[u8], i: usize) -> u32 {
        u32_at(bytes, i * 4, self.endian).expect("the array holds element i")
    }

    fn data_u64(&self, bytes: &[u8], i: usize) -> u64 {
        u64_at(bytes, i * 8, self.endian).expect("the array holds element i")
    }
}

/// One line per program, by program id (perf keeps them in a tree keyed by id and drops
/// duplicates); programs with sub-programs get a line each. Nothing when there are none.
pub fn write_prog_info(out: &mut impl Write, ctx: &Ctx, info: &BpfProgInfo) -> io::Result<()> {
    let endian = ctx.meta.endian;
    let btfs: BTreeMap<u32, &[u8]> = match ctx.meta.feature(FeatureId::BpfBtf) {
        Some(Feature::BpfBtf(b)) => b.btfs.iter().rev().map(|b| (b.id, &b.data[..])).collect(),
        _ => BTreeMap::new(),
    };
    let mut progs: BTreeMap<u32, Prog> = BTreeMap::new();
    for p in &info.programs {
        let prog = Prog { p, endian };
        progs.entry(prog.u32(off::ID)).or_insert(prog);
    }
    for (id, prog) in &progs {
        write_prog(out, *id, prog, &btfs)?;
    }
    Ok(())
}

fn write_prog(
    out: &mut impl Write,
    id: u32,
    prog: &Prog,
    btfs: &BTreeMap<u32, &[u8]>,
) -> io::Result<()> {
    let n = prog.u32(off::NR_JITED_KSYMS) as usize;
    if n != prog.u32(off::NR_PROG_TAGS) as usize || n != prog.u32(off::NR_JITED_FUNC_LENS) as usize
    {
        return Ok(());
    }
    // perf follows these pointers blindly; a program whose arrays are not all there is
    // left out rather than printed from garbage.
    let (Some(addrs), Some(lens), Some(tags)) = (
        prog.array(BPIL_JITED_KSYMS, off::JITED_KSYMS, n, 8),
        prog.array(BPIL_JITED_FUNC_LENS, off::JITED_FUNC_LENS, n, 4),
        prog.array(BPIL_PROG_TAGS, off::PROG_TAGS, n, 8),
    ) else {
        if n == 0 {
            writeln!(out, "# bpf_prog_info {id}:")?;
        }
        return Ok(());
    };
    let btf_id = prog.u32(off::BTF_ID);
    let btf = if btf_id != 0 {
        btfs.get(&btf_id).and_then(|b| Btf::parse(b))
    } else {
        None
    };
    let name = |i: usize| prog_name(prog, btf.as_ref(), &tags[i * 8..i * 8 + 8], i, n);
    if n == 1 {
        return writeln!(
            out,
            "# bpf_prog_info {id}: {} addr {:#x} size {}",
            name(0),
            prog.data_u64(addrs, 0),
            prog.data_u32(lens, 0)
        );
    }
    writeln!(out, "# bpf_prog_info {id}:")?;
    for i in 0..n {
        writeln!(
            out,
            "# \tsub_prog {i}: {} addr {:#x} size {}",
            name(i),
            prog.data_u64(addrs, i),
            prog.data_u32(lens, i)
        )?;
    }
    Ok(())
}

/// perf's `synthesize_bpf_prog_name`.
fn prog_name(prog: &Prog, btf: Option<&Btf>, tag: &[u8], sub: usize, n: usize) -> String {
    let mut name = format!("bpf_prog_{}", crate::text::hex(tag));
    let short = if let Some(btf) = btf {
        let rec = prog.u32(off::FUNC_INFO_REC_SIZE) as usize;
        let nr = prog.u32(144) as usize; // nr_func_info
        prog.array(BPIL_FUNC_INFO, off::FUNC_INFO, nr, rec)
            .and_then(|fi| fi.get(sub * rec + 4..sub * rec + 8))
            .map(|b| prog.data_u32(b, 0))
            .and_then(|type_id| btf.type_name(type_id))
    } else if sub == 0 && n == 1 {
        let raw = prog.bytes::<16>(off::NAME);
        let s = c_str(&raw);
        (!s.is_empty()).then(|| String::from_utf8_lossy(s).into_owned())
    } else {
        Some("F".to_string())
    };
    if let Some(short) = short {
        name.push('_');
        name.push_str(&short);
    }
    name
}

/// "# btf info of id N" per BTF object, by id.
pub fn write_btf(out: &mut impl Write, b: &BpfBtf) -> io::Result<()> {
    let ids: std::collections::BTreeSet<u32> = b.btfs.iter().map(|b| b.id).collect();
    for id in ids {
        writeln!(out, "# btf info of id {id}")?;
    }
    Ok(())
}

/// Just enough of a BTF object to name a type: where each type record starts, and the
/// string section.
struct Btf<'a> {
    types: Vec<usize>,
    data: &'a [u8],
    strs: &'a [u8],
    endian: Endian,
}

impl<'a> Btf<'a> {
    /// libbpf's `btf__new` for a standalone object; `None` where libbpf would fail.
    fn parse(data: &'a [u8]) -> Option<Self> {
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
        let mut btf = Btf {
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
    fn type_name(&self, id: u32) -> Option<String> {
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
        let btf = Btf::parse(&data).unwrap();
        assert_eq!(btf.type_name(2).as_deref(), Some("fentry_x"));
        assert_eq!(btf.type_name(1).as_deref(), Some(""));
        assert!(btf.type_name(3).is_none());
        assert!(Btf::parse(&data[..30]).is_none());
    }
}
