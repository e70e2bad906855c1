//! The reading thread's half of perf's order ([`super::replay`]): records queued by
//! time and let out by rounds, handed to the replaying thread in batches.

use std::io;
use std::sync::mpsc::{Receiver, SyncSender};

use perfdata_core::ordered::OrderedQueue;

use super::chain::Spare;
use super::event::Event;
use super::keys::{Keys, EVENT, KEY_BYTES};
use super::spill::Spilled;

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
    /// With keys ([`Ordering::with_keys`]), the order: each a sample's word
    /// (`super::keys::sample_word`: read from the mapped file), or [`EVENT`] for the
    /// next of `events`. Empty otherwise: `events` in order.
    pub(super) keys: Vec<u64>,
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
            keys: Vec::new(),
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
///
/// perf holds a whole round (its queue's size is unlimited by default); here, past
/// `budget` bytes the queued records go to disk ([`Spilled`]) and come back, merged,
/// as rounds let them out: the order is perf's, the memory bounded.
pub(super) struct Ordering<'a> {
    queue: OrderedQueue<Event>,
    /// With keys ([`Ordering::with_keys`]): every record queued in memory, a sample as
    /// its word, another record as [`EVENT`] for the next of `queue`.
    keys: Keys,
    /// Records queued before those of `queue`, on disk.
    spilled: Spilled,
    /// Past this many bytes the queue goes to disk.
    budget: usize,
    /// Records up to this time go out at the next round (perf's `next_flush`).
    next_flush: u64,
    /// The latest time queued since the queue was last empty (perf's `max_timestamp`).
    max_time: u64,
    /// Whether FINISHED_ROUND records let records out (not in a directory's data).
    rounds: bool,
    pub(super) out: Outbox<'a>,
    /// A spilled sample's chain words, reused.
    words: Vec<u64>,
    /// Why the queue stayed in memory past its budget: its temporary file could not be
    /// made.
    pub(super) in_memory: Option<String>,
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
    /// Records are ordered by keys ([`Ordering::with_keys`]): each record handed over
    /// has one in the batch.
    keyed: bool,
}

impl<'a> Ordering<'a> {
    /// Records in perf's order handed over through `tx` (emptied batches come back
    /// through `spare`), let out by rounds if `rounds`, on disk past `budget` bytes.
    pub(super) fn new(
        tx: &'a SyncSender<Batch>,
        spare: &'a Receiver<Batch>,
        rounds: bool,
        budget: usize,
    ) -> Self {
        Ordering {
            queue: OrderedQueue::new(),
            keys: Keys::default(),
            spilled: Spilled::default(),
            budget,
            next_flush: 0,
            max_time: 0,
            rounds,
            out: Outbox {
                tx,
                spare,
                batch: Batch::new(),
                stack_bytes: 0,
                held: Spare::default(),
                gone: false,
                keyed: false,
            },
            words: Vec::new(),
            in_memory: None,
        }
    }

    /// Queue samples as keys ([`Ordering::push_at`]): the replaying thread reads them
    /// from the mapped file (`super::keys`).
    pub(super) fn with_keys(mut self) -> Self {
        self.out.keyed = true;
        self
    }

    /// Whether nothing is queued, in memory or on disk.
    fn is_empty(&self) -> bool {
        self.queue.is_empty() && self.keys.is_empty() && self.spilled.is_empty()
    }

    /// Queue the sample of key word `word` (`super::keys::sample_word`) at `time`: only
    /// [`Ordering::with_keys`].
    #[inline]
    pub(super) fn push_at(&mut self, time: u64, word: u64) {
        debug_assert!(self.out.keyed && word != EVENT);
        self.max_time = if self.is_empty() {
            time
        } else {
            self.max_time.max(time)
        };
        self.keys.push(time, word);
    }

    /// Take `step` as perf's ordered events do: at once, queued, or a round let out.
    pub(super) fn step(&mut self, step: Step) -> io::Result<()> {
        match step {
            Step::Round => return self.round(),
            Step::Now(ev) => self.out.emit(ev),
            Step::Queued(t, ev) => self.push(t, ev),
        }
        Ok(())
    }

    /// Queue `ev` at `time`.
    #[inline]
    pub(super) fn push(&mut self, time: u64, ev: Event) {
        self.max_time = if self.is_empty() {
            time
        } else {
            self.max_time.max(time)
        };
        // Worked out once: the queue keeps it with the record's key.
        let weight = weight(&ev, &self.out.held);
        if self.out.keyed {
            self.keys.push(time, EVENT);
        }
        self.queue.push_weighed(time, ev, weight);
    }

    /// Move what the queue holds in memory to disk if it passed the budget. Not while
    /// a queued sample's chain waits for the records after it (`lbr::CallStacks`):
    /// its held words are named by the reading loop until then.
    #[inline]
    pub(super) fn spill_if_full(&mut self) -> io::Result<()> {
        let keys = self.keys.len() as u64 * KEY_BYTES;
        if self.queue.weight() + keys <= self.budget as u64 {
            return Ok(());
        }
        self.spill()
    }

    #[cold]
    #[inline(never)]
    fn spill(&mut self) -> io::Result<()> {
        if let Err(e) = self.spilled.open() {
            // No temporary file (TMPDIR missing or read-only; a full one fails later, at a write): the queue stays in memory,
            // as perf holds it, and the replay says so.
            self.budget = usize::MAX;
            self.in_memory = Some(e.to_string());
            return Ok(());
        }
        let memory = memory(&mut self.queue, &mut self.keys, self.out.keyed, u64::MAX);
        self.spilled.write_run(memory, &mut self.out.held)?;
        Ok(())
    }

    /// A FINISHED_ROUND record: the queue lets out what the previous round bounded
    /// (perf's OE_FLUSH__ROUND: up to the latest time queued before the previous round;
    /// an empty queue leaves the bound as it was).
    fn round(&mut self) -> io::Result<()> {
        if !self.rounds {
            return Ok(());
        }
        let limit = self.next_flush;
        if !self.is_empty() {
            self.next_flush = self.max_time;
        }
        self.let_out(limit)
    }

    /// The queued records up to `limit` go out, in time order (equal times in the
    /// order they were queued: those on disk first, the oldest run first).
    fn let_out(&mut self, limit: u64) -> io::Result<()> {
        if self.spilled.is_empty() && self.out.keyed {
            // The events come out of their queue in the keys' order.
            let mut events = self.queue.until(limit);
            for (_, word) in self.keys.until(limit) {
                if word != EVENT {
                    self.out.emit_at(word);
                } else if let Some((_, ev)) = events.next() {
                    self.out.emit(ev);
                }
            }
            return Ok(());
        }
        if self.spilled.is_empty() {
            for (_, ev) in self.queue.until(limit) {
                self.out.emit(ev);
            }
            return Ok(());
        }
        let keyed = self.out.keyed;
        let mut memory = memory(&mut self.queue, &mut self.keys, keyed, limit).peekable();
        loop {
            let disk = self.spilled.next_time(limit)?;
            let from_disk = match (disk, memory.peek()) {
                (None, None) => break,
                (Some((_, t)), Some((m, _))) => t <= *m,
                (d, _) => d.is_some(),
            };
            if let (true, Some((run, _))) = (from_disk, disk) {
                let reuse = self.out.batch.users.pop();
                let mut ev = self.spilled.take(run, &mut self.words, reuse)?;
                if let Event::Sample(p) = &mut ev {
                    // Made again with chain 1 where it had one: held again, to be
                    // handed over as a queued sample's is.
                    if p.chain != 0 {
                        p.chain = self.out.held.hold(self.words.iter().copied());
                    }
                }
                self.out.emit(ev);
            } else if let Some((_, ev)) = memory.next() {
                self.out.emit(ev);
            }
        }
        drop(memory);
        self.spilled.tidy()
    }

    /// The end of the records: everything still queued, then the last batch; why the
    /// queue stayed in memory past its budget, if it did.
    pub(super) fn finish(mut self) -> io::Result<Option<String>> {
        self.let_out(u64::MAX)?;
        if !self.out.gone {
            // The receiver is gone only if the replay thread panicked, which join reports.
            let _ = self.out.tx.send(self.out.batch);
        }
        Ok(self.in_memory)
    }
}

/// What waits in memory up to `limit`, in perf's order: `queue`'s events, merged with
/// the samples of `keys` ([`Event::At`]) if `keyed`.
fn memory<'q>(
    queue: &'q mut OrderedQueue<Event>,
    keys: &'q mut Keys,
    keyed: bool,
    limit: u64,
) -> impl Iterator<Item = (u64, Event)> + 'q {
    let mut events = queue.until(limit);
    let mut keys = keyed.then(|| keys.until(limit));
    std::iter::from_fn(move || {
        let Some(keys) = keys.as_mut() else {
            return events.next();
        };
        let (time, word) = keys.next()?;
        if word == EVENT {
            events.next()
        } else {
            Some((time, Event::At(word)))
        }
    })
}

/// About the bytes `ev` takes while it waits in the queue, its held chain words (in
/// `held`) and user stack copy included: what [`Ordering`]'s budget counts (at most
/// 4 GiB, as the queue keeps it).
#[inline]
fn weight(ev: &Event, held: &Spare) -> u32 {
    const ITEM: usize = std::mem::size_of::<Event>() + 16;
    match ev {
        Event::Sample(p) => {
            let chain = held.len_of(p.chain) * 8;
            let rare = p.rare.as_ref().map_or(0, |r| {
                std::mem::size_of::<super::event::Rare>()
                    + r.user
                        .as_ref()
                        .map_or(0, |u| 64 + u.stack.capacity() + 8 * u.regs.capacity())
                    + r.read.as_ref().map_or(0, |v| 24 * v.capacity())
                    + r.extra
                        .as_ref()
                        .map_or(0, |e| 64 + e.raw.as_ref().map_or(0, Vec::capacity))
            });
            u32::try_from(ITEM + chain + rare).unwrap_or(u32::MAX)
        }
        _ => (ITEM + 64) as u32,
    }
}

impl Outbox<'_> {
    /// Hand `ev` over after the records before it; a sample's held chain goes into the
    /// batch's words.
    #[inline]
    pub(super) fn emit(&mut self, mut ev: Event) {
        if let Event::At(word) = ev {
            return self.emit_at(word);
        }
        if self.keyed {
            self.batch.keys.push(EVENT);
        }
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

    /// Hand the sample of key word `word` over after the records before it
    /// ([`Ordering::with_keys`]).
    #[inline]
    pub(super) fn emit_at(&mut self, word: u64) {
        self.batch.keys.push(word);
        if self.batch.keys.len() >= BATCH {
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

#[cfg(test)]
mod tests;
