//! The decoding of every queue interleaved with the recorded events, as perf 6.1's
//! intel-pt.c does it: each queue (one per mmap index: a CPU or a thread) is set up by
//! decoding to its first state with a time (`intel_pt_setup_queue`, errors not
//! reported), then, before each event, the queues whose time is before the event's are
//! decoded up to it, the earliest first (`intel_pt_process_queues` over its heap). A
//! queue stops at the first state whose time reaches the limit (`intel_pt_run_decoder`);
//! errors do not stop it. A state's sample is synthesized when the queue next runs, so
//! after the event that stopped it.

use super::decoder::Decoder;
use super::state::{DecodeError, InsnWalker, State};

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
}

/// Every queue of a trace, decoded in step with the events.
pub struct Queues<'a, W: InsnWalker> {
    queues: Vec<Queue<'a, W>>,
}

impl<'a, W: InsnWalker> Queues<'a, W> {
    /// The queues of `decoders` (index, decoder), ordered by index as perf's array.
    pub fn new(decoders: Vec<(u32, Decoder<'a, W>)>) -> Self {
        Queues {
            queues: decoders
                .into_iter()
                .map(|(idx, decoder)| Queue {
                    idx,
                    decoder,
                    pending: None,
                    timestamp: 0,
                    set_up: false,
                    done: false,
                })
                .collect(),
        }
    }

    /// `intel_pt_setup_queue`: to the first state with a time, errors skipped.
    fn set_up(q: &mut Queue<'a, W>) {
        q.set_up = true;
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
                    q.pending = Some(s.clone());
                    return;
                }
                None => {}
            }
        }
    }

    /// `intel_pt_run_decoder`: decode `q` until a state's time reaches `limit`; true at
    /// the end of its data.
    fn run(q: &mut Queue<'a, W>, limit: u64, out: &mut dyn FnMut(Output)) -> bool {
        loop {
            if let Some(state) = q.pending.take() {
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
            Self::set_up(q);
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
            if Self::run(q, limit, out) {
                q.done = true;
            }
        }
    }
}
