//! perf report's `--children`: each sample's period also counts towards every distinct
//! row its callchain passes through (perf's cumulative hist entries), once per sample
//! however often the row's function recurs in the chain.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::table::{RawKey, Value};

/// Children periods per event: key values -> (period, a thread of the row).
pub(crate) type ChildrenTables = Vec<HashMap<Vec<Value>, (u64, usize)>>;

/// The callchains counted so far, each as the raw keys of its frames (deduplicated at
/// the address level; rows dedupe again once symbols are known), with their period.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    chains: FxHashMap<Vec<RawKey>, (u64, usize)>,
}

impl Children {
    /// Count a sample whose chain frames have these keys (`thread`: the sample's).
    pub(crate) fn add(&mut self, mut keys: Vec<RawKey>, period: u64, thread: usize) {
        keys.sort_unstable();
        keys.dedup();
        let e = self.chains.entry(keys).or_insert((0, thread));
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
        for (keys, &(period, thread)) in &self.chains {
            let Some(event) = keys.first().map(|k| k.event) else {
                continue;
            };
            let mut rows: Vec<&Vec<Value>> = Vec::new();
            for k in keys {
                if !named.contains_key(k) {
                    named.insert(*k, values(k));
                }
            }
            for k in keys {
                let v = &named[k];
                if !rows.contains(&v) {
                    rows.push(v);
                }
            }
            let Some(table) = out.get_mut(event) else {
                continue;
            };
            for v in rows {
                let e = table.entry(v.clone()).or_insert((0, thread));
                e.0 += period;
            }
        }
        out
    }
}
