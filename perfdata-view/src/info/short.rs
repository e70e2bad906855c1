//! The features perf prints in a line or two: strings, counts, times, clocks, PMUs,
//! compression, the directory version, CPU_DOMAIN_INFO; and what perf prints for a
//! feature it could not read. (Named `short`, not `misc`: `misc` is the record
//! header's flag word, `record::misc`.)

use std::io::{self, Write};

use perfdata_core::feature::{
    Cache, ClockData, Compressed, CpuDomainInfo, CpuTopology, Feature, FeatureId, HybridTopology,
    MemTopology, NrCpus, PerfString, PmuCapList, PmuCaps, PmuMappings, SampleTime, StringList,
};

use perfdata_core::text::c_str_bytes as c_str;

use super::{time, topology};

/// A one-line string feature: "# hostname : vm".
fn string(out: &mut impl Write, label: &str, s: &PerfString) -> io::Result<()> {
    write!(out, "# {label} : ")?;
    out.write_all(c_str(&s.bytes))?;
    writeln!(out)
}

pub fn write_feature(out: &mut impl Write, feature: &Feature) -> io::Result<()> {
    match feature {
        Feature::Hostname(s) => string(out, "hostname", s),
        Feature::OsRelease(s) => string(out, "os release", s),
        Feature::Version(s) => string(out, "perf version", s),
        Feature::Arch(s) => string(out, "arch", s),
        Feature::CpuDesc(s) => string(out, "cpudesc", s),
        Feature::CpuId(s) => string(out, "cpuid", s),
        Feature::NrCpus(n) => write_nrcpus(out, n),
        Feature::TotalMem(kb) => writeln!(out, "# total memory : {kb} kB"),
        Feature::Cmdline(c) => write_cmdline(out, c),
        Feature::BranchStack => writeln!(out, "# contains samples with branch stack"),
        Feature::AuxTrace(_) => writeln!(out, "# contains AUX area data (e.g. instruction trace)"),
        Feature::Stat => writeln!(out, "# contains stat data"),
        Feature::PmuMappings(m) => write_pmu_mappings(out, m),
        Feature::SampleTime(t) => write_sample_time(out, t),
        // perf's formula: the resolution in ns times 1000, labelled MHz.
        Feature::ClockId(res) => {
            writeln!(out, "# clockid frequency: {} MHz", res.wrapping_mul(1000))
        }
        Feature::DirFormat(v) => writeln!(out, "# directory data version : {v}"),
        Feature::Compressed(c) => write_compressed(out, c),
        Feature::CpuPmuCaps(c) => write_pmu_caps_line(out, b"cpu", c),
        Feature::ClockData(c) => write_clock_data(out, c),
        Feature::PmuCaps(p) => write_pmu_caps(out, p),
        Feature::CpuDomainInfo(d) => write_cpu_domain_info(out, d),
        // The rest have their own modules, and `super::write_feature` (whose match is
        // exhaustive) does not send them here.
        Feature::TracingData(_)
        | Feature::BuildId(_)
        | Feature::EventDesc(_)
        | Feature::CpuTopology(_)
        | Feature::NumaTopology(_)
        | Feature::GroupDesc(_)
        | Feature::Cache(_)
        | Feature::MemTopology(_)
        | Feature::BpfProgInfo(_)
        | Feature::BpfBtf(_)
        | Feature::HybridTopology(_)
        | Feature::Raw(_) => Ok(()),
    }
}

/// What perf prints for a known feature it failed to read: its print function runs on
/// the empty defaults (a NULL string prints as glibc's "(null)").
pub fn write_unreadable(out: &mut impl Write, id: FeatureId) -> io::Result<()> {
    let null = |out: &mut dyn Write, label: &str| writeln!(out, "# {label} : (null)");
    match id {
        FeatureId::Hostname => null(out, "hostname"),
        FeatureId::OsRelease => null(out, "os release"),
        FeatureId::Version => null(out, "perf version"),
        FeatureId::Arch => null(out, "arch"),
        FeatureId::CpuDesc => null(out, "cpudesc"),
        FeatureId::CpuId => null(out, "cpuid"),
        FeatureId::EventDesc => writeln!(out, "# event desc: not available or unable to read"),
        FeatureId::NrCpus => write_nrcpus(out, &NrCpus::default()),
        FeatureId::TotalMem => write_feature(out, &Feature::TotalMem(0)),
        FeatureId::Cmdline => write_cmdline(out, &StringList::default()),
        FeatureId::CpuTopology => topology::write_cpu_topology(out, &CpuTopology::default(), 0),
        FeatureId::PmuMappings => write_pmu_mappings(out, &PmuMappings::default()),
        FeatureId::Cache => topology::write_cache(out, &Cache::default()),
        FeatureId::SampleTime => write_sample_time(out, &SampleTime::default()),
        FeatureId::MemTopology => topology::write_mem_topology(out, &MemTopology::default()),
        FeatureId::ClockId => write_feature(out, &Feature::ClockId(0)),
        FeatureId::DirFormat => write_feature(out, &Feature::DirFormat(0)),
        FeatureId::Compressed => write_compressed(out, &Compressed::default()),
        FeatureId::CpuPmuCaps => write_pmu_caps_line(out, b"cpu", &PmuCapList::default()),
        FeatureId::ClockData => write_clock_data(out, &ClockData::default()),
        FeatureId::HybridTopology => {
            topology::write_hybrid_topology(out, &HybridTopology::default())
        }
        FeatureId::BranchStack => write_feature(out, &Feature::BranchStack),
        FeatureId::Stat => write_feature(out, &Feature::Stat),
        FeatureId::AuxTrace => {
            writeln!(out, "# contains AUX area data (e.g. instruction trace)")
        }
        // Nothing for an empty NUMA topology, group list, BPF list, PMU caps list or CPU
        // domain list; perf has no print function for TRACING_DATA and BUILD_ID, and
        // none for a feature it does not know.
        FeatureId::NumaTopology
        | FeatureId::GroupDesc
        | FeatureId::BpfProgInfo
        | FeatureId::BpfBtf
        | FeatureId::PmuCaps
        | FeatureId::CpuDomainInfo
        | FeatureId::TracingData
        | FeatureId::BuildId
        | FeatureId::Unknown(_) => Ok(()),
    }
}

fn write_nrcpus(out: &mut impl Write, n: &NrCpus) -> io::Result<()> {
    writeln!(out, "# nrcpus online : {}", n.nr_cpus_online)?;
    writeln!(out, "# nrcpus avail : {}", n.nr_cpus_available)
}

/// Each argument followed by a space, its single quotes escaped as \'.
fn write_cmdline(out: &mut impl Write, c: &StringList) -> io::Result<()> {
    write!(out, "# cmdline : ")?;
    for arg in &c.strings {
        let mut pieces = c_str(&arg.bytes).split(|&b| b == b'\'').peekable();
        while let Some(piece) = pieces.next() {
            out.write_all(piece)?;
            if pieces.peek().is_some() {
                out.write_all(b"\\'")?;
            }
        }
        out.write_all(b" ")?;
    }
    writeln!(out)
}

/// "# pmu mappings: cpu = 4, software = 1", in the recorded order.
fn write_pmu_mappings(out: &mut impl Write, m: &PmuMappings) -> io::Result<()> {
    if m.pmus.is_empty() {
        return writeln!(out, "# pmu mappings: not available");
    }
    let mut delimiter: &[u8] = b"# pmu mappings: ";
    for p in &m.pmus {
        out.write_all(delimiter)?;
        out.write_all(c_str(&p.name.bytes))?;
        write!(out, " = {}", p.type_)?;
        delimiter = b", ";
    }
    writeln!(out)
}

/// perf's `timestamp__scnprintf_usec`: seconds with microseconds, "2046.571571".
fn usec(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1_000)
}

fn write_sample_time(out: &mut impl Write, t: &SampleTime) -> io::Result<()> {
    writeln!(out, "# time of first sample : {}", usec(t.first))?;
    writeln!(out, "# time of last sample : {}", usec(t.last))?;
    // perf subtracts as u64 (wrapping if last < first), then divides as a double.
    let ms = t.last.wrapping_sub(t.first) as f64 / 1e6;
    writeln!(out, "# sample duration : {ms:10.3} ms")
}

fn write_compressed(out: &mut impl Write, c: &Compressed) -> io::Result<()> {
    let kind = if c.type_ == 1 { "Zstd" } else { "Unknown" };
    writeln!(
        out,
        "# compressed : {kind}, level = {}, ratio = {}",
        c.level as i32, c.ratio as i32
    )
}

/// "# cpu pmu capabilities: branches=32, max_precise=3", or "not available".
fn write_pmu_caps_line(out: &mut impl Write, pmu: &[u8], caps: &PmuCapList) -> io::Result<()> {
    out.write_all(b"# ")?;
    out.write_all(pmu)?;
    if caps.caps.is_empty() {
        return writeln!(out, " pmu capabilities: not available");
    }
    write!(out, " pmu capabilities: ")?;
    for (i, cap) in caps.caps.iter().enumerate() {
        if i > 0 {
            write!(out, ", ")?;
        }
        out.write_all(c_str(&cap.name.bytes))?;
        out.write_all(b"=")?;
        out.write_all(c_str(&cap.value.bytes))?;
    }
    writeln!(out)
}

/// perf 6.1 prints each PMU's line and nothing more (the AMD ibs_op hint came later).
fn write_pmu_caps(out: &mut impl Write, p: &PmuCaps) -> io::Result<()> {
    for pmu in &p.pmus {
        write_pmu_caps_line(out, c_str(&pmu.pmu_name.bytes), &pmu.caps)?;
    }
    Ok(())
}

/// perf's `clockid_name`: the first name its table gives the clock.
fn clockid_name(id: u32) -> &'static str {
    match id {
        0 => "realtime",
        1 => "monotonic",
        4 => "monotonic_raw",
        7 => "boottime",
        11 => "tai",
        _ => "(not found)",
    }
}

/// The reference point between wall-clock time (formatted in UTC; perf uses the local
/// zone) and the recording clock. perf reads version 1 only.
fn write_clock_data(out: &mut impl Write, c: &ClockData) -> io::Result<()> {
    if c.version != 1 {
        return writeln!(out, "# reference time disabled");
    }
    let tod_sec = c.wall_clock_ns / 1_000_000_000;
    let tod_usec = c.wall_clock_ns % 1_000_000_000 / 1_000;
    let clk_sec = c.clockid_time_ns / 1_000_000_000;
    let clk_nsec = c.clockid_time_ns % 1_000_000_000;
    let name = clockid_name(c.clockid);
    writeln!(out, "# clockid: {name} ({})", c.clockid)?;
    writeln!(
        out,
        "# reference time: {}.{tod_usec:06} = {tod_sec}.{tod_usec:06} (TOD) = \
         {clk_sec}.{clk_nsec:09} ({name})",
        time::date_time(tod_sec as i64)
    )
}

/// CPU_DOMAIN_INFO, which perf 6.1 does not know, in the layout of newer perf's
/// `print_cpu_domain_info` (tabs included).
fn write_cpu_domain_info(out: &mut impl Write, d: &CpuDomainInfo) -> io::Result<()> {
    writeln!(out, "# schedstat version\t: {}", d.schedstat_version)?;
    writeln!(out, "# Maximum sched domains\t: {}", d.max_sched_domains)?;
    for cpu in &d.cpus {
        writeln!(out, "# cpu\t\t: {}", cpu.cpu)?;
        writeln!(out, "# nr_domains\t: {}", cpu.domains.len())?;
        for dom in &cpu.domains {
            writeln!(out, "# Domain\t\t: {}", dom.domain)?;
            if let Some(name) = &dom.name {
                out.write_all(b"# Domain name      : ")?;
                out.write_all(c_str(&name.bytes))?;
                writeln!(out)?;
            }
            out.write_all(b"# Domain cpu map   : ")?;
            out.write_all(c_str(&dom.cpumask.bytes))?;
            out.write_all(b"\n# Domain cpu list  : ")?;
            out.write_all(c_str(&dom.cpulist.bytes))?;
            writeln!(out)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Vec<u8>) -> io::Result<()>) -> String {
        let mut v = Vec::new();
        f(&mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn cmdline_escapes_quotes() {
        let c = StringList::new(vec![
            PerfString::new("sh"),
            PerfString::new("-c"),
            PerfString::new("echo 'hi'"),
        ]);
        assert_eq!(
            text(|o| write_cmdline(o, &c)),
            "# cmdline : sh -c echo \\'hi\\' \n"
        );
    }

    #[test]
    fn sample_time_and_clock_data() {
        let t = SampleTime {
            first: 2_046_571_571_000,
            last: 2_046_595_049_123,
        };
        assert_eq!(
            text(|o| write_sample_time(o, &t)),
            "# time of first sample : 2046.571571\n# time of last sample : 2046.595049\n\
             # sample duration :     23.478 ms\n"
        );
        let c = ClockData {
            version: 1,
            clockid: 4,
            wall_clock_ns: 1_795_324_723_716_361_999,
            clockid_time_ns: 2_057_706_740_512,
        };
        assert_eq!(
            text(|o| write_clock_data(o, &c)),
            "# clockid: monotonic_raw (4)\n# reference time: 2026-11-22 05:18:43.716361 = \
             1795324723.716361 (TOD) = 2057.706740512 (monotonic_raw)\n"
        );
    }

    #[test]
    fn cpu_domain_info_in_newer_perf_layout() {
        use perfdata_core::feature::{CpuDomains, SchedDomain};
        let d = CpuDomainInfo {
            schedstat_version: 17,
            max_sched_domains: 1,
            cpus: vec![CpuDomains {
                cpu: 0,
                domains: vec![SchedDomain {
                    domain: 0,
                    name: Some(PerfString::new("SMT")),
                    cpumask: PerfString::new("0003"),
                    cpulist: PerfString::new("0-1"),
                }],
            }],
        };
        assert_eq!(
            text(|o| write_cpu_domain_info(o, &d)),
            "# schedstat version\t: 17\n# Maximum sched domains\t: 1\n# cpu\t\t: 0\n\
             # nr_domains\t: 1\n# Domain\t\t: 0\n# Domain name      : SMT\n\
             # Domain cpu map   : 0003\n# Domain cpu list  : 0-1\n"
        );
    }

    #[test]
    fn unreadable_features_print_perfs_empty_defaults() {
        let t = |id| text(|o| write_unreadable(o, id));
        assert_eq!(t(FeatureId::Hostname), "# hostname : (null)\n");
        assert_eq!(t(FeatureId::PmuMappings), "# pmu mappings: not available\n");
        assert_eq!(t(FeatureId::ClockData), "# reference time disabled\n");
        assert_eq!(
            t(FeatureId::MemTopology),
            "# memory nodes (nr 0, block size 0x0):\n"
        );
        assert_eq!(
            t(FeatureId::CpuTopology),
            "# Core ID and Socket ID information is not available\n"
        );
        assert_eq!(t(FeatureId::NumaTopology), "");
    }
}
