//! The order of perf report's entries (`hists__output_resort`, perf's
//! `hist_entry__sort` over its sort list: Children when shown, Overhead, then the sort
//! keys), largest first. Of equal Children, perf's `__hpp__sort_acc` puts the caller
//! above the callee of one thread when it draws their call graphs, by the depth of the
//! callchains appended to each (see [`sort_rows`]). Else
//! (no Children, or no call graph: `-g none`) equal entries are ordered by Overhead,
//! then by the sort keys, each by its own `sort`: symbols by name, the resolved before
//! the unresolved, those by address as perf collapsed them (the kernel's first);
//! commands and DSOs in byte order, an unknown DSO last; threads and CPUs by number. It
//! is the order `-F overhead,KEYS` gives ([`crate::fields::Layout`]).

use std::cmp::Ordering;

use crate::fields::{Field, Layout};
use crate::model::{Row, SortKey};

/// Sort `rows` of a table, whose cells are `keys`', as perf orders its entries. The
/// keys `elided` (a command, DSO or symbol filtered to one name: perf's
/// `sort__setup_elide`) order nothing: perf's `hist_entry__sort` skips an elided
/// column (`perf_hpp__should_skip`), so entries equal in the rest keep its collapsing
/// tree's order ([`Layout::cmp_rows`]).
pub(crate) fn sort_rows(rows: &mut [Row], keys: &[SortKey], elided: &[SortKey]) {
    let fields: Vec<Field> = std::iter::once(Field::Overhead)
        .chain(keys.iter().map(|&k| Field::Key(k)))
        .collect();
    let mut layout = Layout::new(&fields, None);
    layout
        .order
        .retain(|f| !matches!(f, Field::Key(k) if elided.contains(k)));
    let children = |r: &Row| r.children.map(|c| c.0);
    rows.sort_by(|a, b| {
        children(b)
            .cmp(&children(a))
            .then_with(|| layout.cmp_rows(a, b))
    });
    // perf's `__hpp__sort_acc` where call graphs are drawn: of equal Children, an
    // entry of one thread above another of the same thread whose callchains were
    // shallower (a caller above its callee); entries of different threads by the next
    // fields, as above.
    let mut at = 0;
    while at < rows.len() {
        let run = rows[at..]
            .iter()
            .take_while(|r| children(r) == children(&rows[at]))
            .count();
        if run > 1 && rows[at].depth.is_some() {
            callers_first(&mut rows[at..at + run], |a, b| layout.cmp_rows(a, b));
        }
        at += run;
    }
}

/// Order a run of entries of equal Children, sorted by `rest` (Overhead, then the
/// keys), as perf's rb-tree does with `__hpp__sort_acc`: each thread's entries by their
/// depth (see [`crate::model::ChainDepth`]; `rest` among equal depths), the threads'
/// entries then merged by `rest`. perf inserts entries one by one, and where a run holds
/// several threads its order follows the tree's shape; the merge keeps every pair
/// perf compares by depth in perf's order, and the rest in `rest`'s.
fn callers_first(run: &mut [Row], rest: impl Fn(&Row, &Row) -> Ordering) {
    let thread = |i: usize| run[i].depth.map(|d| d.thread);
    let rank = |i: usize| run[i].depth.map_or(0, |d| d.rank);
    let mut threads: Vec<Option<usize>> = (0..run.len()).map(thread).collect();
    threads.sort_unstable();
    threads.dedup();
    // Each thread's entries, deepest first (stable: `rest`'s order among equals).
    let mut chains: Vec<std::collections::VecDeque<usize>> = threads
        .iter()
        .map(|&t| {
            let mut chain: Vec<usize> = (0..run.len()).filter(|&i| thread(i) == t).collect();
            chain.sort_by_key(|&i| std::cmp::Reverse(rank(i)));
            chain.into()
        })
        .collect();
    // The merge: where each entry goes.
    let mut goes_to = vec![0; run.len()];
    for slot in 0..run.len() {
        let next = (0..chains.len())
            .filter(|&c| !chains[c].is_empty())
            .min_by(|&x, &y| rest(&run[chains[x][0]], &run[chains[y][0]]).then(x.cmp(&y)))
            .expect("as many entries as slots");
        let from = chains[next].pop_front().expect("a head");
        goes_to[from] = slot;
    }
    for i in 0..run.len() {
        while goes_to[i] != i {
            let j = goes_to[i];
            run.swap(i, j);
            goes_to.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ChainDepth;

    fn row(children: u64, period: u64, created: (u64, u32), sym: &str) -> Row {
        Row {
            cells: vec![sym.to_string()],
            samples: period,
            period,
            percent: 0.0,
            children: Some((children, 0.0)),
            // Drawn: perf's caller-first rule applies.
            callchain: Some(crate::callgraph::CallTree::empty()),
            members: Vec::new(),
            comm_len: 0,
            verbose: None,
            created,
            depth: None,
        }
    }

    /// Of equal Children where graphs are drawn, each thread's entries deepest first,
    /// the threads' merged by Self and the keys (report_graph_oracle compares the order
    /// with perf's on recordings of one thread, ties and all).
    #[test]
    fn equal_children_go_deepest_first_within_a_thread() {
        let at = |thread: usize, rank: i64, period: u64, sym: &str| Row {
            depth: Some(ChainDepth { thread, rank }),
            ..row(10, period, (0, 0), sym)
        };
        let order = |mut rows: Vec<Row>| {
            sort_rows(&mut rows, &[SortKey::Sym], &[]);
            rows.iter().map(|r| r.cells[0].clone()).collect::<Vec<_>>()
        };
        let rows = vec![
            at(1, 2, 0, "[.] a"),
            at(1, 5, 0, "[.] b"),
            at(2, 9, 0, "[.] c"),
            at(2, 1, 0, "[.] aa"),
            row(20, 0, (0, 0), "[.] z"),
        ];
        // Thread 1: b (5) above a (2); thread 2: c (9) above aa (1); merged by name.
        assert_eq!(
            order(rows.clone()),
            ["[.] z", "[.] b", "[.] a", "[.] c", "[.] aa"]
        );
        // Callee order's ranks are negated depths: the shallower first.
        let negated = rows
            .iter()
            .cloned()
            .map(|mut r| {
                r.depth = r.depth.map(|d| ChainDepth { rank: -d.rank, ..d });
                r
            })
            .collect();
        assert_eq!(
            order(negated),
            ["[.] z", "[.] a", "[.] aa", "[.] b", "[.] c"]
        );
        // Self before depth? No: depth first, then Self among equal depths.
        let by_self = vec![
            at(1, 3, 0, "[.] a"),
            at(1, 3, 4, "[.] b"),
            at(1, 7, 0, "[.] c"),
        ];
        assert_eq!(order(by_self), ["[.] c", "[.] b", "[.] a"]);
        // Without depths (no graph): Self, then the keys.
        let bare = vec![row(10, 0, (0, 0), "[.] b"), row(10, 0, (0, 0), "[.] a")];
        assert_eq!(order(bare), ["[.] a", "[.] b"]);
    }

    /// From perf 6.1's `-g none` of file-callgraph-fp.data: without call graphs, equal
    /// Children are ordered by Self, then by symbol: names before addresses, those the
    /// kernel's first; without Children, equal Overhead by the same keys.
    /// An elided Symbol key (`--symbols work`) orders nothing: entries equal in the
    /// rest come in perf's collapsing tree's order, inlined functions by name, largest
    /// first (not in the order made); with the key, by name, smallest first (as perf
    /// printed both on tests/callgraph/tied_inlines.c).
    #[test]
    fn an_elided_symbol_key_leaves_the_collapsing_order() {
        let rows = || {
            vec![
                Row {
                    cells: vec!["tied".into(), "[.] alpha (inlined)".into()],
                    ..row(10, 0, (0, 0), "")
                },
                Row {
                    cells: vec!["tied".into(), "[.] beta (inlined)".into()],
                    ..row(10, 0, (1, 0), "")
                },
            ]
        };
        let keys = [SortKey::Dso, SortKey::Sym];
        let order = |elided: &[SortKey]| {
            let mut r = rows();
            sort_rows(&mut r, &keys, elided);
            r.iter().map(|r| r.cells[1].clone()).collect::<Vec<_>>()
        };
        assert_eq!(order(&[]), ["[.] alpha (inlined)", "[.] beta (inlined)"]);
        assert_eq!(
            order(&[SortKey::Sym]),
            ["[.] beta (inlined)", "[.] alpha (inlined)"]
        );
    }

    #[test]
    fn without_graphs_self_and_the_keys_break_ties() {
        let bare = |c: Option<u64>, period: u64, created: u64, sym: &str| Row {
            children: c.map(|c| (c, 0.0)),
            callchain: None,
            ..row(0, period, (created, 0), sym)
        };
        let order = |mut rows: Vec<Row>| {
            sort_rows(&mut rows, &[SortKey::Sym], &[]);
            rows.iter().map(|r| r.cells[0].clone()).collect::<Vec<_>>()
        };
        let children = vec![
            bare(Some(1), 0, 0, "[.] munmap"),
            bare(Some(1), 0, 1, "[k] 0xffffffff8124a526"),
            bare(Some(1), 1, 2, "[k] 0xffffffff821c514f"),
            bare(Some(1), 0, 3, "[.] 0x00007f91a70f2ad7"),
            bare(Some(1), 1, 4, "[.] _dl_relocate_object"),
        ];
        assert_eq!(
            order(children),
            [
                "[.] _dl_relocate_object",
                "[k] 0xffffffff821c514f",
                "[.] munmap",
                "[k] 0xffffffff8124a526",
                "[.] 0x00007f91a70f2ad7",
            ]
        );
        let flat = vec![
            bare(None, 1, 0, "[.] 0x000000000000114a"),
            bare(None, 1, 1, "[k] 0xffffffff821f23e7"),
            bare(None, 1, 2, "[.] init_cpu_features.constprop.0"),
            bare(None, 1, 3, "[.] handle_amd"),
            bare(None, 2, 4, "[.] 0x0000000000001151"),
        ];
        assert_eq!(
            order(flat),
            [
                "[.] 0x0000000000001151",
                "[.] handle_amd",
                "[.] init_cpu_features.constprop.0",
                "[k] 0xffffffff821f23e7",
                "[.] 0x000000000000114a",
            ]
        );
    }
}
