//! perf report's `--children`: each sample's period also counts towards every distinct
//! row its callchain passes through (perf's cumulative hist entries), once per sample
//! however often the row's function recurs in the chain.

use crate::callgraph::frames::ChainLoc;
use rustc_hash::FxHashMap;

use crate::callgraph::tree::Forest;
use crate::callgraph::Order;
use crate::inlines::PENDING;
use crate::intern::{Chunked, Interner};
use crate::keys::{raw_key, Creator, RawKey};
use crate::model::{ResolvedSample, SortKey};
use crate::process::Location;

/// Children counts per event, by row.
pub(crate) type ChildrenTables = Vec<FxHashMap<u32, ChildEntry>>;

/// A row's Children count in one event's table.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChildEntry {
    /// The period of the samples whose walk passes through the row.
    pub(crate) period: u64,
    /// The sample that made the entry.
    pub(crate) creator: Creator,
    /// Whether that sample was filtered.
    pub(crate) hidden: bool,
    /// The most frames of a callchain perf appended to the entry (its
    /// `callchain_root.max_depth`: a sample's whole chain to its own entry, the chain
    /// from a frame on, in the cursor's order, to the frame's entry), as
    /// [`crate::model::ChainDepth::rank`] orders it: negated in callee order.
    pub(crate) rank: i64,
}

/// The loc of an entry's own key in a walk (its chain is the frames after it).
const OWN: u32 = u32::MAX;

/// The keys a sample's period counts towards as perf's cumulative entries do
/// (`hist_entry_iter` with `fill_callchain_info`): its own entry `own`, then each
/// callchain frame's, where a frame without a symbol is keyed by its ip as sampled and a
/// frame outside every map keeps the level (`[k]`/`[.]`) of the frame walked before it;
/// each with the frame's location. `chain` is the sample's callchain (leaf first, cut to
/// `--max-stack`), walked in `order` (the root first for `caller`); the keys come root
/// first whatever the order. Each frame unwound from the sample's stack copy (`chain`'s
/// last `unwound`: as many of [`ResolvedSample::unwound`] as the cut left, see
/// `table::cut_chain`) for which `inlines` says perf lists `n` entries
/// ([`crate::inlines`]) is `n` keys, the outermost first.
#[allow(clippy::too_many_arguments)] // the sample, its cut chain and the walk's state
pub(crate) fn chain_keys(
    keys: &[SortKey],
    s: &ResolvedSample,
    chain: &[Location],
    unwound: usize,
    own: RawKey,
    comm: usize,
    order: Order,
    inlines: &mut dyn FnMut(&Location) -> u16,
) -> Vec<(RawKey, ChainLoc)> {
    let by_sym = keys.contains(&SortKey::Sym);
    let mut level = own.kernel();
    let mut out = Vec::with_capacity(1 + chain.len());
    out.push((
        own,
        ChainLoc {
            dso: OWN,
            addr: 0,
            ip: 0,
            inline: 0,
        },
    ));
    // The level carries over in the order perf's cursor walks the chain.
    let from = chain.len() - unwound.min(chain.len());
    let walk: Box<dyn Iterator<Item = (usize, &Location)>> = match order {
        Order::Caller => Box::new(chain.iter().enumerate().rev()),
        Order::Callee => Box::new(chain.iter().enumerate()),
    };
    for (i, at) in walk {
        let mut k = raw_key(keys, s, at, comm);
        // perf's cumulative entries carry the sample's RAW payload: a frame's trace
        // text is the sample's (so under `trace` alone they are the sample's entry).
        k.trace_of(&own);
        if by_sym {
            if at.dso.is_some() {
                level = at.kernel;
            }
            k.set_kernel(level);
            k.set_chain_ip(at.ip);
        }
        let loc = ChainLoc {
            dso: at
                .dso
                .map_or(0, |d| u32::try_from(d + 1).unwrap_or(u32::MAX - 1)),
            addr: at.addr,
            ip: at.ip,
            inline: 0,
        };
        let n = if i >= from { inlines(at) } else { 0 };
        if n == 0 {
            out.push((k, loc));
            continue;
        }
        if n == PENDING {
            // One key for the entries, until their number is known (`Children::keys`).
            k.set_inline(PENDING);
            out.push((
                k,
                ChainLoc {
                    inline: PENDING,
                    ..loc
                },
            ));
            continue;
        }
        // perf's inline list is innermost first for `callee`, outermost first for
        // `caller`: the order its cursor walks the frames in.
        let each = |j: u16| {
            let mut k = k;
            k.set_inline(j);
            (k, ChainLoc { inline: j, ..loc })
        };
        match order {
            Order::Caller => out.extend((1..=n).rev().map(each)),
            Order::Callee => out.extend((1..=n).map(each)),
        }
    }
    // Kept root first whatever the walk.
    if order == Order::Callee {
        out[1..].reverse();
    }
    out
}

/// The parent of a walk's first key.
const ROOT: u32 = u32::MAX;

/// The callchains counted so far, each as the raw keys and locations of its frames in
/// perf's walk (the entry's own key, then the chain root first), with their period,
/// samples and first sample. Keys and locations are numbered once each, and walks kept
/// as paths in a tree: memory grows with the distinct keys and stacks, never with the
/// samples. Children periods and call graphs are both made from them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    keys: Interner<RawKey>,
    locs: Interner<ChainLoc>,
    /// (the walk before it or ROOT, key, location), numbered as walks.
    walks: Interner<(u32, u32, u32)>,
    /// The walks that are a sample's whole walk, and their (period, samples, first
    /// sample, thread, whether that first sample was filtered).
    ends: Interner<u32>,
    counts: Chunked<(u64, u64, u64, usize, bool)>,
}

impl Children {
    /// Count sample number `first` (of thread `thread`) whose walk is this; a
    /// `filtered` sample counts as any other (perf adds its period to the entries it
    /// meets) but hides the entries it makes. The walk's number among the distinct
    /// walks, in the order they first came.
    pub(crate) fn add(
        &mut self,
        walk: Vec<(RawKey, ChainLoc)>,
        period: u64,
        thread: usize,
        first: u64,
        filtered: bool,
    ) -> u32 {
        let mut at = ROOT;
        for (k, loc) in walk {
            let (key, _) = self.keys.intern(k);
            let loc = if loc.dso == OWN {
                OWN
            } else {
                self.locs.intern(loc).0
            };
            at = self.walks.intern((at, key, loc)).0;
        }
        let (end, new) = self.ends.intern(at);
        if new {
            self.counts.push((0, 0, first, thread, filtered));
        }
        let c = self.counts.get_mut(end as usize);
        c.0 += period;
        c.1 += 1;
        end
    }

    /// The keys, to be named ([`crate::keys::name_keys`]), the frames' locations, and
    /// the walks, each [`PENDING`] frame made the `inlines(dso + 1, addr)` entries perf
    /// lists at its location (outermost first, as [`chain_keys`] makes them). Keys and
    /// locations are numbered as if the entries had been counted as the samples came:
    /// the walks' nodes are numbered in the order they came, and a key or location
    /// first came in the node that first has it.
    pub(crate) fn keys(
        self,
        inlines: impl Fn(u32, u64) -> u16,
    ) -> (Chunked<RawKey>, Chunked<ChainLoc>, Named) {
        let Children {
            keys,
            locs,
            walks,
            ends,
            counts,
        } = self;
        let (old_keys, old_locs, walks) = (keys.into_keys(), locs.into_keys(), walks.into_keys());
        let mut keys: Interner<RawKey> = Interner::default();
        let mut locs: Interner<ChainLoc> = Interner::default();
        let mut key_of = vec![u32::MAX; old_keys.len()];
        let mut loc_of = vec![u32::MAX; old_locs.len()];
        // Per walk node, its frames' (key, location) pairs: `pairs[spans[n]..spans[n+1]]`.
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(walks.len());
        let mut spans: Vec<u32> = Vec::with_capacity(walks.len() + 1);
        // Each pending (key, location)'s entries, made once: `made[from..from + n]`.
        let mut expanded: FxHashMap<(u32, u32), (u32, u32)> = FxHashMap::default();
        let mut made: Vec<(u32, u32)> = Vec::new();
        spans.push(0);
        for &(_, key, loc) in walks.iter() {
            let l = (loc != OWN).then(|| *old_locs.get(loc as usize));
            match l {
                Some(l) if l.inline == PENDING => {
                    let (from, n) = *expanded.entry((key, loc)).or_insert_with(|| {
                        let from = made.len() as u32;
                        let k = *old_keys.get(key as usize);
                        let n = inlines(l.dso, l.addr);
                        let mut each = |j: u16| {
                            let mut k = k;
                            k.set_inline(j);
                            let loc = ChainLoc { inline: j, ..l };
                            made.push((keys.intern(k).0, locs.intern(loc).0));
                        };
                        if n == 0 {
                            each(0);
                        } else {
                            (1..=n).rev().for_each(each);
                        }
                        (from, made.len() as u32 - from)
                    });
                    pairs.extend_from_slice(&made[from as usize..(from + n) as usize]);
                }
                _ => {
                    let k = &mut key_of[key as usize];
                    if *k == u32::MAX {
                        *k = keys.intern(*old_keys.get(key as usize)).0;
                    }
                    let loc = match l {
                        Some(l) => {
                            let at = &mut loc_of[loc as usize];
                            if *at == u32::MAX {
                                *at = locs.intern(l).0;
                            }
                            *at
                        }
                        None => OWN,
                    };
                    pairs.push((*k, loc));
                }
            }
            spans.push(pairs.len() as u32);
        }
        (
            keys.into_keys(),
            locs.into_keys(),
            Named {
                walks,
                pairs,
                spans,
                ends: ends.into_keys(),
                counts,
            },
        )
    }
}

/// A walk's (key, location) pairs and (period, samples, first sample, thread,
/// filtered), as [`Named::walks`] gives them.
pub(crate) type WalkCounts = (Vec<(u32, u32)>, (u64, u64, u64, usize, bool));

/// The walks of [`Children`], waiting for their keys' rows.
#[derive(Debug)]
pub(crate) struct Named {
    /// (the walk before it or ROOT, key, location), numbered as walks, as counted.
    walks: Chunked<(u32, u32, u32)>,
    /// Each walk node's (key, location) pairs, its pending entries made (see
    /// [`Children::keys`]): those of node `n` are `pairs[spans[n]..spans[n + 1]]`.
    pairs: Vec<(u32, u32)>,
    spans: Vec<u32>,
    ends: Chunked<u32>,
    counts: Chunked<(u64, u64, u64, usize, bool)>,
}

/// One distinct walk: its (key, location) pairs, own key first, and its counts.
struct Walk<'a> {
    frames: &'a [(u32, u32)],
    period: u64,
    samples: u64,
    first: u64,
    thread: usize,
    filtered: bool,
}

impl Named {
    /// Every distinct walk, by number: its (key, location) pairs, own key first, and
    /// its (period, samples, first sample, thread, whether that sample was filtered).
    pub(crate) fn walks(&self) -> Vec<WalkCounts> {
        let mut out = Vec::with_capacity(self.ends.len());
        self.each(|w| {
            out.push((
                w.frames.to_vec(),
                (w.period, w.samples, w.first, w.thread, w.filtered),
            ))
        });
        out
    }

    /// The walks of `walks`, numbered in their order, as [`Named`] keeps them.
    pub(crate) fn from_walks(walks: &[WalkCounts]) -> Named {
        let mut nodes: Interner<(u32, u32, u32)> = Interner::default();
        let (mut pairs, mut spans) = (Vec::new(), vec![0]);
        let mut ends: Interner<u32> = Interner::default();
        let mut counts = Chunked::default();
        for (frames, c) in walks {
            let mut at = ROOT;
            for &(key, loc) in frames {
                let (n, new) = nodes.intern((at, key, loc));
                if new {
                    pairs.push((key, loc));
                    spans.push(pairs.len() as u32);
                }
                at = n;
            }
            if ends.intern(at).1 {
                counts.push(*c);
            } else {
                // Two walks of one path: one walk.
                let (end, _) = ends.intern(at);
                let e = counts.get_mut(end as usize);
                e.0 += c.0;
                e.1 += c.1;
            }
        }
        Named {
            walks: nodes.into_keys(),
            pairs,
            spans,
            ends: ends.into_keys(),
            counts,
        }
    }

    /// Call `f` with every distinct walk.
    fn each(&self, mut f: impl FnMut(&Walk)) {
        let mut frames: Vec<(u32, u32)> = Vec::new();
        for (&end, &(period, samples, first, thread, filtered)) in
            self.ends.iter().zip(self.counts.iter())
        {
            frames.clear();
            let mut at = end;
            while at != ROOT {
                let &(before, _, _) = self.walks.get(at as usize);
                let span = self.spans[at as usize] as usize..self.spans[at as usize + 1] as usize;
                frames.extend(self.pairs[span].iter().rev());
                at = before;
            }
            frames.reverse();
            f(&Walk {
                frames: &frames,
                period,
                samples,
                first,
                thread,
                filtered,
            });
        }
    }

    /// The children period of every row, per event: `rows[key]` is a key's row, `keys`
    /// the keys. perf walks the chain from its root (`caller`) or from the sample
    /// (`callee`), and a row met again is not counted again for the sample. A row is
    /// hidden when the sample that made it was filtered, or its own key is one
    /// `filtered` says (perf's `--symbols`, known once keys are named).
    pub(crate) fn rows(
        &self,
        events: usize,
        keys: &Chunked<RawKey>,
        rows: &[u32],
        order: Order,
        filtered: &dyn Fn(u32) -> bool,
    ) -> ChildrenTables {
        let mut out = vec![FxHashMap::default(); events];
        // Per row: its level, its place in the walk, its entry's ip and DSO.
        let mut seen: Vec<(u32, bool, u32, u64, u32)> = Vec::new();
        self.each(|w| {
            let Some(&(own, _)) = w.frames.first() else {
                return;
            };
            let hidden = w.filtered || filtered(own);
            let event = keys.get(own as usize).event();
            // Each row once per sample, made by the first of its keys in the walk.
            seen.clear();
            for (pos, k) in cursor(w.frames, order).map(|(k, _)| k).enumerate() {
                let row = rows[k as usize];
                if !seen.iter().any(|s| s.0 == row) {
                    let key = keys.get(k as usize);
                    let ip = key.entry_ip(pos == 0);
                    seen.push((row, key.kernel(), pos as u32, ip, key.dso_plus_one()));
                }
            }
            let Some(table) = out.get_mut(event) else {
                return;
            };
            // perf's cursor holds the chain (frames[1..]); the own entry gets it whole,
            // the entry of the cursor's i-th frame the chain from it on.
            let chain = w.frames.len().saturating_sub(1) as u32;
            for &(row, kernel, pos, ip, dso) in &seen {
                let creator = Creator {
                    first: w.first,
                    thread: w.thread,
                    pos,
                    kernel,
                    ip,
                    dso,
                };
                let depth = i64::from(chain - pos.saturating_sub(1));
                let rank = match order {
                    Order::Caller => depth,
                    Order::Callee => -depth,
                };
                let e = table.entry(row).or_insert(ChildEntry {
                    period: 0,
                    creator,
                    hidden,
                    rank,
                });
                e.period += w.period;
                // The deepest chain: the largest rank in caller order, the smallest in
                // callee order.
                e.rank = match order {
                    Order::Caller => e.rank.max(rank),
                    Order::Callee => e.rank.min(rank),
                };
                if e.creator.earlier(creator) != e.creator {
                    (e.creator, e.hidden) = (creator, hidden);
                }
            }
        });
        out
    }

    /// Every entry's callchains, as perf appends them (`hist_entry_iter`): each
    /// sample's whole chain to its own entry, in the view's order; with `children`, also
    /// to the entry of each frame (once per row and sample, as [`Named::rows`]) the
    /// chain from that frame on, filtered samples too (perf appends every sample's
    /// chain to the entries it meets). `frame_of[loc]` is a location's frame key.
    /// `appended`: the order the samples' walks came in, where known
    /// ([`crate::callgraph::appends`]). `parts`: the keys counted to an entry perf's
    /// collapse pass merges into another, and its place among them
    /// ([`crate::hist_split::Refined::parts`]); their chains go to a graph of its own.
    #[allow(clippy::too_many_arguments)] // the report's parts, as its tables are made
    pub(crate) fn forest(
        &self,
        keys: &Chunked<RawKey>,
        rows: &[u32],
        frame_of: &[u32],
        order: Order,
        children: bool,
        appended: Option<crate::callgraph::appends::Order>,
        parts: &FxHashMap<u32, u32>,
    ) -> Forest {
        let part = |k: u32| parts.get(&k).copied().unwrap_or(0);
        let mut forest = Forest::default();
        let mut seen: Vec<u32> = Vec::new();
        // Per walk, the nodes its chains end in, one per entry: `ends[first[w]..]`.
        let (mut first, mut ends) = (vec![0u32], Vec::new());
        let keep = appended.is_some();
        self.each(|w| {
            if let Some(&(own, _)) = w.frames.first() {
                let event = keys.get(own as usize).event() as u32;
                let chain = &w.frames[1..];
                let frame = |&(_, loc): &(u32, u32)| frame_of[loc as usize];
                let own_row = rows[own as usize];
                let (period, count) = (w.period, w.samples);
                let own_entry = (event, own_row, part(own));
                let end = match order {
                    Order::Caller => {
                        forest.append_to(own_entry, chain.iter().map(frame), period, count)
                    }
                    Order::Callee => {
                        forest.append_to(own_entry, chain.iter().rev().map(frame), period, count)
                    }
                };
                ends.extend(end.filter(|_| keep));
                if children {
                    seen.clear();
                    seen.push(own_row);
                    let n = chain.len();
                    for step in 0..n {
                        let i = match order {
                            Order::Caller => step,
                            Order::Callee => n - 1 - step,
                        };
                        let row = rows[chain[i].0 as usize];
                        if seen.contains(&row) {
                            continue;
                        }
                        seen.push(row);
                        let entry = (event, row, part(chain[i].0));
                        let from = match order {
                            Order::Caller => {
                                forest.append_to(entry, chain[i..].iter().map(frame), period, count)
                            }
                            Order::Callee => forest.append_to(
                                entry,
                                chain[..=i].iter().rev().map(frame),
                                period,
                                count,
                            ),
                        };
                        ends.extend(from.filter(|_| keep));
                    }
                }
            }
            if keep {
                first.push(ends.len() as u32);
            }
        });
        if let Some(a) = appended {
            forest.appended_in(a, first, ends);
        }
        forest
    }
}

/// A walk's frames in the order perf's cursor meets them: the entry's own first, then
/// the chain from its root (`caller`) or from the sample (`callee`).
fn cursor(frames: &[(u32, u32)], order: Order) -> impl Iterator<Item = (u32, u32)> + '_ {
    let (own, chain) = frames.split_at(1.min(frames.len()));
    let n = chain.len();
    let at = move |step: usize| match order {
        Order::Caller => chain[step],
        Order::Callee => chain[n - 1 - step],
    };
    own.iter().copied().chain((0..n).map(at))
}

#[cfg(test)]
#[path = "children_tests.rs"]
mod tests;
