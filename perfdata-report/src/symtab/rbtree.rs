//! perf's tree of symbols: the Linux red-black tree (`tools/lib/rbtree.c`) that
//! `__symbols__insert` adds to and `symbols__fixup_duplicate` erases from, step for step.
//!
//! Its shape is part of perf's output: `symbols__find` walks down from the root and
//! returns the first symbol on its path that contains the address, so where symbols
//! overlap (a sized function with a label inside it, the label extended to the next
//! symbol by `symbols__fixup_end`) which one names the address depends on where the
//! rotations of every insertion and erasure before left each node. A balanced tree of
//! the same symbols, or a binary search, answers otherwise.

/// No node.
pub(super) const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    left: u32,
    right: u32,
    red: bool,
}

/// Nodes named by the order they were inserted in (0, 1, ...), each keyed by whatever
/// the caller's comparison says; erased nodes stay numbered but unlinked.
#[derive(Debug, Clone)]
pub(super) struct RbTree {
    nodes: Vec<Node>,
    root: u32,
}

/// An empty tree (its root [`NIL`], not node 0).
impl Default for RbTree {
    fn default() -> RbTree {
        RbTree {
            nodes: Vec::new(),
            root: NIL,
        }
    }
}

impl RbTree {
    /// The root, or [`NIL`].
    pub fn root(&self) -> u32 {
        self.root
    }

    /// A node's children.
    pub fn children(&self, n: u32) -> (u32, u32) {
        let node = &self.nodes[n as usize];
        (node.left, node.right)
    }

    /// `__symbols__insert`: node number `len()` goes down from the root, left where
    /// `goes_left(other)` (its key is below `other`'s), else right (so equal keys go
    /// after), is linked there red, and the tree rebalanced (`rb_insert_color`).
    /// Returns its number.
    pub fn insert(&mut self, goes_left: impl Fn(u32) -> bool) -> u32 {
        let id = u32::try_from(self.nodes.len()).expect("fewer than 2^32 symbols");
        let mut parent = NIL;
        let mut left = false;
        let mut at = self.root;
        while at != NIL {
            parent = at;
            left = goes_left(at);
            at = if left {
                self.nodes[at as usize].left
            } else {
                self.nodes[at as usize].right
            };
        }
        self.nodes.push(Node {
            parent,
            left: NIL,
            right: NIL,
            red: true,
        });
        if parent == NIL {
            self.root = id;
        } else if left {
            self.n(parent).left = id;
        } else {
            self.n(parent).right = id;
        }
        self.insert_color(id);
        id
    }

    /// The first node in order, or [`NIL`] (`rb_first`).
    pub fn first(&self) -> u32 {
        let mut n = self.root;
        if n == NIL {
            return NIL;
        }
        while self.l(n) != NIL {
            n = self.l(n);
        }
        n
    }

    /// The node after `n` in order, or [`NIL`] (`rb_next`).
    pub fn next(&self, mut n: u32) -> u32 {
        if self.r(n) != NIL {
            n = self.r(n);
            while self.l(n) != NIL {
                n = self.l(n);
            }
            return n;
        }
        loop {
            let parent = self.p(n);
            if parent == NIL || n != self.r(parent) {
                return parent;
            }
            n = parent;
        }
    }

    fn n(&mut self, n: u32) -> &mut Node {
        &mut self.nodes[n as usize]
    }
    fn l(&self, n: u32) -> u32 {
        self.nodes[n as usize].left
    }
    fn r(&self, n: u32) -> u32 {
        self.nodes[n as usize].right
    }
    fn p(&self, n: u32) -> u32 {
        self.nodes[n as usize].parent
    }
    fn is_red(&self, n: u32) -> bool {
        n != NIL && self.nodes[n as usize].red
    }
    fn set_parent_color(&mut self, n: u32, parent: u32, red: bool) {
        let node = self.n(n);
        node.parent = parent;
        node.red = red;
    }

    /// `__rb_change_child`.
    fn change_child(&mut self, old: u32, new: u32, parent: u32) {
        if parent == NIL {
            self.root = new;
        } else if self.l(parent) == old {
            self.n(parent).left = new;
        } else {
            self.n(parent).right = new;
        }
    }

    /// `__rb_rotate_set_parents`: `new` takes `old`'s place and colour, `old` becomes
    /// its child of colour `red`.
    fn rotate_set_parents(&mut self, old: u32, new: u32, red: bool) {
        let parent = self.p(old);
        let old_red = self.nodes[old as usize].red;
        self.set_parent_color(new, parent, old_red);
        self.set_parent_color(old, new, red);
        self.change_child(old, new, parent);
    }

    /// `__rb_insert`.
    fn insert_color(&mut self, mut node: u32) {
        let mut parent = self.p(node);
        loop {
            if parent == NIL {
                self.set_parent_color(node, NIL, false);
                break;
            }
            if !self.is_red(parent) {
                break;
            }
            let gparent = self.p(parent);
            let mut tmp = self.r(gparent);
            if parent != tmp {
                // parent is gparent's left child.
                if self.is_red(tmp) {
                    self.set_parent_color(tmp, gparent, false);
                    self.set_parent_color(parent, gparent, false);
                    node = gparent;
                    parent = self.p(node);
                    self.set_parent_color(node, parent, true);
                    continue;
                }
                tmp = self.r(parent);
                if node == tmp {
                    tmp = self.l(node);
                    self.n(parent).right = tmp;
                    self.n(node).left = parent;
                    if tmp != NIL {
                        self.set_parent_color(tmp, parent, false);
                    }
                    self.set_parent_color(parent, node, true);
                    parent = node;
                    tmp = self.r(node);
                }
                self.n(gparent).left = tmp;
                self.n(parent).right = gparent;
                if tmp != NIL {
                    self.set_parent_color(tmp, gparent, false);
                }
                self.rotate_set_parents(gparent, parent, true);
                break;
            } else {
                tmp = self.l(gparent);
                if self.is_red(tmp) {
                    self.set_parent_color(tmp, gparent, false);
                    self.set_parent_color(parent, gparent, false);
                    node = gparent;
                    parent = self.p(node);
                    self.set_parent_color(node, parent, true);
                    continue;
                }
                tmp = self.l(parent);
                if node == tmp {
                    tmp = self.r(node);
                    self.n(parent).left = tmp;
                    self.n(node).right = parent;
                    if tmp != NIL {
                        self.set_parent_color(tmp, parent, false);
                    }
                    self.set_parent_color(parent, node, true);
                    parent = node;
                    tmp = self.l(node);
                }
                self.n(gparent).right = tmp;
                self.n(parent).left = gparent;
                if tmp != NIL {
                    self.set_parent_color(tmp, gparent, false);
                }
                self.rotate_set_parents(gparent, parent, true);
                break;
            }
        }
    }

    /// `rb_erase`: unlink `node` (`__rb_erase_augmented`) and rebalance
    /// (`____rb_erase_color`).
    pub fn erase(&mut self, node: u32) {
        let child = self.r(node);
        let mut tmp = self.l(node);
        let (pc_parent, pc_red) = (self.p(node), self.nodes[node as usize].red);
        let rebalance;
        if tmp == NIL {
            self.change_child(node, child, pc_parent);
            if child != NIL {
                self.set_parent_color(child, pc_parent, pc_red);
                rebalance = NIL;
            } else {
                rebalance = if pc_red { NIL } else { pc_parent };
            }
        } else if child == NIL {
            self.set_parent_color(tmp, pc_parent, pc_red);
            self.change_child(node, tmp, pc_parent);
            rebalance = NIL;
        } else {
            let mut successor = child;
            let mut parent;
            let child2;
            tmp = self.l(child);
            if tmp == NIL {
                // The successor is the right child.
                parent = successor;
                child2 = self.r(successor);
            } else {
                // The successor is leftmost under the right child.
                loop {
                    parent = successor;
                    successor = tmp;
                    tmp = self.l(tmp);
                    if tmp == NIL {
                        break;
                    }
                }
                child2 = self.r(successor);
                self.n(parent).left = child2;
                self.n(successor).right = child;
                self.n(child).parent = successor;
            }
            tmp = self.l(node);
            self.n(successor).left = tmp;
            self.n(tmp).parent = successor;
            self.change_child(node, successor, pc_parent);
            if child2 != NIL {
                self.set_parent_color(child2, parent, false);
                rebalance = NIL;
            } else {
                rebalance = if self.nodes[successor as usize].red {
                    NIL
                } else {
                    parent
                };
            }
            self.set_parent_color(successor, pc_parent, pc_red);
        }
        let erased = self.n(node);
        (erased.parent, erased.left, erased.right) = (NIL, NIL, NIL);
        if rebalance != NIL {
            self.erase_color(rebalance);
        }
    }

    /// `____rb_erase_color`.
    fn erase_color(&mut self, mut parent: u32) {
        let mut node = NIL;
        loop {
            let mut sibling = self.r(parent);
            if node != sibling {
                // node is parent's left child.
                if self.is_red(sibling) {
                    let tmp1 = self.l(sibling);
                    self.n(parent).right = tmp1;
                    self.n(sibling).left = parent;
                    self.set_parent_color(tmp1, parent, false);
                    self.rotate_set_parents(parent, sibling, true);
                    sibling = tmp1;
                }
                let mut tmp1 = self.r(sibling);
                if !self.is_red(tmp1) {
                    let tmp2 = self.l(sibling);
                    if !self.is_red(tmp2) {
                        self.set_parent_color(sibling, parent, true);
                        if self.is_red(parent) {
                            self.n(parent).red = false;
                        } else {
                            node = parent;
                            parent = self.p(node);
                            if parent != NIL {
                                continue;
                            }
                        }
                        break;
                    }
                    tmp1 = self.r(tmp2);
                    self.n(sibling).left = tmp1;
                    self.n(tmp2).right = sibling;
                    self.n(parent).right = tmp2;
                    if tmp1 != NIL {
                        self.set_parent_color(tmp1, sibling, false);
                    }
                    tmp1 = sibling;
                    sibling = tmp2;
                }
                let tmp2 = self.l(sibling);
                self.n(parent).right = tmp2;
                self.n(sibling).left = parent;
                self.set_parent_color(tmp1, sibling, false);
                if tmp2 != NIL {
                    self.n(tmp2).parent = parent;
                }
                self.rotate_set_parents(parent, sibling, false);
                break;
            } else {
                sibling = self.l(parent);
                if self.is_red(sibling) {
                    let tmp1 = self.r(sibling);
                    self.n(parent).left = tmp1;
                    self.n(sibling).right = parent;
                    self.set_parent_color(tmp1, parent, false);
                    self.rotate_set_parents(parent, sibling, true);
                    sibling = tmp1;
                }
                let mut tmp1 = self.l(sibling);
                if !self.is_red(tmp1) {
                    let tmp2 = self.r(sibling);
                    if !self.is_red(tmp2) {
                        self.set_parent_color(sibling, parent, true);
                        if self.is_red(parent) {
                            self.n(parent).red = false;
                        } else {
                            node = parent;
                            parent = self.p(node);
                            if parent != NIL {
                                continue;
                            }
                        }
                        break;
                    }
                    tmp1 = self.l(tmp2);
                    self.n(sibling).right = tmp1;
                    self.n(tmp2).left = sibling;
                    self.n(parent).left = tmp2;
                    if tmp1 != NIL {
                        self.set_parent_color(tmp1, sibling, false);
                    }
                    tmp1 = sibling;
                    sibling = tmp2;
                }
                let tmp2 = self.r(sibling);
                self.n(parent).left = tmp2;
                self.n(sibling).right = parent;
                self.set_parent_color(tmp1, sibling, false);
                if tmp2 != NIL {
                    self.n(tmp2).parent = parent;
                }
                self.rotate_set_parents(parent, sibling, false);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Black height of the subtree at `n`, checking the red-black rules on the way.
    fn black_height(t: &RbTree, n: u32) -> usize {
        if n == NIL {
            return 1;
        }
        let (l, r) = t.children(n);
        for c in [l, r] {
            if c != NIL {
                assert_eq!(t.p(c), n, "parent pointer");
                assert!(!(t.is_red(n) && t.is_red(c)), "red node with a red child");
            }
        }
        let (hl, hr) = (black_height(t, l), black_height(t, r));
        assert_eq!(hl, hr, "black heights");
        hl + usize::from(!t.is_red(n))
    }

    /// Shape as `(key(left) key right)` text.
    fn shape(t: &RbTree, keys: &[u64], n: u32) -> String {
        if n == NIL {
            return ".".into();
        }
        let (l, r) = t.children(n);
        format!(
            "({} {} {})",
            shape(t, keys, l),
            keys[n as usize],
            shape(t, keys, r)
        )
    }

    fn insert(t: &mut RbTree, keys: &mut Vec<u64>, k: u64) -> u32 {
        keys.push(k);
        let snapshot = keys.clone();
        t.insert(|o| k < snapshot[o as usize])
    }

    /// Ascending inserts rotate and recolour as the kernel's do: 1, 2, 3 rotate to 2
    /// over 1 and 3; 4 recolours; 5 rotates 4 over 3 and 5; 6 recolours (4 red); 7
    /// rotates 6 over 5 and 7. The root stays 2, not the 4 of a perfect tree.
    #[test]
    fn ascending_inserts_balance_as_the_kernel_does() {
        let (mut t, mut keys) = (RbTree::default(), Vec::new());
        for k in 1..=7 {
            insert(&mut t, &mut keys, k);
        }
        assert_eq!(
            shape(&t, &keys, t.root()),
            "((. 1 .) 2 ((. 3 .) 4 ((. 5 .) 6 (. 7 .))))"
        );
        black_height(&t, t.root());
    }

    /// Equal keys go right, so in order they come in insertion order; erasing keeps
    /// the rules and the order of what is left.
    #[test]
    fn equal_keys_keep_insertion_order_and_erase_rebalances() {
        let (mut t, mut keys) = (RbTree::default(), Vec::new());
        let mut ids = Vec::new();
        for i in 0..200u64 {
            ids.push(insert(&mut t, &mut keys, (i * 37) % 50));
        }
        black_height(&t, t.root());
        for &id in ids.iter().step_by(3) {
            t.erase(id);
            black_height(&t, t.root());
        }
        let mut order = Vec::new();
        let mut n = t.first();
        while n != NIL {
            order.push((keys[n as usize], n));
            n = t.next(n);
        }
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(order, sorted);
        assert_eq!(order.len(), 200 - 200_usize.div_ceil(3));
    }
}
