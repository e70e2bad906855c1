//! The reading thread's half of perf's order ([`super::replay`]): records queued by
//! time and let out by rounds, handed to the replaying thread in batches.

use std::sync::mpsc::{Receiver, SyncSender};

use perfdata_core::ordered::OrderedQueue;

use super::chain::Spare;
use super::event::Event;

/// A record as the reading loop sorts it out, in file order.
pub(super) enum Step {
    /// A FINISHED_ROUND record.
    Round,
    /// A record replayed at once (it has no time).
    Now(Event),
    /// A record queued at its time.
    Queued(u64, Event),
}

/// Records handed over at once, in perf's order, and the callchain words of their
/// samples: a sample's `chain` names, plus one, the place here of its chain's length,
/// the words following ([`chain_words`]).
#[derive(Default)]
pub(super) struct Batch {
    pub(super) events: Vec<Event>,
    pub(super) chains: Vec<u64>,
    /// Samples' user states the replay is done with, handed back to be filled again
    /// (at most [`SPARE_USERS`]): an 8 KiB stack copy allocated on the reading thread and
    /// freed on the replaying one, per sample, was 5% of a dwarf report's cycles.
    /// Boxed as the samples hold them.
    #[allow(clippy::vec_box)]
    pub(super) users: Vec<Box<crate::unwind::UserState>>,
}

/// The most user states a batch hands back.
pub(super) const SPARE_USERS: usize = 64;

impl Batch {
    fn new() -> Self {
        Batch {
            events: Vec::with_capacity(BATCH),
            chains: Vec::new(),
            users: Vec::new(),
        }
    }
}

/// The words of the callchain `id` names in a batch's `chains` ([`Batch`]); none for 0.
pub(super) fn chain_words(chains: &[u64], id: u32) -> &[u64] {
    let Some(at) = (id as usize).checked_sub(1) else {
        return &[];
    };
    let len = chains[at] as usize;
    &chains[at + 1..at + 1 + len]
}

/// The reading thread's half of perf's order: records queued by time (perf's ordered
/// events) and let out by rounds into batches for the replaying thread. The queue is
/// here, not on the replaying thread, which names and prints the samples and is the
/// slower of the two: its pushes and sorts were an eighth of that thread's cycles.
pub(super) struct Ordering<'a> {
    pub(super) queue: OrderedQueue<Event>,
    /// Whether FINISHED_ROUND records let records out (not in a directory's data).
    rounds: bool,
    pub(super) out: Outbox<'a>,
}

/// Where records in perf's order go: the batch being filled, and the channel.
pub(super) struct Outbox<'a> {
    tx: &'a SyncSender<Batch>,
    /// Emptied batches the replaying thread handed back.
    spare: &'a Receiver<Batch>,
    pub(super) batch: Batch,
    /// Bytes of user stack copies in `batch`.
    stack_bytes: usize,
    /// The chains of the samples waiting in the queue ([`Spare::hold`]): copied into
    /// the batch's words as each sample goes out.
    pub(super) held: Spare,
    /// The replaying thread is gone (it panicked, which its join reports).
    pub(super) gone: bool,
}

impl<'a> Ordering<'a> {
    pub(super) fn new(tx: &'a SyncSender<Batch>, spare: &'a Receiver<Batch>, rounds: bool) -> Self {
        Ordering {
            queue: OrderedQueue::new(),
            rounds,
            out: Outbox {
                tx,
                spare,
                batch: Batch::new(),
                stack_bytes: 0,
                held: Spare::default(),
                gone: false,
            },
        }
    }

    /// Take `step` as perf's ordered events do: at once, queued, or a round let out.
    pub(super) fn step(&mut self, step: Step) {
        match step {
            Step::Round => self.round(),
            Step::Now(ev) => self.out.emit(ev),
            Step::Queued(t, ev) => self.queue.push(t, ev),
        }
    }

    /// A FINISHED_ROUND record: the queue lets out what the previous round bounded.
    fn round(&mut self) {
        if self.rounds {
            for ev in self.queue.round() {
                self.out.emit(ev);
            }
        }
    }

    /// The end of the records: everything still queued, then the last batch.
    pub(super) fn finish(mut self) {
        for ev in self.queue.drain() {
            self.out.emit(ev);
        }
        if !self.out.gone {
            // The receiver is gone only if the replay thread panicked, which join reports.
            let _ = self.out.tx.send(self.out.batch);
        }
    }
}

impl Outbox<'_> {
    /// Hand `ev` over after the records before it; a sample's held chain goes into the
    /// batch's words.
    #[inline]
    pub(super) fn emit(&mut self, mut ev: Event) {
        if let Event::Sample(p) = &mut ev {
            if p.chain != 0 {
                let words = self.held.release(p.chain);
                let at = self.batch.chains.len();
                self.batch.chains.push(words.len() as u64);
                self.batch.chains.extend_from_slice(&words);
                self.held.keep_words(words);
                p.chain = u32::try_from(at + 1).expect("a batch holds fewer than 2^32 words");
            }
            if let Some(user) = p.rare.as_ref().and_then(|r| r.user.as_ref()) {
                self.stack_bytes += user.stack.len();
            }
        }
        self.batch.events.push(ev);
        if self.batch.events.len() >= BATCH || self.stack_bytes >= BATCH_STACK_BYTES {
            self.send();
        }
    }

    /// Send the batch, and start another.
    #[cold]
    fn send(&mut self) {
        self.stack_bytes = 0;
        // A batch the replay is done with, if one came back: its memory is mapped and
        // warm (a new one each time faulted its pages in again).
        let empty = self.spare.try_recv().unwrap_or_else(|_| Batch::new());
        let full = std::mem::replace(&mut self.batch, empty);
        if self.gone || self.tx.send(full).is_err() {
            self.gone = true;
        }
    }
}

/// Records handed over at a time.
const BATCH: usize = 4096;

/// Bytes of user stack copies handed over at a time: a batch of 4096 `dwarf,8192`
/// samples held 32 MiB, and the channel and both threads hold six batches (a 110 MB
/// recording of python peaked at 130 MiB, 100 of them stack copies in flight). At
/// 1 MiB they were still 11 MB of a report's peak while inlined frames' DWARF is
/// loaded; 256 KiB (32 samples' copies) is as fast.
const BATCH_STACK_BYTES: usize = 1 << 18;
