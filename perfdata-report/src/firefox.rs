//! The Firefox Profiler's processed format (version 55), written by the
//! fxprof-processed-profile crate, its `meta` mended to that version's types (see
//! [`write_firefox`]; the profiler loads it as it is): one thread per track (event,
//! process, thread and name: an exec starts a new thread, as it starts a new program), in
//! one process per event, pid and name, named as [`Stacks::track_name`] names it; each
//! sample at its time, with weight 1, its stack of frames labelled as `perf script` names
//! them, in the category User or Kernel. Times are relative to the first sample; samples
//! of the software clocks carry their period as CPU time. A recording without samples is
//! an error.

use std::collections::HashMap;
use std::io::{self, Write};

use fxprof_processed_profile::{
    CategoryColor, CategoryPairHandle, CpuDelta, Frame, FrameFlags, FrameInfo, Profile,
    ReferenceTimestamp, SamplingInterval, Timestamp,
};
use serde_json::{Map, Value};

use crate::stacks::{Stacks, Track};

/// perf's default sampling rate (4000 Hz) as the profile's nominal interval; samples
/// carry their own times.
const INTERVAL_NANOS: u64 = 250_000;

/// The profile of `stacks`, titled `product`, as the crate serializes it ([`write_firefox`]
/// mends its `meta`).
pub fn profile(stacks: &Stacks, product: &str) -> Profile {
    let mut p = Profile::new(
        product,
        ReferenceTimestamp::from_millis_since_unix_epoch(0.0),
        SamplingInterval::from_nanos(INTERVAL_NANOS),
    );
    let user: CategoryPairHandle = p.add_category("User", CategoryColor::Yellow).into();
    let kernel: CategoryPairHandle = p.add_category("Kernel", CategoryColor::Orange).into();
    let first = stacks
        .samples
        .iter()
        .filter_map(|s| s.time)
        .min()
        .unwrap_or(0);
    // Without times, samples are spaced by the nominal interval in file order.
    let at = |i: usize| {
        let nanos = match stacks.samples[i].time {
            Some(t) => t.saturating_sub(first),
            None => (i as u64).saturating_mul(INTERVAL_NANOS),
        };
        Timestamp::from_nanos_since_reference(nanos)
    };
    let mut processes = HashMap::new();
    let mut labels = HashMap::new();
    for (track, members) in stacks.tracks() {
        let start = at(members[0]);
        // The profiler names a main thread after its process: a process per (event,
        // pid, name) keeps each thread's title its track's.
        let process = *processes
            .entry((track.event, track.pid, track.comm.clone()))
            .or_insert_with(|| {
                let leader = Track {
                    tid: track.pid,
                    ..track.clone()
                };
                p.add_process(&stacks.track_name(&leader), track.pid as u32, start)
            });
        let thread = p.add_thread(process, track.tid as u32, start, track.pid == track.tid);
        p.set_thread_name(thread, &stacks.track_name(&track));
        let clock = matches!(
            stacks.event_names[track.event].as_str(),
            "cpu-clock" | "task-clock"
        );
        for &i in &members {
            let s = &stacks.samples[i];
            let frames: Vec<FrameInfo> = s
                .frames
                .iter()
                .map(|&f| {
                    let frame = &stacks.frames[f];
                    let label = *labels
                        .entry(f)
                        .or_insert_with(|| p.intern_string(frame.name()));
                    FrameInfo {
                        frame: Frame::Label(label),
                        category_pair: if frame.kernel { kernel } else { user },
                        flags: FrameFlags::empty(),
                    }
                })
                .collect();
            let stack = p.intern_stack_frames(thread, frames.into_iter());
            let cpu = if clock {
                CpuDelta::from_nanos(s.period)
            } else {
                CpuDelta::ZERO
            };
            p.add_sample(thread, at(i), stack, cpu, 1);
        }
    }
    p
}

/// Write the profile of `stacks` as JSON, its `meta` as the profiler's version 55 types
/// define it: with `stackwalk` (1 when any sample has a callchain), without
/// `pausedRanges`. A recording without samples is an error: it would be a profile without
/// threads, which the profiler refuses to load ("there is nothing to display").
pub fn write_firefox(out: &mut dyn Write, stacks: &Stacks, product: &str) -> io::Result<()> {
    if stacks.samples.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the recording has no samples to export",
        ));
    }
    // The crate writes meta inside Profile's own Serialize, with no way to change it: so
    // the JSON is made in memory (the output's size) and meta re-written on the way out.
    let json = serde_json::to_vec(&profile(stacks, product))?;
    // Stacks were walked if any sample has callers (without a callchain, only its ip).
    let stackwalk = stacks.samples.iter().any(|s| s.frames.len() > 1);
    let rest = json
        .strip_prefix(b"{\"meta\":")
        .ok_or_else(|| io::Error::other("fxprof-processed-profile: meta is not first"))?;
    // meta is the first member: read it alone, and copy the rest (the threads) as written.
    let mut members = serde_json::Deserializer::from_slice(rest).into_iter::<Map<String, Value>>();
    let mut meta = members
        .next()
        .ok_or_else(|| io::Error::other("fxprof-processed-profile: no meta"))??;
    let end = members.byte_offset();
    fix_meta(&mut meta, stackwalk);
    out.write_all(b"{\"meta\":")?;
    serde_json::to_writer(&mut *out, &meta)?;
    out.write_all(&rest[end..])?;
    writeln!(out)
}

/// fxprof-processed-profile 0.8 writes version 55 but its `meta` breaks that version's
/// `ProfileMeta` type (the Firefox Profiler's src/types/profile.js): it has no
/// `stackwalk`, a required `0 | 1`, and has `pausedRanges`, a thread's member that the
/// exact meta type does not have.
fn fix_meta(meta: &mut Map<String, Value>, stackwalk: bool) {
    meta.remove("pausedRanges");
    meta.insert("stackwalk".into(), u8::from(stackwalk).into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stacks::{Frame as StackFrame, StackSample};

    fn stacks(depth: usize) -> Stacks {
        let frame = |name: &str| StackFrame {
            function: Some(name.into()),
            dso: None,
            addr: 0x1000,
            kernel: false,
            inlined_in: None,
            line: 0,
        };
        Stacks {
            frames: vec![frame("main"), frame("leaf")],
            samples: vec![StackSample {
                event: 0,
                pid: 7,
                tid: 7,
                comm: "a.out".into(),
                cpu: Some(0),
                time: Some(1_000),
                period: 100_000,
                frames: (0..depth).collect(),
            }],
            event_names: vec!["cpu-clock".into()],
        }
    }

    fn written(stacks: &Stacks) -> Value {
        let mut out = Vec::new();
        write_firefox(&mut out, stacks, "title \"{q}\"").expect("written");
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

    #[test]
    fn no_samples_is_an_error() {
        let mut out = Vec::new();
        let err = write_firefox(&mut out, &Stacks::default(), "t").expect_err("no samples");
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(out.is_empty());
    }
}
