//! perf script's listing of a `perf stat record` recording, as perf 6.1 prints it
//! (tools/perf/builtin-script.c: `process_thread_map_event`, `process_cpu_map_event`,
//! `process_stat_config_event`, `process_stat_round_event`, `__process_stat`;
//! util/stat.c: `perf_event__process_stat_event`, `perf_stat_process_counter`): each
//! STAT record stores one counter reading of an event on one (CPU, thread), and each
//! STAT_ROUND prints every event's readings, one line per thread and CPU, under a
//! header printed once.

use perfdata_core::record::{Record, RecordBody, RecordType};
use perfdata_core::{Error, Metadata, Problem, Result};

/// The record types the stat listing reads.
pub const STAT_RECORDS: &[RecordType] = &[
    RecordType::ThreadMap,
    RecordType::CpuMap,
    RecordType::StatConfig,
    RecordType::Stat,
    RecordType::StatRound,
];

/// Whether perf 6.1's `process_counter_values` turns each reading into the interval's
/// (the difference from the previous round's, scaled) under aggregation mode `mode`:
/// AGGR_NONE (0), SOCKET (2), DIE (3), CORE (4), THREAD (5) and NODE (7) do; GLOBAL (1)
/// sums the readings apart and leaves them as read, as UNSET (6) and unknown modes do.
fn per_reading(mode: u64) -> bool {
    matches!(mode, 0 | 2..=5 | 7)
}

/// One reading: perf's `struct perf_counts_values`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// The count.
    pub val: u64,
    /// Time enabled (ns).
    pub ena: u64,
    /// Time running (ns).
    pub run: u64,
}

impl Counts {
    /// perf's `perf_counts_values__scale`: a count that ran part of the time it was
    /// enabled is scaled up to the whole, one that never ran is 0.
    fn scale(&mut self) {
        if self.run == 0 {
            self.val = 0;
        } else if self.run < self.ena {
            // perf's `(u64)((double) val * ena / run)`.
            self.val = (self.val as f64 * self.ena as f64 / self.run as f64) as u64;
        }
    }
}

/// The readings of one event: perf's `counts` and `prev_raw_counts`, by CPU index and
/// thread index.
#[derive(Debug, Clone)]
struct EventCounts {
    now: Vec<Counts>,
    prev: Vec<Counts>,
}

/// The state of a stat listing between records.
#[derive(Debug, Default)]
pub struct StatListing {
    /// THREAD_MAP's pids (perf keeps the first map and warns of others).
    threads: Option<Vec<i32>>,
    /// CPU_MAP's CPUs, -1 for "any".
    cpus: Option<Vec<i32>>,
    /// By event, made at the first STAT or STAT_ROUND once both maps are known (perf
    /// makes them at `set_maps`; a `perf record` recording has the maps, never a
    /// count, and its thread map may be long).
    counts: Option<Vec<EventCounts>>,
    /// STAT_CONFIG's aggregation mode; perf script starts from a zeroed config
    /// (AGGR_NONE).
    aggr_mode: u64,
    /// STAT_CONFIG's scale term.
    scale: bool,
    header_printed: bool,
}

impl StatListing {
    /// A listing that has seen no record.
    pub fn new() -> Self {
        Self::default()
    }

    /// Take `record` (one of [`STAT_RECORDS`]) with the recording's metadata as of it,
    /// writing what perf prints for it into `out`.
    /// A record perf refuses (a STAT of an unknown event, CPU or thread) is an error
    /// naming `offset`, where the record was read.
    pub fn record(
        &mut self,
        meta: &Metadata,
        record: &Record,
        offset: u64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let invalid = |msg: String| Error::format(offset, "record STAT", Problem::Invalid(msg));
        match &record.body {
            RecordBody::ThreadMap(t) if self.threads.is_none() => {
                // perf's pid_t of the u64 pid: -1 stays -1.
                self.threads = Some(t.entries.iter().map(|e| e.pid as i32).collect());
            }
            RecordBody::CpuMap(c) if self.cpus.is_none() => {
                self.cpus = Some(c.data.cpus());
            }
            RecordBody::StatConfig(c) => {
                // perf's perf_event__read_stat_config: aggr_mode 0, interval 1, scale 2.
                for e in &c.entries {
                    match e.tag {
                        0 => self.aggr_mode = e.val,
                        2 => self.scale = e.val != 0,
                        _ => {}
                    }
                }
            }
            RecordBody::Stat(s) => {
                let event = id2evsel(meta, s.id)
                    .ok_or_else(|| invalid("Failed to resolve counter for stat event.".into()))?;
                self.set_maps(meta);
                let (cpus, nthreads) = self.shape();
                let idx = cpus.iter().position(|&c| c == s.cpu as i32);
                let slot = match (&mut self.counts, idx) {
                    (Some(counts), Some(idx)) if (s.thread as usize) < nthreads => counts
                        .get_mut(event)
                        .map(|e| &mut e.now[idx * nthreads + s.thread as usize]),
                    _ => None,
                };
                let Some(slot) = slot else {
                    return Err(invalid(format!(
                        "Invalid CPU {} or thread {} for event {}.",
                        s.cpu as i32,
                        s.thread,
                        meta.event_name(event)
                    )));
                };
                *slot = Counts {
                    val: s.val,
                    ena: s.ena,
                    run: s.run,
                };
            }
            RecordBody::StatRound(r) => {
                self.set_maps(meta);
                self.round(meta, r.time, out);
            }
            _ => {}
        }
        Ok(())
    }

    /// The CPUs and the number of threads each event is counted on.
    fn shape(&self) -> (&[i32], usize) {
        (
            self.cpus.as_deref().unwrap_or_default(),
            self.threads.as_ref().map_or(0, Vec::len),
        )
    }

    /// perf's `set_maps`: the counts are made once both maps are known.
    fn set_maps(&mut self, meta: &Metadata) {
        if self.counts.is_some() || self.threads.is_none() || self.cpus.is_none() {
            return;
        }
        let (cpus, nthreads) = self.shape();
        let zero = vec![Counts::default(); cpus.len() * nthreads];
        let events = (0..meta.attrs().len())
            .map(|_| EventCounts {
                now: zero.clone(),
                prev: zero.clone(),
            })
            .collect();
        self.counts = Some(events);
    }

    /// perf's `process_stat_round_event`: each event's readings made per-interval (its
    /// `perf_stat_process_counter`) and printed (`__process_stat`).
    fn round(&mut self, meta: &Metadata, time: u64, out: &mut Vec<u8>) {
        use std::io::Write;
        let per_reading = per_reading(self.aggr_mode);
        let scale = self.scale;
        let (cpus, threads) = (
            self.cpus.clone().unwrap_or_default(),
            self.threads.clone().unwrap_or_default(),
        );
        for (event, _) in meta.attrs().iter().enumerate() {
            if !self.header_printed {
                out.extend_from_slice(header().as_bytes());
                self.header_printed = true;
            }
            let Some(counts) = self.counts.as_mut().and_then(|c| c.get_mut(event)) else {
                continue;
            };
            if per_reading {
                for (now, prev) in counts.now.iter_mut().zip(counts.prev.iter_mut()) {
                    // perf's evsel__compute_deltas, then the scaling.
                    let raw = *now;
                    now.val = raw.val.wrapping_sub(prev.val);
                    now.ena = raw.ena.wrapping_sub(prev.ena);
                    now.run = raw.run.wrapping_sub(prev.run);
                    *prev = raw;
                    if scale {
                        now.scale();
                    }
                }
            }
            let name = meta.event_name(event);
            for (thread, pid) in threads.iter().enumerate() {
                for (idx, cpu) in cpus.iter().enumerate() {
                    let c = counts.now[idx * threads.len() + thread];
                    let _ = writeln!(out, "{}", line(*cpu, *pid, c, time, &name));
                }
            }
        }
    }
}

/// perf's evlist__id2evsel: the only event, or the first for id 0; else the event of
/// the id; else, where no event has sample_id_all, the first.
fn id2evsel(meta: &Metadata, id: u64) -> Option<usize> {
    let attrs = meta.attrs();
    if attrs.len() == 1 || id == 0 {
        return (!attrs.is_empty()).then_some(0);
    }
    meta.events()
        .event_of_id(id)
        .or_else(|| (!attrs.iter().any(|a| a.attr.sample_id_all())).then_some(0))
}

/// `__process_stat`'s header: `"%3s %8s %15s %15s %15s %15s %s\n"`.
pub fn header() -> String {
    format!(
        "{:>3} {:>8} {:>15} {:>15} {:>15} {:>15} {}\n",
        "CPU", "THREAD", "VAL", "ENA", "RUN", "TIME", "EVENT"
    )
}

/// One reading's line, without its newline: `"%3d %8d %15lu %15lu %15lu %15lu %s"`.
pub fn line(cpu: i32, pid: i32, c: Counts, time: u64, event: &str) -> String {
    format!(
        "{cpu:>3} {pid:>8} {:>15} {:>15} {:>15} {time:>15} {event}",
        c.val, c.ena, c.run
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_line_are_perfs_columns() {
        // Written from __process_stat's printf formats: %3s %8s %15s ... and
        // %3d %8d %15lu ...
        assert_eq!(
            header(),
            "CPU   THREAD             VAL             ENA             RUN            TIME EVENT\n"
        );
        let c = Counts {
            val: 50,
            ena: 10038228,
            run: 10038228,
        };
        assert_eq!(
            line(-1, 6706, c, 10444237, "page-faults"),
            " -1     6706              50        10038228        10038228        10444237 page-faults"
        );
    }

    #[test]
    fn scaling_is_perfs() {
        let mut c = Counts {
            val: 1000,
            ena: 300,
            run: 100,
        };
        c.scale();
        assert_eq!(c.val, 3000);
        let mut never = Counts {
            val: 5,
            ena: 10,
            run: 0,
        };
        never.scale();
        assert_eq!(never.val, 0);
    }
}
