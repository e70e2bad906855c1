//! The time-order queue of a mapped recording's samples as keys ([`super::order`]): a
//! sample of a regular file is queued as its time and where it is in the file (16
//! bytes), and read from the mapped bytes only when its turn comes, on the replaying
//! thread. A sample made into a [`super::event::PendingSample`] here and moved through
//! the queue, the let-out and the batch, then dropped, was most of the reading thread's
//! time (which was two fifths of `perfdata script`'s CPU time).
//!
//! The other records still wait as events ([`perfdata_core::ordered::OrderedQueue`]);
//! each has a key too ([`EVENT`]), so that the keys alone hold perf's order: sorted
//! stably by time, equal times in the order they were pushed, that is file order. The
//! events come out of their queue in that same order (stable by time as well), one for
//! each [`EVENT`] key let out.

/// A key's word that stands for the next record of the events' queue, not a sample.
pub(super) const EVENT: u64 = u64::MAX;

/// Bits of a sample's word that hold its record's file offset; the event's index is
/// above them.
const OFFSET_BITS: u32 = 48;

/// The word of the sample at file offset `offset` of event `event` (its index among
/// the recording's attrs); None where they do not fit (an offset past 256 TiB, an
/// event index past 32767): such a sample waits as an event.
pub(super) fn sample_word(offset: u64, event: usize) -> Option<u64> {
    let event = u64::try_from(event).ok().filter(|&e| e < 0x7fff)?;
    (offset >> OFFSET_BITS == 0).then_some(offset | event << OFFSET_BITS)
}

/// The file offset and event index a sample's word holds ([`sample_word`]).
pub(super) fn word_sample(word: u64) -> (u64, usize) {
    (
        word & ((1 << OFFSET_BITS) - 1),
        (word >> OFFSET_BITS) as usize,
    )
}

/// Keys waiting for their round: (time, word), in push order after the sorted rest of
/// earlier rounds.
#[derive(Default)]
pub(super) struct Keys {
    waiting: Vec<(u64, u64)>,
}

/// Bytes a key takes while it waits, for the queue's memory budget.
pub(super) const KEY_BYTES: u64 = 16;

impl Keys {
    /// Queue `word` at `time`.
    #[inline]
    pub(super) fn push(&mut self, time: u64, word: u64) {
        self.waiting.push((time, word));
    }

    /// Keys waiting.
    pub(super) fn len(&self) -> usize {
        self.waiting.len()
    }

    /// Whether no key waits.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The keys up to `limit`, in time order (equal times in push order: the sort is
    /// stable, and quick on the few sorted runs, one per CPU, a round holds); the rest
    /// stay queued.
    pub(super) fn until(&mut self, limit: u64) -> std::vec::Drain<'_, (u64, u64)> {
        self.waiting.sort_by_key(|k| k.0);
        let n = self.waiting.partition_point(|k| k.0 <= limit);
        self.waiting.drain(..n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_offset_and_event_and_refuse_what_does_not_fit() {
        let w = sample_word(0x1234_5678_9abc, 7).expect("fits");
        assert_eq!(word_sample(w), (0x1234_5678_9abc, 7));
        assert_ne!(w, EVENT);
        assert_eq!(sample_word(1 << 48, 0), None);
        assert_eq!(sample_word(0, 0x7fff), None);
        assert_ne!(sample_word((1 << 48) - 1, 0x7ffe), Some(EVENT));
    }

    #[test]
    fn keys_leave_by_time_ties_in_push_order_the_rest_stay() {
        let mut k = Keys::default();
        for (t, w) in [(5, 1), (3, 2), (5, 3), (9, 4), (3, 5)] {
            k.push(t, w);
        }
        let out: Vec<_> = k.until(5).collect();
        assert_eq!(out, [(3, 2), (3, 5), (5, 1), (5, 3)]);
        assert_eq!(k.len(), 1);
        k.push(9, 6);
        k.push(1, 7);
        let out: Vec<_> = k.until(u64::MAX).collect();
        assert_eq!(out, [(1, 7), (9, 4), (9, 6)]);
        assert!(k.is_empty());
    }
}
