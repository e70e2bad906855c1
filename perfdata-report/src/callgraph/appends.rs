//! The order perf appended the samples' chains in, kept on disk for the call graphs
//! perf builds otherwise than the trie ([`super::append`]).
//!
//! perf appends each sample's chain to its entry's graph as the sample comes
//! (`hist_entry__append_callchain`), and where its `match_chain` is not one order (an
//! inlined function among siblings) a chain met again after the children's rb-tree
//! rotated can end in another node than the first time: the graph depends on the order
//! of every sample, not on the distinct chains alone. The report cannot build those
//! graphs as the samples come (frames are named, inlined functions found and entries
//! made of keys only at the end, one DSO at a time), so each sample's walk (its number
//! among the distinct walks [`crate::children::Children`] counts) and period go to a
//! spool: in memory up to its first few MiB, then to an anonymous temporary file, so
//! memory stays bounded whatever the number of samples. Consecutive samples of one walk
//! and one period are one run. At the end the graphs are built by reading the runs back
//! in order ([`super::tree::Forest::trees`]), each walk skipped where it met no such
//! graph.

use std::cmp::Ordering;
use std::io;

use rustc_hash::{FxHashMap, FxHashSet};

use super::append::Graph;
use crate::spool::{Records, Spool};

/// Runs gathered before they go to the spool as one record.
const BATCH: usize = 4096;

/// The bytes of one run: walk (u32), samples (u32), period (u64), little-endian.
const RUN: usize = 16;

/// The samples' walks and periods as they came, spooled (see the module's doc).
pub(crate) struct Appends {
    spool: Spool,
    /// The run being counted: walk, period, samples.
    run: Option<(u32, u64, u32)>,
    /// Runs not yet in the spool.
    batch: Vec<u8>,
    /// The spool's first error: the order is then not known (see [`Appends::finish`]).
    failed: Option<io::Error>,
}

impl std::fmt::Debug for Appends {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Appends")
            .field("run", &self.run)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl Default for Appends {
    fn default() -> Self {
        Appends::new()
    }
}

impl Appends {
    /// No samples yet.
    pub(crate) fn new() -> Appends {
        match Spool::new() {
            Ok(s) => Appends::with_spool(s, None),
            // Spool::new makes no file; should it fail, the order is not known.
            Err(e) => Appends::with_spool(Spool::with_memory(0), Some(e)),
        }
    }

    /// No samples yet, `memory` bytes of runs held before the temporary file.
    #[cfg(test)]
    pub(crate) fn with_memory(memory: usize) -> Appends {
        Appends::with_spool(Spool::with_memory(memory), None)
    }

    fn with_spool(spool: Spool, failed: Option<io::Error>) -> Appends {
        Appends {
            spool,
            run: None,
            batch: Vec::with_capacity(BATCH * RUN),
            failed,
        }
    }

    /// One sample of walk `walk` and period `period`, after those counted before.
    pub(crate) fn push(&mut self, walk: u32, period: u64) {
        if let Some((w, p, n)) = &mut self.run {
            if *w == walk && *p == period && *n < u32::MAX {
                *n += 1;
                return;
            }
        }
        self.flush_run();
        self.run = Some((walk, period, 1));
    }

    fn flush_run(&mut self) {
        let Some((walk, period, n)) = self.run.take() else {
            return;
        };
        self.batch.extend_from_slice(&walk.to_le_bytes());
        self.batch.extend_from_slice(&n.to_le_bytes());
        self.batch.extend_from_slice(&period.to_le_bytes());
        if self.batch.len() >= BATCH * RUN {
            self.flush_batch();
        }
    }

    fn flush_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if self.failed.is_none() {
            if let Err(e) = self.spool.push(&self.batch) {
                self.failed = Some(e);
            }
        }
        self.batch.clear();
    }

    /// The runs, to be read back in order; the spool's error where writing them
    /// failed (a full disk, no writable `TMPDIR`): the graphs are then built from the
    /// distinct chains in the order they first came.
    pub(crate) fn finish(mut self) -> io::Result<Order> {
        self.flush_run();
        self.flush_batch();
        if let Some(e) = self.failed {
            return Err(e);
        }
        Ok(Order {
            records: self.spool.finish()?,
        })
    }
}

/// The warning owed where the samples' order was lost to the spool's error `e` (writing
/// or reading it back) and a graph that depends on it is built without it.
pub(crate) fn order_lost(e: &io::Error) -> String {
    format!(
        "the order of the samples' call chains could not be kept in a temporary file \
         ({e}): the call graphs where an inlined function is among a node's children are \
         built from each distinct chain once, in the order it first came, and may differ \
         from perf's"
    )
}

/// The runs of [`Appends`], finished.
#[derive(Debug)]
pub(crate) struct Order {
    records: Records,
}

impl Order {
    /// Call `f` with each run (walk, period of one sample, samples), in the order the
    /// samples came.
    pub(crate) fn each(&self, mut f: impl FnMut(u32, u64, u32)) -> io::Result<()> {
        let mut reader = self.records.read_all();
        while let Some(batch) = reader.next_record()? {
            for run in batch.chunks_exact(RUN) {
                let walk = u32::from_le_bytes(run[..4].try_into().expect("4 bytes"));
                let n = u32::from_le_bytes(run[4..8].try_into().expect("4 bytes"));
                let period = u64::from_le_bytes(run[8..].try_into().expect("8 bytes"));
                f(walk, period, n);
            }
        }
        Ok(())
    }
}

/// The samples' order, and per walk `w` the trie nodes its chains end in:
/// `ends[first[w]..first[w + 1]]`, one per entry it was appended to.
#[derive(Debug)]
pub(crate) struct Replay {
    pub(super) order: Order,
    pub(super) first: Vec<u32>,
    pub(super) ends: Vec<u32>,
}

impl Replay {
    /// The graphs of the entries whose trie roots are `built`, each sample's chains
    /// appended as perf appends them, in the order they came: `root_of[n]` is trie node
    /// `n`'s entry's root (NONE where not built), and `path(end, chain)` makes `chain`
    /// the frames from the root to trie node `end`. Frames compared by `cmp`.
    ///
    /// A chain met again while the nodes on its way (their runs and trees of children)
    /// are what they were when the chain last came ends where it ended then (perf's
    /// walk would take the same way; one that made a node finds it again, as rotations
    /// keep a node's ancestors among those the walk passed): its period is counted
    /// there without a walk, and one whose way changed is walked on from where it parts
    /// ([`Graph::parts`]). So a run of samples walks until
    /// its graph stops changing.
    pub(super) fn graphs<C>(
        self,
        root_of: &[u32],
        built: &FxHashSet<u32>,
        cmp: C,
        mut path: impl FnMut(u32, &mut Vec<u32>),
    ) -> io::Result<FxHashMap<u32, Graph<C>>>
    where
        C: FnMut(u32, u32) -> Ordering + Copy,
    {
        let Replay { order, first, ends } = self;
        let mut roots: Vec<u32> = built.iter().copied().collect();
        roots.sort_unstable();
        let slot: FxHashMap<u32, u32> = (0..).zip(&roots).map(|(i, &r)| (r, i)).collect();
        let mut graphs: Vec<Graph<C>> = roots.iter().map(|_| Graph::new(cmp)).collect();
        // Per walk, its chains that go to those graphs: `steps[at[w]..at[w + 1]]`, each
        // (graph, cache); per cache (one per chain's end): the graph's shape when the
        // chain last came (none yet: u64::MAX), the node it ended in, and its end.
        let mut at: Vec<u32> = Vec::with_capacity(first.len());
        let mut steps: Vec<(u32, u32)> = Vec::new();
        let mut cached: Vec<(u64, u32, u32)> = Vec::new();
        let mut cache_of: FxHashMap<u32, u32> = FxHashMap::default();
        at.push(0);
        for w in first.windows(2) {
            for &end in &ends[w[0] as usize..w[1] as usize] {
                let Some(&g) = slot.get(&root_of[end as usize]) else {
                    continue;
                };
                let c = *cache_of.entry(end).or_insert_with(|| {
                    cached.push((u64::MAX, 0, end));
                    (cached.len() - 1) as u32
                });
                steps.push((g, c));
            }
            at.push(steps.len() as u32);
        }
        drop((first, ends, cache_of));
        let mut chain = Vec::new();
        order.each(|walk, period, n| {
            let w = walk as usize;
            let Some(&[from, to]) = at.get(w..w + 2) else {
                return;
            };
            for &(g, c) in &steps[from as usize..to as usize] {
                let graph = &mut graphs[g as usize];
                let cache = &mut cached[c as usize];
                let mut left = u64::from(n);
                while left > 0 {
                    let from = match cache.0 {
                        u64::MAX => (graph.root(), 0),
                        since => match graph.parts(cache.1, since) {
                            None => {
                                graph.add_hit(cache.1, period.saturating_mul(left), left);
                                break;
                            }
                            Some(from) => from,
                        },
                    };
                    path(cache.2, &mut chain);
                    let node = graph.append_from(from, &chain, period, 1);
                    (cache.0, cache.1) = (graph.shape(), node);
                    left -= 1;
                }
            }
        })?;
        Ok(roots.into_iter().zip(graphs).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs merge consecutive samples of one walk and period, and come back in order.
    #[test]
    fn runs_come_back_in_order() {
        let mut a = Appends::new();
        for (w, p) in [(1, 5), (1, 5), (2, 5), (1, 5), (1, 6), (1, 6), (1, 6)] {
            a.push(w, p);
        }
        let order = a.finish().expect("in memory");
        let mut got = Vec::new();
        order.each(|w, p, n| got.push((w, p, n))).expect("read");
        assert_eq!(got, [(1, 5, 2), (2, 5, 1), (1, 5, 1), (1, 6, 3)]);
    }

    /// Skipping the walk of a chain met again while its way is unchanged, and walking
    /// on from where it parts, builds what perf's walk of every sample from the root
    /// builds, where the comparison is not one order: 60 chains of up to 5 frames
    /// among 12 (four inlined, named as out-of-line ones), 3,000 samples in runs, in
    /// five orders.
    #[test]
    fn skipped_walks_build_what_every_walk_builds() {
        // Frames as (name, address, inlined): perf's match_chain of two.
        let frames: Vec<(u32, u64, bool)> = (0..12u32)
            .map(|k| (k % 8, 0x100 * u64::from(12 - k), k >= 8))
            .collect();
        let cmp = |a: u32, b: u32| {
            let (x, y) = (frames[a as usize], frames[b as usize]);
            if x.2 || y.2 {
                x.0.cmp(&y.0)
            } else {
                x.1.cmp(&y.1)
            }
        };
        let mut seed = 99u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..5 {
            let chains: Vec<Vec<u32>> = (0..60)
                .map(|_| (0..1 + next(5)).map(|_| next(12) as u32).collect())
                .collect();
            let mut every = Graph::new(cmp);
            let mut a = Appends::new();
            let mut samples = 0;
            while samples < 3000 {
                let (w, period, n) = (next(60) as u32, 1 + next(3), 1 + next(3));
                for _ in 0..n {
                    every.append(&chains[w as usize], period, 1);
                    a.push(w, period);
                }
                samples += n;
            }
            let replay = Replay {
                order: a.finish().expect("in memory"),
                first: (0..=60).collect(),
                ends: (0..60).collect(),
            };
            let built = FxHashSet::from_iter([0]);
            let path = |end: u32, chain: &mut Vec<u32>| {
                chain.clear();
                chain.extend_from_slice(&chains[end as usize]);
            };
            let graphs = replay.graphs(&[0; 60], &built, cmp, path).expect("read");
            assert_eq!(graphs[&0].lines(), every.lines());
        }
    }

    /// Past its memory the spool is a temporary file: 10,000 runs in three records
    /// (of [`BATCH`] runs), read back in order.
    #[test]
    fn runs_come_back_from_the_temporary_file() {
        let mut a = Appends::with_spool(Spool::with_memory(0), None);
        for i in 0..10_000u32 {
            a.push(i % 7, u64::from(i));
        }
        let order = a.finish().expect("a temporary file");
        let mut got = Vec::new();
        order.each(|w, p, n| got.push((w, p, n))).expect("read");
        let want: Vec<(u32, u64, u32)> = (0..10_000u32).map(|i| (i % 7, u64::from(i), 1)).collect();
        assert_eq!(got, want);
    }
}
