//! The callchains under each entry as perf's `callchain_root` holds them: a tree of
//! nodes, each a run of frames (perf's `callchain_node` and its `val` list) that split
//! where chains part or end, with the period and samples of the chains that end in it
//! (`hit`, `count`) and below it (`children_hit`, `children_count`).
//!
//! perf appends every sample's chain to its entry's tree (`callchain_append`); here the
//! trees are built once, from the distinct stacks the report counted with their
//! periods, into a trie of frame keys (`Forest`), which becomes each entry's
//! [`CallTree`]: perf's radix tree is this trie with each run of frames that neither
//! branches nor ends made one node, so the two have the same nodes whatever order the
//! chains came in.

use rustc_hash::FxHashMap;
use serde::Serialize;

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
}

impl FrameKey {
    /// perf's order of siblings before they are sorted by period: its children's
    /// rb-tree puts a new chain left of an existing one whose key is smaller, so the
    /// tree's order is by DSO and address, largest first.
    fn rank(&self) -> (u32, u64) {
        (self.dso, self.value)
    }
}

/// One node of an entry's call tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallNode {
    /// The frames of the node, as perf prints them, in the order of the chains.
    pub frames: Vec<String>,
    /// The period of the chains that end here.
    pub hit: u64,
    /// The samples whose chains end here.
    pub count: u64,
    /// The period of the chains that go on below.
    pub children_hit: u64,
    /// The samples whose chains go on below.
    pub children_count: u64,
    /// The nodes below, in perf's order before sorting (by DSO and address, largest
    /// first).
    pub children: Vec<u32>,
}

impl CallNode {
    /// perf's `callchain_cumul_hits`: the period of every chain through the node.
    pub fn cumul_hit(&self) -> u64 {
        self.hit + self.children_hit
    }

    /// perf's `callchain_cumul_counts`.
    pub fn cumul_count(&self) -> u64 {
        self.count + self.children_count
    }
}

/// The callchains under one entry: `nodes[0]` is the root, which has no frames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallTree {
    /// The nodes, the root first.
    pub nodes: Vec<CallNode>,
}

impl CallTree {
    /// The root.
    pub fn root(&self) -> &CallNode {
        &self.nodes[0]
    }

    /// Node `i`.
    pub fn node(&self, i: u32) -> &CallNode {
        &self.nodes[i as usize]
    }
}

/// A node of the trie: one frame.
#[derive(Debug, Clone, Copy)]
struct TrieNode {
    key: u32,
    hit: u64,
    count: u64,
}

/// The chains of every entry, as a trie of frame keys per entry (event, row).
#[derive(Debug, Default)]
pub(crate) struct Forest {
    nodes: Vec<TrieNode>,
    /// (parent, key) -> child.
    index: FxHashMap<(u32, u32), u32>,
    roots: FxHashMap<(u32, u32), u32>,
}

impl Forest {
    /// Append a chain of period `period` and `count` samples to the tree of entry
    /// (`event`, `row`); frames are frame-key numbers, in the order the chain is walked.
    /// An empty chain adds nothing (perf's `callchain_append` with an empty cursor).
    pub(crate) fn append(
        &mut self,
        event: u32,
        row: u32,
        frames: impl Iterator<Item = u32>,
        period: u64,
        count: u64,
    ) {
        let mut frames = frames.peekable();
        if frames.peek().is_none() {
            return;
        }
        let nodes = &mut self.nodes;
        let mut at = *self.roots.entry((event, row)).or_insert_with(|| {
            nodes.push(TrieNode {
                key: u32::MAX,
                hit: 0,
                count: 0,
            });
            (nodes.len() - 1) as u32
        });
        for key in frames {
            at = *self.index.entry((at, key)).or_insert_with(|| {
                nodes.push(TrieNode {
                    key,
                    hit: 0,
                    count: 0,
                });
                (nodes.len() - 1) as u32
            });
        }
        let n = &mut nodes[at as usize];
        n.hit += period;
        n.count += count;
    }

    /// Each entry's tree, its frames named by `name(key)` and siblings ordered by
    /// `keys[key]` as perf's rb-tree orders them.
    pub(crate) fn trees(
        self,
        keys: &[FrameKey],
        name: impl Fn(u32) -> String,
    ) -> FxHashMap<(u32, u32), CallTree> {
        let Forest {
            nodes,
            index,
            roots,
        } = self;
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); nodes.len()];
        for ((parent, _), child) in index {
            children[parent as usize].push(child);
        }
        let rank = |n: u32| keys[nodes[n as usize].key as usize].rank();
        for c in &mut children {
            c.sort_by_key(|&n| std::cmp::Reverse(rank(n)));
        }
        let mut out = FxHashMap::default();
        for (entry, root) in roots {
            let mut tree = CallTree { nodes: Vec::new() };
            tree.nodes.push(CallNode {
                frames: Vec::new(),
                hit: nodes[root as usize].hit,
                count: nodes[root as usize].count,
                children_hit: 0,
                children_count: 0,
                children: Vec::new(),
            });
            let kids = compress_children(&nodes, &children, &name, &mut tree, root);
            let root = &mut tree.nodes[0];
            (root.children_hit, root.children_count) = kids.1;
            root.children = kids.0;
            out.insert(entry, tree);
        }
        out
    }
}

/// The trie's children of `t` made nodes of `tree`: their numbers and the sum of their
/// cumulative period and samples.
fn compress_children(
    nodes: &[TrieNode],
    children: &[Vec<u32>],
    name: &impl Fn(u32) -> String,
    tree: &mut CallTree,
    t: u32,
) -> (Vec<u32>, (u64, u64)) {
    let mut ids = Vec::with_capacity(children[t as usize].len());
    let (mut hit, mut count) = (0, 0);
    for &c in &children[t as usize] {
        let id = compress(nodes, children, name, tree, c);
        let n = tree.node(id);
        hit += n.cumul_hit();
        count += n.cumul_count();
        ids.push(id);
    }
    (ids, (hit, count))
}

/// The node that starts at trie node `t`: frames up to one where chains end or part.
fn compress(
    nodes: &[TrieNode],
    children: &[Vec<u32>],
    name: &impl Fn(u32) -> String,
    tree: &mut CallTree,
    t: u32,
) -> u32 {
    let mut frames = vec![name(nodes[t as usize].key)];
    let mut at = t;
    while let [only] = children[at as usize][..] {
        if nodes[at as usize].hit != 0 {
            break;
        }
        at = only;
        frames.push(name(nodes[at as usize].key));
    }
    let id = tree.nodes.len() as u32;
    tree.nodes.push(CallNode {
        frames,
        hit: nodes[at as usize].hit,
        count: nodes[at as usize].count,
        children_hit: 0,
        children_count: 0,
        children: Vec::new(),
    });
    let (kids, (hit, count)) = compress_children(nodes, children, name, tree, at);
    let n = &mut tree.nodes[id as usize];
    (n.children, n.children_hit, n.children_count) = (kids, hit, count);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(value: u64) -> FrameKey {
        FrameKey {
            dso: 1,
            sym: true,
            value,
        }
    }

    /// Chains a-b-c, a-b and a-d: perf's nodes are [a] with [b] (hit) under it and [c]
    /// under that, and [d]; a run that neither parts nor ends is one node.
    #[test]
    fn runs_are_nodes_split_where_chains_part_or_end() {
        let keys = [key(10), key(20), key(30), key(40), key(50)];
        let mut f = Forest::default();
        f.append(0, 7, [0, 1, 2].into_iter(), 5, 1);
        f.append(0, 7, [0, 1].into_iter(), 3, 2);
        f.append(0, 7, [0, 3].into_iter(), 2, 1);
        f.append(0, 8, [4, 0].into_iter(), 1, 1);
        f.append(0, 9, std::iter::empty(), 1, 1);
        let trees = f.trees(&keys, |k| format!("f{k}"));
        assert_eq!(trees.len(), 2, "an empty chain makes no tree");
        let t = &trees[&(0, 7)];
        let root = t.root();
        assert_eq!((root.children_hit, root.children_count), (10, 4));
        let [a] = root.children[..] else { panic!() };
        let a = t.node(a);
        assert_eq!(a.frames, ["f0"]);
        assert_eq!((a.hit, a.children_hit), (0, 10));
        // Siblings by address, largest first: d (40) before b (20).
        let names: Vec<_> = a.children.iter().map(|&c| &t.node(c).frames).collect();
        assert_eq!(names, [&vec!["f3".to_string()], &vec!["f1".to_string()]]);
        let b = t.node(a.children[1]);
        assert_eq!(
            (b.hit, b.count, b.children_hit, b.cumul_hit()),
            (3, 2, 5, 8)
        );
        assert_eq!(t.node(b.children[0]).frames, ["f2"]);
        let t = &trees[&(0, 8)];
        assert_eq!(t.node(t.root().children[0]).frames, ["f4", "f0"]);
    }
}
