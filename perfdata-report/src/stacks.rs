//! Every sample as a call stack of named frames, the common input of the exports: frames
//! are interned once per (DSO, address, mode) and named as `perf script` names them, and
//! samples are grouped into tracks (one per event, process, thread and name).

use std::collections::{BTreeMap, HashMap};

use crate::process::{DsoId, Location};
use crate::replay::Replay;
use crate::symbolize::{SymbolName, Symbolizer};

/// Index of a [`Frame`] in [`Stacks::frames`].
pub type FrameId = usize;

/// One distinct code location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The function, or None where no symbol covers the address (perf's `[unknown]`).
    pub function: Option<String>,
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
    /// is inlined here), 0 if unknown or inlines were not asked for.
    pub line: u32,
}

impl Frame {
    /// The name `perf script` prints: the function, or `[unknown]`.
    pub fn name(&self) -> &str {
        self.function.as_deref().unwrap_or("[unknown]")
    }
}

/// One sample's stack and what it is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackSample {
    /// Index of the event (attr).
    pub event: usize,
    /// Its process.
    pub pid: i32,
    /// Its thread.
    pub tid: i32,
    /// The thread's name at the sample.
    pub comm: String,
    /// The CPU it was taken on, if sampled.
    pub cpu: Option<u32>,
    /// Its time in ns, if sampled.
    pub time: Option<u64>,
    /// Its period (the attr's when not sampled).
    pub period: u64,
    /// The frames, outermost (root) first; without a callchain, only the ip's.
    pub frames: Vec<FrameId>,
}

/// The samples of one event, process, thread and name, in time order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
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

/// All samples as stacks.
#[derive(Debug, Clone, Default)]
pub struct Stacks {
    /// Every distinct frame; samples refer to them by index.
    pub frames: Vec<Frame>,
    /// The samples, in file order.
    pub samples: Vec<StackSample>,
    /// perf's name of each event, by index.
    pub event_names: Vec<String>,
}

impl Stacks {
    /// Name every frame of every sample of `replay`.
    pub fn new(replay: &Replay, symbols: &mut Symbolizer) -> Stacks {
        Self::with_inlines(replay, symbols, false)
    }

    /// Name every frame of every sample of `replay`; with `inlines`, each address in
    /// code inlined from other functions (DWARF) is followed by a frame per inlined
    /// function, as perf's `--inline` shows them.
    pub fn with_inlines(replay: &Replay, symbols: &mut Symbolizer, inlines: bool) -> Stacks {
        let mut frames: Vec<Frame> = Vec::new();
        // (DSO, address, mode) -> the address's frames, root first.
        let mut ids: HashMap<(Option<DsoId>, u64, bool), Vec<FrameId>> = HashMap::new();
        let mut intern = |at: &Location| -> Vec<FrameId> {
            ids.entry((at.dso, at.addr, at.kernel))
                .or_insert_with(|| {
                    let dso = at.dso.map(|d| (d, &replay.machine.dsos[d]));
                    let function = dso.and_then(|(d, dso)| match symbols.name(d, dso, at.addr) {
                        SymbolName::Function { name, .. } => Some(name),
                        SymbolName::Address(_) => None,
                    });
                    // DWARF's frames at the address, innermost first; the outermost is
                    // the symbol's function, the others inlined into it.
                    let dwarf = match dso {
                        Some((d, dso)) if inlines && function.is_some() => {
                            symbols.source_frames(d, dso, at.addr).to_vec()
                        }
                        _ => Vec::new(),
                    };
                    let base = frames.len();
                    let mut out = vec![base];
                    frames.push(Frame {
                        function,
                        dso: at.dso,
                        addr: at.addr,
                        kernel: at.kernel,
                        inlined_in: None,
                        line: dwarf.last().map_or(0, |f| f.line),
                    });
                    for f in dwarf.iter().rev().skip(1) {
                        out.push(frames.len());
                        frames.push(Frame {
                            function: Some(
                                f.function.clone().unwrap_or_else(|| "[unknown]".into()),
                            ),
                            dso: at.dso,
                            addr: at.addr,
                            kernel: at.kernel,
                            inlined_in: Some(base),
                            line: f.line,
                        });
                    }
                    out
                })
                .clone()
        };
        let samples = replay
            .samples
            .iter()
            .map(|s| {
                // Without a callchain the sample's ip is the only frame.
                let chain = if s.callchain.is_empty() {
                    std::slice::from_ref(&s.ip)
                } else {
                    &s.callchain[..]
                };
                StackSample {
                    event: s.event,
                    pid: s.pid,
                    tid: s.tid,
                    comm: replay.machine.comms[s.ip.comm].clone(),
                    cpu: s.cpu,
                    time: s.time,
                    period: s.period,
                    frames: chain.iter().rev().flat_map(&mut intern).collect(),
                }
            })
            .collect();
        Stacks {
            frames,
            samples,
            event_names: replay.event_names.clone(),
        }
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
        self.samples.retain(|s| wanted.get(s.event) == Some(&true));
        Ok(())
    }

    /// How many events have samples: with more than one, exports keep them apart.
    pub fn events_with_samples(&self) -> usize {
        let mut seen: Vec<usize> = self.samples.iter().map(|s| s.event).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    }

    /// The samples by track, tracks in (event, pid, tid, comm) order, each track's
    /// samples in the recording's (time) order, as indices into `samples`.
    pub fn tracks(&self) -> BTreeMap<Track, Vec<usize>> {
        let mut tracks: BTreeMap<Track, Vec<usize>> = BTreeMap::new();
        for (i, s) in self.samples.iter().enumerate() {
            let track = Track {
                event: s.event,
                pid: s.pid,
                tid: s.tid,
                comm: s.comm.clone(),
            };
            tracks.entry(track).or_default().push(i);
        }
        tracks
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
