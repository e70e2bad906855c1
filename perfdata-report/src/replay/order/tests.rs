//! The queue with its disk part against perf's order as [`OrderedQueue`] alone keeps it.

use super::*;
use crate::replay::event::{test_sample, Rare};
use crate::replay::keys::EVENT;
use crate::unwind::UserState;

/// A xorshift generator: the same records for a seed, on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What goes through the queue in a test: record `id` (a sample's ip, a COMM's pid) at
/// a time, or a round.
#[derive(Clone, Copy)]
enum Op {
    Push(u64, u64),
    Round,
    Now(u64),
}

/// Random records: times from a few values (many ties), each CPU's ascending within
/// a round as the kernel writes them, rounds at random.
fn ops(rng: &mut Rng, n: u64) -> Vec<Op> {
    let mut ops = Vec::new();
    let mut base = 1;
    for id in 1..=n {
        match rng.below(20) {
            0 => {
                ops.push(Op::Round);
                base += rng.below(8);
            }
            1 => ops.push(Op::Now(id)),
            _ => ops.push(Op::Push(id, base + rng.below(6))),
        }
    }
    ops
}

/// The record `id` is: a COMM for every fifth, else a sample, with a chain, a user
/// stack copy or READ values by `id`.
fn event(id: u64, time: u64, held: &mut Spare) -> Event {
    if id.is_multiple_of(5) {
        return Event::Comm {
            pid: id as i32,
            tid: id as i32,
            name: format!("c{id}"),
            exec: false,
        };
    }
    let mut p = test_sample(id, time);
    if id.is_multiple_of(2) {
        p.chain = held.hold([id, id + 1, u64::MAX - id]);
    }
    if id.is_multiple_of(3) {
        p.rare().user = Some(Box::new(UserState {
            abi: 2,
            mask: 3,
            regs: vec![id, id],
            stack: vec![id as u8; (id % 300) as usize],
            stack_size: 8192,
        }));
    }
    if id.is_multiple_of(7) {
        p.rare().read = Some(vec![(Some(0), id, id * 2)]);
    }
    Event::Sample(p)
}

/// The ids perf's queue lets out for `ops`.
fn perf_order(ops: &[Op], rounds: bool) -> Vec<u64> {
    let mut q = OrderedQueue::new();
    let mut out = Vec::new();
    for op in ops {
        match *op {
            Op::Push(id, t) => q.push(t, id),
            Op::Round if rounds => out.extend(q.round()),
            Op::Round => {}
            Op::Now(id) => out.push(id),
        }
    }
    out.extend(q.drain());
    out
}

/// Whether record `id` is, with keys, queued as one ([`Ordering::push_at`], its word
/// `id`): a sample with nothing beyond its fields, as a mapped file's are.
fn keyed_sample(id: u64) -> bool {
    [2, 3, 5, 7].iter().all(|&d| !id.is_multiple_of(d))
}

/// The ids [`Ordering`] hands over for `ops` with `budget` bytes in memory, each
/// record checked to come back whole; with `keys`, the plain samples queued as keys.
fn spilled_order(ops: &[Op], rounds: bool, budget: usize, rewrite_at: u64, keys: bool) -> Vec<u64> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(1024);
    let (_back, spare) = std::sync::mpsc::channel::<Batch>();
    let mut order = Ordering::new(&tx, &spare, rounds, budget);
    if keys {
        order = order.with_keys();
    }
    order.spilled.rewrite_at(rewrite_at);
    for op in ops {
        // Where the reading loop looks, before each record.
        order.spill_if_full().expect("spills");
        match *op {
            Op::Push(id, t) if keys && keyed_sample(id) => {
                order.push_at(t, id);
                continue;
            }
            Op::Now(id) if keys && keyed_sample(id) => {
                order.out.emit_at(id);
                continue;
            }
            _ => {}
        }
        let step = match *op {
            Op::Push(id, t) => Step::Queued(t, event(id, t, &mut order.out.held)),
            Op::Round => Step::Round,
            Op::Now(id) => Step::Now(event(id, 0, &mut order.out.held)),
        };
        order.step(step).expect("steps");
    }
    assert_eq!(order.finish().expect("finishes"), None);
    drop(tx);
    let mut ids = Vec::new();
    for batch in rx {
        let mut events = batch.events.iter();
        let order: Vec<Option<u64>> = if batch.keys.is_empty() {
            vec![None; batch.events.len()]
        } else {
            batch
                .keys
                .iter()
                .map(|&w| (w != EVENT).then_some(w))
                .collect()
        };
        for key in order {
            if let Some(id) = key {
                assert!(keys && keyed_sample(id), "{id}");
                ids.push(id);
                continue;
            }
            let ev = events.next().expect("an event for each EVENT key");
            let id = match ev {
                Event::Comm { pid, name, .. } => {
                    assert_eq!(*name, format!("c{pid}"));
                    *pid as u64
                }
                Event::Sample(p) => {
                    let id = p.ip;
                    let chain = chain_words(&batch.chains, p.chain);
                    let want: &[u64] = if id.is_multiple_of(2) {
                        &[id, id + 1, u64::MAX - id]
                    } else {
                        &[]
                    };
                    assert_eq!(chain, want, "{id}");
                    let rare = p.rare.as_deref().map(|r: &Rare| (&r.user, &r.read));
                    let user = rare.and_then(|r| r.0.as_ref());
                    assert_eq!(
                        user.map(|u| (u.stack.len(), &u.regs)),
                        (id.is_multiple_of(3)).then_some(((id % 300) as usize, &vec![id, id])),
                        "{id}"
                    );
                    assert_eq!(
                        rare.and_then(|r| r.1.clone()),
                        (id.is_multiple_of(7)).then(|| vec![(Some(0), id, id * 2)]),
                        "{id}"
                    );
                    id
                }
                _ => panic!("no other records are queued"),
            };
            ids.push(id);
        }
    }
    ids
}

#[test]
fn records_on_disk_come_back_in_perfs_order() {
    for seed in 1..=12u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let ops = ops(&mut rng, 1500);
        for rounds in [true, false] {
            let want = perf_order(&ops, rounds);
            // Everything on disk at once, a few records a run, about a round a run,
            // and nothing on disk.
            for budget in [0, 700, 20_000, usize::MAX] {
                // The file written afresh whenever most of it was let out, or never.
                for keys in [false, true] {
                    let got = spilled_order(&ops, rounds, budget, seed % 2 * u64::MAX, keys);
                    assert!(
                        got == want,
                        "seed {seed}, rounds {rounds}, budget {budget}, keys {keys}: \
                         the first difference at {}",
                        got.iter()
                            .zip(&want)
                            .position(|(a, b)| a != b)
                            .unwrap_or(got.len().min(want.len()))
                    );
                }
            }
        }
    }
}

#[test]
fn a_round_lets_out_no_record_on_disk_past_its_bound() {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(16);
    let (_back, spare) = std::sync::mpsc::channel::<Batch>();
    let mut order = Ordering::new(&tx, &spare, true, 0);
    let push = |order: &mut Ordering<'_>, id: u64, t: u64| {
        order
            .step(Step::Queued(t, Event::Sample(test_sample(id, t))))
            .expect("steps");
        order.spill_if_full().expect("spills");
    };
    push(&mut order, 1, 10);
    push(&mut order, 2, 30);
    order.step(Step::Round).expect("steps");
    push(&mut order, 3, 20);
    push(&mut order, 4, 40);
    // Up to 30, the latest time before the previous round; 40 stays on disk.
    order.step(Step::Round).expect("steps");
    assert_eq!(order.spilled.len(), 1);
    order.out.send();
    let ids: Vec<u64> = rx
        .recv()
        .expect("a batch")
        .events
        .iter()
        .map(|e| match e {
            Event::Sample(p) => p.ip,
            _ => 0,
        })
        .collect();
    assert_eq!(ids, [1, 3, 2]);
    order.finish().expect("finishes");
}
