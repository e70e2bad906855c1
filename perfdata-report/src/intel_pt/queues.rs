//! The decoding of every queue interleaved with the recorded events, as perf 6.1's
//! intel-pt.c does it: each queue (one per mmap index: a CPU or a thread) is set up by
//! decoding to its first state with a time (`intel_pt_setup_queue`, errors not
//! reported), then, before each event, the queues whose time is before the event's are
//! decoded up to it, the earliest first (`intel_pt_process_queues` over its heap). A
//! queue stops at the first state whose time reaches the limit (`intel_pt_run_decoder`);
//! errors do not stop it. A state's sample is synthesized when the queue next runs, so
//! after the event that stopped it.
//!
//! With time ranges (perf script's `--time`, `intel_pt_setup_time_ranges`) a queue's
//! decoding is bounded too (`intel_pt_time_filter`): it is fast-forwarded to the last
//! PSB before a range's start, its states before the start are not sampled, and it
//! stops after the last range's end. A `cbr` sample is synthesized at a sampled state
//! whose ratio the queue has not sampled yet (perf's `ptq->cbr_seen`), so the first
//! state sampled in a range brings one.

use super::decoder::Decoder;
use super::state::{kind, DecodeError, InsnWalker, State};

/// A time range in TSC ticks, both ends included (0: open), as perf's `struct range`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TscRange {
    /// First TSC of the range (0: from the start).
    pub start: u64,
    /// Last TSC of the range (0: to the end).
    pub end: u64,
}

/// What a queue hands out, in perf's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A state whose sample perf synthesizes now (`intel_pt_sample`), at `time` (TSC
    /// ticks: the queue's time, perf's `ptq->timestamp`).
    Sample {
        /// The queue's index (its mmap index).
        queue: u32,
        /// The state.
        state: State,
        /// The sample's time.
        time: u64,
    },
    /// An error perf reports now (`intel_ptq_synth_error`), at `time` (TSC ticks: the
    /// queue's time, perf's `ptq->timestamp`).
    Error {
        /// The queue's index.
        queue: u32,
        /// The error state (`from_ip` is the error's ip).
        state: State,
        /// The error's time.
        time: u64,
    },
}

struct Queue<'a, W: InsnWalker> {
    idx: u32,
    decoder: Decoder<'a, W>,
    /// perf's `ptq->state` with `have_sample`.
    pending: Option<State>,
    /// perf's `ptq->timestamp`, the heap's ordinal.
    timestamp: u64,
    /// Set up (decoded to its first timed state).
    set_up: bool,
    /// Decoded to its end (off the heap).
    done: bool,
    /// perf's `sel_timestamp`, `sel_start`, `sel_idx`: the next range bound to check.
    sel_timestamp: u64,
    sel_start: bool,
    sel_idx: usize,
    /// perf's `ptq->cbr_seen`: the ratio last sampled.
    cbr_seen: u32,
}

/// What the time filter says of a queue.
enum Filtered {
    /// Decode on.
    On,
    /// Past the last range: stop decoding.
    Stop,
}

/// Every queue of a trace, decoded in step with the events.
pub struct Queues<'a, W: InsnWalker> {
    queues: Vec<Queue<'a, W>>,
    /// perf's `time_ranges`, in TSC ticks (empty: no bound).
    ranges: Vec<TscRange>,
}

impl<'a, W: InsnWalker> Queues<'a, W> {
    /// The queues of `decoders` (index, decoder), ordered by index as perf's array.
    pub fn new(decoders: Vec<(u32, Decoder<'a, W>)>) -> Self {
        Self::with_ranges(decoders, Vec::new())
    }

    /// [`Queues::new`] decoding only the time `ranges` (perf script's `--time`).
    pub fn with_ranges(decoders: Vec<(u32, Decoder<'a, W>)>, ranges: Vec<TscRange>) -> Self {
        Queues {
            ranges,
            queues: decoders
                .into_iter()
                .map(|(idx, decoder)| Queue {
                    idx,
                    decoder,
                    pending: None,
                    timestamp: 0,
                    set_up: false,
                    done: false,
                    sel_timestamp: 0,
                    sel_start: false,
                    sel_idx: 0,
                    cbr_seen: u32::MAX,
                })
                .collect(),
        }
    }

    /// `intel_pt_setup_queue`: to the first state with a time, errors skipped (from
    /// the last PSB before the first range's start).
    fn set_up(q: &mut Queue<'a, W>, ranges: &[TscRange]) {
        q.set_up = true;
        // intel_pt_setup_time_range
        if let Some(first) = ranges.first() {
            q.sel_idx = 0;
            q.sel_start = first.start != 0;
            q.sel_timestamp = if q.sel_start { first.start } else { first.end };
        }
        if q.sel_start && q.sel_timestamp != 0 {
            q.decoder.fast_forward(q.sel_timestamp);
        }
        loop {
            let s = q.decoder.decode();
            match s.err {
                Some(DecodeError::NoData) => {
                    q.done = true;
                    return;
                }
                Some(_) => continue,
                None if s.timestamp != 0 => {
                    q.timestamp = s.timestamp;
                    let before =
                        q.sel_start && q.sel_timestamp != 0 && q.timestamp < q.sel_timestamp;
                    q.pending = (!before).then(|| s.clone());
                    return;
                }
                None => {}
            }
        }
    }

    /// `intel_pt_run_decoder`: decode `q` until a state's time reaches `limit`; true at
    /// the end of its data.
    fn run(
        q: &mut Queue<'a, W>,
        ranges: &[TscRange],
        limit: u64,
        out: &mut dyn FnMut(Output),
    ) -> bool {
        let mut ff_timestamp = 0;
        loop {
            if let Some(mut state) = q.pending.take() {
                // intel_pt_sample: a cbr sample where the ratio is not the one sampled.
                if state.cbr != q.cbr_seen {
                    state.kind |= kind::CBR_CHG;
                    q.cbr_seen = state.cbr;
                } else {
                    state.kind &= !kind::CBR_CHG;
                }
                out(Output::Sample {
                    queue: q.idx,
                    state,
                    time: q.timestamp,
                });
            }
            let s = q.decoder.decode().clone();
            match s.err {
                Some(DecodeError::NoData) => return true,
                Some(_) => {
                    // perf: ptq->timestamp = state->est_timestamp (the sample time here:
                    // no instruction is ever counted).
                    q.timestamp = s.timestamp;
                    out(Output::Error {
                        queue: q.idx,
                        time: q.timestamp,
                        state: s,
                    });
                }
                None => {
                    q.timestamp = q.timestamp.max(s.timestamp);
                    q.pending = Some(s);
                    if q.sel_timestamp != 0 {
                        if let Filtered::Stop = Self::time_filter(q, ranges, &mut ff_timestamp) {
                            return true;
                        }
                    }
                    if q.timestamp >= limit {
                        return false;
                    }
                }
            }
        }
    }

    /// `intel_pt_process_queues`: before an event at `tsc` (TSC ticks; `u64::MAX` at the
    /// end of the recording), decode the queues whose time is before it, handing out
    /// what perf synthesizes in its order.
    pub fn process(&mut self, tsc: u64, out: &mut dyn FnMut(Output)) {
        for q in self.queues.iter_mut().filter(|q| !q.set_up) {
            Self::set_up(q, &self.ranges);
        }
        loop {
            // The heap's top: the earliest queue on it (the lower index first on ties,
            // as perf's heap keeps them).
            let mut order: Vec<usize> = (0..self.queues.len())
                .filter(|&i| !self.queues[i].done)
                .collect();
            order.sort_by_key(|&i| (self.queues[i].timestamp, self.queues[i].idx));
            let Some(&first) = order.first() else {
                return;
            };
            if self.queues[first].timestamp >= tsc {
                return;
            }
            let limit = match order.get(1) {
                Some(&next) => self.queues[next].timestamp.saturating_add(1).min(tsc),
                None => tsc,
            };
            let q = &mut self.queues[first];
            if Self::run(q, &self.ranges, limit, out) {
                q.done = true;
            }
        }
    }

    /// `intel_pt_next_time`: the next bound to check (a range's end after its start,
    /// the next range's start after an end); false after the last.
    fn next_time(q: &mut Queue<'a, W>, ranges: &[TscRange]) -> bool {
        if q.sel_start {
            q.sel_start = false;
            q.sel_timestamp = ranges[q.sel_idx].end;
            true
        } else if q.sel_idx + 1 < ranges.len() {
            q.sel_start = true;
            q.sel_idx += 1;
            q.sel_timestamp = ranges[q.sel_idx].start;
            true
        } else {
            false
        }
    }

    /// `intel_pt_time_filter`: the queue's time against the next bound.
    fn time_filter(q: &mut Queue<'a, W>, ranges: &[TscRange], ff_timestamp: &mut u64) -> Filtered {
        loop {
            if q.sel_start {
                if q.timestamp >= q.sel_timestamp {
                    // After the start: check against the end (none: decode on).
                    Self::next_time(q, ranges);
                    if q.sel_timestamp == 0 {
                        return Filtered::On;
                    }
                    continue;
                }
                // Before the start: no sample, and on to the last PSB before it.
                q.pending = None;
                if q.sel_timestamp > *ff_timestamp {
                    *ff_timestamp = q.sel_timestamp;
                    q.decoder.fast_forward(q.sel_timestamp);
                }
                return Filtered::On;
            } else if q.timestamp > q.sel_timestamp {
                // After the end: the next range's start, or stop.
                if !Self::next_time(q, ranges) {
                    q.pending = None;
                    return Filtered::Stop;
                }
            } else {
                return Filtered::On;
            }
        }
    }
}
