//! The build ids of a recording's binaries, as `perf buildid-list` of perf 6.1 lists them.
//!
//! A file with a BUILD_ID feature lists its entries, in order (perf does not read the
//! records then). Otherwise (pipe streams, `perf record -z` and `--buildid-mmap` files)
//! perf reads the records and lists the binaries samples hit, each with the build id a
//! HEADER_BUILD_ID record or an MMAP2 record gave it, if any: this module does the same,
//! streaming, with maps per process to find which binary each sample's ip is in. Binaries
//! are listed in the order perf creates them: records without a time (HEADER_BUILD_ID)
//! as they are read, timed ones (MMAP, MMAP2) when perf's ordered-events queue delivers
//! them: at a FINISHED_ROUND, those up to the latest time seen at the round before, in
//! time order, and the rest at the end.

use std::collections::HashMap;

use serde::Serialize;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::{misc, ForkView, Mmap2Id, RecordBody, RecordType};
use perfdata_core::text::c_str_lossy;
use perfdata_core::u64_at;
use perfdata_core::ContainerKind;
use perfdata_core::Result;
use perfdata_core::{PerfReader, RecordRef};

/// One binary (perf's dso) and its build id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DsoBuildId {
    /// The build id in hex, empty when the recording gives none.
    pub build_id: String,
    /// The binary's path, as the recording names it.
    pub path: String,
}

impl std::fmt::Display for DsoBuildId {
    /// perf's `"%-40s %s"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:<40} {}", self.build_id, self.path)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A binary met in the records.
struct Dso {
    path: String,
    build_id: Option<Vec<u8>>,
    /// When perf creates it (delivers the first record naming it).
    created: Option<u64>,
    hit: bool,
}

/// A mapping: [start, end) of a process (or the kernel's) to a dso.
#[derive(Clone, Copy)]
struct Map {
    start: u64,
    end: u64,
    dso: usize,
}

#[derive(Default)]
struct Walk {
    dsos: Vec<Dso>,
    by_path: HashMap<String, usize>,
    /// Maps by pid; the kernel's under -1. Later maps shadow earlier ones.
    maps: HashMap<i32, Vec<Map>>,
    seq: u64,
    /// Timed records naming a dso, not yet delivered: (time, seq, dso).
    queued: Vec<(u64, u64, usize)>,
    next_flush: u64,
    max_time: u64,
    delivered: u64,
}

/// The kernel's map name in perf's MMAP records, and its dso name.
const KERNEL_MAP: &str = "[kernel.kallsyms]";

/// The dso name perf gives a mapped file name (`map__new`).
fn dso_path(name: &str, pid: i32) -> String {
    if name.starts_with(KERNEL_MAP) {
        return KERNEL_MAP.to_string();
    }
    let anon =
        name == "//anon" || name.starts_with("/dev/zero") || name.starts_with("/anon_hugepage");
    if anon {
        return format!("/tmp/perf-{pid}.map");
    }
    name.to_string()
}

impl Walk {
    /// The dso of `path`, met in a record with `time` (`None`: delivered at once).
    fn dso(&mut self, path: String, time: Option<u64>) -> usize {
        let d = *self.by_path.entry(path.clone()).or_insert_with(|| {
            self.dsos.push(Dso {
                path,
                build_id: None,
                created: None,
                hit: false,
            });
            self.dsos.len() - 1
        });
        match time {
            Some(t) => {
                self.queued.push((t, self.seq, d));
                self.max_time = self.max_time.max(t);
            }
            None => self.deliver(d),
        }
        d
    }

    fn deliver(&mut self, d: usize) {
        if self.dsos[d].created.is_none() {
            self.dsos[d].created = Some(self.delivered);
            self.delivered += 1;
        }
    }

    /// Deliver the queued records up to `limit`, in time order.
    fn flush(&mut self, limit: u64) {
        self.queued.sort_unstable();
        let n = self.queued.partition_point(|&(t, _, _)| t <= limit);
        let due: Vec<usize> = self.queued.drain(..n).map(|(_, _, d)| d).collect();
        for d in due {
            self.deliver(d);
        }
    }

    fn map(&mut self, pid: i32, start: u64, len: u64, dso: usize) {
        self.maps.entry(pid).or_default().push(Map {
            start,
            end: start.saturating_add(len),
            dso,
        });
    }

    fn find(&self, pid: i32, ip: u64) -> Option<usize> {
        self.maps
            .get(&pid)?
            .iter()
            .rev()
            .find(|m| (m.start..m.end).contains(&ip))
            .map(|m| m.dso)
    }

    fn record(&mut self, item: &RecordRef<'_>) -> Result<()> {
        self.seq += 1;
        let ty = item.raw.record_type();
        let (b, e) = (item.raw.bytes, item.meta.endian);
        match ty {
            RecordType::Sample => {
                let at = item.locate();
                // The ip where the event's layout puts it (none without PERF_SAMPLE_IP).
                let slot = at
                    .event
                    .and_then(|ev| item.meta.events().layout(ev)?.prefix().ip);
                let Some(ip) = slot.and_then(|slot| u64_at(b, slot, e)) else {
                    return Ok(());
                };
                let pid = at.pid.unwrap_or(-1);
                let kernel_start = self
                    .maps
                    .get(&-1)
                    .and_then(|m| m.iter().map(|m| m.start).min())
                    .unwrap_or(u64::MAX);
                let dso = match item.raw.header.cpumode() {
                    misc::KERNEL => self.find(-1, ip),
                    _ => self
                        .find(pid, ip)
                        .or_else(|| (ip >= kernel_start).then(|| self.find(-1, ip)).flatten()),
                };
                if let Some(d) = dso {
                    self.dsos[d].hit = true;
                }
            }
            RecordType::FinishedRound => {
                self.flush(self.next_flush);
                self.next_flush = self.max_time;
            }
            RecordType::Mmap | RecordType::Mmap2 | RecordType::HeaderBuildId => {
                let time = item.locate().time;
                let record = item.decode()?;
                match record.body {
                    RecordBody::Mmap(m) => {
                        let d = self.dso(dso_path(&c_str_lossy(&m.filename.bytes), m.pid), time);
                        self.map(m.pid, m.addr, m.len, d);
                    }
                    RecordBody::Mmap2(m) => {
                        let d = self.dso(dso_path(&c_str_lossy(&m.filename.bytes), m.pid), time);
                        if let Mmap2Id::BuildId {
                            build_id_size,
                            build_id,
                            ..
                        } = m.id
                        {
                            let id = build_id[..(build_id_size as usize).min(20)].to_vec();
                            self.dsos[d].build_id.get_or_insert(id);
                        }
                        self.map(m.pid, m.addr, m.len, d);
                    }
                    RecordBody::HeaderBuildId(h) => {
                        let id = h.build_id_bytes(record.header.misc).to_vec();
                        let d = self.dso(h.filename_str(), None);
                        self.dsos[d].build_id = Some(id);
                    }
                    _ => {}
                }
            }
            RecordType::Fork => {
                // A new process starts with a copy of its parent's maps.
                if let Ok(fork) = item.view::<ForkView>() {
                    let (pid, ppid) = (fork.pid(), fork.ppid());
                    if pid != ppid {
                        let parent = self.maps.get(&ppid).cloned().unwrap_or_default();
                        self.maps.insert(pid, parent);
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// The build ids `perf buildid-list -i` prints for the recording `reader` reads (which
/// must expand compressed records; containers it also returns are skipped).
pub fn list(mut reader: PerfReader) -> Result<Vec<DsoBuildId>> {
    let meta = reader.meta();
    let from_feature = meta.container != ContainerKind::Pipe
        && meta.feature_sections.contains_key(&FeatureId::BuildId);
    if from_feature {
        let mut seen = std::collections::HashSet::new();
        let Some(Feature::BuildId(l)) = meta.feature(FeatureId::BuildId) else {
            return Ok(Vec::new());
        };
        return Ok(l
            .entries
            .iter()
            .filter(|e| seen.insert(e.filename_str()))
            .map(|e| DsoBuildId {
                build_id: hex(e.build_id()),
                path: e.filename_str(),
            })
            .collect());
    }
    let mut walk = Walk::default();
    while let Some(item) = reader.next_record()? {
        if !item.raw.is_compressed() {
            walk.record(&item)?;
        }
    }
    walk.flush(u64::MAX);
    let mut hit: Vec<&Dso> = walk.dsos.iter().filter(|d| d.hit).collect();
    hit.sort_by_key(|d| d.created);
    Ok(hit
        .into_iter()
        .map(|d| DsoBuildId {
            build_id: d.build_id.as_deref().map(hex).unwrap_or_default(),
            path: d.path.clone(),
        })
        .collect())
}
