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

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

/// The per-cpu counters of /proc/schedstat versions 15 to 17 (same fields in each).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SchedstatCpuCounters {
    /// sched_yield() calls.
    pub yld_count: u32,
    /// Legacy array-expired count (zero).
    pub array_exp: u32,
    /// schedule() calls.
    pub sched_count: u32,
    /// schedule() calls that left the CPU idle.
    pub sched_goidle: u32,
    /// try_to_wake_up() calls.
    pub ttwu_count: u32,
    /// Wakeups of tasks on this CPU.
    pub ttwu_local: u32,
    /// Time tasks ran on this CPU (ns).
    pub rq_cpu_time: u64,
    /// Time tasks waited to run (ns).
    pub run_delay: u64,
    /// Timeslices run on this CPU.
    pub pcount: u64,
}

/// The counters of a SCHEDSTAT_CPU record, by version.
#[binrw]
#[br(import(version: u16))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SchedstatCpuData {
    #[br(pre_assert(matches!(version, 15..=17)))]
    /// A layout this version of perfdata knows.
    Known(SchedstatCpuCounters),
    /// A version not known here: the bytes after the fixed fields.
    #[br(pre_assert(!matches!(version, 15..=17)))]
    Unknown(
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::mark::bytes")]
        Vec<u8>,
    ),
}

/// SCHEDSTAT_CPU (85).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedstatCpu {
    /// Time of the reading (ns).
    pub timestamp: u64,
    /// The CPU.
    pub cpu: u32,
    /// The /proc/schedstat version.
    pub version: u16,
    #[serde(skip)]
    /// Padding, kept as read.
    pub pad: [u8; 2],
    #[br(args(version))]
    /// The counters, in the layout of the schedstat version.
    pub counters: SchedstatCpuData,
}

/// load_balance() counters of one cpu state (idle, busy, newly idle), versions 15/16.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LoadBalance {
    /// Times load balancing was attempted.
    pub count: u32,
    /// Times the domain was found balanced.
    pub balanced: u32,
    /// Times moving tasks failed.
    pub failed: u32,
    /// Imbalance found.
    pub imbalance: u32,
    /// Tasks moved to this CPU.
    pub gained: u32,
    /// Cache-hot tasks moved anyway.
    pub hot_gained: u32,
    /// Times no busier queue was found.
    pub nobusyq: u32,
    /// Times no busier group was found.
    pub nobusyg: u32,
}

/// load_balance() counters of version 17, with the imbalance split four ways.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LoadBalanceV17 {
    /// Times load balancing was attempted.
    pub count: u32,
    /// Times the domain was found balanced.
    pub balanced: u32,
    /// Times moving tasks failed.
    pub failed: u32,
    /// Load imbalance found.
    pub imbalance_load: u32,
    /// Utilisation imbalance found.
    pub imbalance_util: u32,
    /// Task count imbalance found.
    pub imbalance_task: u32,
    /// Misfit task imbalance found.
    pub imbalance_misfit: u32,
    /// Tasks moved to this CPU.
    pub gained: u32,
    /// Cache-hot tasks moved anyway.
    pub hot_gained: u32,
    /// Times no busier queue was found.
    pub nobusyq: u32,
    /// Times no busier group was found.
    pub nobusyg: u32,
}

/// The domain counters after the load_balance() ones (the same in versions 15 to 17).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct DomainBalance {
    /// Active load balancing attempts.
    pub alb_count: u32,
    /// Active balancing that failed.
    pub alb_failed: u32,
    /// Tasks pushed by active balancing.
    pub alb_pushed: u32,
    /// Balancing attempts at exec.
    pub sbe_count: u32,
    /// Exec balancing that found the domain balanced.
    pub sbe_balanced: u32,
    /// Tasks moved at exec.
    pub sbe_pushed: u32,
    /// Balancing attempts at fork.
    pub sbf_count: u32,
    /// Fork balancing that found the domain balanced.
    pub sbf_balanced: u32,
    /// Tasks moved at fork.
    pub sbf_pushed: u32,
    /// Wakeups of tasks last run on another CPU.
    pub ttwu_wake_remote: u32,
    /// Wakeups that moved the task to the waking CPU (affine).
    pub ttwu_move_affine: u32,
    /// Wakeups that moved the task for balance.
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
    /// schedstat version 15.
    V15 {
        /// Load balancing while this CPU was idle.
        idle: LoadBalance,
        /// Load balancing while busy.
        busy: LoadBalance,
        /// Load balancing when the CPU was about to become idle.
        newidle: LoadBalance,
        /// Counters of this domain outside load balancing.
        other: DomainBalance,
    },
    #[br(pre_assert(version == 16))]
    /// schedstat version 16.
    V16 {
        /// Load balancing while busy.
        busy: LoadBalance,
        /// Load balancing while this CPU was idle.
        idle: LoadBalance,
        /// Load balancing when the CPU was about to become idle.
        newidle: LoadBalance,
        /// Counters of this domain outside load balancing.
        other: DomainBalance,
    },
    #[br(pre_assert(version == 17))]
    /// schedstat version 17.
    V17 {
        /// Load balancing while busy.
        busy: LoadBalanceV17,
        /// Load balancing while this CPU was idle.
        idle: LoadBalanceV17,
        /// Load balancing when the CPU was about to become idle.
        newidle: LoadBalanceV17,
        /// Counters of this domain outside load balancing.
        other: DomainBalance,
    },
    /// A version not known here: the bytes after the fixed fields.
    #[br(pre_assert(!matches!(version, 15..=17)))]
    Unknown(
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::mark::bytes")]
        Vec<u8>,
    ),
}

/// SCHEDSTAT_DOMAIN (86).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchedstatDomain {
    /// Time of the reading (ns).
    pub timestamp: u64,
    /// The CPU.
    pub cpu: u32,
    /// The /proc/schedstat version.
    pub version: u16,
    /// The domain number.
    pub domain: u16,
    #[br(args(version))]
    /// The counters, in the layout of the schedstat version.
    pub counters: SchedstatDomainData,
}
