//! The Firefox Profiler's processed format, written by the fxprof-processed-profile crate
//! (the profiler loads it as it is): one thread per track (event, process, thread and
//! name: an exec starts a new thread, as it starts a new program), in one process per
//! event, pid and name,
//! named as [`Stacks::track_name`] names it; each sample at its time, with weight 1, its
//! stack of frames labelled as `perf script` names them, in the category User or Kernel.
//! Times are relative to the first sample; samples of the software clocks carry their
//! period as CPU time.

use std::collections::HashMap;
use std::io::{self, Write};

use fxprof_processed_profile::{
    CategoryColor, CategoryPairHandle, CpuDelta, Frame, FrameFlags, FrameInfo, Profile,
    ReferenceTimestamp, SamplingInterval, Timestamp,
};

use crate::stacks::{Stacks, Track};

/// perf's default sampling rate (4000 Hz) as the profile's nominal interval; samples
/// carry their own times.
const INTERVAL_NANOS: u64 = 250_000;

/// The profile of `stacks`, titled `product`.
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

/// Write the profile of `stacks` as JSON.
pub fn write_firefox(out: &mut dyn Write, stacks: &Stacks, product: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *out, &profile(stacks, product))?;
    writeln!(out)
}
