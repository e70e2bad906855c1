//! perf's time order: the ordered events of perf 6.1's `perf report` and `perf script`.
//!
//! perf does not handle records in the order of the file: the kernel's ring buffers are
//! written one CPU after the other, so a thread's FORK on one CPU can come after its
//! first samples on another. perf queues every kernel record that has a time
//! ([`Delivery::of`]) and a FINISHED_ROUND record lets out, in time order, the queued
//! records no later than the latest time queued before the previous FINISHED_ROUND
//! ([`OrderedQueue::round`]); a record without a time (or of time 0), and every record of
//! perf's own types, is handled at once. So at most about two rounds of records wait.
//!
//! [`OrderedQueue`] is that queue, used by the report's replay and by [`Window`], which
//! holds records in file order while decisions about them are made in perf's order
//! (the edits and filters that follow a thread's comm).

mod window;

pub use window::{Window, WINDOW_LIMIT};

use std::collections::VecDeque;

use crate::record::RecordType;
use crate::RecordRef;

/// How perf delivers a record to its tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// At once, as it is read: perf's own record types (FINISHED_ROUND aside) and kernel
    /// records without a time, or with time 0 or -1 (perf's `-ETIME`).
    Now,
    /// Queued at its time.
    At(u64),
    /// FINISHED_ROUND: handled at once, then the queue lets out a round.
    Round,
}

impl Delivery {
    /// How perf delivers `item`.
    #[inline]
    pub fn of(item: &RecordRef<'_>) -> Delivery {
        let ty = item.raw.header.type_;
        if ty == RecordType::FinishedRound.as_u32() {
            return Delivery::Round;
        }
        if ty >= RecordType::USER_TYPE_START {
            return Delivery::Now;
        }
        match item.locate().time {
            Some(t) if t != 0 && t != u64::MAX => Delivery::At(t),
            _ => Delivery::Now,
        }
    }
}

/// perf's ordered events queue: items wait by time until a round lets them out.
///
/// Equal times keep the order they were pushed in. The queue holds items, not records:
/// the caller keeps what it needs of a record until its turn comes. An item is moved
/// twice, in and out: the times are sorted with each item's place in push order, not
/// the items (a replay's queued sample is 64 bytes, and moving whole items through the
/// sort was 17% of `perfdata script`'s cycles). The items wait in push order, so that
/// a round's let-out reads them as a merge of a few forward runs (one per CPU): slots
/// filled again in the order a free list gave them were read and written at random,
/// and those cache misses were most of the queue's cost (a sixth of `perfdata
/// script`'s cycles).
#[derive(Debug, Clone)]
pub struct OrderedQueue<T> {
    /// The items' keys, in push order after the sorted rest of earlier rounds.
    waiting: Vec<Key>,
    /// The items in push order, the first at place `first`; None once let out (the
    /// front is trimmed of those as rounds go out).
    items: VecDeque<Option<T>>,
    /// The place of `items`' front (places wrap: only their differences are used).
    first: u32,
    /// The weight of the items waiting ([`OrderedQueue::push_weighed`]).
    weight: u64,
    /// Items up to this time go out at the next round (perf's `next_flush`).
    next_flush: u64,
    /// The latest time pushed since the queue was last empty (perf's `max_timestamp`).
    max_time: u64,
    /// The time of the item pushed last, while it waits (perf's `last`).
    last_time: Option<u64>,
}

/// An item's time, its place in push order and its weight: 16 bytes, sorted by time.
#[derive(Debug, Clone, Copy)]
struct Key {
    time: u64,
    place: u32,
    weight: u32,
}

impl<T> Default for OrderedQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> OrderedQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        OrderedQueue {
            waiting: Vec::new(),
            items: VecDeque::new(),
            first: 0,
            weight: 0,
            next_flush: 0,
            max_time: 0,
            last_time: None,
        }
    }

    /// Items waiting.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The sum of the weights of the items waiting ([`OrderedQueue::push_weighed`]).
    pub fn weight(&self) -> u64 {
        self.weight
    }

    /// Queue `item` at `time`.
    #[inline]
    pub fn push(&mut self, time: u64, item: T) {
        self.push_weighed(time, item, 0);
    }

    /// Queue `item` at `time`, counting `weight` in [`OrderedQueue::weight`] while it
    /// waits: kept with the item's key, so the caller (whose memory budget counts the
    /// bytes an item holds) does not work it out again as the item goes out.
    #[inline]
    pub fn push_weighed(&mut self, time: u64, item: T, weight: u32) {
        self.max_time = if self.waiting.is_empty() {
            time
        } else {
            self.max_time.max(time)
        };
        self.last_time = Some(time);
        if self.items.len() >= self.waiting.len().max(COMPACT_FROM) * 4 {
            self.compact();
        }
        let place = self.first.wrapping_add(self.items.len() as u32);
        self.items.push_back(Some(item));
        self.weight += u64::from(weight);
        self.waiting.push(Key {
            time,
            place,
            weight,
        });
    }

    /// Drop the let-out items' places between those still waiting: an item waiting
    /// long (a time far ahead of the others') would otherwise hold the places of all
    /// those pushed after it. The waiting items keep their push order.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        // The new place of each old one: the number of items still waiting before it.
        let mut new_place = Vec::with_capacity(self.items.len());
        let mut n = 0u32;
        for item in &self.items {
            new_place.push(n);
            n += u32::from(item.is_some());
        }
        for key in &mut self.waiting {
            key.place = new_place[key.place.wrapping_sub(self.first) as usize];
        }
        self.items.retain(Option::is_some);
        self.first = 0;
    }

    /// The items up to `limit`, in time order (equal times in push order); the rest
    /// stay queued.
    fn take_until(&mut self, limit: u64) -> LetOut<'_, T> {
        // Stable, by time: the queue is in push order but for what is left of earlier
        // rounds, itself sorted and earlier, and the merge sort is quick on the few
        // sorted runs (one per CPU) a round holds.
        self.waiting.sort_by_key(|k| k.time);
        let n = self.waiting.partition_point(|k| k.time <= limit);
        // perf's `last`: forgotten when the queue empties, the latest queued when the
        // item pushed last goes out.
        self.last_time = match self.waiting.get(n..).and_then(<[_]>::last) {
            None => None,
            Some(k) if self.last_time.is_none_or(|t| t <= limit) => Some(k.time),
            Some(_) => self.last_time,
        };
        LetOut {
            keys: self.waiting.drain(..n),
            items: &mut self.items,
            first: &mut self.first,
            weight: &mut self.weight,
        }
    }

    /// perf's OE_FLUSH__ROUND, at a FINISHED_ROUND record: the items up to the latest
    /// time pushed before the previous round go out.
    pub fn round(&mut self) -> impl Iterator<Item = T> + '_ {
        let limit = self.next_flush;
        // An empty queue leaves perf's next_flush as it was.
        if !self.waiting.is_empty() {
            self.next_flush = self.max_time;
        }
        self.take_until(limit).map(|(_, item)| item)
    }

    /// The items up to `limit` with their times, in time order (equal times in push
    /// order), the rest staying queued: for a caller that keeps perf's round bounds
    /// itself (the replay, whose queue goes partly to disk), not [`OrderedQueue::round`]'s.
    pub fn until(&mut self, limit: u64) -> impl Iterator<Item = (u64, T)> + '_ {
        self.take_until(limit)
    }

    /// perf's OE_FLUSH__HALF, when its queue reaches its size limit: the items up to the
    /// middle of the time span from the earliest queued to the one pushed last go out.
    pub fn half(&mut self) -> impl Iterator<Item = T> + '_ {
        let first = self.waiting.iter().map(|k| k.time).min();
        if let (Some(first), Some(last)) = (first, self.last_time) {
            self.next_flush = first + last.saturating_sub(first) / 2;
        }
        let limit = if self.waiting.is_empty() {
            0
        } else {
            self.next_flush
        };
        self.take_until(limit).map(|(_, item)| item)
    }

    /// perf's OE_FLUSH__FINAL, at the end: everything, in time order.
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.take_until(u64::MAX).map(|(_, item)| item)
    }
}

/// The let-out places between the items waiting are dropped when all places number four
/// times the items waiting, or four times this many if fewer wait
/// ([`OrderedQueue::compact`]): at most about three let-out places an item, amortized.
const COMPACT_FROM: usize = 4096;

/// The items a flush lets out, with their times, each taken from its place as it is
/// asked for; those not asked for are dropped with the iterator, as a drained Vec's
/// are. The let-out places at the front go with it.
struct LetOut<'q, T> {
    keys: std::vec::Drain<'q, Key>,
    items: &'q mut VecDeque<Option<T>>,
    first: &'q mut u32,
    weight: &'q mut u64,
}

impl<T> LetOut<'_, T> {
    /// The item of `key`, taken from its place.
    #[inline]
    fn take(&mut self, key: Key) -> Option<T> {
        *self.weight -= u64::from(key.weight);
        let at = key.place.wrapping_sub(*self.first) as usize;
        self.items.get_mut(at)?.take()
    }
}

impl<T> Iterator for LetOut<'_, T> {
    type Item = (u64, T);

    #[inline]
    fn next(&mut self) -> Option<(u64, T)> {
        let key = self.keys.next()?;
        Some((key.time, self.take(key)?))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.keys.size_hint()
    }
}

impl<T> Drop for LetOut<'_, T> {
    fn drop(&mut self) {
        while let Some(key) = self.keys.next() {
            self.take(key);
        }
        while let Some(None) = self.items.front() {
            self.items.pop_front();
            *self.first = self.first.wrapping_add(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(q: &mut OrderedQueue<&'static str>) -> Vec<&'static str> {
        q.round().collect()
    }

    #[test]
    fn a_round_lets_out_what_the_previous_one_bounded() {
        let mut q = OrderedQueue::new();
        // Round 1: CPU 0's records then CPU 1's, each in time order.
        for (t, name) in [(10, "a0"), (30, "b0"), (20, "a1"), (40, "b1")] {
            q.push(t, name);
        }
        // The first round has no bound yet (perf's next_flush starts at 0).
        assert!(round(&mut q).is_empty());
        q.push(35, "c0");
        q.push(50, "c1");
        // Up to 40, the latest time before the previous round; equal order by time.
        assert_eq!(round(&mut q), ["a0", "a1", "b0", "c0", "b1"]);
        assert_eq!(q.len(), 1);
        assert_eq!(q.drain().collect::<Vec<_>>(), ["c1"]);
    }

    #[test]
    fn equal_times_keep_their_order_and_empty_rounds_keep_the_bound() {
        let mut q = OrderedQueue::new();
        q.push(5, "x");
        q.push(5, "y");
        q.push(3, "z");
        assert!(round(&mut q).is_empty());
        assert_eq!(round(&mut q), ["z", "x", "y"]);
        // Empty: the bound stays 5, so the next round lets out 5 and no more.
        assert!(round(&mut q).is_empty());
        q.push(5, "p");
        q.push(9, "q");
        assert_eq!(round(&mut q), ["p"]);
    }

    #[test]
    fn half_lets_out_the_earlier_half_of_the_span() {
        let mut q = OrderedQueue::new();
        for (t, name) in [(100, "a"), (400, "d"), (200, "b"), (300, "c"), (150, "e")] {
            q.push(t, name);
        }
        // From 100 to the last pushed (150): up to 125.
        assert_eq!(q.half().collect::<Vec<_>>(), ["a"]);
        q.push(500, "f");
        // From 150 to 500: up to 325.
        assert_eq!(q.half().collect::<Vec<_>>(), ["e", "b", "c"]);
        assert_eq!(q.drain().collect::<Vec<_>>(), ["d", "f"]);
        assert!(q.half().next().is_none());
    }

    #[test]
    fn an_item_waiting_long_keeps_few_places_and_its_order() {
        let mut q = OrderedQueue::new();
        // Two items far ahead, the same time: they wait while many rounds go out.
        q.push_weighed(u64::MAX - 1, 1, 7);
        q.push_weighed(u64::MAX - 1, 2, 7);
        let mut out = Vec::new();
        for round in 0..20_000u64 {
            q.push_weighed(10 + round, round + 10, 1);
            // The one before it goes out.
            out.extend(q.until(9 + round).map(|(_, item)| item));
            assert!(
                q.items.len() <= 4 * COMPACT_FROM + 1,
                "{} places",
                q.items.len()
            );
        }
        assert_eq!(out.len(), 19_999);
        assert!(out.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(q.weight(), 14 + 1);
        assert_eq!(q.drain().collect::<Vec<_>>(), [20_009, 1, 2]);
        assert_eq!(q.weight(), 0);
    }

    #[test]
    fn slots_are_filled_again_and_items_not_taken_are_dropped() {
        let item = std::rc::Rc::new(());
        let mut q = OrderedQueue::new();
        for round in 1..=10u64 {
            for t in 0..4 {
                q.push(round * 10 + t, item.clone());
            }
            // One taken, the rest of what the round lets out dropped with the iterator.
            let _ = q.round().next();
        }
        assert!(q.items.len() <= 8, "{} places", q.items.len());
        assert_eq!(q.len(), 4);
        drop(q.drain());
        assert!(q.is_empty());
        assert_eq!(std::rc::Rc::strong_count(&item), 1);
    }
}
