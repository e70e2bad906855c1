//! The order of perf report's entries (`hists__output_resort`): by the Children column
//! when shown, else by the Overhead column, largest first; entries equal in it come in
//! the order perf made them (the order of their first samples, and within a sample the
//! entry of the sample's own frame, then the callchain's frames as perf's cursor meets
//! them). Measured on perf 6.1's output: neither the sort keys nor the Self column
//! break a tie of Children.

use crate::model::Row;

/// Sort `rows` of a table as perf orders its entries.
pub(crate) fn sort_rows(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        let first = |r: &Row| r.children.map_or(r.period, |c| c.0);
        first(b)
            .cmp(&first(a))
            .then_with(|| a.created.cmp(&b.created))
            .then_with(|| a.cells.cmp(&b.cells))
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
            callchain: None,
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
        sort_rows(&mut rows);
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
}
