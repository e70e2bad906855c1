//! `perf diff`: two recordings' tables side by side, as perf 6.1 prints them. The
//! baseline's rows and the new recording's are matched by their cells (perf matches
//! hist entries by its sort keys), a row of the new one alone shown with an empty
//! Baseline (perf's dummy entry), and each row given the computation asked for:
//!
//! - `delta-abs` (perf 6.1's default) and `delta`: the new percent less the baseline's,
//!   `%+.2f%%`; rows sorted by its magnitude (`delta-abs`) or its value (`delta`), the
//!   rows of the baseline alone last, with no delta;
//! - `ratio`: the new period over the baseline's, `%.6f`;
//! - `wdiff:W1,W2`: new period times W2 less baseline period times W1.
//!
//! With `ratio` and `wdiff` a row of the new recording alone shows `N/A` and sorts after
//! the rows both have. Rows that sort alike are ordered by baseline period, then by
//! their cells.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::fields::is_unresolved;
use crate::model::{EventTable, SortKey};

/// How the new recording's rows are compared with the baseline's (perf's `-c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// The percent's change, sorted by its magnitude (`delta-abs`, perf's default).
    DeltaAbs,
    /// The percent's change, sorted by its value (`delta`).
    Delta,
    /// New period over baseline period (`ratio`).
    Ratio,
    /// New period times `w2` less baseline period times `w1` (`wdiff:w1,w2`).
    WeightedDiff(i64, i64),
}

impl std::str::FromStr for Compute {
    type Err = String;

    /// perf's `-c` syntax: `delta`, `delta-abs`, `ratio`, `wdiff:W1,W2`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s.split_once(':') {
            None if s == "delta-abs" => Ok(Compute::DeltaAbs),
            None if s == "delta" => Ok(Compute::Delta),
            None if s == "ratio" => Ok(Compute::Ratio),
            Some(("wdiff", w)) => {
                let weights = w.split_once(',').and_then(|(a, b)| {
                    Some((a.trim().parse::<i64>().ok()?, b.trim().parse::<i64>().ok()?))
                });
                match weights {
                    Some((w1, w2)) if w1 != 0 && w2 != 0 => Ok(Compute::WeightedDiff(w1, w2)),
                    _ => Err(format!("{s:?}: wrong weight data, use 'wdiff:w1,w2'")),
                }
            }
            _ => Err(format!(
                "{s:?} is not a computation method (use 'delta', 'delta-abs', 'ratio' or \
                 'wdiff:w1,w2')"
            )),
        }
    }
}

impl Compute {
    /// The column's header and width (perf's `columns[]`: at least the header's).
    fn column(self) -> (&'static str, usize) {
        match self {
            Compute::DeltaAbs => ("Delta Abs", 9),
            Compute::Delta => ("Delta", 7),
            Compute::Ratio => ("Ratio", 14),
            Compute::WeightedDiff(..) => ("Weighted diff", 14),
        }
    }
}

/// One row of a diff: the cells, the baseline's period (None: the new recording's
/// alone) and the new one's (None: the baseline's alone).
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    /// One cell per sort key, as perf prints it.
    pub cells: Vec<String>,
    /// The baseline's period of the row.
    pub baseline: Option<u64>,
    /// The new recording's period of the row.
    pub new: Option<u64>,
    /// Percent of the baseline event's period (0 without a baseline row).
    pub baseline_percent: f64,
    /// The computed value, when both have the row (or, for the deltas, the new one has
    /// it).
    pub value: Option<f64>,
}

/// One event's diff.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDiff {
    /// The event's name.
    pub event: String,
    /// In perf's order.
    pub rows: Vec<DiffRow>,
}

/// The diff of `base` and `new`, per event of the baseline that the new recording has
/// too (matched by name), rows computed and sorted as `compute` says.
pub fn diff(base: &[EventTable], new: &[EventTable], compute: Compute) -> Vec<EventDiff> {
    base.iter()
        .filter_map(|b| {
            let n = new.iter().find(|n| n.event == b.event)?;
            Some(EventDiff {
                event: b.event.clone(),
                rows: rows(b, n, compute),
            })
        })
        .collect()
}

/// A row's printed cells and the baseline's and new recording's periods of it.
type Matched = (Vec<String>, Option<u64>, Option<u64>);

/// Rows of one event: matched by cells (rows printing alike summed, as perf's
/// collapsed entries are one), computed, sorted. An unresolved symbol (`[.] 0x...`)
/// matches every unresolved symbol of the same other cells: perf's diff collapses a
/// DSO's unnamed addresses into one entry, shown with the lowest of them (its entries
/// are sorted by address, the first one collapsing the rest), the baseline's if it has
/// one.
fn rows(b: &EventTable, n: &EventTable, compute: Compute) -> Vec<DiffRow> {
    // By match key: the printed cells and each side's period.
    let mut by_key: HashMap<Vec<String>, Matched> = HashMap::new();
    let mut order: Vec<Vec<String>> = Vec::new();
    for (table, new) in [(b, false), (n, true)] {
        for r in &table.rows {
            let key: Vec<String> = r
                .cells
                .iter()
                .map(|c| {
                    if is_unresolved(c) {
                        c[..4].to_string()
                    } else {
                        c.clone()
                    }
                })
                .collect();
            let e = by_key.entry(key.clone()).or_insert_with(|| {
                order.push(key);
                (r.cells.clone(), None, None)
            });
            // The baseline's lowest address names the row; else the new one's.
            let first_of_side = if new { e.2.is_none() } else { e.1.is_none() };
            if (!new || e.1.is_none()) && (first_of_side || r.cells < e.0) {
                e.0 = r.cells.clone();
            }
            let side = if new { &mut e.2 } else { &mut e.1 };
            *side = Some(side.unwrap_or(0) + r.period);
        }
    }
    let pct = |p: u64, total: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * p as f64 / total as f64
        }
    };
    let mut rows: Vec<DiffRow> = order
        .into_iter()
        .map(|key| {
            let (cells, baseline, new) = by_key.remove(&key).unwrap_or_default();
            let base_pct = pct(baseline.unwrap_or(0), b.period);
            let value = match (compute, baseline, new) {
                (Compute::DeltaAbs | Compute::Delta, _, Some(p)) => {
                    Some(pct(p, n.period) - base_pct)
                }
                (Compute::Ratio, Some(old), Some(p)) => Some(p as f64 / old.max(1) as f64),
                (Compute::WeightedDiff(w1, w2), Some(old), Some(p)) => Some(
                    (p as i64)
                        .wrapping_mul(w2)
                        .wrapping_sub((old as i64).wrapping_mul(w1)) as f64,
                ),
                _ => None,
            };
            DiffRow {
                cells,
                baseline,
                new,
                baseline_percent: base_pct,
                value,
            }
        })
        .collect();
    // Rows with a value first, by it; then (ratio, wdiff) the new recording's alone, by
    // their period (perf computes them against a baseline period of 1); then the
    // baseline's alone.
    let key = |r: &DiffRow| match (compute, r.value, r.new) {
        (Compute::DeltaAbs, Some(v), _) => (2, v.abs()),
        (_, Some(v), _) => (2, v),
        (_, None, Some(p)) => (1, p as f64),
        (_, None, None) => (0, 0.0),
    };
    rows.sort_by(|x, y| {
        let (kx, ky) = (key(x), key(y));
        ky.0.cmp(&kx.0)
            .then_with(|| ky.1.total_cmp(&kx.1))
            .then_with(|| y.baseline.unwrap_or(0).cmp(&x.baseline.unwrap_or(0)))
            .then_with(|| x.cells.cmp(&y.cells))
    });
    rows
}

/// Print `diffs` as perf 6.1's `perf diff` prints them (stdio): per event, `# Event`,
/// the column headers and dotted rules, then the rows. The key columns are as wide as
/// their widest cell over every row (shown or not, as perf measures its entries).
pub fn write_stdio(
    out: &mut dyn Write,
    diffs: &[EventDiff],
    keys: &[SortKey],
    compute: Compute,
) -> io::Result<()> {
    let (name, width) = compute.column();
    for (i, d) in diffs.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "# Event '{}'", d.event)?;
        writeln!(out, "#")?;
        let widths = &widths(d, keys);
        let mut header = vec![format!("{:>8}", "Baseline"), format!("{name:>width$}")];
        let mut rule = vec![".".repeat(8), ".".repeat(width)];
        for (k, w) in keys.iter().zip(widths) {
            header.push(format!("{:<w$}", k.header()));
            rule.push(".".repeat(*w));
        }
        writeln!(out, "# {}", header.join("  "))?;
        writeln!(out, "# {}", rule.join("  "))?;
        writeln!(out, "#")?;
        for r in &d.rows {
            let base = match r.baseline {
                Some(_) => format!("{:.2}%", r.baseline_percent),
                None => String::new(),
            };
            let value = match (compute, r.value) {
                (Compute::DeltaAbs | Compute::Delta, Some(v)) => format!("{v:+.2}%"),
                (Compute::Ratio, Some(v)) => format!("{v:.6}"),
                (Compute::WeightedDiff(..), Some(v)) => format!("{}", v as i64),
                // perf's dummy baseline: no ratio or weight without one.
                (Compute::Ratio | Compute::WeightedDiff(..), None) if r.new.is_some() => {
                    "N/A".to_string()
                }
                (_, None) => String::new(),
            };
            let mut line = vec![format!("{base:>8}"), format!("{value:>width$}")];
            for ((k, w), c) in keys.iter().zip(widths).zip(&r.cells) {
                line.push(match k {
                    // perf pads every cell to its column but the symbol's.
                    SortKey::Sym | SortKey::Srcline => c.clone(),
                    _ => format!("{c:<w$}"),
                });
            }
            writeln!(out, "  {}", line.join("  "))?;
        }
    }
    Ok(())
}

/// The key columns' widths of a diff: the widest cell of any row of either recording,
/// at least the header's.
fn widths(d: &EventDiff, keys: &[SortKey]) -> Vec<usize> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| {
            d.rows
                .iter()
                .map(|r| r.cells[i].len())
                .fold(k.header().len(), usize::max)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Row;

    fn table(period: u64, rows: &[(&str, u64)]) -> EventTable {
        EventTable {
            event: "cpu-clock".into(),
            index: 0,
            group_size: 1,
            members: Vec::new(),
            samples: rows.len() as u64,
            period,
            rows: rows
                .iter()
                .map(|(sym, p)| Row {
                    cells: vec!["a.out".into(), (*sym).into()],
                    samples: 1,
                    period: *p,
                    percent: 0.0,
                    children: None,
                    members: Vec::new(),
                    comm_len: 0,
                    callchain: None,
                    created: (0, 0),
                    depth: None,
                })
                .collect(),
            children: false,
        }
    }

    #[test]
    fn computations_parse_as_perfs_option() {
        assert_eq!("delta-abs".parse(), Ok(Compute::DeltaAbs));
        assert_eq!("wdiff:1,2".parse(), Ok(Compute::WeightedDiff(1, 2)));
        assert!("wdiff:0,2".parse::<Compute>().is_err());
        assert!("wdiff".parse::<Compute>().is_err());
        assert!("delta:x".parse::<Compute>().is_err());
    }

    #[test]
    fn unresolved_addresses_of_a_dso_are_one_row_named_by_the_lowest() {
        let base = table(
            100,
            &[
                ("[.] f", 50),
                ("[.] 0x0000000000002000", 30),
                ("[.] 0x0000000000001000", 20),
            ],
        );
        let new = table(100, &[("[.] f", 20), ("[.] 0x0000000000000500", 80)]);
        let d = diff(&[base], &[new], Compute::DeltaAbs);
        let rows: Vec<_> = d[0]
            .rows
            .iter()
            .map(|r| {
                (
                    r.cells[1].as_str(),
                    r.baseline,
                    r.new,
                    r.value.map(|v| v.round() as i64),
                )
            })
            .collect();
        assert_eq!(
            rows,
            [
                ("[.] 0x0000000000001000", Some(50), Some(80), Some(30)),
                ("[.] f", Some(50), Some(20), Some(-30)),
            ]
        );
    }
}
