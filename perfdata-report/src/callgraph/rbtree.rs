//! The order a red-black tree (the kernel's lib/rbtree.c, which perf copies) leaves
//! items in when they are inserted one after another.
//!
//! perf keeps a call graph node's children in such a tree (`rb_root_in`) and walks it
//! in order when it sorts them by period, so siblings of equal period are printed in
//! the tree's order. Its comparison (`match_chain`) is not one order: inlined
//! functions are compared by name, other functions by DSO and address, so where both
//! kinds meet, where a new child lands depends on the path from the root, that is on
//! the tree's shape after every rebalancing. The same insertions into the same tree
//! give the same shape; this is that tree.

/// No node.
pub(crate) const NIL: u32 = u32::MAX;

/// The links of red-black trees of item numbers, as lib/rbtree.c balances them: each
/// item's parent, left (0) and right (1) child, and colour. The links of several trees
/// can share one `Links` (perf's call graph nodes, each in its parent's tree of
/// children); each tree's root is kept by its owner. Each fix-up case and its mirror
/// image are one code path, by side.
#[derive(Debug, Default)]
pub(crate) struct Links {
    parent: Vec<u32>,
    child: Vec<[u32; 2]>,
    red: Vec<bool>,
}

impl Links {
    /// Room for item `z` (and those before it), not yet in any tree.
    pub(crate) fn reserve(&mut self, z: u32) {
        let n = z as usize + 1;
        if self.parent.len() < n {
            self.parent.resize(n, NIL);
            self.child.resize(n, [NIL; 2]);
            self.red.resize(n, true);
        }
    }

    /// Item `at`'s child on `side` (0 left, 1 right), [`NIL`] for none.
    pub(crate) fn child(&self, at: u32, side: usize) -> u32 {
        self.child[at as usize][side]
    }

    /// perf's `rb_link_node` and `rb_insert_color`: item `z` put on `side` of `parent`
    /// ([`NIL`]: as the root) of the tree rooted at `root`, and the tree rebalanced.
    pub(crate) fn insert(&mut self, root: &mut u32, z: u32, parent: u32, side: usize) {
        self.reserve(z);
        let zi = z as usize;
        self.parent[zi] = parent;
        self.child[zi] = [NIL; 2];
        self.red[zi] = true;
        if parent == NIL {
            *root = z;
        } else {
            self.child[parent as usize][side] = z;
        }
        self.insert_color(root, zi);
    }

    /// The items of the tree rooted at `root` in order (perf's `rb_first`, `rb_next`),
    /// appended to `out`.
    pub(crate) fn in_order(&self, root: u32, out: &mut Vec<u32>) {
        // Down the left spine, then each node's right, without recursion.
        let mut stack = Vec::new();
        let mut at = root;
        while at != NIL || !stack.is_empty() {
            while at != NIL {
                stack.push(at);
                at = self.child[at as usize][0];
            }
            let x = stack.pop().expect("a node was pushed");
            out.push(x);
            at = self.child[x as usize][1];
        }
    }

    /// Rotate at `x` towards side `d`: its child on the other side takes its place
    /// (d = 0: a left rotation).
    fn rotate(&mut self, root: &mut u32, x: usize, d: usize) {
        let y = self.child[x][1 - d] as usize;
        let inner = self.child[y][d];
        self.child[x][1 - d] = inner;
        if inner != NIL {
            self.parent[inner as usize] = x as u32;
        }
        let p = self.parent[x];
        self.parent[y] = p;
        if p == NIL {
            *root = y as u32;
        } else {
            let side = usize::from(self.child[p as usize][1] == x as u32);
            self.child[p as usize][side] = y as u32;
        }
        self.child[y][d] = x as u32;
        self.parent[x] = y as u32;
    }

    /// The kernel's `__rb_insert`: recolour while the uncle is red (case 1), else
    /// rotate at the parent if the node is an inner child (case 2) and at the
    /// grandparent (case 3): the textbook fix-up, which makes the same shape.
    fn insert_color(&mut self, root: &mut u32, mut z: usize) {
        while self.parent[z] != NIL && self.red[self.parent[z] as usize] {
            let p = self.parent[z] as usize;
            // A red parent is not the root: the grandparent exists.
            let g = self.parent[p] as usize;
            let d = usize::from(self.child[g][1] == p as u32);
            let u = self.child[g][1 - d];
            if u != NIL && self.red[u as usize] {
                self.red[p] = false;
                self.red[u as usize] = false;
                self.red[g] = true;
                z = g;
                continue;
            }
            if self.child[p][1 - d] == z as u32 {
                z = p;
                self.rotate(root, z, d);
            }
            let p = self.parent[z] as usize;
            self.red[p] = false;
            self.red[g] = true;
            self.rotate(root, g, 1 - d);
        }
        let r = *root as usize;
        self.red[r] = false;
    }
}

/// One red-black tree of item numbers.
struct Tree {
    root: u32,
    links: Links,
}

/// `items` inserted in their order into a red-black tree, each new item going left of
/// a node where `goes_left(node's item, new item)` and right otherwise, read back in
/// order (perf's `rb_first`, `rb_next`).
pub(crate) fn insertion_order<T: Copy>(items: &[T], goes_left: impl FnMut(T, T) -> bool) -> Vec<T> {
    let t = Tree::of(items, goes_left);
    let mut order = Vec::with_capacity(items.len());
    t.links.in_order(t.root, &mut order);
    order.into_iter().map(|x| items[x as usize]).collect()
}

impl Tree {
    /// `items` inserted in their order, as [`insertion_order`] says.
    fn of<T: Copy>(items: &[T], mut goes_left: impl FnMut(T, T) -> bool) -> Tree {
        let mut t = Tree {
            root: NIL,
            links: Links::default(),
        };
        if let Some(last) = items.len().checked_sub(1) {
            t.links.reserve(last as u32);
        }
        for (z, &item) in items.iter().enumerate() {
            let (mut at, mut parent, mut side) = (t.root, NIL, 0);
            while at != NIL {
                parent = at;
                side = usize::from(!goes_left(items[at as usize], item));
                at = t.links.child(at, side);
            }
            t.links.insert(&mut t.root, z as u32, parent, side);
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With one consistent order the tree sorts, whatever the insertion order and
    /// however many rotations it took; equal items keep their insertion order when
    /// they go right.
    #[test]
    fn a_consistent_order_sorts_stably() {
        let items: Vec<(u32, u32)> = (0..200u32).map(|i| ((i * 37) % 23, i)).collect();
        let out = insertion_order(&items, |node, new| new.0 < node.0);
        let mut want = items.clone();
        want.sort_by_key(|&(k, _)| k);
        assert_eq!(out, want);
    }

    /// The red-black rules hold after every insertion of 500 items in a scrambled
    /// order: the root black, no red node with a red child, one black height, and
    /// every child's parent link right.
    #[test]
    fn the_tree_stays_balanced() {
        fn black_height(t: &Links, n: u32) -> usize {
            if n == NIL {
                return 1;
            }
            let [l, r] = t.child[n as usize];
            for c in [l, r] {
                if c != NIL {
                    assert_eq!(t.parent[c as usize], n);
                    assert!(!(t.red[n as usize] && t.red[c as usize]), "red under red");
                }
            }
            let (hl, hr) = (black_height(t, l), black_height(t, r));
            assert_eq!(hl, hr, "black heights");
            hl + usize::from(!t.red[n as usize])
        }
        let items: Vec<u32> = (0..500u32).map(|i| (i * 7919) % 500).collect();
        for k in 1..=items.len() {
            let t = Tree::of(&items[..k], |node, new| new < node);
            assert!(!t.links.red[t.root as usize]);
            let h = black_height(&t.links, t.root);
            // A red-black tree of k nodes is at most 2 log2(k + 1) deep.
            assert!(h <= 2 + (k as f64 + 1.0).log2() as usize, "{k}: {h}");
        }
    }

    /// Where the comparison is not one order the answer depends on the shape. 1, 2, 3
    /// inserted by "less goes left" rotate once: 2 is the root, 1 and 3 its children.
    /// A 4 that goes left of 1 only is compared with 2 and 3 and lands after 3; in an
    /// unbalanced tree (rooted at 1) it would go first.
    #[test]
    fn an_inconsistent_comparison_follows_the_balanced_shape() {
        let goes_left = |node: u32, new: u32| match (node, new) {
            (1, 4) => true,
            (_, 4) => false,
            _ => new < node,
        };
        assert_eq!(insertion_order(&[1, 2, 3, 4], goes_left), [1, 2, 3, 4]);
    }

    /// 1..=7 in order, worked by hand through lib/rbtree.c's cases: 4 recolours 1 and
    /// 3 (case 1), 5 rotates at 3 (case 3), 6 recolours 3 and 5, 7 rotates at 5: the
    /// root 2, 1 left, 4 right with 3 and 6 (5, 7) below. An item that goes left of 1
    /// and of 4 only walks 2, 4, 3 and lands between 3 and 4.
    #[test]
    fn the_shape_after_recolouring_and_rotations() {
        let goes_left = |node: u32, new: u32| {
            if new == 100 {
                node == 1 || node == 4
            } else {
                new < node
            }
        };
        let out = insertion_order(&[1, 2, 3, 4, 5, 6, 7, 100], goes_left);
        assert_eq!(out, [1, 2, 3, 100, 4, 5, 6, 7]);
    }
}
