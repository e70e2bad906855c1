//! CPU_TOPOLOGY, NUMA_TOPOLOGY, CACHE, MEM_TOPOLOGY and HYBRID_TOPOLOGY: perf's
//! `print_cpu_topology`, `print_numa_topology`, `print_cache`, `print_mem_topology` and
//! `print_hybrid_topology`, with the cpu-list and bitmap printers they use.

use std::io::{self, Write};

use perfdata_core::feature::{
    Cache, CpuCoreSocket, CpuDies, CpuTopology, HybridTopology, MemTopology, NumaTopology,
};

use perfdata_core::text::c_str_bytes as c_str;

use super::truncate;

/// perf's `process_cpu_topology` decides whether the core/socket ids and the die part are
/// there by comparing the section size with what the string lists would take if every
/// string were padded to 64 bytes as perf pads them. A writer that pads less (quipper
/// pads to 8) makes perf think the ids are absent, and it then says so; `section_len`
/// (the whole section, padding included) lets the printer reach the same verdict.
fn perf_sees(
    t: &CpuTopology,
    section_len: usize,
) -> (Option<&Vec<CpuCoreSocket>>, Option<&CpuDies>) {
    let string_size =
        |s: &perfdata_core::feature::PerfString| (c_str(&s.bytes).len() + 1).div_ceil(64) * 64 + 4;
    let lists = 8 + t
        .cores
        .strings
        .iter()
        .chain(&t.threads.strings)
        .map(string_size)
        .sum::<usize>();
    if section_len <= lists {
        return (None, None);
    }
    let Some(cpus) = t.cpus.as_ref() else {
        return (None, None);
    };
    if section_len <= lists + 8 * cpus.len() {
        return (Some(cpus), None);
    }
    (Some(cpus), t.dies.as_ref())
}

pub fn write_cpu_topology(
    out: &mut impl Write,
    t: &CpuTopology,
    section_len: usize,
) -> io::Result<()> {
    let (cpus, dies) = perf_sees(t, section_len);
    let line = |out: &mut dyn Write, label: &[u8], s: &[u8]| -> io::Result<()> {
        out.write_all(label)?;
        out.write_all(c_str(s))?;
        out.write_all(b"\n")
    };
    for s in &t.cores.strings {
        line(out, b"# sibling sockets : ", &s.bytes)?;
    }
    let dies = dies.filter(|d| !d.dies.strings.is_empty());
    if let Some(d) = dies {
        for s in &d.dies.strings {
            line(out, b"# sibling dies    : ", &s.bytes)?;
        }
    }
    for s in &t.threads.strings {
        line(out, b"# sibling threads : ", &s.bytes)?;
    }
    // perf prints the ids with %d: an unknown (-1) socket shows as -1.
    match (cpus, dies) {
        (Some(cpus), Some(d)) => {
            for (i, c) in cpus.iter().enumerate() {
                let die = d.die_ids.get(i).copied().unwrap_or(0);
                writeln!(
                    out,
                    "# CPU {i}: Core ID {}, Die ID {}, Socket ID {}",
                    c.core_id as i32, die as i32, c.socket_id as i32
                )?;
            }
        }
        (None, Some(_)) => writeln!(
            out,
            "# Core ID, Die ID and Socket ID information is not available"
        )?,
        (Some(cpus), None) => {
            for (i, c) in cpus.iter().enumerate() {
                writeln!(
                    out,
                    "# CPU {i}: Core ID {}, Socket ID {}",
                    c.core_id as i32, c.socket_id as i32
                )?;
            }
        }
        (None, None) => writeln!(out, "# Core ID and Socket ID information is not available")?,
    }
    Ok(())
}

pub fn write_numa_topology(out: &mut impl Write, n: &NumaTopology) -> io::Result<()> {
    for node in &n.nodes {
        writeln!(
            out,
            "# node{} meminfo  : total = {} kB, free = {} kB",
            node.node, node.mem_total, node.mem_free
        )?;
        write!(out, "# node{} cpu list : ", node.node)?;
        let list = c_str(&node.cpus.bytes);
        match parse_cpu_list(list) {
            Some(cpus) => writeln!(out, "{}", cpu_map_string(&cpus))?,
            // perf fails to read the feature there; show the text rather than nothing.
            None => {
                out.write_all(list)?;
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// libperf's `perf_cpu_map__new`: "0-3,8" to sorted CPUs. An empty list is perf's
/// "dummy" map {-1}; `None` where perf refuses the list.
pub fn parse_cpu_list(list: &[u8]) -> Option<Vec<i64>> {
    let text = std::str::from_utf8(list).ok()?;
    if text.is_empty() {
        return Some(vec![-1]);
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let (start, end) = match part.split_once('-') {
            Some((a, b)) => (strtoul(a)?, strtoul(b)?),
            None => (strtoul(part)?, strtoul(part)?),
        };
        if end < start || end >= i32::MAX as u64 {
            return None;
        }
        for cpu in start..=end {
            if cpus.contains(&(cpu as i64)) {
                return None;
            }
            cpus.push(cpu as i64);
        }
    }
    cpus.sort_unstable();
    Some(cpus)
}

/// `strtoul(s, &end, 0)` that must consume all of `s`: decimal, 0x hex, or 0 octal.
fn strtoul(s: &str) -> Option<u64> {
    if !s.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()
    } else {
        s.parse().ok()
    }
}

/// `cpu_map__snprint` into perf's 1024-byte buffer: runs of consecutive CPUs as "a-b".
pub fn cpu_map_string(cpus: &[i64]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    truncate(parts.join(","), 1024)
}

pub fn write_cache(out: &mut impl Write, c: &Cache) -> io::Result<()> {
    writeln!(out, "# CPU cache info:")?;
    for l in &c.levels {
        // "L%d %-15s %8s [%s]": the padding counts bytes, as C's does.
        let ty = c_str(&l.type_.bytes);
        let size = c_str(&l.size.bytes);
        write!(out, "#  L{} ", l.level as i32)?;
        out.write_all(ty)?;
        out.write_all(&b" ".repeat(15usize.saturating_sub(ty.len())))?;
        out.write_all(b" ")?;
        out.write_all(&b" ".repeat(8usize.saturating_sub(size.len())))?;
        out.write_all(size)?;
        out.write_all(b" [")?;
        out.write_all(c_str(&l.map.bytes))?;
        out.write_all(b"]\n")?;
    }
    Ok(())
}

pub fn write_mem_topology(out: &mut impl Write, m: &MemTopology) -> io::Result<()> {
    writeln!(
        out,
        "# memory nodes (nr {}, block size {:#x}):",
        m.nodes.len() as i32,
        m.block_size
    )?;
    for n in &m.nodes {
        let blocks = (0..n.nbits).filter(|&b| n.has_block(b)).count() as u64;
        let size = truncate(unit_number(m.block_size.wrapping_mul(blocks)), 50);
        let map = truncate(bitmap_string(n), 100);
        writeln!(out, "#  {:3} [{size}]: {map}", n.node)?;
    }
    Ok(())
}

/// perf's `unit_number__scnprintf`: divide by 1024 while more than 2047 remains, up to G.
fn unit_number(mut n: u64) -> String {
    let units = ['B', 'K', 'M', 'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

/// perf's `bitmap_scnprintf`: the set bits as ranges, "0-23,32-199".
fn bitmap_string(n: &perfdata_core::feature::MemoryNode) -> String {
    let set: Vec<i64> = (0..n.nbits)
        .filter(|&b| n.has_block(b))
        .map(|b| b as i64)
        .collect();
    cpu_map_string(&set)
}

pub fn write_hybrid_topology(out: &mut impl Write, h: &HybridTopology) -> io::Result<()> {
    writeln!(out, "# hybrid cpu system:")?;
    for n in &h.nodes {
        out.write_all(b"# ")?;
        out.write_all(c_str(&n.pmu_name.bytes))?;
        out.write_all(b" cpu list : ")?;
        out.write_all(c_str(&n.cpus.bytes))?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_normalised_like_libperf() {
        let l = parse_cpu_list(b"4-7,0-3,9").unwrap();
        assert_eq!(cpu_map_string(&l), "0-7,9");
        assert_eq!(cpu_map_string(&parse_cpu_list(b"").unwrap()), "-1");
        assert_eq!(cpu_map_string(&parse_cpu_list(b"010").unwrap()), "8");
        assert!(parse_cpu_list(b"1,1").is_none());
        assert!(parse_cpu_list(b"3-1").is_none());
    }

    #[test]
    fn unit_numbers() {
        assert_eq!(unit_number(192 * 0x800_0000), "24G");
        assert_eq!(unit_number(2047), "2047B");
        assert_eq!(unit_number(2048), "2K");
        assert_eq!(unit_number(u64::MAX), "17179869183G");
    }

    #[test]
    fn ids_hidden_when_strings_are_padded_less_than_perf_pads() {
        use perfdata_core::feature::{PerfString, StringList};
        let padded = |s: &str, n: usize| {
            let mut bytes = s.as_bytes().to_vec();
            bytes.resize(n, 0);
            PerfString { bytes }
        };
        let t = CpuTopology {
            cores: StringList::new(vec![padded("0-1", 8)]),
            threads: StringList::new(vec![padded("0", 8), padded("1", 8)]),
            cpus: Some(vec![CpuCoreSocket::default(); 2]),
            dies: None,
        };
        // 4+12 + 4+12+12 string bytes and 16 of ids: perf's estimate of the strings alone
        // (3 x 68 + 8) is more than the whole section.
        let mut v = Vec::new();
        write_cpu_topology(&mut v, &t, 60).unwrap();
        let s = String::from_utf8(v).unwrap();
        assert!(
            s.ends_with("# Core ID and Socket ID information is not available\n"),
            "{s}"
        );
        let mut v = Vec::new();
        write_cpu_topology(&mut v, &t, 300).unwrap();
        assert!(String::from_utf8(v)
            .unwrap()
            .contains("# CPU 1: Core ID 0, Socket ID 0"));
    }
}
