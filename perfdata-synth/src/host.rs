//! The machine a synthetic trace claims to come from, and the header features perf
//! writes about it and about the recording.

use perfdata_core::feature::{
    BuildIdEntry, BuildIdList, ClockData, Compressed, CpuCoreSocket, CpuDies, CpuTopology,
    EventDesc, EventDescEntry, Feature, FeatureId, FeatureSection, Group, GroupDesc, NrCpus,
    NumaNode, NumaTopology, PerfString, PmuMapping, PmuMappings, SampleTime, StringList,
};

use super::event::EventSpec;

/// The clock id events use when the host has a clock (see [`HostInfo::clock`]).
pub const CLOCK_MONOTONIC: i32 = 1;

/// What the header says about the machine and the command. Every field is written as
/// its feature (HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS, CPUDESC, CPUID, TOTAL_MEM,
/// CMDLINE, CPU_TOPOLOGY, NUMA_TOPOLOGY, PMU_MAPPINGS, CLOCKID and CLOCK_DATA).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HostInfo {
    /// The HOSTNAME feature.
    pub hostname: String,
    /// The OSRELEASE feature (`uname -r`).
    pub os_release: String,
    /// The perf version string ("6.1.0").
    pub perf_version: String,
    /// The ARCH feature (`x86_64`).
    pub arch: String,
    /// CPUs available and online; samples are spread over them and CPU_TOPOLOGY lists
    /// one core per CPU in one socket.
    pub nr_cpus: u32,
    /// The CPUDESC feature.
    pub cpu_desc: String,
    /// The CPUID feature.
    pub cpuid: String,
    /// Total memory in kB.
    pub total_mem_kb: u64,
    /// The CMDLINE feature, word by word.
    pub cmdline: Vec<String>,
    /// CLOCKID's clock resolution in ns, and CLOCK_DATA's reference point (wall clock
    /// ns, recording clock ns) for CLOCK_MONOTONIC, which every event then uses
    /// (use_clockid, clockid 1), as `perf record -k monotonic` writes. `None` leaves
    /// both features out, as perf without `-k` does.
    pub clock: Option<(u64, u64, u64)>,
}

impl Default for HostInfo {
    fn default() -> Self {
        HostInfo {
            hostname: "synth".into(),
            os_release: "6.1.0-synth".into(),
            perf_version: "6.1.0".into(),
            arch: "x86_64".into(),
            nr_cpus: 4,
            cpu_desc: "Synthetic CPU @ 2.00GHz".into(),
            cpuid: "GenuineIntel,6,85,7".into(),
            total_mem_kb: 16 << 20,
            cmdline: vec!["perfdata".into(), "synth".into()],
            clock: None,
        }
    }
}

/// The features known only once the data is written.
#[derive(Debug, Clone, Default)]
pub struct Recorded {
    /// The tracing data blob, for tracepoint events.
    pub tracing_data: Option<Vec<u8>>,
    /// The BUILD_ID feature: a build id per DSO written.
    pub build_ids: Vec<BuildIdEntry>,
    /// The SAMPLE_TIME feature: first and last sample time (ns).
    pub sample_time: Option<(u64, u64)>,
    /// The COMPRESSED feature, when records were compressed.
    pub compressed: Option<Compressed>,
    /// Whether samples carry branch stacks (the BRANCH_STACK flag feature).
    pub branch_stack: bool,
}

/// CPU list text as perf writes it ("0-3", or "0" for one CPU).
fn cpu_range(n: u32) -> String {
    if n <= 1 {
        "0".into()
    } else {
        format!("0-{}", n - 1)
    }
}

impl HostInfo {
    /// CPU_TOPOLOGY as perf 5.3+ writes it: one socket and die holding every CPU, each
    /// CPU its own core and thread.
    fn cpu_topology(&self) -> CpuTopology {
        let n = self.nr_cpus;
        let strings =
            |v: Vec<String>| StringList::new(v.iter().map(|s| PerfString::new(s)).collect());
        CpuTopology {
            cores: strings(vec![cpu_range(n)]),
            threads: strings((0..n).map(|c| c.to_string()).collect()),
            cpus: Some(
                (0..n)
                    .map(|c| CpuCoreSocket {
                        core_id: c,
                        socket_id: 0,
                    })
                    .collect(),
            ),
            dies: Some(CpuDies {
                dies: strings(vec![cpu_range(n)]),
                die_ids: vec![0; n as usize],
            }),
        }
    }

    /// Every feature of the trace, in bit order: the machine's, the events'
    /// (EVENT_DESC, GROUP_DESC) and what `recorded` holds.
    pub fn features(
        &self,
        events: &[EventSpec],
        ids: &[Vec<u64>],
        recorded: &Recorded,
    ) -> Vec<FeatureSection> {
        let s = |v: &str| PerfString::new(v);
        let mut f = vec![
            (FeatureId::Hostname, Feature::Hostname(s(&self.hostname))),
            (
                FeatureId::OsRelease,
                Feature::OsRelease(s(&self.os_release)),
            ),
            (FeatureId::Version, Feature::Version(s(&self.perf_version))),
            (FeatureId::Arch, Feature::Arch(s(&self.arch))),
            (
                FeatureId::NrCpus,
                Feature::NrCpus(NrCpus {
                    nr_cpus_available: self.nr_cpus,
                    nr_cpus_online: self.nr_cpus,
                }),
            ),
            (FeatureId::CpuDesc, Feature::CpuDesc(s(&self.cpu_desc))),
            (FeatureId::CpuId, Feature::CpuId(s(&self.cpuid))),
            (FeatureId::TotalMem, Feature::TotalMem(self.total_mem_kb)),
            (
                FeatureId::Cmdline,
                Feature::Cmdline(StringList::new(self.cmdline.iter().map(|a| s(a)).collect())),
            ),
            (
                FeatureId::EventDesc,
                Feature::EventDesc(event_desc(events, ids)),
            ),
            (
                FeatureId::CpuTopology,
                Feature::CpuTopology(self.cpu_topology()),
            ),
            (
                FeatureId::NumaTopology,
                Feature::NumaTopology(NumaTopology::new(vec![NumaNode {
                    node: 0,
                    mem_total: self.total_mem_kb,
                    mem_free: self.total_mem_kb / 2,
                    cpus: s(&cpu_range(self.nr_cpus)),
                }])),
            ),
            (
                FeatureId::PmuMappings,
                Feature::PmuMappings(PmuMappings::new(
                    [
                        ("software", 1),
                        ("tracepoint", 2),
                        ("cpu", 4),
                        ("breakpoint", 5),
                    ]
                    .iter()
                    .map(|&(name, type_)| PmuMapping {
                        type_,
                        name: s(name),
                    })
                    .collect(),
                )),
            ),
        ];
        if let Some(groups) = group_desc(events) {
            f.push((FeatureId::GroupDesc, Feature::GroupDesc(groups)));
        }
        if let Some((res, wall, clock)) = self.clock {
            f.push((FeatureId::ClockId, Feature::ClockId(res)));
            f.push((
                FeatureId::ClockData,
                Feature::ClockData(ClockData {
                    version: 1,
                    clockid: CLOCK_MONOTONIC as u32,
                    wall_clock_ns: wall,
                    clockid_time_ns: clock,
                }),
            ));
        }
        if let Some(blob) = &recorded.tracing_data {
            f.push((FeatureId::TracingData, Feature::TracingData(blob.clone())));
        }
        if !recorded.build_ids.is_empty() {
            f.push((
                FeatureId::BuildId,
                Feature::BuildId(BuildIdList::new(recorded.build_ids.clone())),
            ));
        }
        if recorded.branch_stack {
            f.push((FeatureId::BranchStack, Feature::BranchStack));
        }
        if let Some((first, last)) = recorded.sample_time {
            f.push((
                FeatureId::SampleTime,
                Feature::SampleTime(SampleTime { first, last }),
            ));
        }
        if let Some(c) = recorded.compressed {
            f.push((FeatureId::Compressed, Feature::Compressed(c)));
        }
        f.sort_by_key(|(id, _)| id.bit());
        f.into_iter()
            .map(|(id, feature)| FeatureSection::new(id, feature))
            .collect()
    }
}

/// EVENT_DESC: every event with its attr, name and ids.
fn event_desc(events: &[EventSpec], ids: &[Vec<u64>]) -> EventDesc {
    let entries = events
        .iter()
        .zip(ids)
        .map(|(e, ids)| EventDescEntry::new(e.attr.clone(), PerfString::new(&e.name), ids.clone()))
        .collect();
    EventDesc::new(perfdata_core::attr::ATTR_SIZE_PERF_6_1 as u32, entries)
}

/// GROUP_DESC, when some events are grouped: each leader with its member count.
fn group_desc(events: &[EventSpec]) -> Option<GroupDesc> {
    let groups: Vec<Group> = events
        .iter()
        .enumerate()
        .filter_map(|(i, _)| {
            let members = events.iter().filter(|e| e.leader == Some(i)).count();
            (members > 0).then(|| Group {
                name: PerfString::new("{anon_group}"),
                leader_idx: i as u32,
                nr_members: members as u32 + 1,
            })
        })
        .collect();
    (!groups.is_empty()).then(|| GroupDesc::new(groups))
}
