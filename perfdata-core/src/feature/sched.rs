//! CPU_DOMAIN_INFO (perf 6.17 and later): the scheduler domains of each CPU, from
//! /proc/schedstat, for `perf sched stats`.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

use super::PerfString;

/// The /proc/schedstat version from which a domain has a name.
pub const SCHEDSTAT_VERSION_NAMED_DOMAINS: u32 = 17;

/// CPU_DOMAIN_INFO: `u32 schedstat_version, u32 max_sched_domains`, then per CPU
/// `{u32 cpu, u32 nr_domains, domains}`.
///
/// perf's reader takes one entry per online CPU, but its writer skips CPUs without
/// domains, so the entries are read up to the end of the section instead (an entry is at
/// least 8 bytes; fewer left over are padding, kept as trailing bytes).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CpuDomainInfo {
    /// Decides the domain layout: a name string from version 17.
    pub schedstat_version: u32,
    /// One more than the highest domain number.
    pub max_sched_domains: u32,
    #[br(parse_with = bounded::while_fits, args(8, (schedstat_version,)))]
    #[bw(args(*schedstat_version))]
    /// One entry per CPU.
    pub cpus: Vec<CpuDomains>,
}

/// The domains of one CPU.
#[binrw]
#[brw(import(version: u32))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CpuDomains {
    /// The CPU.
    pub cpu: u32,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(domains.len()))]
    nr_domains: u32,
    #[br(parse_with = bounded::vec_with, args(nr_domains as usize, 12, (version,)))]
    #[bw(args(version))]
    /// Its scheduling domains.
    pub domains: Vec<SchedDomain>,
}

/// One scheduler domain: `u32 domain, [string name], string cpumask, string cpulist`.
#[binrw]
#[brw(import(version: u32))]
#[bw(assert(
    name.is_some() == (version >= SCHEDSTAT_VERSION_NAMED_DOMAINS),
    "a sched domain has a name exactly when schedstat_version >= 17 (it is {})",
    version
))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SchedDomain {
    /// The domain number.
    pub domain: u32,
    /// "SMT", "MC", "PKG"... (schedstat version 17 and later).
    #[br(if(version >= SCHEDSTAT_VERSION_NAMED_DOMAINS))]
    pub name: Option<PerfString>,
    /// The domain's CPUs as /proc/schedstat prints them ("00000000,00000003").
    pub cpumask: PerfString,
    /// The same as a list ("0-1").
    pub cpulist: PerfString,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    #[test]
    fn version_17_has_domain_names() {
        let mut b = Bytes::le();
        b.u32(17).u32(2);
        b.u32(0).u32(2);
        b.u32(0).str("SMT").str("00000003").str("0-1");
        b.u32(1).str("MC").str("0000000f").str("0-3");
        b.u32(1).u32(1);
        b.u32(0).str("SMT").str("00000003").str("0-1");
        let d: CpuDomainInfo = round_trip(&b.take(), Endian::Little, ());
        assert_eq!((d.schedstat_version, d.max_sched_domains), (17, 2));
        assert_eq!(d.cpus.len(), 2);
        let mc = &d.cpus[0].domains[1];
        assert_eq!(mc.domain, 1);
        assert_eq!(mc.name.as_ref().unwrap().as_str_lossy(), "MC");
        assert_eq!(mc.cpumask.as_str_lossy(), "0000000f");
        assert_eq!(mc.cpulist.as_str_lossy(), "0-3");
        assert_eq!(d.cpus[1].cpu, 1);
        same_in_big_endian(&d, ());
    }

    #[test]
    fn version_16_has_no_names_and_padding_is_left() {
        let mut b = Bytes::le();
        b.u32(16).u32(1);
        b.u32(3).u32(1).u32(0).str("00000008").str("3");
        let exact = b.v.len();
        b.raw(&[0; 4]);
        let bytes = b.take();
        let (d, used) =
            crate::codec::decode_prefix::<CpuDomainInfo>(&bytes, Endian::Little, (), 0, "t")
                .unwrap();
        assert_eq!(used, exact);
        assert!(d.cpus[0].domains[0].name.is_none());
        assert_eq!(d.cpus[0].domains[0].cpulist.as_str_lossy(), "3");

        let mut named = d.clone();
        named.schedstat_version = 17;
        assert!(crate::codec::encode(&named, Endian::Little, ()).is_err());
    }
}
