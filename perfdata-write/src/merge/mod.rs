//! Several recordings as one ([`Merge`], a conversion's [`Source`]): the records of
//! every input in perf's time order, in one streaming pass, as one recording perf reads.
//!
//! - **Events**: events with equal attrs (type, config and every field that shapes
//!   their records) become one event; the others stay separate, with their names.
//! - **Sample ids** are remapped so that none clash: the first input's are kept, a
//!   later input's that another already has move above every id; every SAMPLE's and
//!   sample_id trailer's ID and IDENTIFIER, the ids of LOST, THROTTLE, EVENT_UPDATE and
//!   ID_INDEX, and the attrs' id lists are rewritten. With several events that perf could not tell apart by their
//!   records (no id, or ids at different places), IDENTIFIER is added to every event
//!   and inserted into its records.
//! - **Hosts**: inputs whose HOSTNAME differs from the first's have their pids and tids
//!   moved by an offset per host (the second host's `pid_offset`, the third's twice
//!   that; by default 4194304, Linux's largest pid_max, so that no two hosts' pids can
//!   meet); inputs of one host keep theirs. pid 0 (the idle task) and -1 stay.
//! - **Time**: each input is read in perf's order (its ordered-events queue, let out by
//!   FINISHED_ROUND) and the inputs merged k-way by time; a record without time follows
//!   its input's previous record. Each input keeps its clock, or, with
//!   [`Align::Start`], is shifted so that its first sample has the first input's
//!   first sample time, or, with [`Align::Clock`], put on the first input's clock by
//!   the CLOCK_DATA features (wall-clock time). Inputs whose clocks cannot be compared
//!   (other hosts, other clockids) and kept as they are, are said in a warning. The inputs' FINISHED_ROUND records are regenerated: one every
//!   [`ROUND_RECORDS`] records of the output, which is in time order. Memory: about two
//!   rounds of each input.
//! - **Features**: see `features`: BUILD_ID the union, HOSTNAME and CMDLINE the first
//!   input's with a warning naming the others, EVENT_DESC for the merged events,
//!   SAMPLE_TIME derived from the samples written, TRACING_DATA the first input's that
//!   has one, the rest the first input's with a warning for each that differs elsewhere.
//!   THREAD_MAP and CPU_MAP records are the first input's.
//! - **Not merged**: AUX area traces and `perf stat record` counts are refused by name.
//! - **The same recording twice** (the same file, or the same host, ids and sample
//!   times) is refused unless [`MergeOptions::allow_duplicates`]: then its samples
//!   count twice.
//!
//! ```
//! use perfdata_write::merge::{Merge, MergeOptions};
//! use perfdata_write::{Conversion, Sink};
//!
//! let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/");
//! let inputs = [format!("{dir}file-cpu-clock.data"), format!("{dir}file-multi-event.data")];
//! let merge = Merge::open(&inputs, &MergeOptions::default())?;
//! let mut out = std::io::Cursor::new(Vec::new());
//! Conversion::new(merge).write(Sink::seekable(&mut out, None))?;
//! let merged = perfdata_core::PerfReader::from_vec(out.into_inner(), Default::default())?;
//! // cpu-clock alone, and three other events.
//! assert_eq!(merged.meta().attrs().len(), 4);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod clock;
mod events;
mod features;
mod feed;
mod rewrite;
#[cfg(test)]
mod tests;

use std::path::Path;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::{Origin, OwnedRecord};
use perfdata_core::record::{RecordHeader, RecordType};
use perfdata_core::{ContainerKind, Metadata, RecordRef};

use crate::convert::{Needs, Source};
use crate::error::{Result, WriteError};
use clock::{clock_warning, Clock};
use events::EventMap;
use feed::Feed;
use rewrite::Shift;

/// The pid offset between hosts by default: Linux's largest pid_max (`PID_MAX_LIMIT`
/// on 64-bit), so that no pid of one host can meet another's.
pub const PID_RANGE: u32 = 1 << 22;

/// A FINISHED_ROUND is written after this many records of the output.
pub const ROUND_RECORDS: usize = 10_000;

/// How the inputs' clocks are put together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Align {
    /// Each input keeps its clock (recordings of one host share it).
    #[default]
    Keep,
    /// Each input is shifted so that its first sample has the first input's first
    /// sample time (from the SAMPLE_TIME feature).
    Start,
    /// Each input is put on the first input's clock by the CLOCK_DATA feature (the
    /// wall-clock time of one moment of its sampling clock, which `perf record
    /// --clockid` writes): a sample at wall-clock time W in any input is at the first
    /// input's time of W. Recordings of different hosts (NTP-synchronised) or with
    /// different clocks then line up as they ran. Inputs on one clock (one host's,
    /// one clockid, one boot) keep their times as each other's: their CLOCK_DATA
    /// references differ by gettimeofday's microsecond, not by a shift.
    Clock,
}

/// What a merge is asked to do.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions {
    /// The pids of the n-th host (in the inputs' order, the first host 0th) move by n
    /// times this; `None`: [`PID_RANGE`].
    pub pid_offset: Option<u32>,
    /// The clocks.
    pub align: Align,
    /// Merge a recording with itself (the same file, or the same host, ids and sample
    /// times): its samples then count twice. Refused otherwise.
    pub allow_duplicates: bool,
}

/// What a merge does to one input: printed as the pid table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedInput {
    /// The input's path.
    pub path: String,
    /// Its HOSTNAME feature.
    pub hostname: Option<String>,
    /// Added to its pids and tids (0: kept).
    pub pid_offset: u32,
    /// Added to its times, in ns (0: its clock kept).
    pub time_delta: i64,
}

/// Several recordings merged into one, as a [`Source`] of a
/// [`Conversion`](crate::Conversion) (see the module's documentation).
pub struct Merge {
    feeds: Vec<Feed>,
    meta: Metadata,
    map: EventMap,
    inputs: Vec<MergedInput>,
    current: Option<OwnedRecord>,
    /// Records handed out since the last FINISHED_ROUND.
    since_round: usize,
    /// Whether the record handed out last was a FINISHED_ROUND (or none was).
    finished: bool,
}

impl Merge {
    /// Open `paths` (files, pipe-mode files, directories, compressed or not; `-` for
    /// stdin once) and work out the merged events, ids, pid offsets and features.
    pub fn open<P: AsRef<Path>>(paths: &[P], opts: &MergeOptions) -> Result<Merge> {
        if paths.len() < 2 {
            return Err(WriteError::unsupported(
                None,
                "a merge needs two inputs or more",
            ));
        }
        if paths
            .iter()
            .filter(|p| p.as_ref().as_os_str() == "-")
            .count()
            > 1
        {
            return Err(WriteError::unsupported(
                None,
                "stdin (-) can be read only once",
            ));
        }
        let mut feeds = paths
            .iter()
            .enumerate()
            .map(|(i, p)| Feed::open(p.as_ref(), i))
            .collect::<Result<Vec<_>>>()?;
        let names: Vec<String> = feeds.iter().map(|f| f.name.clone()).collect();
        if !opts.allow_duplicates {
            refuse_duplicates(paths, &feeds)?;
        }
        let endian = feeds[0].meta().endian;
        if let Some(f) = feeds.iter().find(|f| f.meta().endian != endian) {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "{} is {:?}-endian and {} is not: convert one with --endian first",
                    f.name,
                    f.meta().endian,
                    names[0]
                ),
            ));
        }
        let inputs = plan_inputs(&feeds, opts)?;
        for (feed, plan) in feeds.iter_mut().zip(&inputs) {
            feed.shift.pid_offset = plan.pid_offset;
            feed.shift.time_delta = plan.time_delta;
        }
        let metas: Vec<&Metadata> = feeds.iter().map(|f| f.meta()).collect();
        let map = EventMap::new(&metas, &names)?;
        let shifts: Vec<Shift> = feeds.iter().map(|f| f.shift).collect();
        let mut meta = metas[0].clone();
        let warnings = features::merge(&mut meta, &metas, &names, &map, &shifts);
        // Not one input's file: its sections, compression and state do not apply.
        meta.container = ContainerKind::Directory;
        meta.header = None;
        meta.feature_sections.clear();
        meta.feature_index_slack.clear();
        meta.saw_feature_end_marker = false;
        meta.compression_record = None;
        meta.unfinished = false;
        meta.warnings.clear();
        meta.set_attrs(map.attrs.clone());
        for w in warnings
            .into_iter()
            .chain(clock_warning(&feeds, &inputs, opts.align))
            .chain(unknown_hosts(&feeds, &inputs))
            .chain(kernels_apart(&feeds, &inputs))
        {
            meta.warn(None, w);
        }
        Ok(Merge {
            feeds,
            meta,
            map,
            inputs,
            current: None,
            since_round: 0,
            finished: true,
        })
    }

    /// What the merge does to each input (its pid offset and time shift), in order.
    pub fn inputs(&self) -> &[MergedInput] {
        &self.inputs
    }

    /// The earliest record of the inputs: its feed.
    fn earliest(&mut self) -> Result<Option<usize>> {
        let mut best: Option<(u64, usize)> = None;
        for (i, feed) in self.feeds.iter_mut().enumerate() {
            if let Some(t) = feed.peek(&self.map, &self.meta)? {
                if best.is_none_or(|(bt, _)| t < bt) {
                    best = Some((t, i));
                }
            }
        }
        Ok(best.map(|(_, i)| i))
    }

    /// At the end: the inputs' warnings, and the build ids of HEADER_BUILD_ID records met
    /// among a stream's data (`perf inject -b`), join the merged metadata (a file's
    /// features are written last).
    fn finish(&mut self) {
        let metas: Vec<&Metadata> = self.feeds.iter().map(|f| f.meta()).collect();
        let shifts: Vec<Shift> = self.feeds.iter().map(|f| f.shift).collect();
        if let Some(section) = features::build_ids(&metas, &shifts) {
            self.meta.features.insert(FeatureId::BuildId, section);
            self.meta.features.sort_by_key(|id, _| id.bit());
        }
        let extra: Vec<_> = self
            .feeds
            .iter()
            .flat_map(|f| {
                let name = f.name.clone();
                f.meta()
                    .warnings
                    .iter()
                    .map(move |w| format!("{name}: {w}"))
                    .collect::<Vec<_>>()
            })
            .collect();
        for w in extra {
            self.meta.warn(None, w);
        }
        self.feeds.clear();
    }
}

/// A FINISHED_ROUND record.
fn round(endian: perfdata_core::Endian) -> Result<OwnedRecord> {
    let header = RecordHeader::new(RecordType::FinishedRound, 0, 8);
    Ok(OwnedRecord {
        bytes: perfdata_core::encode(&header, endian, ())?,
        payload: Vec::new(),
        rest: 0,
        offset: 0,
        origin: Origin::Top,
        stream: 0,
    })
}

impl Source for Merge {
    fn meta(&self) -> &Metadata {
        &self.meta
    }

    fn prepare(&mut self, _needs: Needs) -> Result<()> {
        // Every input is read as a merge needs it, when opened.
        Ok(())
    }

    fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        if self.feeds.is_empty() {
            return Ok(None);
        }
        let record = if self.since_round >= ROUND_RECORDS && !self.finished {
            self.since_round = 0;
            self.finished = true;
            round(self.meta.endian)?
        } else {
            let Some(i) = self.earliest()? else {
                self.finish();
                return Ok(None);
            };
            self.since_round += 1;
            self.finished = false;
            self.feeds[i].take().expect("peeked")
        };
        let current = self.current.insert(record);
        Ok(Some(RecordRef::new(
            current.as_raw(self.meta.endian),
            &self.meta,
        )))
    }

    fn payload_chunk(&mut self) -> Result<Option<&[u8]>> {
        // Records with payloads too large to hold are refused by the feeds.
        Ok(None)
    }
}

/// The HOSTNAME of a recording.
fn hostname(meta: &Metadata) -> Option<String> {
    match meta.feature(FeatureId::Hostname) {
        Some(Feature::Hostname(s)) => Some(s.as_str_lossy()),
        _ => None,
    }
}

/// A warning for each input without a HOSTNAME feature (a pipe stream cut before its
/// features, a damaged file) whose pids were moved: it is taken as another host, which
/// may be wrong.
fn unknown_hosts(feeds: &[Feed], inputs: &[MergedInput]) -> Vec<String> {
    feeds
        .iter()
        .zip(inputs)
        .filter(|(_, i)| i.hostname.is_none() && i.pid_offset != 0)
        .map(|(f, i)| {
            format!(
                "{}: no HOSTNAME feature: taken as another host, its pids moved by {} \
                 (--pid-offset 0 keeps every input's pids)",
                f.name, i.pid_offset
            )
        })
        .collect()
}

/// The first sample time of a recording, from SAMPLE_TIME.
fn first_sample(meta: &Metadata) -> Option<u64> {
    match meta.feature(FeatureId::SampleTime) {
        Some(Feature::SampleTime(t)) if t.first != 0 => Some(t.first),
        _ => None,
    }
}

/// Each input's pid offset (by host) and time shift.
fn plan_inputs(feeds: &[Feed], opts: &MergeOptions) -> Result<Vec<MergedInput>> {
    let step = opts.pid_offset.unwrap_or(PID_RANGE);
    let mut hosts: Vec<Option<String>> = Vec::new();
    let first_start = match opts.align {
        Align::Start => Some(i128::from(
            first_sample(feeds[0].meta()).ok_or_else(|| no_time(&feeds[0]))?,
        )),
        _ => None,
    };
    // With --align clock: the clocks met so far and the shift each was given.
    let mut clocks: Vec<(Clock, i128)> = Vec::new();
    let mut out = Vec::with_capacity(feeds.len());
    for feed in feeds {
        let host = hostname(feed.meta());
        let n = match hosts.iter().position(|h| *h == host) {
            Some(n) => n,
            None => {
                hosts.push(host.clone());
                hosts.len() - 1
            }
        };
        let pid_offset = (n as u64) * step as u64;
        if pid_offset + PID_RANGE as u64 > i32::MAX as u64 {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "{}: a pid offset of {pid_offset} (host {} of the inputs, --pid-offset \
                     {step}) leaves no room for its pids below 2^31",
                    feed.name,
                    n + 1
                ),
            ));
        }
        let delta = match (opts.align, first_start) {
            // A start is the first sample's time.
            (Align::Start, Some(t0)) => {
                t0 - i128::from(first_sample(feed.meta()).ok_or_else(|| no_time(feed))?)
            }
            (Align::Clock, _) => {
                let clock = Clock::of(feed, host.clone())?;
                match clocks.iter().find(|(c, _)| c.same_as(&clock)) {
                    // The same clock as an input's before: its times are that clock's,
                    // shifted alike. (CLOCK_DATA's wall time is gettimeofday's, to the
                    // microsecond, read apart from the clock's: two references of one
                    // clock differ by a microsecond or so, which is no shift.)
                    Some((_, delta)) => *delta,
                    // A clock's origin is wall time minus clock time: a time t of this
                    // input is at wall time t + origin, the first input's time t +
                    // origin - origin0.
                    None => {
                        let delta = clocks.first().map_or(0, |(c0, _)| clock.origin - c0.origin);
                        clocks.push((clock, delta));
                        delta
                    }
                }
            }
            _ => 0,
        };
        let time_delta = i64::try_from(delta).map_err(|_| {
            WriteError::unsupported(
                None,
                format!(
                    "{}: {delta} ns from {}'s clock, beyond what a sample time can be moved",
                    feed.name, feeds[0].name
                ),
            )
        })?;
        out.push(MergedInput {
            path: feed.name.clone(),
            hostname: host,
            pid_offset: pid_offset as u32,
            time_delta,
        });
    }
    Ok(out)
}

/// The build id of the kernel a recording ran on (its BUILD_ID entry for the host's
/// `[kernel.kallsyms]`), in hex.
fn kernel_build_id(meta: &Metadata) -> Option<String> {
    let Some(Feature::BuildId(list)) = meta.feature(FeatureId::BuildId) else {
        return None;
    };
    list.entries
        .iter()
        .find(|e| e.pid == -1 && e.filename.as_str_lossy() == "[kernel.kallsyms]")
        .map(|e| e.build_id().iter().map(|b| format!("{b:02x}")).collect())
}

/// A warning when the inputs ran on several kernels (other hosts, or other kernel build
/// ids): perf keeps one kernel per machine, so a reader of the merged file names every
/// kernel address with one of them, and the others' kernel frames show as addresses or
/// wrong names. It names each host (and kernel) with its inputs, and what to use
/// instead.
fn kernels_apart(feeds: &[Feed], inputs: &[MergedInput]) -> Option<String> {
    // (host, kernel build id) and the inputs that ran there.
    type Kernel = (Option<String>, Option<String>);
    let mut groups: Vec<(Kernel, Vec<&str>)> = Vec::new();
    let keys: Vec<Kernel> = feeds
        .iter()
        .zip(inputs)
        .map(|(feed, input)| (input.hostname.clone(), kernel_build_id(feed.meta())))
        .collect();
    for (feed, (host, kernel)) in feeds.iter().zip(&keys) {
        // A recording that names no kernel (perf 6.1's pipe mode writes no BUILD_ID) is
        // no other kernel than its host's one named kernel.
        let mut named: Vec<&String> = keys
            .iter()
            .filter(|(h, _)| h == host)
            .filter_map(|(_, k)| k.as_ref())
            .collect();
        named.sort();
        named.dedup();
        let kernel = match (kernel, &named[..]) {
            (None, [only]) => Some((*only).clone()),
            _ => kernel.clone(),
        };
        let key = (host.clone(), kernel);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(&feed.name),
            None => groups.push((key, vec![&feed.name])),
        }
    }
    if groups.len() < 2 {
        return None;
    }
    // Kernels are said only where two named ones differ: a recording that names none
    // (no kernel sample, so perf wrote no kernel build id) is not another kernel, and
    // saying the other's id then read as if it were (and varied with whether the
    // recording happened to sample the kernel).
    let mut named: Vec<&String> = groups.iter().filter_map(|((_, k), _)| k.as_ref()).collect();
    named.sort();
    named.dedup();
    let kernels_differ = named.len() > 1;
    let said: Vec<String> = groups
        .iter()
        .map(|((host, kernel), names)| {
            let host = host.as_deref().unwrap_or("no hostname");
            let short = |k: &String| k.chars().take(12).collect::<String>();
            match kernel.as_ref().filter(|_| kernels_differ) {
                Some(k) => format!("host {host}, kernel {} ({})", short(k), names.join(", ")),
                None => format!("host {host} ({})", names.join(", ")),
            }
        })
        .collect();
    Some(format!(
        "the inputs ran on {} kernels: {}. A perf.data holds one kernel per machine: perf \
         report and perf script of the merged file (and perfdata's) name kernel frames with \
         the kernel read last, the others' show as [unknown] or wrong names. For every \
         input's kernel frames, use perfdata export --format parquet of the inputs (each \
         read with its own kernel), or one merge per host and kernel",
        groups.len(),
        said.join("; ")
    ))
}

fn no_time(feed: &Feed) -> WriteError {
    WriteError::unsupported(
        None,
        format!(
            "{}: no SAMPLE_TIME feature to align its start by (a pipe stream has none: \
             convert it to a file first)",
            feed.name
        ),
    )
}

/// Refuse the same recording twice: the same file, or the same host, event ids and
/// sample times (a copy).
fn refuse_duplicates<P: AsRef<Path>>(paths: &[P], feeds: &[Feed]) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let identity = |p: &Path| {
        (p.as_os_str() != "-")
            .then(|| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino())))
            .flatten()
    };
    // SAMPLE_TIME's both ends: `perf record -N --switch-output` rotations of one run share
    // the host, the ids and the run's first sample time, and only their last differs.
    let fingerprint = |m: &Metadata| {
        let ids: Vec<Vec<u64>> = m.attrs().iter().map(|a| a.ids.clone()).collect();
        let last = match m.feature(FeatureId::SampleTime) {
            Some(Feature::SampleTime(t)) => Some(t.last),
            _ => None,
        };
        (hostname(m), ids, first_sample(m), last)
    };
    for j in 1..feeds.len() {
        for i in 0..j {
            let same_file =
                identity(paths[i].as_ref()).is_some_and(|a| identity(paths[j].as_ref()) == Some(a));
            let (a, b) = (fingerprint(feeds[i].meta()), fingerprint(feeds[j].meta()));
            let copy = a == b && a.2.is_some() && a.1.iter().any(|ids| !ids.is_empty());
            if same_file || copy {
                return Err(WriteError::unsupported(
                    None,
                    format!(
                        "{} and {} are the same recording{}: its samples would count twice \
                         (allow it with --allow-duplicates)",
                        feeds[i].name,
                        feeds[j].name,
                        if same_file {
                            ""
                        } else {
                            " (same host, event ids and sample times)"
                        }
                    ),
                ));
            }
        }
    }
    Ok(())
}
