//! perf report's output fields (`-F/--fields`, perf 6.1's `field_order`): the columns
//! printed, in the order given, and the order of the rows they make.
//!
//! As perf's `setup_sorting` does for a field list not starting with `+`: no Overhead
//! column is added before the fields (nor Children, nor Samples for `-n`), the sort keys
//! (what makes an entry) are `--sort`'s followed by the key fields, the columns are the
//! fields followed by the sort keys not among them, and the rows are ordered by the sort
//! keys then the other fields, each field by its own order (`hist_entry__sort`):
//! Overhead, Period, Samples and Children largest first; names (command, DSO, source
//! line) in byte order, threads and CPUs by number; symbols by name, unresolved ones
//! after them by address (as a signed number, so the kernel's first). Entries equal in
//! every field come in the order they were made.

use std::cmp::Ordering;
use std::str::FromStr;

use crate::model::{Row, SortKey};

/// One output field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The self percentage (`overhead`, "Overhead").
    Overhead,
    /// The children percentage (`overhead_children`, "Children"), with `--children`.
    OverheadChildren,
    /// The number of samples (`sample`, "Samples").
    Sample,
    /// The sum of the samples' periods (`period`, "Period").
    Period,
    /// A sort key's column.
    Key(SortKey),
}

impl FromStr for Field {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "overhead" => Field::Overhead,
            "overhead_children" => Field::OverheadChildren,
            "sample" => Field::Sample,
            "period" => Field::Period,
            key => Field::Key(key.parse().map_err(|e| {
                format!("{e}; or an output field: overhead, overhead_children, sample, period")
            })?),
        })
    }
}

impl Field {
    /// Parse perf's comma-separated list (`overhead,sample,comm,dso,sym`). A list starting
    /// with `+` (perf's fields added to the default ones) is not supported.
    pub fn parse_list(s: &str) -> Result<Vec<Field>, String> {
        if s.starts_with('+') {
            return Err(format!(
                "-F {s}: fields added to the default ones (`+`) are not supported"
            ));
        }
        let fields: Vec<Field> = s
            .split(',')
            .map(|f| f.trim().parse())
            .collect::<Result<_, _>>()?;
        Ok(fields)
    }
}

/// What a field list makes of a report: its sort keys, columns and row order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The sort keys (the cells of each row), in perf's order.
    pub keys: Vec<SortKey>,
    /// The columns printed, in order.
    pub columns: Vec<Field>,
    /// The fields that order the rows, the first first.
    pub order: Vec<Field>,
}

impl Layout {
    /// The layout of `fields` with `--sort` keys `sort` (None when not given).
    pub fn new(fields: &[Field], sort: Option<&[SortKey]>) -> Layout {
        let mut keys: Vec<SortKey> = sort.unwrap_or_default().to_vec();
        for f in fields {
            if let Field::Key(k) = f {
                if !keys.contains(k) {
                    keys.push(*k);
                }
            }
        }
        let mut columns = fields.to_vec();
        for k in sort.unwrap_or_default() {
            if !columns.contains(&Field::Key(*k)) {
                columns.push(Field::Key(*k));
            }
        }
        let mut order: Vec<Field> = sort
            .unwrap_or_default()
            .iter()
            .map(|&k| Field::Key(k))
            .collect();
        for f in fields {
            if !order.contains(f) {
                order.push(*f);
            }
        }
        Layout {
            keys,
            columns,
            order,
        }
    }

    /// Sort `rows` (whose cells are [`Layout::keys`]') as perf orders them for this
    /// layout.
    pub(crate) fn sort_rows(&self, rows: &mut [Row]) {
        rows.sort_by(|a, b| self.cmp_rows(a, b));
    }

    /// `a` before `b` (Less) as perf orders the entries of this layout.
    pub(crate) fn cmp_rows(&self, a: &Row, b: &Row) -> Ordering {
        for &f in &self.order {
            let o = self.compare(f, a, b);
            if o.is_ne() {
                return o;
            }
            // perf's __hpp__sort_acc puts the caller above the callee of equal
            // Children (the entry made first): no later field is asked (as
            // measured, see crate::row_order).
            if f == Field::OverheadChildren && a.children.is_some() {
                return a.created.cmp(&b.created);
            }
        }
        self.made(a, b)
    }

    /// Of rows equal in every field, `a` before `b` in the order perf made and collapsed
    /// them: unresolved symbols by address (perf's `sort__sym_cmp` in its collapsing
    /// tree, the address as a signed number: the kernel's first), else by their first
    /// samples. (Unresolved symbols of different user DSOs tie otherwise in perf: there
    /// it orders them by something else, by DSO it seems, which a row does not keep.)
    fn made(&self, a: &Row, b: &Row) -> Ordering {
        if let Some(o) = self.elided_inlined(a, b) {
            return o;
        }
        let address = |c: &str| {
            let hex = c.get(4..).unwrap_or_default().trim_start_matches("0x");
            is_unresolved(c).then(|| u64::from_str_radix(hex, 16).unwrap_or(0) as i64)
        };
        self.keys
            .iter()
            .enumerate()
            .filter(|(_, &k)| k == SortKey::Sym)
            .find_map(
                |(i, _)| match (address(&a.cells[i]), address(&b.cells[i])) {
                    (Some(x), Some(y)) if x != y => Some(x.cmp(&y)),
                    _ => None,
                },
            )
            .unwrap_or_else(|| a.created.cmp(&b.created))
    }

    /// Where the Symbol key orders nothing (elided, see [`crate::row_order::sort_rows`])
    /// and either row's symbol is an inlined function: perf's collapsing tree's order,
    /// by name, largest first (`_sort__sym_cmp` compares inlined functions by `strcmp`,
    /// and a new entry goes left of one whose name is smaller).
    fn elided_inlined(&self, a: &Row, b: &Row) -> Option<Ordering> {
        let i = self.keys.iter().position(|&k| k == SortKey::Sym)?;
        if self.order.contains(&Field::Key(SortKey::Sym)) {
            return None;
        }
        let (x, y) = (&a.cells[i], &b.cells[i]);
        let inlined = |c: &str| c.ends_with(crate::inlines::INLINED);
        if !(inlined(x) || inlined(y)) || is_unresolved(x) || is_unresolved(y) {
            return None;
        }
        fn name(c: &str) -> &str {
            let c = c.get(4..).unwrap_or(c);
            c.strip_suffix(crate::inlines::INLINED).unwrap_or(c)
        }
        Some(name(y).cmp(name(x))).filter(|o| o.is_ne())
    }

    /// `a` before `b` (Less) by field `f`, as perf's `sort` of the field.
    fn compare(&self, f: Field, a: &Row, b: &Row) -> Ordering {
        let children = |r: &Row| r.children.map_or(0, |c| c.0);
        match f {
            Field::Overhead | Field::Period => b.period.cmp(&a.period),
            Field::Sample => b.samples.cmp(&a.samples),
            Field::OverheadChildren => children(b).cmp(&children(a)),
            Field::Key(k) => {
                let Some(i) = self.keys.iter().position(|&x| x == k) else {
                    return Ordering::Equal;
                };
                compare_cells(k, &a.cells[i], &b.cells[i])
            }
        }
    }
}

/// `x` before `y` (Less), two cells of key `k`, as perf's `sort` of the key orders
/// them (report's rows and diff's alike).
pub(crate) fn compare_cells(k: SortKey, x: &str, y: &str) -> Ordering {
    match k {
        SortKey::Sym => symbol_order(x).cmp(&symbol_order(y)),
        SortKey::Pid | SortKey::Tid | SortKey::Cpu => number(x).cmp(&number(y)),
        // A row without a DSO after those with one (perf's `cmp_null`).
        SortKey::Dso => (x == UNKNOWN, x.as_bytes()).cmp(&(y == UNKNOWN, y.as_bytes())),
        _ => x.as_bytes().cmp(y.as_bytes()),
    }
}

/// A Symbol cell's place in perf's `sort__sym_sort`: names in byte order (without the
/// `[k] `/`[.] ` mode), then the unresolved addresses, all equal (`cmp_null`).
fn symbol_order(cell: &str) -> (bool, &str) {
    if is_unresolved(cell) {
        (true, "")
    } else {
        (false, cell.get(4..).unwrap_or(cell))
    }
}

/// The DSO cell of an address no map holds.
const UNKNOWN: &str = "[unknown]";

/// The number a Pid (`tid:comm`), Tid or CPU cell starts with.
fn number(cell: &str) -> i64 {
    let n = cell.split(':').next().unwrap_or(cell).trim();
    n.parse().unwrap_or(i64::MIN)
}

/// Whether a Symbol cell is an address (perf's unresolved symbol).
pub(crate) fn is_unresolved(cell: &str) -> bool {
    // A `-v` cell is one still: its width is an unresolved cell's.
    let cell = crate::verbose::plain_sym(cell);
    let addr = cell.get(4..).unwrap_or_default();
    (cell.starts_with("[.] ") || cell.starts_with("[k] "))
        && (addr.starts_with("0x") || addr == "0000000000000000")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_give_the_keys_columns_and_order_as_perf_does() {
        let f = Field::parse_list("overhead,period,sym").expect("fields");
        let l = Layout::new(&f, None);
        assert_eq!(l.keys, [SortKey::Sym]);
        assert_eq!(l.columns, f);
        assert_eq!(l.order, f);
        // --sort keys come first in the order and last in the columns.
        let l = Layout::new(&f, Some(&[SortKey::Comm]));
        assert_eq!(l.keys, [SortKey::Comm, SortKey::Sym]);
        assert_eq!(
            l.columns,
            [
                Field::Overhead,
                Field::Period,
                Field::Key(SortKey::Sym),
                Field::Key(SortKey::Comm)
            ]
        );
        assert_eq!(l.order[0], Field::Key(SortKey::Comm));
        assert!(Field::parse_list("+sym").is_err());
        assert!(Field::parse_list("overhead,nothing").is_err());
    }

    fn row(sym: &str, period: u64, first: u64) -> Row {
        Row {
            cells: vec![sym.to_string()],
            samples: 1,
            period,
            percent: 0.0,
            children: None,
            callchain: None,
            members: Vec::new(),
            comm_len: 0,
            verbose: None,
            created: (first, 0),
            depth: None,
        }
    }

    /// As perf 6.1 orders file-cpu-clock.data's `-F sym,overhead`: names first, then
    /// the unresolved addresses by overhead, equal ones by address (the kernel's
    /// first), whatever order they were made in.
    #[test]
    fn symbols_sort_by_name_then_unresolved_by_the_next_field() {
        let mut rows = vec![
            row("[.] 0x000000000000114a", 2, 1),
            row("[k] 0xffffffff821f23e7", 2, 2),
            row("[.] zeta", 1, 3),
            row("[.] 0x0000000000001143", 9, 4),
            row("[k] 0xffffffff813a2293", 1, 5),
            row("[.] alpha", 5, 6),
        ];
        let f = Field::parse_list("sym,overhead").expect("fields");
        Layout::new(&f, None).sort_rows(&mut rows);
        let order: Vec<&str> = rows.iter().map(|r| r.cells[0].as_str()).collect();
        assert_eq!(
            order,
            [
                "[.] alpha",
                "[.] zeta",
                "[.] 0x0000000000001143",
                "[k] 0xffffffff821f23e7",
                "[.] 0x000000000000114a",
                "[k] 0xffffffff813a2293",
            ]
        );
    }
}
