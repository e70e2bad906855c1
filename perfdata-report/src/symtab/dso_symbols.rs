//! perf's `dso->symbols` as a DSO's symbols are loaded: inserted into its rb-tree in
//! perf's order, ends and duplicates fixed as perf fixes them, and the table made of
//! what is left, with the tree's shape where lookups need it.

use super::rbtree::{RbTree, NIL};
use super::{better, raw_name, Binding, Gathered, SymbolTable};

/// perf's symbols of one DSO while it loads them (`dso->symbols`): `syms.entries[i]` is
/// tree node `i`.
#[derive(Default)]
pub(super) struct DsoSymbols {
    tree: RbTree,
    syms: Gathered,
    /// How many were erased as duplicates (their names left in the text until the
    /// table is made).
    erased: usize,
}

impl DsoSymbols {
    /// Whether none was inserted.
    pub fn is_empty(&self) -> bool {
        self.syms.entries.is_empty()
    }

    /// `symbols__insert` of a symbol named `parts` one after the other.
    pub fn insert(
        &mut self,
        start: u64,
        end: u64,
        parts: &[&str],
        mangled: bool,
        binding: Binding,
    ) {
        let entries = &self.syms.entries;
        self.tree
            .insert(|other| start < entries[other as usize].start);
        self.syms.push(start, end, parts, mangled, binding);
    }

    /// The nodes in order.
    fn in_order(&self) -> Vec<u32> {
        let mut order = Vec::with_capacity(self.syms.entries.len() - self.erased);
        let mut n = self.tree.first();
        while n != NIL {
            order.push(n);
            n = self.tree.next(n);
        }
        order
    }

    /// `symbols__fixup_end` (not kallsyms): a symbol of size 0 reaches the next one in
    /// the tree (itself, when that starts at the same place); the last one reaches the
    /// page after its own.
    pub fn fixup_end(&mut self) {
        let order = self.in_order();
        let entries = &mut self.syms.entries;
        for pair in order.windows(2) {
            let next = entries[pair[1] as usize].start;
            let prev = &mut entries[pair[0] as usize];
            if prev.end == prev.start {
                prev.end = next;
            }
        }
        if let Some(&last) = order.last() {
            let last = &mut entries[last as usize];
            if last.end == last.start {
                last.end = super::round_up_page(last.start).wrapping_add(4096);
            }
        }
    }

    /// `symbols__fixup_duplicate`: of symbols at one start the best stays
    /// (`choose_best_symbol`), the others are erased from the tree.
    pub fn fixup_duplicate(&mut self) {
        let Gathered { entries, text } = &self.syms;
        let mut curr = self.tree.first();
        while curr != NIL {
            let next = self.tree.next(curr);
            if next == NIL {
                break;
            }
            let (a, b) = (&entries[curr as usize], &entries[next as usize]);
            if a.start != b.start {
                curr = next;
            } else if better(b, a, text) {
                self.tree.erase(curr);
                self.erased += 1;
                curr = next;
            } else {
                // Compared again with the one after.
                self.tree.erase(next);
                self.erased += 1;
            }
        }
    }

    /// The table: symbols in order, and the tree where a binary search could answer
    /// otherwise than perf's walk (symbols overlap, share a start, or are empty).
    pub fn table(self) -> Option<SymbolTable> {
        let order = self.in_order();
        if order.is_empty() {
            return None;
        }
        let mut index = vec![NIL; self.syms.entries.len()];
        for (i, &n) in order.iter().enumerate() {
            index[n as usize] = i as u32;
        }
        let at = |n: u32| if n == NIL { NIL } else { index[n as usize] };
        let children: Box<[(u32, u32)]> = order
            .iter()
            .map(|&n| {
                let (l, r) = self.tree.children(n);
                (at(l), at(r))
            })
            .collect();
        let root = at(self.tree.root());
        let mut kept = Gathered {
            entries: order
                .iter()
                .map(|&n| self.syms.entries[n as usize])
                .collect(),
            text: String::new(),
        };
        if self.erased > 0 {
            // The names of those kept alone: a library's .dynsym names are mostly its
            // .symtab's again.
            let text = &self.syms.text;
            kept.text
                .reserve(kept.entries.iter().map(|e| e.len as usize).sum());
            for e in &mut kept.entries {
                let name = raw_name(text, e);
                e.name = kept.text.len();
                kept.text.push_str(name);
            }
        } else {
            kept.text = self.syms.text;
        }
        // A size-0 symbol (of a perf map: perf fixes no ends there) holds its start
        // alone, and one of several at one start is as the walk finds it.
        let entries = &kept.entries;
        let needs_tree = entries.iter().any(|s| s.end == s.start)
            || entries
                .windows(2)
                .any(|w| w[0].end > w[1].start || w[0].start == w[1].start);
        let mut table = SymbolTable::of(kept);
        if needs_tree {
            table.tree = Some(super::Tree { root, children });
        }
        Some(table)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A symbol to insert: start, end, name, binding.
    type Sym = (u64, u64, &'static str, Binding);

    fn sym(start: u64, size: u64, name: &'static str, binding: Binding) -> Sym {
        (start, start + size, name, binding)
    }

    /// `syms` inserted in this order, as one pass of `dso__load_sym`, and fixed up.
    fn loaded(syms: Vec<Sym>) -> SymbolTable {
        let mut loader = DsoSymbols::default();
        for (start, end, name, binding) in syms {
            loader.insert(start, end, &[name], false, binding);
        }
        loader.fixup_end();
        loader.fixup_duplicate();
        loader.table().expect("symbols")
    }

    fn name(t: &SymbolTable, addr: u64) -> Option<&str> {
        t.find(addr).map(|s| s.name())
    }

    /// A function [0x100, 0x140) with a label at 0x110 that fixup_end extends to the
    /// next symbol, 0x200: between 0x110 and 0x140 both hold the address, and perf's
    /// walk names it after whichever is higher in its tree. Three ascending inserts
    /// rotate the middle one to the root: with `before` first the function is the
    /// root, without it the label is.
    #[test]
    fn a_label_inside_a_function_is_named_by_the_trees_shape() {
        let before = || sym(0x0, 0x10, "before", Binding::Global);
        let function = || sym(0x100, 0x40, "function", Binding::Global);
        let label = || sym(0x110, 0, "label", Binding::Local);
        let next = |size| sym(0x200, size, "next", Binding::Global);
        let t = loaded(vec![before(), function(), label(), next(0x10)]);
        assert_eq!(name(&t, 0x100), Some("function"));
        assert_eq!(name(&t, 0x120), Some("function"));
        assert_eq!(name(&t, 0x13f), Some("function"));
        assert_eq!(name(&t, 0x140), Some("label"));
        assert_eq!(name(&t, 0x1ff), Some("label"));
        assert_eq!(name(&t, 0x200), Some("next"));
        assert_eq!(name(&t, 0x210), None);
        assert_eq!(name(&t, 0xff), None);
        let t = loaded(vec![function(), label(), next(0)]);
        assert_eq!(name(&t, 0x10f), Some("function"));
        assert_eq!(name(&t, 0x110), Some("label"));
        assert_eq!(name(&t, 0x120), Some("label"));
        assert_eq!(name(&t, 0x13f), Some("label"));
        // The last symbol, of size 0, reaches the page after its start's: 0x2000.
        assert_eq!(name(&t, 0x1fff), Some("next"));
        assert_eq!(name(&t, 0x2000), None);
    }

    /// A span found by perf's walk: every address in it is named as the walk names
    /// the one asked for, where a label lies inside a function (a binary search's span
    /// of the label, 0x110..0x200, would hold 0x120, which the walk names `function`).
    #[test]
    fn a_span_follows_the_walk() {
        let t = loaded(vec![
            sym(0x0, 0x10, "before", Binding::Global),
            sym(0x100, 0x40, "function", Binding::Global),
            sym(0x110, 0, "label", Binding::Local),
            sym(0x200, 0x10, "next", Binding::Global),
        ]);
        let span = |a| {
            let (found, span) = t.find_span(a);
            (found.map(|s| s.name()), span)
        };
        assert_eq!(span(0x120), (Some("function"), 0x100..0x140));
        assert_eq!(span(0x140), (Some("label"), 0x140..0x200));
        assert_eq!(span(0x50), (None, 0x10..0x100));
        assert_eq!(span(0x205), (Some("next"), 0x200..0x210));
        assert_eq!(span(0x300), (None, 0x210..u64::MAX));
        // A perf map's: a size-0 entry, two at one start, one inside another.
        let map = SymbolTable::from_perf_map(
            "1000 100 a\n1040 0 empty\n1080 100 b\n1080 40 b2\n1100 20 inner\n2000 10 c\n",
        )
        .unwrap();
        const TOP: u64 = 0x2100;
        for t in [&t, &map] {
            // Each address's answer, and the run of addresses with the same one.
            let named: Vec<_> = (0..TOP).map(|a| t.find(a).map(|s| s.name())).collect();
            let mut run_start = vec![0; named.len()];
            for a in 1..named.len() {
                run_start[a] = if named[a] == named[a - 1] {
                    run_start[a - 1]
                } else {
                    a
                };
            }
            let mut run_end = vec![named.len(); named.len()];
            for a in (0..named.len() - 1).rev() {
                run_end[a] = if named[a] == named[a + 1] {
                    run_end[a + 1]
                } else {
                    a + 1
                };
            }
            for a in 0..TOP {
                let (found, s) = t.find_span(a);
                let i = a as usize;
                assert!(s.contains(&a), "{a:x} {s:x?}");
                assert_eq!(found.map(|s| s.name()), named[i], "{a:x}");
                assert!(s.start >= run_start[i] as u64, "{a:x} {s:x?}");
                assert!(s.end.min(TOP) <= run_end[i] as u64, "{a:x} {s:x?}");
            }
        }
    }

    /// Symbols at one address: a sized one over a size-0 one inserted before it (which
    /// ends at the sized one's start, so stays empty), then non-weak over weak,
    /// global over local, fewer leading underscores, the longer name, the first.
    #[test]
    fn duplicates_keep_perfs_best() {
        // Another symbol after: the last one would get a size (see below).
        let at = |mut syms: Vec<Sym>| {
            syms.push(sym(0x1000, 8, "after", Binding::Global));
            let t = loaded(syms);
            assert_eq!(t.len(), 2);
            name(&t, 0x100).map(str::to_string)
        };
        let s = |size, name, b| sym(0x100, size, name, b);
        use Binding::{Global, Local, Weak};
        assert_eq!(
            at(vec![s(0, "empty", Global), s(8, "sized", Local)]),
            Some("sized".into())
        );
        // Ends are fixed first: a size-0 symbol inserted after a sized one at its
        // address reaches the next address, so is sized too, and wins as global.
        assert_eq!(
            at(vec![s(8, "sized", Local), s(0, "empty", Global)]),
            Some("empty".into())
        );
        assert_eq!(
            at(vec![s(8, "weak", Weak), s(8, "local", Local)]),
            Some("local".into())
        );
        assert_eq!(
            at(vec![s(8, "local", Local), s(8, "global", Global)]),
            Some("global".into())
        );
        assert_eq!(
            at(vec![s(8, "__x", Global), s(8, "_y", Global)]),
            Some("_y".into())
        );
        assert_eq!(
            at(vec![s(8, "ab", Global), s(8, "abc", Global)]),
            Some("abc".into())
        );
        assert_eq!(
            at(vec![s(8, "one", Global), s(8, "two", Global)]),
            Some("one".into())
        );
        assert_eq!(
            at(vec![s(8, "SyS_a", Global), s(8, "sys_a", Global)]),
            Some("sys_a".into())
        );
        // Likewise the last symbol of size 0, which reaches the next page.
        let t = loaded(vec![s(8, "sized", Local), s(0, "last", Global)]);
        assert_eq!(name(&t, 0x100), Some("last"));
    }
}
