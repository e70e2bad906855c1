//! perf report's `--children`: each sample's period also counts towards every distinct
//! row its callchain passes through (perf's cumulative hist entries), once per sample
//! however often the row's function recurs in the chain.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::intern::{Chunked, Interner};
use crate::keys::{raw_key, Creator, RawKey};
use crate::model::{ResolvedSample, SortKey};

/// Children periods per event: row -> (period, the entry's creator).
pub(crate) type ChildrenTables = Vec<FxHashMap<u32, (u64, Creator)>>;

/// The keys a sample's period counts towards as perf's cumulative entries do
/// (`hist_entry_iter` with `fill_callchain_info`): its own entry `own`, then each
/// callchain frame's, where a frame without a symbol is keyed by its ip as sampled and a
/// frame outside every map keeps the level (`[k]`/`[.]`) of the frame walked before it.
/// perf walks the chain from its root with `--children` (`callchain_param.order` is
/// ORDER_CALLER unless `-g` says otherwise), starting from the sample's own level.
pub(crate) fn chain_keys(
    keys: &[SortKey],
    s: &ResolvedSample,
    own: RawKey,
    comm: usize,
) -> Vec<RawKey> {
    let by_sym = keys.contains(&SortKey::Sym);
    let mut level = own.kernel();
    let mut out = Vec::with_capacity(1 + s.callchain.len());
    out.push(own);
    for at in s.callchain.iter().rev() {
        let mut k = raw_key(keys, s, at, comm);
        if by_sym {
            if at.dso.is_some() {
                level = at.kernel;
            }
            k.set_kernel(level);
            k.set_chain_ip(at.ip);
        }
        out.push(k);
    }
    out
}

/// The parent of a walk's first key.
const ROOT: u32 = u32::MAX;

/// The callchains counted so far, each as the raw keys of its frames in perf's walk
/// (deduplicated at the address level; rows dedupe again once symbols are known), with
/// their period and first sample. Keys are numbered once each, and walks kept as paths
/// in a tree of key numbers: memory grows with the distinct keys and walks.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    keys: Interner<RawKey>,
    /// (the walk before it or ROOT, key), numbered as walks.
    walks: Interner<(u32, u32)>,
    /// The walks that are a sample's whole walk, and their (period, first sample,
    /// thread).
    ends: Interner<u32>,
    counts: Chunked<(u64, u64, usize)>,
    /// The keys of the walk being added, reused from sample to sample.
    seen: FxHashSet<RawKey>,
}

impl Children {
    /// Count sample number `first` (of thread `thread`) whose walk has these keys.
    pub(crate) fn add(&mut self, keys: Vec<RawKey>, period: u64, thread: usize, first: u64) {
        // A key seen again later in the walk is perf's duplicate: the first one counts.
        self.seen.clear();
        let mut walk = ROOT;
        for k in keys {
            if self.seen.insert(k) {
                let (id, _) = self.keys.intern(k);
                walk = self.walks.intern((walk, id)).0;
            }
        }
        let (end, new) = self.ends.intern(walk);
        if new {
            self.counts.push((0, first, thread));
        }
        self.counts.get_mut(end as usize).0 += period;
    }

    /// The keys, to be named ([`crate::keys::name_keys`]).
    pub(crate) fn keys(self) -> (Chunked<RawKey>, Named) {
        let Children {
            keys,
            walks,
            ends,
            counts,
            ..
        } = self;
        (
            keys.into_keys(),
            Named {
                walks: walks.into_keys(),
                ends: ends.into_keys(),
                counts,
            },
        )
    }
}

/// The walks of [`Children`], waiting for their keys' rows.
#[derive(Debug)]
pub(crate) struct Named {
    walks: Chunked<(u32, u32)>,
    ends: Chunked<u32>,
    counts: Chunked<(u64, u64, usize)>,
}

impl Named {
    /// The children period of every row, per event: `rows[key]` is a key's row, `keys`
    /// the keys.
    pub(crate) fn rows(
        &self,
        events: usize,
        keys: &Chunked<RawKey>,
        rows: &[u32],
    ) -> ChildrenTables {
        let mut out = vec![FxHashMap::default(); events];
        let mut walk: Vec<u32> = Vec::new();
        let mut seen: Vec<(u32, bool)> = Vec::new();
        for (&end, &(period, first, thread)) in self.ends.iter().zip(self.counts.iter()) {
            walk.clear();
            let mut at = end;
            while at != ROOT {
                let &(before, key) = self.walks.get(at as usize);
                walk.push(key);
                at = before;
            }
            walk.reverse();
            let Some(event) = walk.first().map(|&k| keys.get(k as usize).event()) else {
                continue;
            };
            // Each row once per sample, made by the first of its keys in the walk.
            seen.clear();
            for &k in &walk {
                let row = rows[k as usize];
                if !seen.iter().any(|(r, _)| *r == row) {
                    seen.push((row, keys.get(k as usize).kernel()));
                }
            }
            let Some(table) = out.get_mut(event) else {
                continue;
            };
            for &(row, kernel) in &seen {
                let creator = Creator {
                    first,
                    thread,
                    kernel,
                };
                let e = table.entry(row).or_insert((0, creator));
                e.0 += period;
                e.1 = e.1.earlier(creator);
            }
        }
        out
    }
}
