//! The order of perf report's entries (`hists__output_resort`, perf's
//! `hist_entry__sort` over its sort list: Children when shown, Overhead, then the sort
//! keys), largest first. Of equal Children, perf's `__hpp__sort_acc` puts the caller
//! above the callee when it has their call graphs: the entry made first (the order of
//! their first samples, and within a sample the entry of the sample's own frame, then
//! the callchain's frames as perf's cursor meets them), as measured on perf 6.1. Else
//! (no Children, or no call graph: `-g none`) equal entries are ordered by Overhead,
//! then by the sort keys, each by its own `sort`: symbols by name, the resolved before
//! the unresolved, those by address as perf collapsed them (the kernel's first);
//! commands and DSOs in byte order, an unknown DSO last; threads and CPUs by number. It
//! is the order `-F overhead,KEYS` gives ([`crate::fields::Layout`]).

use std::cmp::Ordering;

use crate::fields::{Field, Layout};
use crate::model::{Row, SortKey};

/// Sort `rows` of a table, whose cells are `keys`', as perf orders its entries.
pub(crate) fn sort_rows(rows: &mut [Row], keys: &[SortKey]) {
    let fields: Vec<Field> = std::iter::once(Field::Overhead)
        .chain(keys.iter().map(|&k| Field::Key(k)))
        .collect();
    let layout = Layout::new(&fields, None);
    let graphed = rows.iter().any(|r| r.callchain.is_some());
    let children = |r: &Row| r.children.map(|c| c.0);
    rows.sort_by(|a, b| {
        children(b)
            .cmp(&children(a))
            .then_with(|| match a.children.is_some() && graphed {
                true => a.created.cmp(&b.created),
                false => Ordering::Equal,
            })
            .then_with(|| layout.cmp_rows(a, b))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(children: u64, period: u64, created: (u64, u32), sym: &str) -> Row {
        Row {
            cells: vec![sym.to_string()],
            samples: period,
            period,
            percent: 0.0,
            children: Some((children, 0.0)),
            // Drawn: perf's caller-first rule applies.
            callchain: Some(crate::callgraph::CallTree { nodes: Vec::new() }),
            members: Vec::new(),
            comm_len: 0,
            created,
        }
    }

    /// From perf 6.1 on file-callgraph-fp.data: of equal Children, the kernel's entry
    /// (Self 0, made by an earlier sample) comes before `0x114a` (Self 4.31%), and a
    /// sample's own entry before its frame's.
    #[test]
    fn equal_children_come_in_the_order_they_were_made() {
        let mut rows = vec![
            row(11, 11, (40, 0), "[.] 0x000000000000114a"),
            row(11, 0, (40, 3), "[.] 0x000055cfaafbe14a"),
            row(24, 0, (2, 2), "[.] 0x000055cfaafbe169"),
            row(11, 0, (5, 9), "[k] 0xffffffff81000130"),
            row(24, 0, (2, 1), "[.] 0x000055cfaafbe183"),
        ];
        sort_rows(&mut rows, &[SortKey::Sym]);
        let order: Vec<&str> = rows.iter().map(|r| r.cells[0].as_str()).collect();
        assert_eq!(
            order,
            [
                "[.] 0x000055cfaafbe183",
                "[.] 0x000055cfaafbe169",
                "[k] 0xffffffff81000130",
                "[.] 0x000000000000114a",
                "[.] 0x000055cfaafbe14a",
            ]
        );
    }

    /// From perf 6.1's `-g none` of file-callgraph-fp.data: without call graphs, equal
    /// Children are ordered by Self, then by symbol: names before addresses, those the
    /// kernel's first; without Children, equal Overhead by the same keys.
    #[test]
    fn without_graphs_self_and_the_keys_break_ties() {
        let bare = |c: Option<u64>, period: u64, created: u64, sym: &str| Row {
            children: c.map(|c| (c, 0.0)),
            callchain: None,
            ..row(0, period, (created, 0), sym)
        };
        let order = |mut rows: Vec<Row>| {
            sort_rows(&mut rows, &[SortKey::Sym]);
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
