//! The Firefox Profiler's processed format (version 55), written by the
//! fxprof-processed-profile crate, its `meta` mended to that version's types (see
//! [`write_firefox`]; the profiler loads it as it is): one thread per track (event,
//! process, thread and name: an exec starts a new thread, as it starts a new program), in
//! one process per event, pid and name, named as [`Stacks::track_name`] names it; each
//! sample at its time, with weight 1, its stack of frames labelled as `perf script` names
//! them (but an address without a symbol is `[unknown] in` its DSO, a function per
//! library as samply's are), in the category User or Kernel. Times are relative to the
//! first sample; samples of the software clocks (with any modifiers: `cpu-clock:ppp`)
//! carry their period as CPU time, in nanoseconds. A recording without samples is an
//! error.
//!
//! The crate holds a whole profile in memory, every sample and every thread's tables, so
//! it is asked for less, one thread at a time. A skeleton of the profile (every process
//! and thread, no stacks) gives the profile's members and the threads' order and ids;
//! then each thread is laid out alone in a profile of its own, given one sample per
//! distinct stack (which makes the crate lay out its stack, frame and function tables
//! and tell each stack's index), and written in its place, its samples table replaced by
//! the thread's samples spooled on disk, in time order. A thread's JSON depends on its
//! process and on itself alone, but for the pid and tid, which the crate makes unique
//! over the whole profile (`1234.1`): those are the skeleton's.

use std::collections::HashMap;
use std::io::{self, Write};

use fxprof_processed_profile::{
    CategoryColor, CategoryPairHandle, CpuDelta, Frame, FrameFlags, FrameInfo, Profile,
    ReferenceTimestamp, SamplingInterval, Timestamp,
};
use rustc_hash::FxHashMap;
use serde::de::IgnoredAny;
use serde_json::{Map, Value};

use crate::process::Dso;
use crate::stacks::{Detail, StackId, Stacks, Track, TrackInfo, TrackSamples, When};

/// perf's default sampling rate (4000 Hz) as the profile's nominal interval; samples
/// carry their own times.
const INTERVAL_NANOS: u64 = 250_000;

/// Where a thread's samples table starts in the crate's JSON (a key no string can hold:
/// quotes in strings are escaped).
const SAMPLES: &[u8] = b"\"samples\":{\"length\":";

/// A profile with the categories every profile here has: (profile, User, Kernel).
fn new_profile(product: &str) -> (Profile, CategoryPairHandle, CategoryPairHandle) {
    let mut p = Profile::new(
        product,
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_nanos(INTERVAL_NANOS),
    );
    let user: CategoryPairHandle = p.add_category("User", CategoryColor::Yellow).into();
    let kernel: CategoryPairHandle = p.add_category("Kernel", CategoryColor::Orange).into();
    (p, user, kernel)
}

/// How the threads are laid out: per track, its process's name and start, its own
/// start, and its distinct stacks in the order of their first samples.
struct Layout<'a> {
    stacks: &'a Stacks,
    /// The DSOs, which name the frames without a symbol.
    dsos: &'a [Dso],
    tracks: &'a [TrackInfo<'a>],
    /// Per track: (process name, process start, thread start), in nanoseconds.
    starts: Vec<(String, u64, u64)>,
    distinct: Vec<Vec<StackId>>,
}

impl<'a> Layout<'a> {
    fn new(
        stacks: &'a Stacks,
        dsos: &'a [Dso],
        tracks: &'a [TrackInfo<'a>],
        at: &impl Fn(When) -> u64,
    ) -> Self {
        // The profiler names a main thread after its process: a process per (event, pid,
        // name) keeps each thread's title its track's. It starts with its first track.
        let mut processes: HashMap<(usize, i32, &str), (String, u64)> = HashMap::new();
        let starts = tracks
            .iter()
            .map(|t| {
                let track = t.track;
                let start = at(t.first);
                let (name, process_start) = processes
                    .entry((track.event, track.pid, &track.comm))
                    .or_insert_with(|| {
                        let leader = Track {
                            tid: track.pid,
                            ..track.clone()
                        };
                        (stacks.track_name(&leader), start)
                    })
                    .clone();
                (name, process_start, start)
            })
            .collect();
        let index: HashMap<&Track, usize> = tracks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.track, i))
            .collect();
        let mut distinct: Vec<Vec<StackId>> = vec![Vec::new(); tracks.len()];
        for c in stacks.counts() {
            // Counts are per track and stack (Detail::Samples), first seen first.
            distinct[index[c.track]].push(c.stack);
        }
        Layout {
            stacks,
            dsos,
            tracks,
            starts,
            distinct,
        }
    }

    /// Every process and thread in the order the crate was given them when it was given
    /// every sample, each thread with one sample at the time of its number in `tracks`
    /// (in nanoseconds), so that its samples table tells which thread it is.
    fn skeleton(&self, product: &str) -> Profile {
        let (mut p, _, _) = new_profile(product);
        let mut processes = HashMap::new();
        for (k, t) in self.tracks.iter().enumerate() {
            let track = t.track;
            let (name, process_start, start) = &self.starts[k];
            let process = *processes
                .entry((track.event, track.pid, &track.comm))
                .or_insert_with(|| {
                    let at = Timestamp::from_nanos_since_reference(*process_start);
                    p.add_process(name, track.pid as u32, at)
                });
            let at = Timestamp::from_nanos_since_reference(*start);
            let thread = p.add_thread(process, track.tid as u32, at, track.pid == track.tid);
            p.set_thread_name(thread, &self.stacks.track_name(track));
            let time = Timestamp::from_nanos_since_reference(k as u64);
            p.add_sample(thread, time, None, CpuDelta::ZERO, 1);
        }
        p
    }

    /// Track `k`'s thread alone in a profile, given one sample per distinct stack, in
    /// the order of their first samples (the order the crate interned them in when it
    /// was given every sample), frames labelled in that order too.
    fn thread(&self, k: usize, product: &str) -> Profile {
        let (mut p, user, kernel) = new_profile(product);
        let track = self.tracks[k].track;
        let (name, process_start, start) = &self.starts[k];
        let process_at = Timestamp::from_nanos_since_reference(*process_start);
        let process = p.add_process(name, track.pid as u32, process_at);
        let at = Timestamp::from_nanos_since_reference(*start);
        let thread = p.add_thread(process, track.tid as u32, at, track.pid == track.tid);
        p.set_thread_name(thread, &self.stacks.track_name(track));
        let mut labels = HashMap::new();
        for &stack in &self.distinct[k] {
            let frames: Vec<FrameInfo> = self
                .stacks
                .frames_of(stack)
                .into_iter()
                .map(|f| {
                    let frame = self.stacks.frame(f);
                    let label = *labels
                        .entry(f)
                        .or_insert_with(|| p.intern_string(&self.label(&frame)));
                    FrameInfo {
                        frame: Frame::Label(label),
                        category_pair: if frame.kernel { kernel } else { user },
                        flags: FrameFlags::empty(),
                    }
                })
                .collect();
            let stack = p.intern_stack_frames(thread, frames.into_iter());
            p.add_sample(
                thread,
                Timestamp::from_nanos_since_reference(0),
                stack,
                CpuDelta::ZERO,
                1,
            );
        }
        p
    }
}

impl Layout<'_> {
    /// A frame's function: its name, or for an address without a symbol `[unknown] in`
    /// its DSO, a function per library as samply's are (one `[unknown]` function would
    /// merge every library's unknown code into one node of the call tree).
    fn label(&self, frame: &crate::stacks::Frame<'_>) -> String {
        match (frame.function, frame.dso) {
            (None, Some(d)) => format!("[unknown] in {}", self.dsos[d].short_name),
            _ => frame.name().to_string(),
        }
    }
}

/// What [`write_firefox`] reads of a thread in the crate's JSON.
#[derive(serde::Deserialize)]
struct ThreadIds {
    pid: String,
    tid: String,
    samples: ProbeTable,
}

/// A thread's samples table as the crate wrote it for the probe samples.
#[derive(serde::Deserialize)]
struct ProbeTable {
    stack: Vec<Option<usize>>,
    #[serde(rename = "timeDeltas")]
    time_deltas: Vec<f64>,
}

/// The JSON value at the start of `json` and the bytes it takes.
fn value_len(json: &[u8]) -> io::Result<usize> {
    let mut values = serde_json::Deserializer::from_slice(json).into_iter::<IgnoredAny>();
    values
        .next()
        .ok_or_else(|| io::Error::other("fxprof-processed-profile: a value is missing"))??;
    Ok(values.byte_offset())
}

/// The first place `needle` is in `hay`.
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `json` split at the first `needle`, which goes with the part before.
fn split_after<'j>(json: &'j [u8], needle: &[u8]) -> io::Result<(&'j [u8], &'j [u8])> {
    let at = find(json, needle).ok_or_else(|| {
        io::Error::other(format!(
            "fxprof-processed-profile: no {}",
            String::from_utf8_lossy(needle)
        ))
    })?;
    Ok(json.split_at(at + needle.len()))
}

/// Write the profile of `stacks` as JSON, its `meta` as the profiler's version 55 types
/// define it: with `stackwalk` (1 when any sample has a callchain), without
/// `pausedRanges`. A recording without samples is an error: it would be a profile without
/// threads, which the profiler refuses to load ("there is nothing to display").
/// `stacks` must have been collected for [`Detail::Samples`].
pub fn write_firefox(
    out: &mut dyn Write,
    stacks: &Stacks,
    dsos: &[Dso],
    product: &str,
) -> io::Result<()> {
    stacks.require(Detail::Samples, "the Firefox Profiler's format")?;
    if stacks.samples() == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the recording has no samples to export",
        ));
    }
    let tracks = stacks.tracks();
    let first = stacks.time_span().map_or(0, |(first, _)| first);
    // Without times, samples are spaced by the nominal interval in the recording's order.
    let at = move |w: When| match w {
        When::Time(t) => t.saturating_sub(first),
        When::Nth(i) => i.saturating_mul(INTERVAL_NANOS),
    };
    let layout = Layout::new(stacks, dsos, &tracks, &at);
    // Each track's samples in time order (equal times in the recording's order).
    let samples = stacks.track_samples(&tracks, at)?;
    let skeleton = serde_json::to_vec(&layout.skeleton(product))?;
    // {"meta":{...},"libs":[...],"threads":[{...},...],"pages":...
    let rest = skeleton
        .strip_prefix(b"{\"meta\":")
        .ok_or_else(|| io::Error::other("fxprof-processed-profile: meta is not first"))?;
    let meta_len = value_len(rest)?;
    let mut meta: Map<String, Value> = serde_json::from_slice(&rest[..meta_len])?;
    // Stacks were walked if any sample has callers (without a callchain, only its ip).
    let stackwalk = stacks.counts().any(|c| stacks.frames_of(c.stack).len() > 1);
    fix_meta(&mut meta, stackwalk);
    out.write_all(b"{\"meta\":")?;
    serde_json::to_writer(&mut *out, &meta)?;
    let (head, mut rest) = split_after(&rest[meta_len..], b"\"threads\":[")?;
    out.write_all(head)?;
    for i in 0..tracks.len() {
        if i > 0 {
            rest = rest.strip_prefix(b",").ok_or_else(|| {
                io::Error::other("fxprof-processed-profile: threads are not a list")
            })?;
            out.write_all(b",")?;
        }
        let len = value_len(rest)?;
        let ids: ThreadIds = serde_json::from_slice(&rest[..len])?;
        rest = &rest[len..];
        // The thread's number is its probe sample's time, in nanoseconds.
        let k = ids
            .samples
            .time_deltas
            .first()
            .map(|ms| (ms * 1_000_000.0).round() as usize)
            .filter(|&k| k < tracks.len())
            .ok_or_else(|| io::Error::other("fxprof-processed-profile: a thread of no track"))?;
        write_thread(out, &layout, k, product, &ids, &samples, &at)?;
    }
    out.write_all(rest)?;
    writeln!(out)
}

/// Track `k`'s thread as the crate writes it, its samples table the thread's samples and
/// its pid and tid `ids`'.
fn write_thread(
    out: &mut dyn Write,
    layout: &Layout<'_>,
    k: usize,
    product: &str,
    ids: &ThreadIds,
    samples: &TrackSamples,
    at: &impl Fn(When) -> u64,
) -> io::Result<()> {
    let json = serde_json::to_vec(&layout.thread(k, product))?;
    let (_, rest) = split_after(&json, b"\"threads\":[")?;
    let thread = &rest[..value_len(rest)?];
    // ..."pausedRanges":[],"pid":"P",..."samples":{...},...,"tid":"T",...
    let (head, rest) = split_after(thread, b"\"pausedRanges\":[],\"pid\":\"")?;
    // The pid and tid strings (quotes and all) are the skeleton's.
    out.write_all(&head[..head.len() - 1])?;
    serde_json::to_writer(&mut *out, &ids.pid)?;
    let (_, rest) = split_after(rest, b"\"")?;
    let at_table = find(rest, SAMPLES)
        .ok_or_else(|| io::Error::other("fxprof-processed-profile: no samples table"))?
        + b"\"samples\":".len();
    out.write_all(&rest[..at_table])?;
    let rest = &rest[at_table..];
    let table_len = value_len(rest)?;
    let probe: ProbeTable = serde_json::from_slice(&rest[..table_len])?;
    let distinct = &layout.distinct[k];
    if probe.stack.len() != distinct.len() {
        return Err(io::Error::other(
            "fxprof-processed-profile: a stack went missing",
        ));
    }
    let index: FxHashMap<StackId, Option<usize>> =
        distinct.iter().copied().zip(probe.stack).collect();
    let track = layout.tracks[k].track;
    let table = Table {
        samples,
        track: k,
        length: layout.tracks[k].samples,
        index: &index,
        clock: crate::model::is_clock(&layout.stacks.event_names[track.event]),
    };
    table.write(out, at)?;
    let (head, rest) = split_after(&rest[table_len..], b"\"tid\":\"")?;
    out.write_all(&head[..head.len() - 1])?;
    serde_json::to_writer(&mut *out, &ids.tid)?;
    let (_, rest) = split_after(rest, b"\"")?;
    out.write_all(rest)
}

/// One thread's samples table, written as the crate writes a table sorted by time.
struct Table<'a> {
    samples: &'a TrackSamples,
    track: usize,
    length: u64,
    /// The crate's stack index of each of the track's stacks.
    index: &'a FxHashMap<StackId, Option<usize>>,
    /// Samples carry their period as CPU time.
    clock: bool,
}

impl Table<'_> {
    /// Its columns, each read from the spool in turn.
    fn write(&self, out: &mut dyn Write, at: impl Fn(When) -> u64) -> io::Result<()> {
        let mut num = itoa::Buffer::new();
        out.write_all(b"{\"length\":")?;
        out.write_all(num.format(self.length).as_bytes())?;
        out.write_all(b",\"weightType\":\"samples\",\"stack\":[")?;
        let (samples, track) = (self.samples, self.track);
        samples.write_column(out, track, |out, row| {
            match self.index.get(&row.stack).copied().flatten() {
                Some(i) => out.write_all(itoa::Buffer::new().format(i).as_bytes()),
                None => out.write_all(b"null"),
            }
        })?;
        out.write_all(b"],\"timeDeltas\":[")?;
        let mut prev = 0u64;
        samples.write_column(out, track, |out, row| {
            let now = at(row.when);
            let delta = now.wrapping_sub(prev);
            prev = now;
            serde_json::to_writer(&mut *out, &((delta as f64) / 1_000_000.0))
                .map_err(io::Error::from)
        })?;
        out.write_all(b"],\"weight\":[")?;
        for i in 0..self.length {
            out.write_all(if i == 0 { b"1" } else { b",1" })?;
        }
        out.write_all(b"],\"threadCPUDelta\":[")?;
        // In nanoseconds (the meta says so, see `fix_meta`): the crate's microseconds
        // would drop each sample's last three digits, and the thread's CPU time would
        // fall short of its periods' sum.
        samples.write_column(out, track, |out, row| {
            let cpu = if self.clock { row.period } else { 0 };
            out.write_all(itoa::Buffer::new().format(cpu).as_bytes())
        })?;
        out.write_all(b"]}")
    }
}

/// fxprof-processed-profile 0.8 writes version 55 but its `meta` breaks that version's
/// `ProfileMeta` type (the Firefox Profiler's src/types/profile.js): it has no
/// `stackwalk`, a required `0 | 1`, and has `pausedRanges`, a thread's member that the
/// exact meta type does not have. The CPU deltas are written in nanoseconds, a unit the
/// type allows (`ns`), where the crate says microseconds.
fn fix_meta(meta: &mut Map<String, Value>, stackwalk: bool) {
    meta.remove("pausedRanges");
    meta.insert("stackwalk".into(), u8::from(stackwalk).into());
    if let Some(Value::Object(units)) = meta.get_mut("sampleUnits") {
        units.insert("threadCPUDelta".into(), "ns".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Machine;
    use crate::stacks::testing;

    fn stacks(depth: u64) -> Stacks {
        let mut m = Machine::new();
        m.process_comm(7, 7, "a.out", false);
        let s = testing::sample(&mut m, 7, Some(1_000), 100_000, depth);
        testing::stacks(m, &[s], Detail::Samples)
    }

    fn written(stacks: &Stacks) -> Value {
        let mut out = Vec::new();
        write_firefox(&mut out, stacks, &[], "title \"{q}\"").expect("written");
        serde_json::from_slice(&out).expect("one JSON document")
    }

    #[test]
    fn meta_has_stackwalk_and_no_paused_ranges() {
        let doc = written(&stacks(2));
        let meta = doc["meta"].as_object().expect("meta");
        assert_eq!(meta["stackwalk"], 1);
        assert!(!meta.contains_key("pausedRanges"));
        assert_eq!(meta["preprocessedProfileVersion"], 55);
        assert_eq!(meta["product"], "title \"{q}\"");
        // The rest is copied as the crate wrote it.
        assert_eq!(doc["threads"][0]["samples"]["length"], 1);
        assert_eq!(doc["threads"][0]["pausedRanges"], serde_json::json!([]));
        assert_eq!(written(&stacks(1))["meta"]["stackwalk"], 0);
    }

    /// Two threads whose samples come interleaved, one of them going back in time: each
    /// thread's table lists its own samples in time order, with the crate's stack
    /// indices, its time deltas and the periods as CPU time.
    #[test]
    fn each_thread_gets_its_samples_in_time_order() {
        let mut m = Machine::new();
        m.process_comm(7, 7, "a", false);
        m.process_comm(8, 8, "b", false);
        let samples = [
            testing::sample(&mut m, 7, Some(1_000_000), 2_000, 3),
            testing::sample(&mut m, 8, Some(1_500_000), 3_000, 1),
            testing::sample(&mut m, 7, Some(3_000_000), 4_000, 1),
            testing::sample(&mut m, 7, Some(2_000_000), 5_000, 3),
            testing::sample(&mut m, 8, Some(4_000_000), 6_000, 2),
        ];
        let doc = written(&testing::stacks(m, &samples, Detail::Samples));
        let threads = doc["threads"].as_array().expect("threads");
        let table = |name: &str| {
            let t = threads
                .iter()
                .find(|t| t["name"] == name)
                .unwrap_or_else(|| panic!("{name} in {threads:?}"));
            &t["samples"]
        };
        let a = table("a 7/7");
        assert_eq!(a["length"], 3);
        // Stacks: the 3-frame one (three entries in the stack table, the last its
        // leaf), then the ip alone: an `[unknown]` root, the same as the first entry.
        assert_eq!(a["stack"], serde_json::json!([2, 2, 0]));
        // Times from the first sample (1 ms), in ms.
        assert_eq!(a["timeDeltas"], serde_json::json!([0.0, 1.0, 1.0]));
        assert_eq!(a["weight"], serde_json::json!([1, 1, 1]));
        // The periods (ns) as CPU time, in ns as the meta says.
        assert_eq!(a["threadCPUDelta"], serde_json::json!([2000, 5000, 4000]));
        assert_eq!(doc["meta"]["sampleUnits"]["threadCPUDelta"], "ns");
        let b = table("b 8/8");
        assert_eq!(b["stack"], serde_json::json!([0, 1]));
        assert_eq!(b["timeDeltas"], serde_json::json!([0.5, 2.5]));
        assert_eq!(b["threadCPUDelta"], serde_json::json!([3000, 6000]));
    }

    /// Addresses without symbols in two libraries: a function each, named after its
    /// library, where perf script's one `[unknown]` would merge them.
    #[test]
    fn unknown_frames_are_a_function_per_library() {
        use perfdata_core::record::{Mmap, PaddedString};
        let mut m = Machine::new();
        m.process_comm(7, 7, "a", false);
        for (addr, name) in [(0x10000, "/nowhere/liba.so"), (0x20000, "/nowhere/libb.so")] {
            let map = Mmap {
                pid: 7,
                tid: 7,
                addr,
                len: 0x1000,
                pgoff: 0,
                filename: PaddedString::new(name),
            };
            m.process_mmap(&map, crate::process::MapProt::EXEC, false, None);
        }
        let mut s = testing::sample(&mut m, 7, Some(1_000), 1_000, 1);
        s.callchain = [0x10010, 0x20010, 0x10020]
            .iter()
            .map(|&ip| m.resolve(7, 7, ip, false))
            .collect();
        let dsos = m.dsos.clone();
        let stacks = testing::stacks(m, &[s], Detail::Samples);
        let mut out = Vec::new();
        write_firefox(&mut out, &stacks, &dsos, "t").expect("written");
        let doc: Value = serde_json::from_slice(&out).expect("JSON");
        let thread = &doc["threads"][0];
        let strings = thread["stringArray"].as_array().expect("strings");
        let names: Vec<&str> = thread["funcTable"]["name"]
            .as_array()
            .expect("names")
            .iter()
            .map(|i| {
                strings[i.as_u64().expect("index") as usize]
                    .as_str()
                    .expect("str")
            })
            .collect();
        assert_eq!(names, ["[unknown] in liba.so", "[unknown] in libb.so"]);
        // The stack is liba, libb, liba again (root first): three frames, two functions.
        assert_eq!(thread["frameTable"]["length"], 2);
    }

    #[test]
    fn no_samples_is_an_error() {
        let mut out = Vec::new();
        let none = testing::stacks(Machine::new(), &[], Detail::Samples);
        let err = write_firefox(&mut out, &none, &[], "t").expect_err("no samples");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(out.is_empty());
    }
}
