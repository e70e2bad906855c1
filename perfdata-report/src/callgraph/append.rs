//! perf's own building of one entry's call graph (callchain.c's
//! `append_chain_children`, `append_chain` and `split_add_child`), chain by chain, for
//! the trees where its comparison is not one order.
//!
//! perf finds a chain's next frame among a node's children by walking down their
//! rb-tree with `match_chain` at each step: equal, that child; else left or right. An
//! inlined function is compared with any frame by name, other functions by DSO and
//! address, so an inlined `foo` and an out-of-line `foo` are one node (whichever came
//! first, named as it), and a walk can pass by a child that holds an equal frame (the
//! comparison is not transitive) and make a second one where it ends. A node holds a
//! run of frames, and a chain is compared with the run frame by frame; only the run's
//! first frame steers the walk. Where every sibling is compared by address the
//! comparison is one order and the trie of exact frame keys ([`super::tree`]) has the
//! same nodes; this is the slower way, for the trees that have an inlined function
//! among siblings.

use std::cmp::Ordering;

use rustc_hash::{FxHashMap, FxHashSet};

use super::rbtree::{Links, NIL};
use super::tree::{FrameKey, TrieNode, NONE, NO_KEY};

/// A node of perf's radix tree (`callchain_node`).
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Its frames (perf's `val` list): `frames[start..start + len]`, each frame a frame
    /// key's number, as the chain that made it had them.
    start: u32,
    len: u32,
    /// The period and samples of the chains that end in it.
    hit: u64,
    count: u64,
    /// The root of its children's rb-tree (perf's `rb_root_in`).
    kids: u32,
    /// Its parent (NIL for the root).
    up: u32,
    /// The graph's shape when its run or its tree of children last changed: a chain
    /// that ended below it before, when the shape was at least this, walks there again.
    changed: u64,
}

/// One entry's call graph as perf builds it: node 0 its root, which has no frames.
pub(crate) struct Graph<C> {
    nodes: Vec<Node>,
    /// Each node's place in its parent's tree of children.
    links: Links,
    frames: Vec<u32>,
    /// perf's `match_chain` of a node's frame (the first key) and the chain's (the
    /// second): `Less` where the node's is smaller, and the chain goes left.
    cmp: C,
    /// How many nodes were made: the graph's shape's number.
    shape: u64,
}

/// The root.
const ROOT: u32 = 0;

impl<C: FnMut(u32, u32) -> Ordering> Graph<C> {
    /// The graph as (depth, frames, period, samples) lines, children in order: what
    /// the tests compare.
    #[cfg(test)]
    pub(super) fn lines(&self) -> Vec<(usize, Vec<u32>, u64, u64)> {
        let mut out = Vec::new();
        let mut stack = vec![(self.root(), 0)];
        while let Some((n, depth)) = stack.pop() {
            let (hit, count) = self.hit(n);
            out.push((depth, self.frames(n).to_vec(), hit, count));
            let mut kids = Vec::new();
            self.children(n, &mut kids);
            stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
        }
        out
    }

    /// A graph of no chains, frames compared by `cmp` (perf's `match_chain`).
    pub(crate) fn new(cmp: C) -> Graph<C> {
        Graph {
            nodes: vec![Node {
                start: 0,
                len: 0,
                hit: 0,
                count: 0,
                kids: NIL,
                up: NIL,
                changed: 0,
            }],
            links: Links::default(),
            frames: Vec::new(),
            cmp,
            shape: 0,
        }
    }

    /// The graph's shape's number, which grows as nodes are made or split.
    pub(crate) fn shape(&self) -> u64 {
        self.shape
    }

    /// Where perf's walk of a chain that ended in node `n` when the shape was `since`
    /// would part from its way then: None where it would end in `n` again, which
    /// [`Graph::add_hit`] can count into; else the node to walk on from and how many of
    /// the chain's frames lead to it ([`Graph::append_from`]). The walk looks into the
    /// trees of children of the nodes from the root to `n` and compares the chain with
    /// their runs (with the other children it meets only their first frames, which never
    /// change), so it takes the same way down to the first of them that changed.
    pub(crate) fn parts(&self, n: u32, since: u64) -> Option<(u32, usize)> {
        if since == self.shape {
            return None;
        }
        // The changed node nearest the root.
        let (mut at, mut first) = (n, NIL);
        while at != NIL {
            let node = &self.nodes[at as usize];
            if node.changed > since {
                first = at;
            }
            at = node.up;
        }
        if first == NIL {
            return None;
        }
        // The walk met the changed node's run, or its children, from its parent on.
        let from = if first == ROOT {
            ROOT
        } else {
            self.nodes[first as usize].up
        };
        let (mut pos, mut at) = (0usize, from);
        while at != NIL {
            let node = &self.nodes[at as usize];
            pos += node.len as usize;
            at = node.up;
        }
        Some((from, pos))
    }

    /// The period and samples of a chain that ends in node `n`, counted in it.
    pub(crate) fn add_hit(&mut self, n: u32, period: u64, count: u64) {
        let node = &mut self.nodes[n as usize];
        node.hit += period;
        node.count += count;
    }

    /// perf's `callchain_append`: `chain`'s frames (the root's child first) of period
    /// `period` and `count` samples added, as perf adds the same chain sample by sample
    /// (an empty chain adds nothing: the root). The node it ends in.
    pub(crate) fn append(&mut self, chain: &[u32], period: u64, count: u64) -> u32 {
        self.append_from((ROOT, 0), chain, period, count)
    }

    /// [`Graph::append`] where the walk is known to reach node `at` with the chain's
    /// first `pos` frames (perf's walk from the root, which a chain met again takes
    /// the same way down to where [`Graph::parts`] says).
    pub(crate) fn append_from(
        &mut self,
        (mut at, mut pos): (u32, usize),
        chain: &[u32],
        period: u64,
        count: u64,
    ) -> u32 {
        if chain.is_empty() {
            return ROOT;
        }
        // perf's append_chain_children at `at` with the chain from `pos` on; a child
        // whose frames the chain has all, and more, is looked into the same way
        // (perf recurses; here a loop, as chains can be thousands of frames deep).
        'children: loop {
            let (mut p, mut parent, mut side) = (self.nodes[at as usize].kids, NIL, 0);
            while p != NIL {
                // perf's append_chain: the chain against the child's run, frame by frame.
                let Node { start, len, .. } = self.nodes[p as usize];
                let mut matches = 0usize;
                let mut ord = Ordering::Equal;
                for i in 0..len as usize {
                    let Some(&new) = chain.get(pos + matches) else {
                        break;
                    };
                    ord = (self.cmp)(self.frames[start as usize + i], new);
                    if ord.is_ne() {
                        break;
                    }
                    matches += 1;
                }
                if matches == 0 {
                    // Not this child: left where its frame is the smaller.
                    side = usize::from(ord.is_ge());
                    parent = p;
                    p = self.links.child(p, side);
                    continue;
                }
                pos += matches;
                if matches < len as usize {
                    return self.split_add_child(p, matches as u32, &chain[pos..], period, count);
                } else if pos == chain.len() {
                    self.add_hit(p, period, count);
                    return p;
                }
                at = p;
                continue 'children;
            }
            // Met no child: a new one where the walk ended.
            let c = self.add_child(at, &chain[pos..], period, count);
            let shape = self.shape;
            let node = &mut self.nodes[at as usize];
            node.changed = shape;
            self.links.insert(&mut node.kids, c, parent, side);
            return c;
        }
    }

    /// perf's `add_child`: a node of the frames `rest` under `up`, ending one chain.
    fn add_child(&mut self, up: u32, rest: &[u32], period: u64, count: u64) -> u32 {
        let start = self.frames.len() as u32;
        self.frames.extend_from_slice(rest);
        self.push(Node {
            start,
            len: rest.len() as u32,
            hit: period,
            count,
            kids: NIL,
            up,
            changed: 0,
        })
    }

    /// A new node, made in a new shape.
    fn push(&mut self, mut n: Node) -> u32 {
        self.shape += 1;
        n.changed = self.shape;
        let c = self.nodes.len() as u32;
        self.nodes.push(n);
        self.links.reserve(c);
        c
    }

    /// perf's `split_add_child`: node `at`, whose first `keep` frames the chain has,
    /// keeps them; the rest of its frames become its one child, which takes its
    /// period and children; the chain's remaining frames `rest` (if any) become a
    /// second child beside it, placed by comparing their first frames. The node the
    /// chain ends in.
    fn split_add_child(
        &mut self,
        at: u32,
        keep: u32,
        rest: &[u32],
        period: u64,
        count: u64,
    ) -> u32 {
        let old = self.nodes[at as usize];
        let tail = self.push(Node {
            start: old.start + keep,
            len: old.len - keep,
            up: at,
            ..old
        });
        // The children move under the tail.
        let mut moved = Vec::new();
        self.links.in_order(old.kids, &mut moved);
        for k in moved {
            self.nodes[k as usize].up = tail;
        }
        let mut kids = NIL;
        self.links.insert(&mut kids, tail, NIL, 0);
        let shape = self.shape;
        let n = &mut self.nodes[at as usize];
        n.len = keep;
        n.kids = kids;
        n.changed = shape;
        let Some(&first) = rest.first() else {
            // The chain ends here.
            (n.hit, n.count) = (period, count);
            return at;
        };
        (n.hit, n.count) = (0, 0);
        let side = usize::from((self.cmp)(self.frames[(old.start + keep) as usize], first).is_ge());
        let c = self.add_child(at, rest, period, count);
        let shape = self.shape;
        let n = &mut self.nodes[at as usize];
        n.changed = shape;
        self.links.insert(&mut n.kids, c, tail, side);
        c
    }

    /// The root's number.
    pub(crate) fn root(&self) -> u32 {
        ROOT
    }

    /// Node `n`'s frames (frame key numbers).
    pub(crate) fn frames(&self, n: u32) -> &[u32] {
        let Node { start, len, .. } = self.nodes[n as usize];
        &self.frames[start as usize..(start + len) as usize]
    }

    /// Node `n`'s period and samples of the chains that end in it.
    pub(crate) fn hit(&self, n: u32) -> (u64, u64) {
        let node = &self.nodes[n as usize];
        (node.hit, node.count)
    }

    /// Node `n`'s children in their rb-tree's order, appended to `out`.
    pub(crate) fn children(&self, n: u32, out: &mut Vec<u32>) {
        self.links.in_order(self.nodes[n as usize].kids, out);
    }
}

/// The trie's entries whose trees perf builds otherwise (an inlined function's frame
/// among some node's children, or an entry the collapse pass merges others into or
/// merges into another: the roots of `merges`): per node, its entry's root (NONE for
/// the rest), and those roots. None where there are none.
pub(super) fn perf_built(
    nodes: &[TrieNode],
    parents: &[u32],
    first: &[u32],
    kids: &[u32],
    keys: &[FrameKey],
    merges: &FxHashMap<u32, Vec<u32>>,
) -> Option<(Vec<u32>, FxHashSet<u32>)> {
    if !keys.iter().any(FrameKey::is_inlined) && merges.is_empty() {
        return None;
    }
    let mut built: FxHashSet<u32> = merges
        .iter()
        .flat_map(|(&r, parts)| std::iter::once(r).chain(parts.iter().copied()))
        .collect();
    let mut root_of = vec![NONE; nodes.len()];
    // Parents come before their children.
    for n in 0..nodes.len() {
        let p = parents[n];
        root_of[n] = if p == NONE {
            n as u32
        } else {
            root_of[p as usize]
        };
        let kids = &kids[first[n] as usize..first[n + 1] as usize];
        if kids.len() > 1
            && kids
                .iter()
                .any(|&k| keys[nodes[k as usize].key as usize].is_inlined())
        {
            built.insert(root_of[n]);
        }
    }
    if built.is_empty() {
        return None;
    }
    for r in &mut root_of {
        if !built.contains(r) {
            *r = NONE;
        }
    }
    Some((root_of, built))
}

/// Graph `g`'s nodes added to the trie (`nodes`, with their children at
/// `kids[first[n]..first[n + 1]]`): each of its nodes a run of trie nodes, one a frame,
/// the last with the node's period and children, in their order. The new root.
pub(super) fn graft<C>(
    nodes: &mut Vec<TrieNode>,
    first: &mut Vec<u32>,
    kids: &mut Vec<u32>,
    g: &Graph<C>,
) -> u32
where
    C: FnMut(u32, u32) -> Ordering,
{
    let base = nodes.len();
    // The new trie nodes are numbered breadth first, so that each one's children are
    // made together, numbered in a row, as the trie lists them. Per new node: the
    // graph node and which frame of its run it is, and its parent.
    let mut of: Vec<(u32, u32, u32)> = Vec::new();
    let add = |nodes: &mut Vec<TrieNode>, of: &mut Vec<_>, n: u32, j: u32, parent: u32| {
        let frames = g.frames(n);
        let last = j as usize + 1 >= frames.len();
        let (hit, count) = if last { g.hit(n) } else { (0, 0) };
        nodes.push(TrieNode {
            key: frames.get(j as usize).copied().unwrap_or(NO_KEY),
            hit,
            count,
            cumul_hit: 0,
            cumul_count: 0,
        });
        of.push((n, j, parent));
        (nodes.len() - 1) as u32
    };
    add(nodes, &mut of, g.root(), 0, NONE);
    let mut children = Vec::new();
    let mut i = 0;
    while i < nodes.len() - base {
        let t = (base + i) as u32;
        let (n, j, _) = of[i];
        if j as usize + 1 < g.frames(n).len() {
            kids.push(add(nodes, &mut of, n, j + 1, t));
        } else {
            children.clear();
            g.children(n, &mut children);
            for &c in &children {
                kids.push(add(nodes, &mut of, c, 0, t));
            }
        }
        first.push(kids.len() as u32);
        i += 1;
    }
    // Children come after their parents: the periods summed from the end up.
    for i in (0..of.len()).rev() {
        let t = &mut nodes[base + i];
        t.cumul_hit += t.hit;
        t.cumul_count += t.count;
        let (hit, count) = (t.cumul_hit, t.cumul_count);
        let parent = of[i].2;
        if parent != NONE {
            let p = &mut nodes[parent as usize];
            p.cumul_hit += hit;
            p.cumul_count += count;
        }
    }
    base as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames as (name, address, inlined): perf's match_chain of two.
    fn frames() -> Vec<(&'static str, u64, bool)> {
        vec![
            ("main", 0x10, false),
            ("zzz", 0x50, false),
            ("mmm", 0, true),
            ("aaa", 0x100, false),
            ("mmm", 0x75, false),
            ("foo", 0, true),
            ("foo", 0x200, false),
            ("leaf", 0x300, false),
        ]
    }

    fn cmp(a: u32, b: u32) -> Ordering {
        let f = frames();
        let (x, y) = (f[a as usize], f[b as usize]);
        if x.2 || y.2 {
            x.0.cmp(y.0)
        } else {
            x.1.cmp(&y.1)
        }
    }

    /// The graph as (depth, frames, hit) lines, children in order.
    fn dump<C: FnMut(u32, u32) -> Ordering>(g: &Graph<C>) -> Vec<(usize, Vec<u32>, u64)> {
        let mut out = Vec::new();
        let mut stack = vec![(g.root(), 0)];
        while let Some((n, depth)) = stack.pop() {
            out.push((depth, g.frames(n).to_vec(), g.hit(n).0));
            let mut kids = Vec::new();
            g.children(n, &mut kids);
            stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
        }
        out
    }

    /// An inlined foo and an out-of-line foo are one node, named by the first; the
    /// chain below the second goes on in it.
    #[test]
    fn an_inlined_and_an_out_of_line_function_of_one_name_are_one_node() {
        let mut g = Graph::new(cmp);
        g.append(&[0, 5], 3, 3);
        g.append(&[0, 6, 7], 2, 2);
        assert_eq!(
            dump(&g),
            [(0, vec![], 0), (1, vec![0, 5], 3), (2, vec![7], 2)]
        );
    }

    /// zzz, mmm inlined and aaa, met in that order, are zzz at the root, aaa left
    /// (higher address) and mmm right (smaller name); an out-of-line mmm between zzz
    /// and aaa goes left at zzz and right at aaa, and is a node of its own.
    #[test]
    fn a_walk_that_passes_an_equal_frame_by_makes_a_second_node() {
        let mut g = Graph::new(cmp);
        for k in [1, 2, 3, 4] {
            g.append(&[0, k], 1, 1);
        }
        let tree = dump(&g);
        let kids: Vec<&[u32]> = tree[2..].iter().map(|(_, f, _)| &f[..]).collect();
        assert_eq!(kids, [&[3][..], &[4], &[1], &[2]]);
    }

    /// A chain that ends inside a node's run splits it there, the node keeping the
    /// period of the chain that ends; one that parts there adds a second child.
    #[test]
    fn runs_split_where_chains_end_or_part() {
        let mut g = Graph::new(cmp);
        g.append(&[0, 1, 7], 4, 1);
        g.append(&[0, 1], 2, 1);
        g.append(&[0, 3], 1, 1);
        assert_eq!(
            dump(&g),
            [
                (0, vec![], 0),
                (1, vec![0], 0),
                (2, vec![3], 1),
                (2, vec![1], 2),
                (3, vec![7], 4),
            ]
        );
    }

    /// Where the comparison is one order (no inlined function), perf's build and the
    /// trie of exact keys make the same nodes, runs and order of children, whatever
    /// the chains: 2,000 pseudo-random chains of up to 6 frames, some repeated, some a
    /// prefix of others, in five orders.
    #[test]
    fn with_one_order_perfs_build_is_the_tries() {
        use crate::callgraph::tree::{CallNode, Forest, FrameKey, FramePlace};
        fn lines(n: CallNode, depth: usize, out: &mut Vec<(usize, Vec<String>, u64, u64)>) {
            out.push((
                depth,
                n.frames().map(String::from).collect(),
                n.hit(),
                n.count(),
            ));
            for c in n.children(0) {
                lines(c, depth + 1, out);
            }
        }
        let mut seed = 12345u64;
        let mut next = |m: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % m
        };
        for _ in 0..5 {
            let chains: Vec<(Vec<u32>, u64)> = (0..400)
                .map(|_| {
                    let len = 1 + next(6) as usize;
                    ((0..len).map(|_| next(6) as u32).collect(), 1 + next(4))
                })
                .collect();
            let keys: Vec<FrameKey> = (0..6)
                .map(|k| FrameKey {
                    inline: 0,
                    dso: 1,
                    sym: true,
                    value: 10 * k,
                })
                .collect();
            let names: Vec<String> = (0..6).map(|k| format!("f{k}")).collect();
            let places: Vec<FramePlace> = keys.iter().map(FrameKey::own_place).collect();
            let mut f = Forest::default();
            let mut g = Graph::new(|a: u32, b: u32| a.cmp(&b));
            for (c, period) in &chains {
                f.append(0, 0, c.iter().copied(), *period, 1);
                g.append(c, *period, 1);
            }
            let trees = f.trees(keys, names.clone(), &places, &mut Vec::new());
            let mut want = Vec::new();
            lines(trees[&(0, 0)].root(), 0, &mut want);
            let mut got = Vec::new();
            let mut stack = vec![(g.root(), 0)];
            while let Some((n, depth)) = stack.pop() {
                let frames = g.frames(n).iter().map(|&k| names[k as usize].clone());
                let (hit, count) = g.hit(n);
                got.push((depth, frames.collect(), hit, count));
                let mut kids = Vec::new();
                g.children(n, &mut kids);
                stack.extend(kids.into_iter().rev().map(|k| (k, depth + 1)));
            }
            assert_eq!(got, want);
        }
    }
}
