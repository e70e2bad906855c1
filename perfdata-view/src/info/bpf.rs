//! BPF_PROG_INFO and BPF_BTF: perf's `print_bpf_prog_info` (through
//! `__bpf_event__print_bpf_prog_info` and `synthesize_bpf_prog_name`) and `print_bpf_btf`.
//!
//! Each program is the kernel's `struct bpf_prog_info` followed by the arrays it points
//! into, the pointers stored as offsets into those arrays. A program's name is
//! `"bpf_prog_<tag>_<function>"`, the function name coming from the BTF object the program
//! refers to (BPF_BTF), else from the info's own 16-byte name.

use std::collections::BTreeMap;
use std::io::{self, Write};

use perfdata_core::feature::{
    prog_info, BtfTypes, ProgInfoView, BPIL_FUNC_INFO, BPIL_JITED_FUNC_LENS, BPIL_JITED_KSYMS,
    BPIL_PROG_TAGS,
};
use perfdata_core::feature::{BpfBtf, BpfProgInfo, Feature, FeatureId};
use perfdata_core::text::c_str_bytes as c_str;

use super::Ctx;

/// One line per program, by program id (perf keeps them in a tree keyed by id and drops
/// duplicates); programs with sub-programs get a line each. Nothing when there are none.
pub fn write_prog_info(out: &mut impl Write, ctx: &Ctx, info: &BpfProgInfo) -> io::Result<()> {
    let endian = ctx.meta.endian;
    let btfs: BTreeMap<u32, &[u8]> = match ctx.meta.feature(FeatureId::BpfBtf) {
        Some(Feature::BpfBtf(b)) => b.btfs.iter().rev().map(|b| (b.id, &b.data[..])).collect(),
        _ => BTreeMap::new(),
    };
    let mut progs: BTreeMap<u32, ProgInfoView> = BTreeMap::new();
    for p in &info.programs {
        let prog = p.view(endian);
        progs.entry(prog.u32(prog_info::ID)).or_insert(prog);
    }
    for (id, prog) in &progs {
        write_prog(out, *id, prog, &btfs)?;
    }
    Ok(())
}

fn write_prog(
    out: &mut impl Write,
    id: u32,
    prog: &ProgInfoView,
    btfs: &BTreeMap<u32, &[u8]>,
) -> io::Result<()> {
    let n = prog.u32(prog_info::NR_JITED_KSYMS) as usize;
    if n != prog.u32(prog_info::NR_PROG_TAGS) as usize
        || n != prog.u32(prog_info::NR_JITED_FUNC_LENS) as usize
    {
        return Ok(());
    }
    // perf follows these pointers blindly; a program whose arrays are not all there is
    // left out rather than printed from garbage.
    let (Some(addrs), Some(lens), Some(tags)) = (
        prog.array(BPIL_JITED_KSYMS, prog_info::JITED_KSYMS, n, 8),
        prog.array(BPIL_JITED_FUNC_LENS, prog_info::JITED_FUNC_LENS, n, 4),
        prog.array(BPIL_PROG_TAGS, prog_info::PROG_TAGS, n, 8),
    ) else {
        if n == 0 {
            writeln!(out, "# bpf_prog_info {id}:")?;
        }
        return Ok(());
    };
    let btf_id = prog.u32(prog_info::BTF_ID);
    let btf = if btf_id != 0 {
        btfs.get(&btf_id).and_then(|b| BtfTypes::parse(b))
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
fn prog_name(
    prog: &ProgInfoView,
    btf: Option<&BtfTypes>,
    tag: &[u8],
    sub: usize,
    n: usize,
) -> String {
    let mut name = format!("bpf_prog_{}", crate::ser::hex(tag));
    let short = if let Some(btf) = btf {
        let rec = prog.u32(prog_info::FUNC_INFO_REC_SIZE) as usize;
        let nr = prog.u32(prog_info::NR_FUNC_INFO) as usize;
        prog.array(BPIL_FUNC_INFO, prog_info::FUNC_INFO, nr, rec)
            .and_then(|fi| fi.get(sub * rec + 4..sub * rec + 8))
            .map(|b| prog.data_u32(b, 0))
            .and_then(|type_id| btf.type_name(type_id))
    } else if sub == 0 && n == 1 {
        let raw = prog.bytes::<16>(prog_info::NAME);
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
