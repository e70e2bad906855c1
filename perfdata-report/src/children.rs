//! perf report's `--children`: each sample's period also counts towards every distinct
//! row its callchain passes through (perf's cumulative hist entries), once per sample
//! however often the row's function recurs in the chain.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::keys::{raw_key, Creator, RawKey, Value};
use crate::replay::ResolvedSample;
use crate::table::SortKey;

/// Children periods per event: key values -> (period, the entry's creator).
pub(crate) type ChildrenTables = Vec<HashMap<Vec<Value>, (u64, Creator)>>;

/// The keys a sample's period counts towards as perf's cumulative entries do
/// (`hist_entry_iter` with `fill_callchain_info`): its own entry `own`, then each
/// callchain frame's, where a frame without a symbol is keyed by its ip as sampled and a
/// frame outside every map keeps the level (`[k]`/`[.]`) of the frame walked before it.
/// perf walks the chain from its root with `--children` (`callchain_param.order` is
/// ORDER_CALLER unless `-g` says otherwise), starting from the sample's own level.
pub(crate) fn chain_keys(keys: &[SortKey], s: &ResolvedSample, own: RawKey) -> Vec<RawKey> {
    let by_sym = keys.contains(&SortKey::Sym);
    let mut level = own.kernel;
    let mut out = Vec::with_capacity(1 + s.callchain.len());
    out.push(own);
    for at in s.callchain.iter().rev() {
        let mut k = raw_key(keys, s, at);
        if by_sym {
            if at.dso.is_some() {
                level = at.kernel;
            }
            k.kernel = level;
            k.chain_ip = Some(at.ip);
        }
        out.push(k);
    }
    out
}

/// The callchains counted so far, each as the raw keys of its frames in perf's walk
/// (deduplicated at the address level; rows dedupe again once symbols are known), with
/// their period and first sample.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    chains: FxHashMap<Vec<RawKey>, (u64, usize, u64)>,
    /// The keys of the walk being added, reused from sample to sample.
    seen: rustc_hash::FxHashSet<RawKey>,
}

impl Children {
    /// Count sample number `first` (of thread `thread`) whose walk has these keys.
    pub(crate) fn add(&mut self, mut keys: Vec<RawKey>, period: u64, thread: usize, first: u64) {
        // A key seen again later in the walk is perf's duplicate: the first one counts.
        self.seen.clear();
        keys.retain(|k| self.seen.insert(*k));
        let e = self.chains.entry(keys).or_insert((0, thread, first));
        e.0 += period;
    }

    /// The children period of every row, per event: `values` names a raw key's row.
    pub(crate) fn rows(
        &self,
        events: usize,
        mut values: impl FnMut(&RawKey) -> Vec<Value>,
    ) -> ChildrenTables {
        let mut out = vec![HashMap::new(); events];
        let mut named: HashMap<RawKey, Vec<Value>> = HashMap::new();
        for (keys, &(period, thread, first)) in &self.chains {
            let Some(event) = keys.first().map(|k| k.event) else {
                continue;
            };
            for k in keys {
                if !named.contains_key(k) {
                    named.insert(*k, values(k));
                }
            }
            // Each row once per sample, made by the first of its keys in the walk.
            let mut rows: Vec<(&Vec<Value>, bool)> = Vec::new();
            for k in keys {
                let v = &named[k];
                if !rows.iter().any(|(r, _)| *r == v) {
                    rows.push((v, k.kernel));
                }
            }
            let Some(table) = out.get_mut(event) else {
                continue;
            };
            for (v, kernel) in rows {
                let creator = Creator {
                    first,
                    thread,
                    kernel,
                };
                let e = table.entry(v.clone()).or_insert((0, creator));
                e.0 += period;
                e.1 = e.1.earlier(creator);
            }
        }
        out
    }
}
