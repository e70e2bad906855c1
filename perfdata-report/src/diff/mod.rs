//! `perf diff`: the tables of two or more recordings side by side, as perf 6.1 prints
//! them. The first recording is the baseline; the rows of every other one are matched
//! with the baseline's by their cells (perf matches hist entries by its sort keys), a
//! row the baseline lacks shown with an empty Baseline (perf's dummy entry), and each
//! row given, per recording after the baseline, the computation asked for:
//!
//! - `delta-abs` (perf 6.1's default) and `delta`: that recording's percent less the
//!   baseline's, `%+.2f%%`, sorted by its magnitude (`delta-abs`) or its value (`delta`);
//! - `ratio`: its period over the baseline's, `%.6f`;
//! - `wdiff:W1,W2`: its period times W2 less the baseline's times W1.
//!
//! Rows are sorted as perf's output tree sorts them: by the column of the recording
//! `-o/--order` names (1 unless given; 0 sorts by baseline first), then by baseline
//! period, then by each recording's column in turn, then by the cells. With `ratio` and
//! `wdiff` a row the baseline lacks shows `N/A` and sorts after the rows it has.
//! The printing is [`write_stdio`].

mod text;

use std::cmp::Ordering;
use std::collections::HashMap;

pub use text::write_stdio;

use crate::fields::is_unresolved;
use crate::model::EventTable;

/// How the other recordings' rows are compared with the baseline's (perf's `-c`).
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
    /// Whether a row the baseline lacks has a value (a delta does: against 0%; a ratio
    /// or a weight does not, perf prints `N/A`).
    fn without_baseline(self) -> bool {
        matches!(self, Compute::DeltaAbs | Compute::Delta)
    }

    /// perf's order of two computed values: the larger first (by magnitude for
    /// `delta-abs`).
    fn order(self, a: f64, b: f64) -> Ordering {
        match self {
            Compute::DeltaAbs => b.abs().total_cmp(&a.abs()),
            _ => b.total_cmp(&a),
        }
    }
}

/// What `perf diff` is asked to show besides its rows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffView {
    /// The computation (perf's `-c`).
    pub compute: Compute,
    /// The recording whose column sorts the rows first (perf's `-o/--order`, default 1;
    /// 0: the baseline's period first).
    pub order: usize,
    /// Only the baseline's rows that another recording has too (perf's `-b`). The
    /// Baseline column is then of the rows kept, as perf sums them again. Known
    /// difference: with a filter (`--dsos`, `--comms`, `--symbols`, `--pid`) and
    /// absolute percentages, perf's sum also holds the filtered rows that another
    /// recording has, which the tables here do not keep; perfdata counts every filtered
    /// row (the Baseline percents come out a little lower than perf's).
    pub baseline_only: bool,
    /// A period column per recording (perf's `-p`).
    pub period: bool,
    /// A formula column per recording after the baseline (perf's `-F`).
    pub formula: bool,
}

impl Default for DiffView {
    /// perf diff's defaults: `delta-abs`, ordered by the second recording.
    fn default() -> Self {
        DiffView {
            compute: Compute::DeltaAbs,
            order: 1,
            baseline_only: false,
            period: false,
            formula: false,
        }
    }
}

/// One row of a diff.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffRow {
    /// One cell per sort key, as perf prints it.
    pub cells: Vec<String>,
    /// Per recording (the baseline first): the row's period there, `None` where that
    /// recording has no such row.
    pub periods: Vec<Option<u64>>,
    /// Per recording after the baseline (element `i - 1` for recording `i`): the
    /// computed value, where that recording has the row.
    pub values: Vec<Option<f64>>,
}

impl DiffRow {
    /// Whether the baseline lacks the row (perf's dummy entry).
    pub fn dummy(&self) -> bool {
        self.periods[0].is_none()
    }

    /// Whether a recording after the baseline has the row (perf's `hist_entry__has_pairs`).
    fn has_pairs(&self) -> bool {
        self.periods[1..].iter().any(Option::is_some)
    }
}

/// One event's diff.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDiff {
    /// The event's name.
    pub event: String,
    /// Per recording: the event's period total that percents are of (0 where the
    /// recording lacks the event). The baseline's is the one its Baseline column shows:
    /// with `-b`, perf sums again the rows it keeps.
    pub totals: Vec<u64>,
    /// In perf's order.
    pub rows: Vec<DiffRow>,
}

/// One recording to diff: its tables and its events' identities.
#[derive(Debug, Clone, Copy)]
pub struct Recording<'a> {
    /// Its tables, one per event with samples.
    pub tables: &'a [EventTable],
    /// Each event's attr type and config, by index ([`EventTable::index`]):
    /// [`crate::report::Counted::event_ids`].
    pub events: &'a [(u32, u64)],
}

impl Recording<'_> {
    /// The table of this recording's event that perf matches with `table` of `other`:
    /// its first event of the same attr type and config (perf's `evsel_match`), if
    /// that event has samples. An event this recording's ids do not name is matched by
    /// name.
    fn matching(&self, table: &EventTable, other: &Recording) -> Option<&EventTable> {
        let Some(id) = other.events.get(table.index) else {
            return self.tables.iter().find(|t| t.event == table.event);
        };
        let first = self.events.iter().position(|e| e == id)?;
        self.tables.iter().find(|t| t.index == first)
    }
}

/// The diff of `recordings[0]` (the baseline) with each other recording: per event of
/// the baseline (a recording without the event has no row of it), rows matched,
/// computed and sorted as `view` says.
pub fn diff(recordings: &[Recording], view: &DiffView) -> Vec<EventDiff> {
    let Some((base, others)) = recordings.split_first() else {
        return Vec::new();
    };
    base.tables
        .iter()
        .map(|b| {
            let mut event = vec![Some(b)];
            event.extend(others.iter().map(|o| o.matching(b, base)));
            event_diff(&event, view)
        })
        .collect()
}

/// A percent of `total`, 0 of nothing.
fn percent(p: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        100.0 * p as f64 / total as f64
    }
}

/// One event's rows over the recordings (`None`: the recording lacks the event).
fn event_diff(tables: &[Option<&EventTable>], view: &DiffView) -> EventDiff {
    let n = tables.len();
    let mut totals: Vec<u64> = tables.iter().map(|t| t.map_or(0, |t| t.period)).collect();
    let mut rows: Vec<DiffRow> = matched(tables)
        .into_iter()
        .map(|(cells, periods)| {
            let values = (1..n)
                .map(|i| value(view.compute, periods[0], periods[i]?, &totals, i))
                .collect();
            DiffRow {
                cells,
                periods,
                values,
            }
        })
        .collect();
    if view.baseline_only {
        // perf drops the baseline's rows no other recording has and, sorting its output,
        // sums the baseline's period again over the rows left; the values were computed
        // before, of the whole.
        rows.retain(|r| !r.dummy() && r.has_pairs());
        let dropped: u64 = matched_baseline_only(tables, &rows);
        totals[0] = totals[0].saturating_sub(dropped);
    }
    rows.sort_by(|a, b| compare(a, b, view));
    EventDiff {
        event: tables[0].map_or_else(String::new, |t| t.event.clone()),
        totals,
        rows,
    }
}

/// The baseline's period of the rows `-b` dropped: its rows' total less the kept rows'.
fn matched_baseline_only(tables: &[Option<&EventTable>], kept: &[DiffRow]) -> u64 {
    let all: u64 = tables[0].map_or(0, |t| t.rows.iter().map(|r| r.period).sum());
    let kept: u64 = kept.iter().filter_map(|r| r.periods[0]).sum();
    all.saturating_sub(kept)
}

/// The value of recording `i`'s period `p` against the baseline's `base` (perf's
/// `compute_delta`, `compute_ratio`, `compute_wdiff`).
fn value(compute: Compute, base: Option<u64>, p: u64, totals: &[u64], i: usize) -> Option<f64> {
    let old = base.unwrap_or(0);
    Some(match compute {
        Compute::DeltaAbs | Compute::Delta => percent(p, totals[i]) - percent(old, totals[0]),
        // perf divides by 1 where the baseline has nothing (its dummy's period is 0).
        Compute::Ratio => p as f64 / old.max(1) as f64,
        Compute::WeightedDiff(w1, w2) => (p as i64)
            .wrapping_mul(w2)
            .wrapping_sub((old as i64).wrapping_mul(w1))
            as f64,
    })
}

/// A matched row: its cells, the recording that named them, its period in each.
type Match = (Vec<String>, usize, Vec<Option<u64>>);

/// Rows matched over the recordings: each row's printed cells and its period in each.
/// Rows printing alike are summed, as perf's collapsed entries are one. An unresolved
/// symbol (`[.] 0x...`) matches every unresolved symbol of the same other cells: perf's
/// diff collapses a DSO's unnamed addresses into one entry, shown with the lowest of
/// them (its entries are sorted by address, the first one collapsing the rest), of the
/// first recording that has one (the baseline's, else the dummy's it was made from).
fn matched(tables: &[Option<&EventTable>]) -> Vec<(Vec<String>, Vec<Option<u64>>)> {
    let n = tables.len();
    // By match key: the printed cells, the recording that named them, and the periods.
    let mut by_key: HashMap<Vec<String>, Match> = HashMap::new();
    let mut order: Vec<Vec<String>> = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        for r in table.iter().flat_map(|t| &t.rows) {
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
                (r.cells.clone(), i, vec![None; n])
            });
            if e.1 == i && r.cells < e.0 {
                e.0 = r.cells.clone();
            }
            e.2[i] = Some(e.2[i].unwrap_or(0) + r.period);
        }
    }
    order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .map(|(cells, _, periods)| (cells, periods))
        .collect()
}

/// perf's output order of two rows (`Less`: `a` first): the `-o` recording's column
/// (`hist_entry__cmp_*_idx`), the baseline's period, each recording's column
/// (`hist_entry__cmp_compute`), then the cells (the sort keys' own order).
fn compare(a: &DiffRow, b: &DiffRow, view: &DiffView) -> Ordering {
    let by_order = || {
        if view.order == 0 || view.order >= a.periods.len() {
            return Ordering::Equal;
        }
        let i = view.order;
        match (a.values[i - 1], b.values[i - 1]) {
            (None, None) => Ordering::Equal,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(x), Some(y)) => {
                if !view.compute.without_baseline() && (a.dummy() || b.dummy()) {
                    // Rows without a value (no baseline) below; alike among themselves.
                    a.dummy().cmp(&b.dummy())
                } else {
                    view.compute.order(x, y)
                }
            }
        }
    };
    let by_baseline = || b.periods[0].unwrap_or(0).cmp(&a.periods[0].unwrap_or(0));
    // perf first puts a row another recording has before one none has
    // (`hist_entry__has_pairs`), which the columns' own order, in turn, already does.
    let by_columns = || {
        a.values
            .iter()
            .zip(&b.values)
            .map(|(x, y)| match (x, y) {
                (None, None) => Ordering::Equal,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(x), Some(y)) => view.compute.order(*x, *y),
            })
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    };
    by_order()
        .then_with(by_baseline)
        .then_with(by_columns)
        .then_with(|| a.cells.cmp(&b.cells))
}

#[cfg(test)]
mod tests;
