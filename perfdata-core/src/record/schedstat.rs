//! SCHEDSTAT_CPU (85) and SCHEDSTAT_DOMAIN (86): `perf sched stats record` snapshots of
//! /proc/schedstat, one record per cpu and per (cpu, scheduling domain).
//!
//! The counters after the fixed fields are a union over the /proc/schedstat versions
//! perf knows (15, 16, 17). perf sizes every record for the largest member (and pads to
//! 8), so a record of an older version has unused bytes after its counters: they are
//! kept in the record's extra bytes. Versions not known here keep all their bytes.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.
#![allow(missing_docs)]

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

/// The per-cpu counters of /proc/schedstat versions 15 to 17 (same fields in each).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SchedstatCpuCounters {
    pub yld_count: u32,
    pub array_exp: u32,
    pub sched_count: u32,
    pub sched_goidle: u32,
    pub ttwu_count: u32,
    pub ttwu_local: u32,
    pub rq_cpu_time: u64,
    pub run_delay: u64,
    pub pcount: u64,
}

/// The counters of a SCHEDSTAT_CPU record, by version.
#[binrw]
#[br(import(version: u16))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SchedstatCpuData {
    #[br(pre_assert(matches!(version, 15..=17)))]
    Known(SchedstatCpuCounters),
    /// A version not known here: the bytes after the fixed fields.
    #[br(pre_assert(!matches!(version, 15..=17)))]
    Unknown(
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::text::serialize_hex")]
        Vec<u8>,
    ),
}

/// SCHEDSTAT_CPU (85).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedstatCpu {
    pub timestamp: u64,
    pub cpu: u32,
    /// The /proc/schedstat version.
    pub version: u16,
    #[serde(skip)]
    pub pad: [u8; 2],
    #[br(args(version))]
    pub counters: SchedstatCpuData,
}

/// load_balance() counters of one cpu state (idle, busy, newly idle), versions 15/16.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LoadBalance {
    pub count: u32,
    pub balanced: u32,
    pub failed: u32,
    pub imbalance: u32,
    pub gained: u32,
    pub hot_gained: u32,
    pub nobusyq: u32,
    pub nobusyg: u32,
}

/// load_balance() counters of version 17, with the imbalance split four ways.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LoadBalanceV17 {
    pub count: u32,
    pub balanced: u32,
    pub failed: u32,
    pub imbalance_load: u32,
    pub imbalance_util: u32,
    pub imbalance_task: u32,
    pub imbalance_misfit: u32,
    pub gained: u32,
    pub hot_gained: u32,
    pub nobusyq: u32,
    pub nobusyg: u32,
}

/// The domain counters after the load_balance() ones (the same in versions 15 to 17).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DomainBalance {
    pub alb_count: u32,
    pub alb_failed: u32,
    pub alb_pushed: u32,
    pub sbe_count: u32,
    pub sbe_balanced: u32,
    pub sbe_pushed: u32,
    pub sbf_count: u32,
    pub sbf_balanced: u32,
    pub sbf_pushed: u32,
    pub ttwu_wake_remote: u32,
    pub ttwu_move_affine: u32,
    pub ttwu_move_balance: u32,
}

/// The counters of a SCHEDSTAT_DOMAIN record, by version. Version 15 lists the idle
/// counters first; 16 and 17 list busy first.
#[binrw]
#[br(import(version: u16))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SchedstatDomainData {
    #[br(pre_assert(version == 15))]
    V15 {
        idle: LoadBalance,
        busy: LoadBalance,
        newidle: LoadBalance,
        other: DomainBalance,
    },
    #[br(pre_assert(version == 16))]
    V16 {
        busy: LoadBalance,
        idle: LoadBalance,
        newidle: LoadBalance,
        other: DomainBalance,
    },
    #[br(pre_assert(version == 17))]
    V17 {
        busy: LoadBalanceV17,
        idle: LoadBalanceV17,
        newidle: LoadBalanceV17,
        other: DomainBalance,
    },
    /// A version not known here: the bytes after the fixed fields.
    #[br(pre_assert(!matches!(version, 15..=17)))]
    Unknown(
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::text::serialize_hex")]
        Vec<u8>,
    ),
}

/// SCHEDSTAT_DOMAIN (86).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedstatDomain {
    pub timestamp: u64,
    pub cpu: u32,
    /// The /proc/schedstat version.
    pub version: u16,
    pub domain: u16,
    #[br(args(version))]
    pub counters: SchedstatDomainData,
}
