//! perf script's memory-sample columns as perf 6.1 prints them: PERF_SAMPLE_DATA_SRC in
//! hex and decoded (tools/perf/builtin-script.c `data_src__fprintf`, util/mem-events.c
//! `perf_script__meminfo_scnprintf` and the `perf_mem__*_scnprintf` it calls), and the
//! weight and instruction latency (`%16` columns).
//!
//! A data source is `union perf_mem_data_src` (include/uapi/linux/perf_event.h): from
//! bit 0, the operation (5 bits), memory level (14), snoop (5), lock (2), TLB (7),
//! level number (4), remote (1), snoop extension (2), block (3) and hops (3).

use std::fmt::Write;

/// The fields of a data source, by their bit offsets and widths.
#[derive(Debug, Clone, Copy)]
struct DataSrc(u64);

impl DataSrc {
    fn bits(self, at: u32, width: u32) -> u64 {
        (self.0 >> at) & ((1 << width) - 1)
    }
    fn op(self) -> u64 {
        self.bits(0, 5)
    }
    fn lvl(self) -> u64 {
        self.bits(5, 14)
    }
    fn snoop(self) -> u64 {
        self.bits(19, 5)
    }
    fn lock(self) -> u64 {
        self.bits(24, 2)
    }
    fn dtlb(self) -> u64 {
        self.bits(26, 7)
    }
    fn lvl_num(self) -> u64 {
        self.bits(33, 4)
    }
    fn remote(self) -> bool {
        self.bits(37, 1) != 0
    }
    fn snoopx(self) -> u64 {
        self.bits(38, 2)
    }
    fn blk(self) -> u64 {
        self.bits(40, 3)
    }
    fn hops(self) -> u64 {
        self.bits(43, 3)
    }
}

/// perf's `tlb_access`, by bit of the TLB field.
const TLB_ACCESS: [&str; 7] = ["N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault"];
/// perf's `mem_lvl`, by bit of the level field.
const MEM_LVL: [&str; 14] = [
    "N/A",
    "HIT",
    "MISS",
    "L1",
    "LFB/MAB",
    "L2",
    "L3",
    "Local RAM",
    "Remote RAM (1 hop)",
    "Remote RAM (2 hops)",
    "Remote Cache (1 hop)",
    "Remote Cache (2 hops)",
    "I/O",
    "Uncached",
];
/// perf's `snoop_access` and `snoopx_access`, by bit.
const SNOOP_ACCESS: [&str; 5] = ["N/A", "None", "Hit", "Miss", "HitM"];
const SNOOPX_ACCESS: [&str; 2] = ["Fwd", "Peer"];
/// perf's `mem_hops`, by value of the hops field.
const MEM_HOPS: [&str; 5] = [
    "N/A",
    "core, same node",
    "node, same socket",
    "socket, same board",
    "board",
];

/// perf's `mem_lvlnum`: the named level numbers (others print as `L<n>`).
fn lvlnum_name(n: u64) -> Option<&'static str> {
    Some(match n {
        0x09 => "CXL",
        0x0a => "I/O",
        0x0b => "Any cache",
        0x0c => "LFB/MAB",
        0x0d => "RAM",
        0x0e => "PMEM",
        0x0f => "N/A",
        _ => return None,
    })
}

/// The names of the set bits of `m`, in bit order, joined by " or ".
fn or_list(out: &mut String, mut m: u64, names: &[&str]) {
    for name in names {
        if m == 0 {
            break;
        }
        if m & 1 != 0 {
            if !out.is_empty() {
                out.push_str(" or ");
            }
            out.push_str(name);
        }
        m >>= 1;
    }
}

/// `perf_mem__op_scnprintf`: the first operation set, in perf's order.
fn op(d: DataSrc) -> &'static str {
    let op = d.op();
    [
        (0x01, "N/A"),
        (0x02, "LOAD"),
        (0x04, "STORE"),
        (0x08, "PFETCH"),
        (0x10, "EXEC"),
    ]
    .iter()
    .find(|(bit, _)| op & bit != 0)
    .map_or("No", |&(_, name)| name)
}

/// `perf_mem__lvl_scnprintf`: the levels (or the hops), the level number, hit or miss.
fn lvl(d: DataSrc) -> String {
    const HIT: u64 = 0x02;
    const MISS: u64 = 0x04;
    let m = d.lvl();
    let mut out = String::new();
    if d.remote() {
        out.push_str("Remote ");
    }
    // perf counts what it printed apart from the "Remote " prefix.
    let mut levels = String::new();
    if d.hops() != 0 {
        // Hops 5 to 7 index past perf's table: perf 6.1 prints glibc's "(null)".
        let hops = MEM_HOPS.get(d.hops() as usize).copied().unwrap_or("(null)");
        let _ = write!(out, "{hops} ");
    } else {
        or_list(&mut levels, m & !(HIT | MISS), &MEM_LVL);
    }
    out.push_str(&levels);
    if d.lvl_num() != 0 {
        if !levels.is_empty() {
            out.push_str(" or ");
        }
        match lvlnum_name(d.lvl_num()) {
            Some(name) => out.push_str(name),
            None => {
                let _ = write!(out, "L{}", d.lvl_num());
            }
        }
    }
    if out.is_empty() {
        out.push_str("N/A");
    }
    if m & HIT != 0 {
        out.push_str(" hit");
    }
    if m & MISS != 0 {
        out.push_str(" miss");
    }
    out
}

/// `perf_mem__snp_scnprintf`: the snoop bits, then the extension's.
fn snp(d: DataSrc) -> String {
    let mut out = String::new();
    or_list(&mut out, d.snoop(), &SNOOP_ACCESS);
    or_list(&mut out, d.snoopx(), &SNOOPX_ACCESS);
    if out.is_empty() {
        out.push_str("N/A");
    }
    out
}

/// `perf_mem__tlb_scnprintf`: the TLB bits but hit and miss, then those.
fn tlb(d: DataSrc) -> String {
    const HIT: u64 = 0x02;
    const MISS: u64 = 0x04;
    let m = d.dtlb();
    let mut out = String::new();
    or_list(&mut out, m & !(HIT | MISS), &TLB_ACCESS);
    if out.is_empty() {
        out.push_str("N/A");
    }
    if m & HIT != 0 {
        out.push_str(" hit");
    }
    if m & MISS != 0 {
        out.push_str(" miss");
    }
    out
}

/// `perf_mem__lck_scnprintf`.
fn lck(d: DataSrc) -> &'static str {
    match d.lock() {
        m if m & 1 != 0 => "N/A",
        m if m & 2 != 0 => "Yes",
        _ => "No",
    }
}

/// `perf_mem__blk_scnprintf`: each name after a space.
fn blk(d: DataSrc) -> String {
    let m = d.blk();
    if m == 0 || m & 1 != 0 {
        return " N/A".into();
    }
    let mut out = String::new();
    if m & 2 != 0 {
        out.push_str(" Data");
    }
    if m & 4 != 0 {
        out.push_str(" Addr");
    }
    out
}

/// perf's `perf_script__meminfo_scnprintf` of `data_src` into its 100-byte buffer.
pub fn meminfo(data_src: u64) -> String {
    let d = DataSrc(data_src);
    let mut out = format!(
        "|OP {}|LVL {}|SNP {}|TLB {}|LCK {}|BLK {}",
        op(d),
        lvl(d),
        snp(d),
        tlb(d),
        lck(d),
        blk(d)
    );
    out.truncate(99);
    out
}

/// The data source column: perf's `data_src__fprintf`, `%16lx %s` of the value and its
/// decoding (in a 100-byte buffer), left-aligned to the longest printed so far
/// (`widest`, kept from sample to sample as perf's static `maxlen`).
pub fn data_src_column(buf: &mut Vec<u8>, data_src: u64, widest: &mut usize) {
    let text = column_text(data_src);
    *widest = (*widest).max(text.len());
    let _ = std::io::Write::write_fmt(buf, format_args!("{text:<w$}", w = *widest));
}

/// The data_src, weight and ins_lat columns (those `show` says, in that order) of a
/// sample: 0 where it lacks the field, as perf's zeroed sample. `weight` is the u64 as
/// read, WEIGHT_STRUCT's (a 32-bit weight, then the instruction latency) where
/// `weight_struct`, else WEIGHT's; `widest` is [`data_src_column`]'s.
pub fn columns(
    buf: &mut Vec<u8>,
    data_src: Option<u64>,
    weight: Option<u64>,
    weight_struct: bool,
    show: [bool; 3],
    widest: &mut usize,
) {
    use std::io::Write;
    if show[0] {
        // perf's evsel__parse_sample sets data_src to PERF_MEM_DATA_SRC_NONE before it
        // reads a sample: what it prints for a sample without one (where it prints the
        // field at all: a recording with an AUX area trace).
        data_src_column(buf, data_src.unwrap_or(PERF_MEM_DATA_SRC_NONE), widest);
    }
    let w = weight.unwrap_or(0);
    // perf's union perf_sample_weight: WEIGHT_STRUCT's var1_dw and var2_w.
    let (weight, ins_lat) = match weight_struct {
        true => (w & 0xffff_ffff, (w >> 32) & 0xffff),
        false => (w, 0),
    };
    if show[1] {
        let _ = write!(buf, "{weight:16}");
    }
    if show[2] {
        let _ = write!(buf, "{ins_lat:16}");
    }
}

/// perf's PERF_MEM_DATA_SRC_NONE: every field N/A.
const PERF_MEM_DATA_SRC_NONE: u64 = 0x5080021;

/// `%16lx %s` of `data_src` and its decoding, cut as perf's 100-byte buffer cuts it.
fn column_text(data_src: u64) -> String {
    let mut text = format!("{data_src:16x} {}", meminfo(data_src));
    text.truncate(99);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected texts are perf 6.1's (`perf script -F data_src`) for these values.
    #[test]
    fn a_load_served_by_the_fill_buffer() {
        assert_eq!(
            meminfo(0x11868100242),
            "|OP LOAD|LVL LFB/MAB or LFB/MAB hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A"
        );
        assert_eq!(
            meminfo(0x1026a100142),
            "|OP LOAD|LVL L1 or L1 hit|SNP None|TLB L1 or L2 hit|LCK Yes|BLK  N/A"
        );
        assert_eq!(
            meminfo(0x1e05080021),
            "|OP N/A|LVL N/A or N/A|SNP N/A|TLB N/A|LCK N/A|BLK  N/A"
        );
    }

    /// perf 6.1's `perf script -F data_src` lines (trailing blanks cut) for data sources
    /// planted in a copy of fixtures/file-sample-fields.data: each field's bits, the
    /// hops past perf's table, and decodings perf's buffer cuts.
    const PERF_LINES: &[(u64, &str)] = &[
        (0x0, "               0 |OP No|LVL N/A|SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0x5080021, "         5080021 |OP N/A|LVL N/A|SNP N/A|TLB N/A|LCK N/A|BLK  N/A"),
        (0x2000000042, "      2000000042 |OP LOAD|LVL Remote  hit|SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0x80000000040, "     80000000040 |OP No|LVL core, same node  hit|SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0x103200000000, "    103200000000 |OP No|LVL Remote node, same socket CXL|SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0x201400000000, "    201400000000 |OP No|LVL board I/O|SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0xc000f80000, "      c000f80000 |OP No|LVL N/A|SNP N/A or None or Hit or Miss or HitM or Fwd or Peer|TLB N/A|LCK N"),
        (0x60000000000, "     60000000000 |OP No|LVL N/A|SNP N/A|TLB N/A|LCK No|BLK  Data Addr"),
        (0x40000000000, "     40000000000 |OP No|LVL N/A|SNP N/A|TLB N/A|LCK No|BLK  Addr"),
        (0x1fc000000, "       1fc000000 |OP No|LVL N/A|SNP N/A|TLB N/A or L1 or L2 or Walker or Fault hit miss|LCK No|BLK"),
        (0x160007ffe0, "      160007ffe0 |OP No|LVL N/A or L1 or LFB/MAB or L2 or L3 or Local RAM or Remote RAM (1 hop) or"),
        (0x380000000000, "    380000000000 |OP No|LVL (null) |SNP N/A|TLB N/A|LCK No|BLK  N/A"),
        (0x3ca31fb17c23, "    3ca31fb17c23 |OP N/A|LVL Remote (null) L1|SNP None or Hit or HitM or Peer|TLB N/A or Fault hit"),
    ];

    #[test]
    fn every_field_decodes_as_perf_decodes_it() {
        for &(value, perf) in PERF_LINES {
            assert_eq!(column_text(value).trim_end(), perf, "data_src {value:#x}");
        }
    }

    #[test]
    fn the_column_is_as_wide_as_the_widest_so_far() {
        let mut widest = 0;
        let mut buf = Vec::new();
        data_src_column(&mut buf, 0x11868100242, &mut widest);
        let first = buf.len();
        buf.clear();
        data_src_column(&mut buf, 0x10268100142, &mut widest);
        // `%-*s` of the shorter text pads it to the first's width.
        assert_eq!(buf.len(), first);
        assert!(String::from_utf8(buf)
            .unwrap()
            .ends_with("|BLK  N/A          "));
    }
}
