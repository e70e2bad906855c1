//! Stacks made by hand, for the exports' tests.

use super::{Detail, StackCollector, Stacks};
use crate::model::{Replay, ResolvedSample};
use crate::process::Machine;
use crate::symbolize::{SymbolOptions, Symbolizer};

/// A sample of `pid` at `time` with a callchain of `depth` frames (addresses without
/// maps, so `[unknown]`), or its ip alone for a depth of 1.
pub(crate) fn sample(
    m: &mut Machine,
    pid: i32,
    time: Option<u64>,
    period: u64,
    depth: u64,
) -> ResolvedSample {
    let ip = m.resolve(pid, pid, 0x1000, false);
    let callchain = if depth > 1 {
        (0..depth)
            .map(|i| m.resolve(pid, pid, 0x1000 + 16 * i, false))
            .collect()
    } else {
        Vec::new()
    };
    ResolvedSample {
        event: 0,
        pid,
        tid: pid,
        cpu: Some(0),
        time,
        period,
        ip,
        callchain,
        unwound: 0,
        lbr: false,
    }
}

/// The stacks of `samples`, replayed on `m` (events named `cpu-clock`), collected
/// for `detail`.
pub(crate) fn stacks(m: Machine, samples: &[ResolvedSample], detail: Detail) -> Stacks {
    let mut c = StackCollector::new(detail).expect("temp file");
    for s in samples {
        c.add(&m, s);
    }
    let replay = replay(m, "cpu-clock");
    let mut symbols = Symbolizer::new(SymbolOptions::default());
    c.finish(&replay, &mut symbols, super::Sources::Off)
        .expect("finished")
}

/// A replay that left `machine`, of one event named `event`.
pub(crate) fn replay(machine: Machine, event: &str) -> Replay {
    Replay {
        machine,
        event_names: vec![event.into()],
        event_ids: vec![(1, 0)],
        hostname: None,
        osrelease: None,
        lost_samples: 0,
        groups: Vec::new(),
        unwind: Default::default(),
        warnings: Vec::new(),
    }
}
