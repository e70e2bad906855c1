//! perf's `--children` entries found as perf finds them, where its comparison of
//! entries is not one order ([`crate::hists`]): one function can then be two entries,
//! printed on two rows.
//!
//! The report counts samples by exact keys and names them at the end; that is perf's
//! answer wherever `hist_entry__cmp` is one order. Where a row's symbol is an inlined
//! function and the sort keys are modelled ([`crate::hists::modelled`]), the samples'
//! walks are replayed in the order they came ([`crate::callgraph::appends`]) through
//! perf's trees: each sample's own entry (`iter_add_single_cumulative_entry`), then
//! each frame's in the cursor's order, a frame equal to an entry the sample met before
//! skipped (`iter_add_next_cumulative_entry`'s `he_cache`, by the same comparison), the
//! others looked up or inserted (`hists__findnew_entry`); then the collapse pass where
//! perf has one. An entry perf made twice gets a second row of the same values, and
//! the walks are rewritten so that each frame counts towards the entry perf counted it
//! to: Children periods, Self periods and call graphs then follow as for any walk.

use rustc_hash::FxHashMap;

use crate::callgraph::appends::{Appends, Order as Appended};
use crate::callgraph::Order;
use crate::children::{Named, WalkCounts};
use crate::hists::{self, Collapsed, Entries};
use crate::intern::{Chunked, Interner};
use crate::keys::{Creator, RawKey, Rows};
use crate::model::{Replay, SortKey};

/// The walks rewritten to perf's entries.
pub(crate) struct Refined {
    /// The walks, each frame keyed to its entry's row.
    pub(crate) walks: Named,
    /// The order the rewritten walks came in (`None` where the spool failed).
    pub(crate) order: Option<Appended>,
    /// Per (event, row) of a function perf made two or more entries of: the samples
    /// and period of its own entry, and its first sample.
    pub(crate) own: FxHashMap<(usize, u32), (u64, u64, u64)>,
    /// Per (event, row) of an entry the collapse pass merged two or more into: the
    /// depth of its callchains ([`crate::children::ChildEntry::rank`], unsigned),
    /// the first entry's alone: perf's `callchain_merge` leaves the `max_depth` of the
    /// entry merged into as it was.
    pub(crate) depth: FxHashMap<(usize, u32), u32>,
    /// Per (event, row) of an entry the collapse pass merged two or more into: the
    /// sample that made the entry kept (the first in the tree's order, which
    /// `hists__collapse_insert_entry` keeps, deleting the others), whose `ip` perf
    /// prints under `-v`; not always the earliest of them.
    pub(crate) kept: FxHashMap<(usize, u32), Creator>,
    /// The keys of frames counted to an entry the collapse pass merged into another,
    /// and that entry's place among those merged (1 on; a key not here is 0): perf
    /// builds each entry's call graph on its own and `callchain_merge`s the others into
    /// the first's, in the collapse's order, which orders siblings of equal period
    /// otherwise than appending every chain to one graph ([`crate::callgraph::tree`]).
    pub(crate) parts: FxHashMap<u32, u32>,
    /// The key each key added (at the end of the keys, in order) is a copy of.
    pub(crate) copied_from: Vec<u32>,
}

/// The frames of a walk (own key first, then the chain root first) in the order
/// perf's cursor meets them.
fn cursor(len: usize, order: Order) -> impl Iterator<Item = usize> {
    let chain = len.saturating_sub(1);
    std::iter::once(0)
        .take(len.min(1))
        .chain((0..chain).map(move |step| match order {
            Order::Caller => 1 + step,
            Order::Callee => chain - step,
        }))
}

/// The walks of `walks` rewritten where perf splits an entry (see the module's doc);
/// `None` where it splits none (or the order of the samples cannot be read). `keys`
/// and `row_of` (each key's row) gain a key for each frame counted to a second entry.
/// `verbose`: the report is `perf report -v`'s, whose comparison of DSOs differs
/// ([`hists::Parts::new`]); `warnings` gets a failure to read the samples' order back.
#[allow(clippy::too_many_arguments)] // the report's parts, as its tables are made
pub(crate) fn refine(
    sort: &[SortKey],
    replay: &Replay,
    rows: &mut Rows,
    keys: &mut Chunked<RawKey>,
    row_of: &mut Vec<u32>,
    walks: &Named,
    appended: &Appended,
    order: Order,
    verbose: bool,
    warnings: &mut Vec<String>,
) -> Option<Refined> {
    let collapse = hists::modelled(sort)?;
    if !row_of.iter().any(|&r| hists::inlined(rows.get(r))) {
        return None;
    }
    let all = walks.walks();
    let parts = hists::Parts::new(replay, (0..rows.len() as u32).map(|r| rows.get(r)), verbose);
    let cmp = |a: u32, b: u32| parts.cmp(a, b);
    let mut trees: Vec<Entries> = Vec::new();
    // Per walk: its entries and the tree's size when a sample of it inserted nothing
    // (the tree unchanged since, the walk finds the same).
    let mut memo: Vec<Option<(usize, u32)>> = vec![None; all.len()];
    // Per sample's entries (by frame), numbered: the walk and the entries.
    let mut found: Interner<(u32, Vec<u32>)> = Interner::default();
    let mut runs: Vec<(u32, u64, u32)> = Vec::new();
    // The entries a sample met so far (perf's he_cache), kept from sample to sample.
    let mut cache: Vec<u32> = Vec::new();
    let push = |runs: &mut Vec<(u32, u64, u32)>, id: u32, period: u64, n: u32| match runs.last_mut()
    {
        Some(r) if r.0 == id && r.1 == period && r.2.checked_add(n).is_some() => r.2 += n,
        _ => runs.push((id, period, n)),
    };
    let read = appended.each(|walk, period, n| {
        let Some((frames, _)) = all.get(walk as usize) else {
            return;
        };
        let Some(&(own, _)) = frames.first() else {
            return;
        };
        let event = keys.get(own as usize).event();
        if trees.len() <= event {
            trees.resize_with(event + 1, Entries::new);
        }
        let tree = &mut trees[event];
        let mut left = n;
        while left > 0 {
            if let Some((len, id)) = memo[walk as usize] {
                if len == tree.len() {
                    push(&mut runs, id, period, left);
                    return;
                }
            }
            let before = tree.len();
            let mut got = vec![0u32; frames.len()];
            cache.clear();
            for pos in cursor(frames.len(), order) {
                let row = row_of[frames[pos].0 as usize];
                if let Some(&e) = cache.iter().find(|&&e| cmp(tree.row(e), row).is_eq()) {
                    got[pos] = e;
                    continue;
                }
                let (e, _) = tree.findnew(row, cmp);
                cache.push(e);
                got[pos] = e;
            }
            let (id, _) = found.intern((walk, got));
            memo[walk as usize] = (tree.len() == before).then_some((before, id));
            push(&mut runs, id, period, 1);
            left -= 1;
        }
    });
    if let Err(e) = read {
        // Not dropped silently: the rows are then perfdata's one entry per function.
        warnings.push(format!(
            "the order of the samples' call chains could not be read back from a \
             temporary file ({e}): an inlined function perf makes two entries of is one \
             row here"
        ));
        return None;
    }
    // Each entry's entry after the collapse, and its row: a row's first entry met keeps
    // the row, any other gets a copy.
    let collapsed: Vec<Collapsed> = trees
        .iter()
        .map(|t| {
            if collapse {
                t.collapse(cmp)
            } else {
                t.uncollapsed()
            }
        })
        .collect();
    let into: Vec<&[u32]> = collapsed.iter().map(|c| &c.into[..]).collect();
    let first: Vec<&[u32]> = collapsed.iter().map(|c| &c.first[..]).collect();
    let found = found.into_keys();
    // The sample (and frame) that made each entry: the first to meet it.
    let mut made: Vec<Vec<Option<Creator>>> = trees.iter().map(|t| vec![None; t.len()]).collect();
    let mut met_id = vec![false; found.len()];
    let mut sample = 0u64;
    for &(id, _, n) in &runs {
        if !std::mem::replace(&mut met_id[id as usize], true) {
            let (walk, got) = found.get(id as usize);
            let (frames, counts) = &all[*walk as usize];
            let event = keys.get(frames[0].0 as usize).event();
            for (i, pos) in cursor(frames.len(), order).enumerate() {
                let slot = &mut made[event][got[pos] as usize];
                if slot.is_none() {
                    let key = keys.get(frames[pos].0 as usize);
                    *slot = Some(Creator {
                        first: sample,
                        thread: counts.3,
                        pos: i as u32,
                        kernel: key.kernel(),
                        ip: key.entry_ip(pos == 0),
                        dso: key.dso_plus_one(),
                    });
                }
            }
        }
        sample += u64::from(n);
    }
    // Each entry's deepest chain: a frame's entry gets the chain from the frame on,
    // in the cursor's order (the own entry the whole chain), where the sample met it
    // first.
    let mut deepest: Vec<Vec<u32>> = trees.iter().map(|t| vec![0; t.len()]).collect();
    for (walk, got) in found.iter() {
        let frames = &all[*walk as usize].0;
        let event = keys.get(frames[0].0 as usize).event();
        let chain = frames.len().saturating_sub(1);
        let mut met: Vec<u32> = Vec::new();
        for (i, pos) in cursor(frames.len(), order).enumerate() {
            let e = got[pos];
            if met.contains(&e) {
                continue;
            }
            met.push(e);
            let d = &mut deepest[event][e as usize];
            *d = (*d).max((chain - i.saturating_sub(1)) as u32);
        }
    }
    let mut row_of_entry: FxHashMap<(usize, u32), u32> = FxHashMap::default();
    let mut taken: FxHashMap<u32, ()> = FxHashMap::default();
    let mut split = false;
    for (walk, got) in found.iter() {
        let frames = &all[*walk as usize].0;
        let event = keys.get(frames[0].0 as usize).event();
        for (pos, &e) in got.iter().enumerate() {
            let f = into[event][e as usize];
            if row_of_entry.contains_key(&(event, f)) {
                continue;
            }
            let row = row_of[frames[pos].0 as usize];
            let r = if taken.insert(row, ()).is_none() {
                row
            } else {
                split = true;
                rows.copy(row)
            };
            row_of_entry.insert((event, f), r);
        }
    }
    let mut merged: FxHashMap<(usize, u32), u32> = FxHashMap::default();
    for (event, into) in into.iter().enumerate() {
        for &f in *into {
            *merged.entry((event, f)).or_default() += 1;
        }
    }
    let depth: FxHashMap<(usize, u32), u32> = merged
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .filter_map(|((event, f), _)| {
            let row = *row_of_entry.get(&(event, f))?;
            Some((
                (event, row),
                deepest[event][first[event][f as usize] as usize],
            ))
        })
        .collect();
    let kept: FxHashMap<(usize, u32), Creator> = depth
        .keys()
        .filter_map(|&(event, row)| {
            let f = row_of_entry
                .iter()
                .find(|&(&(e, _), &r)| e == event && r == row)
                .map(|(&(_, f), _)| f)?;
            let c = made[event][first[event][f as usize] as usize]?;
            Some(((event, row), c))
        })
        .collect();
    // Where perf merged two entries into one, its depth may be the other's.
    if !split && depth.is_empty() {
        return None;
    }
    // The walks rewritten: a frame counted to a copied row is keyed by a copy of its
    // key whose row is the copy; one counted to an entry merged into another (part 1
    // on) by a copy of its key of the same row, whose chains go to that entry's own
    // call graph, merged into the first's as perf merges them ([`Refined::parts`]).
    let mut copies: FxHashMap<(u32, u32, u32), u32> = FxHashMap::default();
    let mut parts: FxHashMap<u32, u32> = FxHashMap::default();
    let mut copied_from: Vec<u32> = Vec::new();
    let mut refined: Interner<Vec<(u32, u32)>> = Interner::default();
    let mut counts: Vec<(u64, u64, u64, usize, bool)> = Vec::new();
    let mut refined_of: Vec<u32> = Vec::with_capacity(found.len());
    for (walk, got) in found.iter() {
        let frames = &all[*walk as usize].0;
        let event = keys.get(frames[0].0 as usize).event();
        let mut out = Vec::with_capacity(frames.len());
        for (&(k, loc), &e) in frames.iter().zip(got) {
            let r = row_of_entry[&(event, into[event][e as usize])];
            let part = collapsed[event].part[e as usize];
            let k = if r == row_of[k as usize] && part == 0 {
                k
            } else {
                *copies.entry((k, r, part)).or_insert_with(|| {
                    keys.push(*keys.get(k as usize));
                    copied_from.push(k);
                    row_of.push(r);
                    let copy = (keys.len() - 1) as u32;
                    if part > 0 {
                        parts.insert(copy, part);
                    }
                    copy
                })
            };
            out.push((k, loc));
        }
        let (id, new) = refined.intern(out);
        if new {
            let (_, _, _, thread, filtered) = all[*walk as usize].1;
            counts.push((0, 0, u64::MAX, thread, filtered));
        }
        refined_of.push(id);
    }
    // Counted again, sample by sample, in order; each own entry's counts kept where its
    // function is split.
    let split_rows: FxHashMap<u32, ()> = copies
        .keys()
        .filter(|&&(k, r, _)| row_of[k as usize] != r)
        .map(|&(k, _, _)| (row_of[k as usize], ()))
        .collect();
    let mut own: FxHashMap<(usize, u32), (u64, u64, u64)> = FxHashMap::default();
    let mut appends = Appends::new();
    let mut sample = 0u64;
    let refined_walks = refined.into_keys();
    for &(id, period, n) in &runs {
        let r = refined_of[id as usize];
        let c = &mut counts[r as usize];
        c.0 += period * u64::from(n);
        c.1 += u64::from(n);
        c.2 = c.2.min(sample);
        let (k, _) = refined_walks.get(r as usize)[0];
        let (row, event) = (row_of[k as usize], keys.get(k as usize).event());
        let original = row_of[all[found.get(id as usize).0 as usize].0[0].0 as usize];
        if split_rows.contains_key(&original) || split_rows.contains_key(&row) {
            let o = own.entry((event, row)).or_insert((0, 0, sample));
            o.0 += u64::from(n);
            o.1 += period * u64::from(n);
        }
        for _ in 0..n {
            appends.push(r, period);
        }
        sample += u64::from(n);
    }
    let list: Vec<WalkCounts> = refined_walks
        .iter()
        .zip(counts)
        .map(|(w, c)| (w.clone(), c))
        .collect();
    Some(Refined {
        walks: Named::from_walks(&list),
        order: appends.finish().ok(),
        own,
        depth,
        kept,
        parts,
        copied_from,
    })
}
