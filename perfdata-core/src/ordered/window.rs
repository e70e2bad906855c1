//! [`Window`]: records held in file order while decisions about them are made in perf's
//! order, so that an edit or a filter that follows the threads' side-band (a comm
//! selector) sees, at each sample, what perf sees there, and still writes the records
//! in the order they came.

use std::collections::VecDeque;

use crate::raw::{header_of, Located, Origin, RawRecord};
use crate::{Metadata, RecordRef};

use super::{Delivery, OrderedQueue};

/// Memory of records held (their bytes and entries) before the earlier half by time is
/// decided without waiting for
/// a FINISHED_ROUND: perf's OE_FLUSH__HALF when its queue reaches its size limit
/// (`report.queue-size`). A recording made by `perf record` holds about two rounds,
/// the kernel's buffers read once or twice, far less than this; one without
/// FINISHED_ROUND records (a directory, another tool's file) would otherwise be held
/// whole.
pub const WINDOW_LIMIT: usize = 32 << 20;

/// Bytes of the chunks held records are copied into: released whole, from the front,
/// once their records are out (no copy moves what is still held).
const CHUNK: usize = 1 << 20;

/// The held records' bytes, in chunks.
#[derive(Default)]
struct Arena {
    chunks: VecDeque<Vec<u8>>,
    /// The number of `chunks[0]` among all chunks ever used.
    first: u64,
    /// Chunks released, for reuse.
    spare: Vec<Vec<u8>>,
}

impl Arena {
    /// Copy `parts` into the arena, together; where they are (chunk number, offset).
    fn push(&mut self, parts: [&[u8]; 2]) -> (u64, u32) {
        let n = parts[0].len() + parts[1].len();
        let fits = self
            .chunks
            .back()
            .is_some_and(|c| c.capacity() - c.len() >= n);
        if !fits {
            let chunk = match self.spare.pop() {
                Some(c) if c.capacity() >= n => c,
                _ => Vec::with_capacity(n.max(CHUNK)),
            };
            self.chunks.push_back(chunk);
        }
        let number = self.first + self.chunks.len() as u64 - 1;
        let chunk = self.chunks.back_mut().expect("a chunk");
        let at = chunk.len() as u32;
        chunk.extend_from_slice(parts[0]);
        chunk.extend_from_slice(parts[1]);
        (number, at)
    }

    fn get(&self, chunk: u64, at: u32, len: usize) -> &[u8] {
        let c = &self.chunks[(chunk - self.first) as usize];
        &c[at as usize..at as usize + len]
    }

    /// The chunks before chunk `number` hold nothing any more.
    fn release_before(&mut self, number: u64) {
        while self.first < number {
            let Some(mut c) = self.chunks.pop_front() else {
                break;
            };
            self.first += 1;
            if self.spare.len() < 2 && c.capacity() == CHUNK {
                c.clear();
                self.spare.push(c);
            }
        }
    }
}

/// A held record: where its bytes are in the arena and where it came from.
struct Held<D> {
    /// Where its bytes (the record, then its payload) are: chunk number and offset.
    chunk: u64,
    at_byte: u32,
    len: u32,
    payload_len: u32,
    offset: u64,
    origin: Origin,
    stream: usize,
    /// Its fields, located once.
    at: Located,
    decision: Option<D>,
}

/// Records in file order with a decision each, made in perf's order. See the module.
pub struct Window<D> {
    /// The held records' bytes.
    arena: Arena,
    /// Memory of the records held: their bytes and entries.
    held_bytes: usize,
    held: VecDeque<Held<D>>,
    /// The sequence number of `held[0]`.
    first: u64,
    /// Sequence numbers of the records waiting for their turn.
    queue: OrderedQueue<u64>,
    /// Whether FINISHED_ROUND bounds the times still to come: not in a directory, whose
    /// streams perf reads side by side.
    rounds: bool,
    limit: usize,
}

impl<D> Window<D> {
    /// Memory a held record takes beside its bytes: its entry and its place in the
    /// queue (more than a sample's 48 bytes: counted in the limit).
    const PER_RECORD: usize = std::mem::size_of::<Held<D>>() + 16;

    /// An empty window; `rounds`: whether FINISHED_ROUND records let records out (not
    /// for a directory, read one stream after the other).
    pub fn new(rounds: bool) -> Self {
        Self::with_limit(rounds, WINDOW_LIMIT)
    }

    /// [`Window::new`] holding at most about `limit` bytes (see [`WINDOW_LIMIT`]).
    pub fn with_limit(rounds: bool, limit: usize) -> Self {
        Window {
            arena: Arena::default(),
            held_bytes: 0,
            held: VecDeque::new(),
            first: 0,
            queue: OrderedQueue::new(),
            rounds,
            limit,
        }
    }

    /// Whether no record is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// Whether `item` can be held: a payload too large to hold (see
    /// [`RawRecord::rest`]) cannot.
    pub fn holds(item: &RecordRef<'_>) -> bool {
        item.raw.rest == 0
            && u32::try_from(item.raw.bytes.len()).is_ok()
            && u32::try_from(item.raw.payload.len()).is_ok()
    }

    /// Hold `item` (records come in file order; see [`Window::holds`]) and make every
    /// decision perf's order allows now: `decide` is called for each record as perf
    /// would deliver it (this one at once if perf handles it at once, earlier ones a
    /// FINISHED_ROUND lets out), with `item.meta`.
    pub fn push<E>(
        &mut self,
        item: &RecordRef<'_>,
        decide: &mut impl FnMut(&RecordRef<'_>) -> Result<D, E>,
    ) -> Result<(), E> {
        debug_assert!(Self::holds(item));
        let delivery = Delivery::of(item);
        let raw = &item.raw;
        let (chunk, at_byte) = self.arena.push([raw.bytes, raw.payload]);
        self.held_bytes += raw.bytes.len() + raw.payload.len() + Self::PER_RECORD;
        let seq = self.first + self.held.len() as u64;
        self.held.push_back(Held {
            chunk,
            at_byte,
            len: raw.bytes.len() as u32,
            payload_len: raw.payload.len() as u32,
            offset: raw.offset,
            origin: raw.origin,
            stream: raw.stream,
            at: *item.locate(),
            decision: None,
        });
        match delivery {
            Delivery::At(t) => self.queue.push(t, seq),
            Delivery::Now => self.decide_now(seq, item, decide)?,
            Delivery::Round => {
                self.decide_now(seq, item, decide)?;
                if self.rounds {
                    let out: Vec<u64> = self.queue.round().collect();
                    self.decide_all(&out, item.meta, decide)?;
                }
            }
        }
        if self.held_bytes() > self.limit && !self.queue.is_empty() {
            let out: Vec<u64> = self.queue.half().collect();
            self.decide_all(&out, item.meta, decide)?;
            // A record of a far later time first in the file would keep the rest
            // waiting behind it: beyond twice the limit, everything is decided.
            if self.held_bytes() > 2 * self.limit {
                self.flush(item.meta, decide)?;
            }
        }
        Ok(())
    }

    /// Memory of the records held, decided or not.
    fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// Whether the first record held is decided (and [`Window::pop`] gives it).
    pub fn ready(&self) -> bool {
        self.held.front().is_some_and(|h| h.decision.is_some())
    }

    /// Decide every record still waiting, in perf's order (the end of the input, or a
    /// record that cannot be held comes).
    pub fn flush<E>(
        &mut self,
        meta: &Metadata,
        decide: &mut impl FnMut(&RecordRef<'_>) -> Result<D, E>,
    ) -> Result<(), E> {
        let out: Vec<u64> = self.queue.drain().collect();
        self.decide_all(&out, meta, decide)
    }

    /// The first record held, with its decision, when it is made: `f` gets the record
    /// (read with `meta`) and the decision, and the record leaves the window.
    pub fn pop<R>(&mut self, meta: &Metadata, f: impl FnOnce(&RecordRef<'_>, D) -> R) -> Option<R> {
        // Only a decided record leaves.
        self.held.front()?.decision.as_ref()?;
        let mut h = self.held.pop_front().expect("front exists");
        self.first += 1;
        let decision = h.decision.take().expect("decided");
        let len = h.len as usize + h.payload_len as usize;
        self.held_bytes -= len + Self::PER_RECORD;
        let result = {
            let bytes = self.arena.get(h.chunk, h.at_byte, len);
            let item = RecordRef::located(raw_of(&h, bytes, meta), meta, h.at);
            f(&item, decision)
        };
        // The chunks before the next record's are free.
        let next = self.held.front().map_or(h.chunk + 1, |n| n.chunk);
        self.arena.release_before(next);
        Some(result)
    }

    fn decide_now<E>(
        &mut self,
        seq: u64,
        item: &RecordRef<'_>,
        decide: &mut impl FnMut(&RecordRef<'_>) -> Result<D, E>,
    ) -> Result<(), E> {
        let d = decide(item)?;
        let i = (seq - self.first) as usize;
        self.held[i].decision = Some(d);
        Ok(())
    }

    fn decide_all<E>(
        &mut self,
        seqs: &[u64],
        meta: &Metadata,
        decide: &mut impl FnMut(&RecordRef<'_>) -> Result<D, E>,
    ) -> Result<(), E> {
        for &seq in seqs {
            let i = (seq - self.first) as usize;
            let h = &self.held[i];
            let len = h.len as usize + h.payload_len as usize;
            let bytes = self.arena.get(h.chunk, h.at_byte, len);
            let d = decide(&RecordRef::located(raw_of(h, bytes, meta), meta, h.at))?;
            self.held[i].decision = Some(d);
        }
        Ok(())
    }
}

/// The held record `h`, its bytes `bytes` (record then payload).
fn raw_of<'a, D>(h: &Held<D>, bytes: &'a [u8], meta: &Metadata) -> RawRecord<'a> {
    let (rec, payload) = bytes.split_at(h.len as usize);
    RawRecord {
        header: header_of(rec, meta.endian),
        offset: h.offset,
        bytes: rec,
        payload,
        rest: 0,
        origin: h.origin,
        stream: h.stream,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PerfReader;

    /// (offset, time) of each record as it is decided.
    type Decided = Vec<(u64, Option<u64>)>;

    /// Every record of strip-multi.data through a window: decisions in perf's order,
    /// records out in the file's, each with its own decision (its offset).
    fn through_window(limit: usize) -> (Decided, Vec<(u64, u64)>) {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/strip-multi.data");
        let mut reader = PerfReader::open(path).unwrap();
        let mut window = Window::with_limit(true, limit);
        // (offset, decision) as it leaves.
        let mut decided = Vec::new();
        let mut out = Vec::new();
        let mut n = 0u64;
        let mut decide = |r: &RecordRef<'_>| -> Result<u64, ()> {
            decided.push((r.raw.offset, r.locate().time));
            n += 1;
            Ok(r.raw.offset)
        };
        while let Some(item) = reader.next_record().unwrap() {
            window.push(&item, &mut decide).unwrap();
            while let Some(o) = window.pop(item.meta, |r, d| (r.raw.offset, d)) {
                out.push(o);
            }
        }
        window.flush(reader.meta(), &mut decide).unwrap();
        while let Some(o) = window.pop(reader.meta(), |r, d| (r.raw.offset, d)) {
            out.push(o);
        }
        assert!(window.is_empty());
        (decided, out)
    }

    #[test]
    fn records_leave_in_file_order_decided_in_perfs() {
        let (decided, out) = through_window(WINDOW_LIMIT);
        // Out: every record once, in file order, with the decision made for it.
        assert!(out.len() > 600);
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "file order");
        assert!(out.iter().all(|(offset, d)| offset == d));
        assert_eq!(decided.len(), out.len());
        // Decided: not in file order (the fixture's FORK on CPU 1 follows its child's
        // samples on CPU 0), and the timed records of each round in time order.
        assert!(decided.windows(2).any(|w| w[0].0 > w[1].0));
        let timed: Vec<u64> = decided
            .iter()
            .filter_map(|&(_, t)| t.filter(|&t| t != 0))
            .collect();
        let back = timed.windows(2).filter(|w| w[0] > w[1]).count();
        assert_eq!(back, 0, "timed records decided out of time order");
    }

    #[test]
    fn a_small_limit_decides_the_earlier_half_early() {
        // Too small to hold a round: perf's OE_FLUSH__HALF keeps the window near it.
        let (decided, out) = through_window(4096);
        assert_eq!(decided.len(), out.len());
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0), "file order");
        let (all, _) = through_window(WINDOW_LIMIT);
        assert_ne!(decided, all, "the limit changed nothing");
        let mut a: Vec<_> = decided.iter().map(|d| d.0).collect();
        let mut b: Vec<_> = all.iter().map(|d| d.0).collect();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "each record decided once");
    }
}
