//! Which records perf 6.1's ordered events count as out of order.
//!
//! perf does not need a recording in time order: `perf report` and `perf script` queue
//! every kernel record that has a time and deliver them sorted. A FINISHED_ROUND record
//! (perf record writes one after each pass over the ring buffers) delivers the queued
//! records no later than the latest time queued before the previous round
//! (`ordered_events__flush(OE_FLUSH__ROUND)`, util/ordered-events.c). A record queued with
//! a time before the last one delivered comes too late to be put in its place: perf
//! delivers it late and counts it (`nr_unordered_events`), ending with "Warning: N out of
//! order events recorded." Records that go back in time but not past what was delivered
//! (two CPUs' buffers read one after the other; one CPU's sample and side-band records
//! written in another order than their times) are sorted without a word.
//!
//! Only the times decide, so the queue is not kept: of the records queued, what matters is
//! the largest time of those the next round delivers (it becomes `last_flush`) and of
//! those it keeps. Memory is constant.

/// The state of perf's queue, as far as it decides `last_flush`.
#[derive(Debug, Default)]
pub(super) struct OrderedEvents {
    /// `nr_events`: records queued and not delivered.
    queued: u64,
    /// `max_timestamp`: the latest time queued since the queue was last empty.
    max_timestamp: u64,
    /// `next_flush`: the next round delivers the records up to this time (none while 0).
    next_flush: u64,
    /// `last_flush`: the time of the last record delivered.
    last_flush: u64,
    /// The latest time of the records the next round delivers: those kept by earlier
    /// rounds (all up to `next_flush`) and those queued since that are up to it.
    due: Option<u64>,
    /// The latest time of the records queued since the last round after `next_flush`.
    later: Option<u64>,
    /// How many records that is.
    later_n: u64,
}

impl OrderedEvents {
    /// A kernel record of time `time` is queued (perf's `ordered_events__queue`). Returns
    /// the time already delivered when the record comes too late for its place: perf
    /// counts it out of order.
    pub(super) fn queue(&mut self, time: u64) -> Option<u64> {
        // perf delivers records of time 0 or -1 at once (-ETIME), unqueued.
        if time == 0 || time == u64::MAX {
            return None;
        }
        let late = (time < self.last_flush).then_some(self.last_flush);
        self.max_timestamp = if self.queued == 0 {
            time
        } else {
            self.max_timestamp.max(time)
        };
        self.queued += 1;
        if self.next_flush != 0 && time <= self.next_flush {
            self.due = self.due.max(Some(time));
        } else {
            self.later = self.later.max(Some(time));
            self.later_n += 1;
        }
        late
    }

    /// A FINISHED_ROUND record (perf's `OE_FLUSH__ROUND`).
    pub(super) fn round(&mut self) {
        if self.queued == 0 {
            // perf returns before anything, next_flush included.
            return;
        }
        if self.next_flush != 0 {
            // Delivered in time order: everything up to next_flush, the last of them the
            // latest; the records after it stay.
            if let Some(t) = self.due {
                self.last_flush = t;
            }
            self.due = self.later;
            self.queued = self.later_n;
        } else {
            // A limit of 0 delivers nothing; all stay, and all are up to the new limit.
            self.due = self.due.max(self.later);
        }
        self.later = None;
        self.later_n = 0;
        self.next_flush = self.max_timestamp;
    }
}

#[cfg(test)]
mod tests {
    use super::OrderedEvents;

    /// Times queued, with `None` for a FINISHED_ROUND; the times counted out of order.
    fn late(steps: &[Option<u64>]) -> Vec<u64> {
        let mut oe = OrderedEvents::default();
        let mut v = Vec::new();
        for s in steps {
            match s {
                Some(t) => v.extend(oe.queue(*t).map(|_| *t)),
                None => oe.round(),
            }
        }
        v
    }

    #[test]
    fn the_first_round_delivers_nothing_the_second_up_to_the_first_max() {
        // Round 1 sets the limit to 30 and delivers nothing; 5 is not late then.
        assert_eq!(
            late(&[Some(10), Some(30), None, Some(5)]),
            Vec::<u64>::new()
        );
        // Round 2 delivers 10, 30 and 25 (all up to 30): last_flush 30; 29 is late,
        // 31 is not.
        let s = [
            Some(10),
            Some(30),
            None,
            Some(25),
            Some(40),
            None,
            Some(29),
            Some(31),
        ];
        assert_eq!(late(&s), vec![29]);
    }

    #[test]
    fn records_after_the_limit_stay_for_the_next_round() {
        // Round 2's limit is 20: it delivers 10, 15 and 20 (last_flush 20, not 30) and
        // keeps 30, so 25 is not late; round 3 delivers 25 and 30: 29 is late.
        let s = [
            Some(10),
            Some(20),
            None,
            Some(15),
            Some(30),
            None,
            Some(25),
            None,
            Some(29),
        ];
        assert_eq!(late(&s), vec![29]);
        // Round 2 (limit 20) delivers 20 and 15, keeps 25: last_flush 20; 24 is fine.
        let s = [Some(20), None, Some(25), Some(15), None, Some(26), Some(24)];
        assert_eq!(late(&s), Vec::<u64>::new());
    }

    #[test]
    fn an_empty_queue_keeps_the_limit_and_restarts_the_maximum() {
        // Round 2 delivers 50 and empties the queue; round 3 finds it empty. 45 is late
        // and restarts max_timestamp: round 4 delivers it (last_flush 45) and sets the
        // limit to 45, not 50, so round 5 keeps 47 and 46 is not late.
        let s = [
            Some(50),
            None,
            None,
            None,
            Some(45),
            None,
            Some(47),
            None,
            Some(46),
        ];
        assert_eq!(late(&s), vec![45]);
        // Times 0 and -1 are not queued and never late.
        let s = [Some(30), None, Some(30), None, Some(0), Some(u64::MAX)];
        assert_eq!(late(&s), Vec::<u64>::new());
    }
}
