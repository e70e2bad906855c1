//! The callchains under each entry as perf's `callchain_root` holds them: a tree of
//! nodes, each a run of frames (perf's `callchain_node` and its `val` list) that split
//! where chains part or end, with the period and samples of the chains that end in it
//! (`hit`, `count`) and below it (`children_hit`, `children_count`).
//!
//! perf appends every sample's chain to its entry's tree (`callchain_append`); here the
//! trees are built at the end, from the distinct stacks the report counted with their
//! periods, into a trie of frame keys (`Forest`), which becomes each entry's
//! [`CallTree`]: perf's radix tree is this trie with each run of frames that neither
//! branches nor ends made one node, so the two have the same nodes whatever order the
//! chains came in, but where an inlined function is among a node's children: there
//! perf's comparison is not one order, and the entry's tree is built again as perf
//! builds it, sample by sample in the order they came where that order was kept
//! (`callgraph::appends`), else chain by chain (`callgraph::append`), its nodes added
//! to the trie; so too the graphs of entries perf's collapse pass merges, each built
//! on its own and merged into the first's as perf merges them (`callgraph::merge`). The
//! trie is shared by the entries' trees, and perf's nodes are made of it where they are
//! read ([`CallNode`]): a drawing reads the few above its
//! threshold, and making every node of a 104 MiB python recording's 3,655 trees (67,397
//! nodes, each with its frames' names) took 0.1 s, a quarter of the report.

use std::sync::Arc;

use rustc_hash::FxHashMap;

/// What tells two frames apart (perf's `match_chain`): the DSO (perf compares the
/// `struct dso` pointers; DSOs are numbered in the order they were made, 0 for a frame
/// outside every map), and the function's start (`function` key, frames with a symbol)
/// or the address as sampled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct FrameKey {
    /// DSO + 1, 0 for none.
    pub(crate) dso: u32,
    /// Whether `value` is a symbol's start (else an ip).
    pub(crate) sym: bool,
    /// The symbol's start or the ip.
    pub(crate) value: u64,
    /// Under the address key, the entry's place in the list perf makes at an unwound
    /// frame (1 the innermost inlined function's; 0 for a frame listed alone): the
    /// entries at one address follow each other in a chain, each its own node named as
    /// its entry (`work nested.c:30`, `step nested.c:21 (inlined)`), so they are told
    /// apart here. 0 under the function key.
    pub(crate) inline: u16,
}

/// A frame's DSO (+1, 0 for none) and ip, as perf's `match_chain` compares a frame with
/// one of no symbol. A function's start orders it as its ip would (the other ip is in
/// no symbol); an inlined function's key is placed by its first location.
pub(crate) type FramePlace = (u32, u64);

/// The DSO of an inlined function's frame key: perf's `match_chain` compares inlined
/// functions by name, whatever their DSO.
pub(crate) const INLINED_DSO: u32 = u32::MAX;

impl FrameKey {
    /// perf's `match_chain` of an existing child (`self`, named `name`) and a new one:
    /// by name where either is an inlined function (perf's `strcmp` of the symbols'
    /// names, without " (inlined)"), else by DSO and address. Not one order: which
    /// applies depends on the pair, so the children's rb-tree's shape decides where
    /// they meet ([`super::rbtree`]).
    ///
    /// Where either frame has no symbol perf compares both by DSO and ip (its
    /// `CCKEY_ADDRESS` fallback), an inlined function's too: `place` and `new_place`
    /// are the frames' [`FramePlace`]s.
    pub(super) fn perf_cmp(
        &self,
        (name, place): (&str, FramePlace),
        new: &FrameKey,
        (new_name, new_place): (&str, FramePlace),
    ) -> std::cmp::Ordering {
        fn bare(s: &str) -> &str {
            s.strip_suffix(crate::inlines::INLINED).unwrap_or(s)
        }
        if !(self.sym && new.sym) {
            return (place, self.inline).cmp(&(new_place, new.inline));
        }
        if self.is_inlined() || new.is_inlined() {
            // Equal names are one frame, an inlined `foo` and an out-of-line one too.
            return bare(name).cmp(bare(new_name));
        }
        (self.dso, self.value, self.inline).cmp(&(new.dso, new.value, new.inline))
    }

    /// Whether this is an inlined function's key (under the `function` key: perf's
    /// `match_chain` compares it by name).
    pub(crate) fn is_inlined(&self) -> bool {
        self.sym && self.dso == INLINED_DSO
    }

    /// The key's own DSO and value as its [`FramePlace`]: right for every frame but an
    /// inlined function's (whose key holds no DSO nor address).
    pub(crate) fn own_place(&self) -> FramePlace {
        (self.dso, self.value)
    }
}

/// A node of the trie: one frame (`key`, NO_KEY for an entry's root), the period and
/// samples of the chains that end in it, and of all chains through it.
#[derive(Debug, Clone, Copy)]
pub(super) struct TrieNode {
    pub(super) key: u32,
    pub(super) hit: u64,
    pub(super) count: u64,
    pub(super) cumul_hit: u64,
    pub(super) cumul_count: u64,
}

/// The key of an entry's root, which has no frame.
pub(super) const NO_KEY: u32 = u32::MAX;

/// Every entry's trie, finished: nodes' cumulative periods summed and children listed,
/// shared by the entries' [`CallTree`]s, which make perf's nodes (runs of frames) of it
/// only where they are read (a drawing reads the few above its threshold).
#[derive(Debug)]
struct Trie {
    nodes: Vec<TrieNode>,
    /// The children of node `n` are `kids[first[n]..first[n + 1]]`, in perf's order
    /// before sorting (their rb-tree's order: by DSO and address, largest first, where
    /// no inlined function is among them).
    first: Vec<u32>,
    kids: Vec<u32>,
    names: Vec<String>,
}

impl Trie {
    fn kids(&self, n: u32) -> &[u32] {
        let n = n as usize;
        &self.kids[self.first[n] as usize..self.first[n + 1] as usize]
    }

    /// perf's node that starts at trie node `t`: its frames run on to a node where
    /// chains end or part.
    fn node(&self, t: u32) -> CallNode<'_> {
        let mut last = t;
        while let [only] = self.kids(last) {
            if self.nodes[last as usize].hit != 0 {
                break;
            }
            last = *only;
        }
        CallNode {
            trie: self,
            first: t,
            last,
        }
    }
}

/// The callchains under one entry, as perf's `callchain_root` holds them.
#[derive(Debug, Clone)]
pub struct CallTree {
    trie: Arc<Trie>,
    root: u32,
}

impl PartialEq for CallTree {
    /// The same entry's tree of the same report.
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.trie, &other.trie) && self.root == other.root
    }
}

impl CallTree {
    /// The root, which has no frames.
    pub fn root(&self) -> CallNode<'_> {
        CallNode {
            trie: &self.trie,
            first: self.root,
            last: self.root,
        }
    }

    /// A tree with no chains.
    pub fn empty() -> CallTree {
        let mut f = Forest::default();
        f.root((0, 0));
        f.trees(Vec::new(), Vec::new(), &[], &mut Vec::new())
            .remove(&(0, 0))
            .expect("the root made")
    }
}

/// One node of an entry's call tree: a run of frames (perf's `callchain_node` and its
/// `val` list) that split where chains part or end.
#[derive(Debug, Clone, Copy)]
pub struct CallNode<'a> {
    trie: &'a Trie,
    /// The trie nodes of its first and last frame.
    first: u32,
    last: u32,
}

impl<'a> CallNode<'a> {
    /// The frames of the node, as perf prints them, in the order of the chains.
    pub fn frames(&self) -> impl Iterator<Item = &'a str> + 'a {
        let trie = self.trie;
        let last = self.last;
        let mut at = (trie.nodes[self.first as usize].key != NO_KEY).then_some(self.first);
        std::iter::from_fn(move || {
            let n = at?;
            at = (n != last).then(|| trie.kids(n)[0]);
            Some(trie.names[trie.nodes[n as usize].key as usize].as_str())
        })
    }

    /// The nodes below, in perf's order before sorting (its rb-tree's: by DSO and
    /// address, largest first, where no inlined function is among them), those whose
    /// cumulative period is at least `min_hit`.
    pub fn children(&self, min_hit: u64) -> impl Iterator<Item = CallNode<'a>> + 'a {
        let trie = self.trie;
        trie.kids(self.last)
            .iter()
            .filter(move |&&k| trie.nodes[k as usize].cumul_hit >= min_hit)
            .map(|&k| trie.node(k))
    }

    /// The period of the chains that end here.
    pub fn hit(&self) -> u64 {
        self.trie.nodes[self.last as usize].hit
    }

    /// The samples whose chains end here.
    pub fn count(&self) -> u64 {
        self.trie.nodes[self.last as usize].count
    }

    /// The period of the chains that go on below.
    pub fn children_hit(&self) -> u64 {
        self.cumul_hit() - self.hit()
    }

    /// The samples whose chains go on below.
    pub fn children_count(&self) -> u64 {
        self.cumul_count() - self.count()
    }

    /// perf's `callchain_cumul_hits`: the period of every chain through the node.
    pub fn cumul_hit(&self) -> u64 {
        self.trie.nodes[self.last as usize].cumul_hit
    }

    /// perf's `callchain_cumul_counts`.
    pub fn cumul_count(&self) -> u64 {
        self.trie.nodes[self.last as usize].cumul_count
    }
}

/// The chains of every entry, as a trie of frame keys per entry (event, row).
#[derive(Debug, Default)]
pub(crate) struct Forest {
    /// The nodes, each after its parent, and each one's parent (u32::MAX: a root).
    nodes: Vec<TrieNode>,
    parents: Vec<u32>,
    /// Per node: its frame key, its first child and next sibling (NONE: none; the
    /// child last found first), and how many children it has. Most nodes have one
    /// child, the node made after them: a walk of the list finds it where a hash
    /// table of 282,000 children (a python recording's) missed the cache at each step.
    keys: Vec<u32>,
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    fanout: Vec<u32>,
    /// (parent, key) -> child, for the parents of [`MANY`] children or more.
    index: FxHashMap<(u32, u32), u32>,
    roots: FxHashMap<(u32, u32), u32>,
    /// The roots of the entries perf's collapse pass merges into another (event, row,
    /// place among them from 1; the first's is in `roots`): their graphs are built on
    /// their own and merged into the first's ([`super::merge`]).
    parts: FxHashMap<(u32, u32, u32), u32>,
    /// The nodes chains end in, each once, in the order the chains first came: the
    /// order perf appended them in, for the trees it builds otherwise ([`super::append`]),
    /// where the samples' own order is not known.
    ends: Vec<u32>,
    /// The samples' order ([`Forest::appended_in`]), where known.
    order: Option<super::appends::Replay>,
    /// Why the samples' order is not known, where it was kept and lost
    /// ([`Forest::order_lost`]).
    lost: Option<std::io::Error>,
}

/// No node.
pub(super) const NONE: u32 = u32::MAX;

/// Children from which a node's are found through the hash table.
const MANY: u32 = 16;

impl Forest {
    /// The root of entry `entry`'s trie, made if new.
    fn root(&mut self, entry: (u32, u32)) -> u32 {
        if let Some(&r) = self.roots.get(&entry) {
            return r;
        }
        let r = self.push(NONE, NO_KEY);
        self.roots.insert(entry, r);
        r
    }

    /// A new node of frame `key` under `parent` (NONE: a root): its number.
    fn push(&mut self, parent: u32, key: u32) -> u32 {
        let n = self.nodes.len() as u32;
        self.nodes.push(TrieNode {
            key,
            hit: 0,
            count: 0,
            cumul_hit: 0,
            cumul_count: 0,
        });
        self.parents.push(parent);
        self.keys.push(key);
        self.first_child.push(NONE);
        self.fanout.push(0);
        let sibling = if parent == NONE {
            NONE
        } else {
            let p = parent as usize;
            self.fanout[p] += 1;
            std::mem::replace(&mut self.first_child[p], n)
        };
        self.next_sibling.push(sibling);
        n
    }

    /// The child of `at` of frame `key`, made if new.
    fn child(&mut self, at: u32, key: u32) -> u32 {
        let a = at as usize;
        if self.fanout[a] >= MANY {
            if let Some(&c) = self.index.get(&(at, key)) {
                return c;
            }
            let c = self.push(at, key);
            self.index.insert((at, key), c);
            return c;
        }
        let (mut before, mut c) = (NONE, self.first_child[a]);
        while c != NONE {
            if self.keys[c as usize] == key {
                // Found again: first in the list from now on.
                if before != NONE {
                    self.next_sibling[before as usize] = self.next_sibling[c as usize];
                    self.next_sibling[c as usize] = self.first_child[a];
                    self.first_child[a] = c;
                }
                return c;
            }
            (before, c) = (c, self.next_sibling[c as usize]);
        }
        let c = self.push(at, key);
        if self.fanout[a] == MANY {
            let mut k = c;
            while k != NONE {
                self.index.insert((at, self.keys[k as usize]), k);
                k = self.next_sibling[k as usize];
            }
        }
        c
    }

    /// Append a chain of period `period` and `count` samples to the tree of entry
    /// (`event`, `row`); frames are frame-key numbers, in the order the chain is walked.
    /// The node it ends in; an empty chain adds nothing (perf's `callchain_append` with
    /// an empty cursor).
    #[cfg(test)]
    pub(crate) fn append(
        &mut self,
        event: u32,
        row: u32,
        frames: impl Iterator<Item = u32>,
        period: u64,
        count: u64,
    ) -> Option<u32> {
        self.append_to((event, row, 0), frames, period, count)
    }

    /// [`Forest::append`] to the entry (`event`, `row`, `part`): `part` 0 the entry
    /// itself, else the `part`th entry perf's collapse pass merges into it, whose
    /// chains perf appends to a graph of their own (see [`super::merge`]).
    pub(crate) fn append_to(
        &mut self,
        (event, row, part): (u32, u32, u32),
        frames: impl Iterator<Item = u32>,
        period: u64,
        count: u64,
    ) -> Option<u32> {
        let mut frames = frames.peekable();
        frames.peek()?;
        // The first entry's graph is there to merge into, chains of its own or not.
        let first = self.root((event, row));
        let mut at = match part {
            0 => first,
            _ => match self.parts.get(&(event, row, part)) {
                Some(&r) => r,
                None => {
                    let r = self.push(NONE, NO_KEY);
                    self.parts.insert((event, row, part), r);
                    r
                }
            },
        };
        for key in frames {
            at = self.child(at, key);
        }
        let n = &mut self.nodes[at as usize];
        if (n.hit, n.count) == (0, 0) {
            self.ends.push(at);
        }
        n.hit += period;
        n.count += count;
        Some(at)
    }

    /// The order the samples came in: `order`'s runs are of walks, and walk `w`'s
    /// chains end in the nodes `ends[first[w]..first[w + 1]]` (as [`Forest::append`]
    /// returned them, one per entry). The trees perf builds otherwise are then built
    /// sample by sample, as perf appends them ([`super::appends`]).
    pub(crate) fn appended_in(
        &mut self,
        order: super::appends::Order,
        first: Vec<u32>,
        ends: Vec<u32>,
    ) {
        self.order = Some(super::appends::Replay { order, first, ends });
    }

    /// The samples' order was kept and lost to the spool's error `e`: the trees that
    /// depend on it are built without it, and [`Forest::trees`] says so.
    pub(crate) fn order_lost(&mut self, e: std::io::Error) {
        self.lost = Some(e);
    }

    /// Each entry's tree, frame key `k` named `names[k]` and siblings ordered by
    /// `keys[k]` (at `places[k]`) as perf's rb-tree orders them; `warnings` gets what
    /// they could not be built as perf builds them.
    pub(crate) fn trees(
        self,
        keys: Vec<FrameKey>,
        names: Vec<String>,
        places: &[FramePlace],
        warnings: &mut Vec<String>,
    ) -> FxHashMap<(u32, u32), CallTree> {
        let Forest {
            mut nodes,
            parents,
            mut roots,
            parts,
            ends,
            order,
            mut lost,
            ..
        } = self;
        // The roots of the entries merged into another, by the first's root, in the
        // order they are merged.
        let merges = super::merge::merges(&roots, &parts);
        // Children come after their parents: one pass from the end sums the periods
        // below each node, and counts its children.
        let mut first = vec![0u32; nodes.len() + 1];
        for n in (0..nodes.len()).rev() {
            let t = &mut nodes[n];
            t.cumul_hit += t.hit;
            t.cumul_count += t.count;
            let (hit, count) = (t.cumul_hit, t.cumul_count);
            let p = parents[n];
            if p != NONE {
                let up = &mut nodes[p as usize];
                up.cumul_hit += hit;
                up.cumul_count += count;
                first[p as usize + 1] += 1;
            }
        }
        for i in 1..first.len() {
            first[i] += first[i - 1];
        }
        let mut kids = vec![0u32; first[nodes.len()] as usize];
        let mut next = first.clone();
        for (n, &p) in parents.iter().enumerate() {
            if p != NONE {
                kids[next[p as usize] as usize] = n as u32;
                next[p as usize] += 1;
            }
        }
        // perf's match_chain of an existing frame and a new one (frame keys).
        let cmp = |e: u32, n: u32| {
            if e == n {
                return std::cmp::Ordering::Equal;
            }
            let (e, n) = (e as usize, n as usize);
            keys[e].perf_cmp((&names[e], places[e]), &keys[n], (&names[n], places[n]))
        };
        // The entries whose trees perf builds otherwise than the trie: where an inlined
        // function is among siblings, perf's comparison is not one order (by name with
        // it, by address between the others).
        let other = super::append::perf_built(&nodes, &parents, &first, &kids, &keys, &merges);
        // Each node's children, made in the order perf's chains first met them, go
        // into its rb-tree as perf's `append_chain_children` and `split_add_child` put
        // them: left of an existing child that `match_chain` finds smaller.
        let goes_left = |existing: u32, new: u32| {
            cmp(nodes[existing as usize].key, nodes[new as usize].key).is_lt()
        };
        for n in 0..nodes.len() {
            let (a, b) = (first[n] as usize, first[n + 1] as usize);
            if b - a > 1 && other.as_ref().is_none_or(|(of, _)| of[n] == NONE) {
                let order = super::rbtree::insertion_order(&kids[a..b], goes_left);
                kids[a..b].copy_from_slice(&order);
            }
        }
        if let Some((of, built)) = other {
            // Those entries' chains appended as perf appends them, sample by sample
            // where the order is known, else each distinct chain once as it first came;
            // their roots moved to the new nodes.
            let path = |end: u32, chain: &mut Vec<u32>| {
                chain.clear();
                let (root, mut at) = (of[end as usize], end);
                while at != root {
                    chain.push(nodes[at as usize].key);
                    at = parents[at as usize];
                }
                chain.reverse();
            };
            let by_sample = order.and_then(|r| {
                r.graphs(&of, &built, cmp, path)
                    .map_err(|e| lost = Some(e))
                    .ok()
            });
            // Only here does the order matter: said where a graph is built without it.
            if let (None, Some(e)) = (&by_sample, &lost) {
                warnings.push(super::appends::order_lost(e));
            }
            let graphs = by_sample.unwrap_or_else(|| {
                let mut graphs: FxHashMap<u32, _> = built
                    .iter()
                    .map(|&r| (r, super::append::Graph::new(cmp)))
                    .collect();
                let mut chain = Vec::new();
                for &end in &ends {
                    if let Some(g) = graphs.get_mut(&of[end as usize]) {
                        path(end, &mut chain);
                        let t = &nodes[end as usize];
                        g.append(&chain, t.hit, t.count);
                    }
                }
                graphs
            });
            let graphs = super::merge::merge_parts(graphs, &merges);
            let mut moved = FxHashMap::default();
            for (root, g) in graphs {
                moved.insert(
                    root,
                    super::append::graft(&mut nodes, &mut first, &mut kids, &g),
                );
            }
            for root in roots.values_mut() {
                if let Some(&r) = moved.get(root) {
                    *root = r;
                }
            }
        }
        let trie = Arc::new(Trie {
            nodes,
            first,
            kids,
            names,
        });
        roots
            .into_iter()
            .map(|(entry, root)| {
                (
                    entry,
                    CallTree {
                        trie: Arc::clone(&trie),
                        root,
                    },
                )
            })
            .collect()
    }
}

#[cfg(test)]
#[path = "tree_tests.rs"]
mod tests;
