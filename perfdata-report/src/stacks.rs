//! Every sample as a call stack of named frames, the common input of the exports,
//! collected as the samples stream out of the replay ([`StackCollector`]) so that memory
//! grows with the distinct stacks, never with the samples: locations are interned once
//! per (DSO, address, mode), stacks once each as a path in a tree of callers, and samples
//! are counted per distinct stack and what the output labels them with ([`Detail`]).
//! Formats that list every sample in time order (speedscope, the Firefox Profiler) also
//! have each sample spooled as a 24-byte row (track, stack, time, period) to an anonymous
//! temporary file, read back per track ([`Stacks::track_samples`]). Once the recording is
//! read, [`StackCollector::finish`] names every location as `perf script` names it.

use std::io;

use crate::intern::Chunked;
use crate::process::{CommId, DsoId};
use crate::spool::Records;

mod collect;
mod frames;
mod samples;
#[cfg(test)]
pub(crate) mod testing;

pub use collect::StackCollector;
use frames::{unpack, FrameTable, NONE};
pub use samples::{SampleRow, TrackInfo, TrackRows, TrackSamples};

/// Index of a frame ([`Stacks::frame`]).
pub type FrameId = usize;

/// A distinct stack: a node of the tree of callers, the stack from the root to it.
pub type StackId = u32;

/// One distinct code location, as [`Stacks::frame`] gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// The function, or None where no symbol covers the address (perf's `[unknown]`).
    pub function: Option<&'a str>,
    /// The DSO the address is in, if any map held it.
    pub dso: Option<DsoId>,
    /// The DSO-relative address (the ip itself without a DSO).
    pub addr: u64,
    /// Kernel mode.
    pub kernel: bool,
    /// For a function inlined at this address (exports with inlines): the frame of the
    /// address itself, whose function holds it. Such frames follow that frame in a stack,
    /// outermost first, the innermost inlined function last (perf's `--inline`).
    pub inlined_in: Option<FrameId>,
    /// The source line from DWARF (of the call of the next inlined function, when one
    /// is inlined here), 0 if unknown or no [`Sources`] were asked for.
    pub line: u32,
    /// The function's source file from DWARF's line table (a full path, as the
    /// compiler named it), if known and [`Sources`] were asked for.
    pub file: Option<&'a str>,
    /// The line the function starts at (DWARF's `DW_AT_decl_line`), 0 if unknown.
    pub start_line: u32,
}

impl<'a> Frame<'a> {
    /// The name `perf script` prints: the function, or `[unknown]`.
    pub fn name(&self) -> &'a str {
        self.function.unwrap_or("[unknown]")
    }
}

/// The samples of one event, process, thread and name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Track {
    /// The event (index into the attrs).
    pub event: usize,
    /// The process.
    pub pid: i32,
    /// The thread.
    pub tid: i32,
    /// The thread's name.
    pub comm: String,
}

/// What [`StackCollector::finish`] asks DWARF of each location.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sources {
    /// Nothing: frames are named from the symbol tables alone.
    Off,
    /// The source file and line of the address's own function (pprof's lines).
    Lines,
    /// Those, and every function inlined at the address as a frame of its own (perf's
    /// `--inline`).
    Inlines,
}

/// What samples are counted by, which is what an output can say of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detail {
    /// Per event, thread name and stack: folded stacks and flame graphs (tracks have
    /// pid and tid 0).
    Stacks,
    /// Per event, process, thread, thread name, CPU and stack: pprof's samples and their
    /// labels.
    Labels,
    /// Per event, process, thread, thread name and stack, and every sample spooled to a
    /// temporary file in its track: speedscope and the Firefox Profiler.
    Samples,
}

/// The parent of a stack's root frame.
const ROOT: u32 = u32::MAX;

/// A track as samples name it: event, pid, tid and the comm entry (whose string may
/// still change: a thread's first COMM renames its earlier samples, as in perf).
type RawTrack = (usize, i32, i32, CommId);

/// What a track's samples add up to.
#[derive(Debug, Clone)]
struct TrackSum {
    /// Its first sample's number among the recording's samples, and when it was.
    first: (u64, When),
    /// The sum of its samples' periods (wrapping, as a `u64` sum in release builds).
    period: u64,
    /// Its samples.
    samples: u64,
    /// The earliest and latest sample time, if samples have times.
    times: Option<(u64, u64)>,
}

impl TrackSum {
    fn absorb(&mut self, other: &TrackSum) {
        // Tracks are numbered in the order of their first samples: this one's is first.
        self.period = self.period.wrapping_add(other.period);
        self.samples += other.samples;
        self.times = match (self.times, other.times) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (t, None) | (None, t) => t,
        };
    }
}

/// When a sample was taken: its time, or without one its number among the recording's
/// samples (which the exports space by a nominal interval).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// The sample's time (ns).
    Time(u64),
    /// The sample's number in the recording, for samples without a time.
    Nth(u64),
}

/// Counts are keyed by (track, CPU, stack); the track's top bit says a CPU is there.
const HAS_CPU: u32 = 1 << 31;

/// How much of each kind [`Stacks`] holds: what its memory grows with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Samples.
    pub samples: u64,
    /// Distinct stacks sampled.
    pub stacks: usize,
    /// Distinct stacks and their distinct callers' stacks (the tree of callers' nodes).
    pub prefixes: usize,
    /// Distinct locations (DSO, address, mode).
    pub locations: usize,
    /// Samples counted apart: distinct (track, CPU, stack) as the [`Detail`] says.
    pub counts: usize,
    /// Tracks.
    pub tracks: usize,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} samples: {} distinct stacks ({} with their callers' stacks) of {} distinct \
             locations, counted apart in {} (track, CPU, stack) in {} tracks",
            self.samples, self.stacks, self.prefixes, self.locations, self.counts, self.tracks
        )
    }
}

/// Samples of one track, CPU and stack, as [`Stacks::counts`] gives them.
#[derive(Debug, Clone, Copy)]
pub struct StackCount<'a> {
    /// The samples' track (pid and tid 0 when collected for [`Detail::Stacks`]).
    pub track: &'a Track,
    /// Their CPU, if sampled and collected for [`Detail::Labels`].
    pub cpu: Option<u32>,
    /// Their stack.
    pub stack: StackId,
    /// How many.
    pub samples: u64,
    /// The sum of their periods (saturating).
    pub period: u64,
}

/// All samples as stacks: the distinct frames and stacks, samples counted by what the
/// [`Detail`] they were collected for says, and (for [`Detail::Samples`]) every sample
/// on disk.
#[derive(Debug)]
pub struct Stacks {
    /// perf's name of each event, by index.
    pub event_names: Vec<String>,
    detail: Detail,
    sources: Sources,
    frames: FrameTable,
    /// Per stack: its caller's stack (or ROOT) and its location.
    nodes: Chunked<(u32, u32)>,
    /// Per raw track: its track and sums (a track of the same name as an earlier one
    /// has its sums added to that one's, see `canon`).
    tracks: Vec<(Track, TrackSum)>,
    /// Per raw track, the first one of its track.
    canon: Vec<u32>,
    /// (track, CPU, stack), in the order of each one's first sample, and its samples
    /// and period.
    counts: Chunked<[u32; 3]>,
    values: Chunked<(u64, u64)>,
    /// Per event: whether its samples are kept (see [`Stacks::retain_event`]).
    kept: Vec<bool>,
    /// The samples in the order they came, if spooled.
    samples: std::cell::RefCell<Option<Records>>,
}

impl Stacks {
    /// What the samples were counted by.
    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// What DWARF was asked of each location.
    pub fn sources(&self) -> Sources {
        self.sources
    }

    /// An error unless the samples were collected for `detail` (what an output needs).
    pub fn require(&self, detail: Detail, what: &str) -> io::Result<()> {
        if self.detail == detail {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "{what} needs the samples collected for {detail:?}, not {:?}",
                self.detail
            )))
        }
    }

    /// What the stacks come to: how much of each there is.
    pub fn summary(&self) -> Summary {
        let mut sampled = vec![false; self.nodes.len()];
        for k in self.counts.iter() {
            sampled[k[2] as usize] = true;
        }
        Summary {
            samples: self.samples(),
            stacks: sampled.iter().filter(|&&s| s).count(),
            prefixes: self.nodes.len(),
            locations: self.frames.first.len().saturating_sub(1),
            counts: self.counts.len(),
            tracks: self
                .canon
                .iter()
                .enumerate()
                .filter(|&(i, &c)| c as usize == i)
                .count(),
        }
    }

    /// How many frames.
    pub fn frame_count(&self) -> usize {
        self.frames.frames.len()
    }

    /// Frame `id`.
    pub fn frame(&self, id: FrameId) -> Frame<'_> {
        let f = &self.frames.frames[id];
        let (dso, _, kernel) = unpack([f.dso, 0, 0]);
        Frame {
            function: (f.name != NONE).then(|| self.frames.names[f.name as usize].as_str()),
            dso,
            addr: f.addr,
            kernel,
            inlined_in: (f.inlined_in != NONE).then_some(f.inlined_in as usize),
            line: f.line,
            file: (f.file != NONE).then(|| self.frames.names[f.file as usize].as_str()),
            start_line: f.start_line,
        }
    }

    /// Every frame, in order.
    pub fn frames(&self) -> impl Iterator<Item = Frame<'_>> {
        (0..self.frame_count()).map(|i| self.frame(i))
    }

    /// The frames of `stack`, outermost (root) first; without a callchain, only the ip's.
    pub fn frames_of(&self, stack: StackId) -> Vec<FrameId> {
        let mut locs = Vec::new();
        let mut at = stack;
        while at != ROOT {
            let &(parent, loc) = self.nodes.get(at as usize);
            locs.push(loc);
            at = parent;
        }
        let first = &self.frames.first;
        let mut out = Vec::with_capacity(locs.len());
        for &loc in locs.iter().rev() {
            let (a, b) = (first[loc as usize], first[loc as usize + 1]);
            out.extend((a..b).map(|f| f as FrameId));
        }
        out
    }

    fn kept(&self, event: usize) -> bool {
        self.kept.get(event).copied().unwrap_or(false)
    }

    /// The kept samples counted per track, CPU and stack, in the order of the first
    /// sample of each.
    pub fn counts(&self) -> impl Iterator<Item = StackCount<'_>> {
        self.counts
            .iter()
            .zip(self.values.iter())
            .map(|(&[track, cpu, stack], &(samples, period))| StackCount {
                track: &self.tracks[(track & !HAS_CPU) as usize].0,
                cpu: (track & HAS_CPU != 0).then_some(cpu),
                stack,
                samples,
                period,
            })
            .filter(|c| self.kept(c.track.event))
    }

    /// The tracks of kept samples, each its first raw track's entry.
    fn kept_tracks(&self) -> impl Iterator<Item = (usize, &(Track, TrackSum))> {
        self.tracks
            .iter()
            .enumerate()
            .filter(|&(i, (t, _))| self.canon[i] as usize == i && self.kept(t.event))
    }

    /// How many samples are kept.
    pub fn samples(&self) -> u64 {
        self.kept_tracks().map(|(_, (_, s))| s.samples).sum()
    }

    /// The earliest and latest time of the kept samples that have one.
    pub fn time_span(&self) -> Option<(u64, u64)> {
        self.kept_tracks()
            .filter_map(|(_, (_, s))| s.times)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    }

    /// Keep only the samples of the events perf names `name` (as `perf script` and
    /// `perfdata report --event` name them). An unknown name is an error naming the
    /// events there are.
    pub fn retain_event(&mut self, name: &str) -> Result<(), String> {
        let wanted: Vec<bool> = self.event_names.iter().map(|n| n == name).collect();
        if !wanted.contains(&true) {
            return Err(format!(
                "no event {name:?} in the recording (its events: {})",
                self.event_names.join(", ")
            ));
        }
        for (k, w) in self.kept.iter_mut().zip(wanted) {
            *k &= w;
        }
        Ok(())
    }

    /// How many events have samples: with more than one, exports keep them apart.
    pub fn events_with_samples(&self) -> usize {
        let mut seen: Vec<usize> = self.kept_tracks().map(|(_, (t, _))| t.event).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// The tracks with kept samples, in (event, pid, tid, comm) order, each with what
    /// its samples add up to.
    pub fn tracks(&self) -> Vec<TrackInfo<'_>> {
        let mut out: Vec<TrackInfo> = self
            .kept_tracks()
            .map(|(i, (track, s))| TrackInfo {
                track,
                samples: s.samples,
                period: s.period,
                first: s.first.1,
                raw: i as u32,
            })
            .collect();
        out.sort_by(|a, b| a.track.cmp(b.track));
        out
    }

    /// A track's title: `comm pid/tid`, with the event's name after it when more than
    /// one event has samples.
    pub fn track_name(&self, t: &Track) -> String {
        let mut name = format!("{} {}/{}", t.comm, t.pid, t.tid);
        if self.events_with_samples() > 1 {
            name.push_str(&format!(" {}", self.event_names[t.event]));
        }
        name
    }
}
