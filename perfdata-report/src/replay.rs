//! Reading a recording into the process model: the side-band records and samples are put
//! in time order (perf's ordered events: a stable sort, so records of equal time keep
//! file order) and replayed, each sample resolved as it comes, against the maps and names
//! of that moment.

use std::path::Path;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::{misc, ForkExit, Mmap, Mmap2Id, RecordBody, RecordType};
use perfdata_core::{Metadata, PerfReader, Result};

use crate::process::{Location, Machine};

/// perf marks the FORK records it synthesizes for running tasks (`MISC_FORK_EXEC`): their
/// maps come as MMAP records, so the parent's are not copied.
const MISC_FORK_EXEC: u16 = 1 << 13;

/// One sample, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedSample {
    /// Index of the event (attr).
    pub event: usize,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// CPU, when the sample carries it.
    pub cpu: Option<u32>,
    /// Time (ns), when the sample carries it.
    pub time: Option<u64>,
    /// The sample's period, or the attr's fixed one when samples do not carry it.
    pub period: u64,
    /// Where the ip was.
    pub ip: Location,
    /// The callchain's frames, leaf first, PERF_CONTEXT_* markers applied and dropped
    /// (empty without PERF_SAMPLE_CALLCHAIN).
    pub callchain: Vec<Location>,
}

/// A recording replayed: the machine as it ended, and every sample resolved.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The machine as the last record left it.
    pub machine: Machine,
    /// Every SAMPLE, resolved, in file order.
    pub samples: Vec<ResolvedSample>,
    /// perf's name of each event, by index.
    pub event_names: Vec<String>,
    /// The recording's HOSTNAME and OSRELEASE features.
    pub hostname: Option<String>,
    /// The OSRELEASE feature.
    pub osrelease: Option<String>,
}

impl Replay {
    /// Whether the running kernel's symbols (/proc/kallsyms) apply to this recording, by
    /// perf 6.1's rule: when the recording names the kernel's build id, only if it is the
    /// running kernel's (/sys/kernel/notes; where that cannot be read, if the hostname
    /// and kernel release are this machine's); when it names none (pipe mode, `-z`),
    /// perf uses the running kernel's symbols whatever they are.
    pub fn kernel_is_running(&self) -> bool {
        let recorded = self
            .machine
            .dsos
            .iter()
            .find(|d| d.kernel && d.long_name == "[kernel.kallsyms]")
            .and_then(|d| d.build_id.clone());
        let Some(recorded) = recorded else {
            return true;
        };
        match std::fs::read("/sys/kernel/notes") {
            Ok(notes) => gnu_build_id(&notes).is_some_and(|b| same_build_id(b, &recorded)),
            Err(_) => self.recorded_here(),
        }
    }

    /// Whether the recording's hostname and kernel release are this machine's.
    pub fn recorded_here(&self) -> bool {
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .ok()
                .map(|s| s.trim().to_string())
        };
        let here = (
            read("/proc/sys/kernel/hostname"),
            read("/proc/sys/kernel/osrelease"),
        );
        self.hostname.is_some() && (self.hostname.clone(), self.osrelease.clone()) == here
    }
}

/// Build ids compare without the zero padding records give them.
pub fn same_build_id(a: &[u8], b: &[u8]) -> bool {
    let trim = |x: &[u8]| -> usize { x.iter().rposition(|&c| c != 0).map_or(0, |i| i + 1) };
    a[..trim(a)] == b[..trim(b)]
}

/// The NT_GNU_BUILD_ID descriptor of a run of native-endian ELF notes.
fn gnu_build_id(mut notes: &[u8]) -> Option<&[u8]> {
    let word = |b: &[u8], i: usize| -> Option<usize> {
        Some(u32::from_ne_bytes(b.get(i..i + 4)?.try_into().ok()?) as usize)
    };
    while notes.len() >= 12 {
        let (namesz, descsz, kind) = (word(notes, 0)?, word(notes, 4)?, word(notes, 8)?);
        let desc_at = 12 + namesz.div_ceil(4) * 4;
        let next = desc_at + descsz.div_ceil(4) * 4;
        let name = notes.get(12..12 + namesz)?;
        if kind == 3 && name == b"GNU\0" {
            return notes.get(desc_at..desc_at + descsz);
        }
        notes = notes.get(next..)?;
    }
    None
}

/// What the replay keeps of a record until its turn comes.
enum Event {
    Comm {
        pid: i32,
        tid: i32,
        name: String,
        exec: bool,
    },
    /// The record, and whether the parent's maps are copied.
    Fork(ForkExit, bool),
    Exit(ForkExit),
    /// MMAP, or MMAP2 as an MMAP: whether in kernel mode, and its build id.
    Mmap(Mmap, bool, Option<Vec<u8>>),
    BuildId {
        filename: String,
        build_id: Vec<u8>,
    },
    /// The sample (its locations still to find), its ip, whether in kernel mode, and its
    /// callchain's raw entries.
    Sample(ResolvedSample, u64, bool, Vec<u64>),
}

/// Read `path` and replay it.
pub fn replay(path: &Path) -> Result<Replay> {
    let mut reader = PerfReader::open(path)?;
    let mut events: Vec<(u64, Event)> = Vec::new();
    let mut all_timed = true;
    while let Some(item) = reader.next_record()? {
        // Only the records the process model or the tables use are decoded.
        if !matches!(
            item.raw.record_type(),
            RecordType::Comm
                | RecordType::Fork
                | RecordType::Exit
                | RecordType::Mmap
                | RecordType::Mmap2
                | RecordType::HeaderBuildId
                | RecordType::Sample
        ) {
            continue;
        }
        let at = item.locate();
        let (time, event_idx) = (at.time, at.event);
        let record = item.decode()?;
        let m = record.header.misc;
        let kernel_mode = m & misc::CPUMODE_MASK == misc::KERNEL;
        let ev = match record.body {
            RecordBody::Comm(c) => Event::Comm {
                pid: c.pid,
                tid: c.tid,
                name: c.comm.as_str_lossy(),
                exec: m & misc::COMM_EXEC != 0,
            },
            RecordBody::Fork(f) => Event::Fork(f, m & MISC_FORK_EXEC == 0),
            RecordBody::Exit(f) => Event::Exit(f),
            RecordBody::Mmap(mm) => Event::Mmap(mm, kernel_mode, None),
            RecordBody::Mmap2(mm) => {
                let build_id = match mm.id {
                    Mmap2Id::BuildId {
                        build_id_size,
                        build_id,
                        ..
                    } => Some(build_id[..usize::from(build_id_size).min(20)].to_vec()),
                    Mmap2Id::Inode { .. } => None,
                };
                let mm = Mmap {
                    pid: mm.pid,
                    tid: mm.tid,
                    addr: mm.addr,
                    len: mm.len,
                    pgoff: mm.pgoff,
                    filename: mm.filename,
                };
                Event::Mmap(mm, kernel_mode, build_id)
            }
            RecordBody::HeaderBuildId(b) => Event::BuildId {
                filename: b.filename.as_str_lossy(),
                build_id: b.build_id_padded.to_vec(),
            },
            RecordBody::Sample(s) => {
                let Some(event) = event_idx else { continue };
                let attr = &item.meta.attrs[event].attr;
                let pt = s.tid.unwrap_or_default();
                let sample = ResolvedSample {
                    event,
                    pid: pt.pid,
                    tid: pt.tid,
                    cpu: s.cpu.map(|c| c.cpu),
                    time: s.time,
                    period: s.period.unwrap_or(attr.sample_period),
                    ip: Location::default(),
                    callchain: Vec::new(),
                };
                let chain = s.callchain.map(|c| c.ips).unwrap_or_default();
                Event::Sample(sample, s.ip.unwrap_or(0), kernel_mode, chain)
            }
            _ => continue,
        };
        all_timed &= time.is_some();
        events.push((time.unwrap_or(0), ev));
    }
    if all_timed {
        events.sort_by_key(|(t, _)| *t);
    }
    let meta = reader.meta();
    let mut machine = Machine::new();
    add_feature_build_ids(meta, &mut machine);
    let mut samples = Vec::new();
    for (_, ev) in events {
        match ev {
            Event::Comm {
                pid,
                tid,
                name,
                exec,
            } => machine.process_comm(pid, tid, &name, exec),
            Event::Fork(f, clone_maps) => machine.process_fork(&f, clone_maps),
            Event::Exit(f) => machine.process_exit(f.pid, f.tid, f.time),
            Event::Mmap(mm, kernel, build_id) => machine.process_mmap(&mm, kernel, build_id),
            Event::BuildId { filename, build_id } => machine.add_build_id(&filename, &build_id),
            Event::Sample(mut sample, ip, kernel, chain) => {
                sample.ip = machine.resolve(sample.pid, sample.tid, ip, kernel);
                sample.callchain = resolve_chain(&mut machine, &sample, &chain);
                samples.push(sample);
            }
        }
    }
    let string_feature = |id| match meta.feature(id) {
        Some(Feature::Hostname(s)) | Some(Feature::OsRelease(s)) => Some(s.to_string()),
        _ => None,
    };
    Ok(Replay {
        event_names: (0..meta.attrs.len()).map(|i| meta.event_name(i)).collect(),
        hostname: string_feature(FeatureId::Hostname),
        osrelease: string_feature(FeatureId::OsRelease),
        machine,
        samples,
    })
}

/// PERF_CONTEXT_MAX: callchain entries at or above it are context markers.
const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
/// PERF_CONTEXT_KERNEL: the entries that follow are kernel addresses.
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;

/// Resolve a callchain as perf's `thread__resolve_callchain_sample` does: entries start
/// in user mode, a PERF_CONTEXT_KERNEL marker switches to kernel mode, any other marker
/// (USER, HV, guest) to user mode; markers are not frames.
fn resolve_chain(machine: &mut Machine, s: &ResolvedSample, chain: &[u64]) -> Vec<Location> {
    let mut kernel = false;
    let mut frames = Vec::with_capacity(chain.len());
    for &ip in chain {
        if ip >= PERF_CONTEXT_MAX {
            kernel = ip == PERF_CONTEXT_KERNEL;
            continue;
        }
        frames.push(machine.resolve(s.pid, s.tid, ip, kernel));
    }
    frames
}

/// The BUILD_ID feature's entries, known before any record.
fn add_feature_build_ids(meta: &Metadata, machine: &mut Machine) {
    if let Some(Feature::BuildId(list)) = meta.feature(FeatureId::BuildId) {
        for e in &list.entries {
            machine.add_build_id(&e.filename_str(), e.build_id());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_gnu_build_id_note() {
        let mut notes = Vec::new();
        // A "Linux" note first, then the GNU build id.
        for (name, kind, desc) in [
            (&b"Linux\0"[..], 6u32, &[1u8, 1, 0, 0][..]),
            (&b"GNU\0"[..], 3, &[0xab; 20][..]),
        ] {
            notes.extend((name.len() as u32).to_ne_bytes());
            notes.extend((desc.len() as u32).to_ne_bytes());
            notes.extend(kind.to_ne_bytes());
            notes.extend(name);
            notes.resize(notes.len().div_ceil(4) * 4, 0);
            notes.extend(desc);
        }
        assert_eq!(gnu_build_id(&notes), Some(&[0xab; 20][..]));
        assert!(same_build_id(&[1, 2, 0, 0], &[1, 2]));
        assert!(!same_build_id(&[1, 2], &[1, 3]));
    }
}
