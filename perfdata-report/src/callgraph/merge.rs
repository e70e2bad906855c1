//! perf's `callchain_merge`: where the collapse pass merges hist entries
//! (`hists__collapse_insert_entry`), the call graph of each entry merged away is
//! merged into that of the entry kept, the first in the tree's order.
//!
//! perf appends each sample's chain to the graph of the entry the sample met
//! (`hists__findnew_entry`); two entries the collapse pass finds equal have two graphs,
//! and `merge_chain_branch` walks the second's nodes depth first, a node's own chains
//! before its children, children in their rb-tree's order, and appends each node's
//! path with its period to the first's graph as one chain (`append_chain_children`,
//! the sample count 1 whatever the node's). The first's graph is built before any of
//! that, so a sibling the second brings comes after the first's in the rb-tree where
//! the comparison is not one order (an inlined function among them), and siblings of
//! equal period, which perf prints in the rb-tree's order, come out otherwise than if
//! every chain were appended to one graph in the samples' order.

use std::cmp::Ordering;

use rustc_hash::FxHashMap;

use super::append::Graph;

/// Per entry kept (its root), the roots of the entries merged into it, in the order
/// they are merged: `roots` holds the entries kept ((event, row) -> root), `parts`
/// the others ((event, row, place from 1) -> root).
pub(super) fn merges(
    roots: &FxHashMap<(u32, u32), u32>,
    parts: &FxHashMap<(u32, u32, u32), u32>,
) -> FxHashMap<u32, Vec<u32>> {
    let mut by_entry: FxHashMap<u32, Vec<(u32, u32)>> = FxHashMap::default();
    for (&(event, row, part), &root) in parts {
        if let Some(&first) = roots.get(&(event, row)) {
            by_entry.entry(first).or_default().push((part, root));
        }
    }
    by_entry
        .into_iter()
        .map(|(first, mut list)| {
            list.sort_unstable();
            (first, list.into_iter().map(|(_, r)| r).collect())
        })
        .collect()
}

/// The graphs (by root) with each entry's merged ones (`merges`) merged into it in
/// order, and gone.
pub(super) fn merge_parts<C>(
    mut graphs: FxHashMap<u32, Graph<C>>,
    merges: &FxHashMap<u32, Vec<u32>>,
) -> FxHashMap<u32, Graph<C>>
where
    C: FnMut(u32, u32) -> Ordering,
{
    for (first, parts) in merges {
        let Some(mut into) = graphs.remove(first) else {
            continue;
        };
        for part in parts {
            if let Some(src) = graphs.remove(part) {
                into.merge(&src);
            }
        }
        graphs.insert(*first, into);
    }
    graphs
}

impl<C: FnMut(u32, u32) -> Ordering> Graph<C> {
    /// perf's `callchain_merge(dst: self, src)`: each node of `src` whose own chains
    /// have a period (`hit`), depth first, children in their rb-tree's order, its path
    /// from the root appended with that period as one sample.
    pub(crate) fn merge<D>(&mut self, src: &Graph<D>)
    where
        D: FnMut(u32, u32) -> Ordering,
    {
        // An explicit stack (node, length of its parent's path): a path of thousands
        // of nodes would overflow perf's recursion here.
        let (mut path, mut kids) = (Vec::new(), Vec::new());
        let mut stack = vec![(src.root(), 0usize)];
        while let Some((n, len)) = stack.pop() {
            path.truncate(len);
            path.extend_from_slice(src.frames(n));
            let (hit, _) = src.hit(n);
            if hit > 0 {
                self.append(&path, hit, 1);
            }
            kids.clear();
            src.children(n, &mut kids);
            stack.extend(kids.iter().rev().map(|&k| (k, path.len())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames as (name, address, inlined): perf's match_chain of two, an inlined
    /// function compared by name, others by address. `m` (inlined) is before `z` by
    /// name and after `a` and `y`; `z` (0x100) is after `y` (0x200) and `a` (0x300)
    /// by address (perf puts the higher address first): not one order.
    const FRAMES: [(&str, u64, bool); 6] = [
        ("root", 0x10, false),
        ("m", 0, true),
        ("z", 0x100, false),
        ("a", 0x300, false),
        ("leaf", 0x500, false),
        ("y", 0x200, false),
    ];

    fn cmp(a: u32, b: u32) -> Ordering {
        let (x, y) = (FRAMES[a as usize], FRAMES[b as usize]);
        if x.2 || y.2 {
            x.0.cmp(y.0)
        } else {
            x.1.cmp(&y.1)
        }
    }

    /// The children of the root's child, in their rb-tree's order.
    fn siblings<C: FnMut(u32, u32) -> Ordering>(g: &Graph<C>) -> Vec<u32> {
        let mut top = Vec::new();
        g.children(g.root(), &mut top);
        let mut kids = Vec::new();
        g.children(top[0], &mut kids);
        kids.iter().map(|&k| g.frames(k)[0]).collect()
    }

    /// `m` in the first entry's graph; `z`, `a` and `y` in the second's, whose rb-tree
    /// has them in the order of their addresses (a, y, z). Merged in that order: `a`
    /// right of `m` (by name), `y` left of it, `z` left of `m` and right of `y` (by
    /// address): y, z, m, a. Merged from the last child (z, y, a) or appended to one
    /// graph as the samples came (z, a, y, then the first entry's m): a, y, z, m.
    #[test]
    fn the_merged_graphs_siblings_follow_the_merge() {
        let mut first = Graph::new(cmp);
        first.append(&[0, 1], 2, 2);
        let mut second = Graph::new(cmp);
        for k in [2, 3, 5] {
            second.append(&[0, k], 2, 2);
        }
        assert_eq!(siblings(&second), [3, 5, 2]);
        first.merge(&second);
        assert_eq!(siblings(&first), [5, 2, 1, 3]);
        let mut one = Graph::new(cmp);
        for k in [2, 3, 5, 1] {
            one.append(&[0, k], 2, 2);
        }
        assert_eq!(siblings(&one), [3, 5, 2, 1]);
    }

    /// A merged node counts one sample whatever its own (perf's `count++`), its
    /// period whole; a node of no period of its own (a fork) adds none.
    #[test]
    fn merged_nodes_add_their_period_as_one_sample() {
        let mut first = Graph::new(cmp);
        first.append(&[0, 2], 3, 3);
        let mut second = Graph::new(cmp);
        second.append(&[0, 2], 5, 5);
        second.append(&[0, 2, 4], 7, 7);
        second.append(&[0, 3, 4], 1, 1);
        first.merge(&second);
        assert_eq!(
            first.lines(),
            [
                (0, vec![], 0, 0),
                (1, vec![0], 0, 0),
                (2, vec![3, 4], 1, 1),
                (2, vec![2], 8, 4),
                (3, vec![4], 7, 1),
            ]
        );
    }
}
