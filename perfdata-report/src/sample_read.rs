//! Samples that read counters (PERF_SAMPLE_READ, `perf record -e '{a,b}:S'`), delivered
//! as perf 6.1's `evlist__deliver_sample` delivers them: a sample per counter read.

use crate::model::ResolvedSample;
use crate::process::Machine;

/// The last value of each counter that samples read (perf's `sid->period`), by id.
pub(crate) type Counters = rustc_hash::FxHashMap<u64, u64>;

/// A sample that read counters, delivered as perf 6.1's `evlist__deliver_sample` does:
/// one sample per counter (each of a group's, or the one), of the counter's event, its
/// period the counter's increase since the last sample that read it; a counter of no
/// known event, or that did not move, gives none.
pub(crate) fn deliver_read(
    machine: &Machine,
    sample: ResolvedSample,
    values: &[(Option<usize>, u64, u64)],
    counters: &mut Counters,
    on_sample: &mut impl FnMut(&Machine, ResolvedSample),
) {
    for &(event, id, value) in values {
        let Some(event) = event else {
            continue;
        };
        let last = counters.entry(id).or_insert(0);
        // perf's u64 arithmetic: a counter that went back wraps, as there.
        let period = value.wrapping_sub(*last);
        *last = value;
        if period != 0 {
            on_sample(
                machine,
                ResolvedSample {
                    event,
                    period,
                    ..sample.clone()
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Location;

    /// A group of two counters (ids 7 and 8, events 0 and 1) and an id of no event:
    /// periods are the increases, a counter that did not move gives no sample.
    #[test]
    fn each_counter_is_a_sample_of_its_increase() {
        let m = Machine::new();
        let at = Location {
            thread: 0,
            comm: 0,
            dso: None,
            addr: 0x10,
            ip: 0x10,
            kernel: false,
        };
        let sample = ResolvedSample {
            event: 0,
            pid: 1,
            tid: 1,
            cpu: None,
            time: Some(5),
            period: 100_000,
            ip: at,
            callchain: Vec::new(),
            unwound: 0,
            lbr: false,
        };
        let mut counters = Counters::default();
        let mut got = Vec::new();
        let reads = [
            [(Some(0), 7, 1000), (Some(1), 8, 900), (None, 9, 5)],
            [(Some(0), 7, 2500), (Some(1), 8, 900), (None, 9, 6)],
            // A counter that went back wraps, as perf's u64 subtraction does.
            [(Some(0), 7, 2400), (Some(1), 8, 1000), (None, 9, 7)],
        ];
        for values in &reads {
            deliver_read(&m, sample.clone(), values, &mut counters, &mut |_, s| {
                got.push((s.event, s.period))
            });
        }
        assert_eq!(
            got,
            [(0, 1000), (1, 900), (0, 1500), (0, u64::MAX - 99), (1, 100)]
        );
    }
}
