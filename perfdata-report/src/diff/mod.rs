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

use crate::fields::{compare_cells, is_unresolved};
use crate::model::{EventTable, SortKey};

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
    /// `delta-abs`). A NaN (a percent of a total of 0) ties with a NaN and goes after
    /// a number: perf's `cmp_doubles` finds it equal to anything, which no sort can
    /// follow.
    fn order(self, a: f64, b: f64) -> Ordering {
        match (a.is_nan(), b.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            (false, false) => match self {
                Compute::DeltaAbs => b.abs().total_cmp(&a.abs()),
                _ => b.total_cmp(&a),
            },
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
    /// Baseline column is then of the rows kept, as perf sums them again: with absolute
    /// percentages, the filtered ones among them too.
    pub baseline_only: bool,
    /// Percentages of the samples a filter keeps (perf's `--percentage relative`), not
    /// of all.
    pub relative: bool,
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
            relative: false,
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
    /// The length of the command of the thread that made the row (its Command column's
    /// width, as in the report: see `Row::comm_len`).
    pub comm_len: usize,
    /// Whether a filter hides the row (perf's filtered entry: the baseline's own, or
    /// the one of another recording its dummy copies). It is paired and computed as
    /// any other, but not printed.
    pub filtered: bool,
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
    /// with `-b`, perf sums again the rows it keeps; with relative percentages, the
    /// entries shown where the others' are the samples no filter hid.
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
    /// Each event's name, by index ([`crate::report::Counted::event_names`]): perf
    /// prints every event of the baseline, a table without rows for one without
    /// samples. Empty: the events of the tables alone.
    pub names: &'a [String],
}

impl Recording<'_> {
    /// The table of this recording's event that perf matches with event `index` (named
    /// `name`) of `other`: its first event of the same attr type and config (perf's
    /// `evsel_match`), if that event has samples. An event this recording's ids do not
    /// name is matched by name.
    fn matching(&self, index: usize, name: &str, other: &Recording) -> Option<&EventTable> {
        let Some(id) = other.events.get(index) else {
            return self.tables.iter().find(|t| t.event == name);
        };
        let first = self.events.iter().position(|e| e == id)?;
        self.tables.iter().find(|t| t.index == first)
    }

    /// The events perf diff prints of this recording as the baseline, in order: each
    /// event's index, name and table (`None`: no samples).
    fn baseline_events(&self) -> Vec<(usize, &str, Option<&EventTable>)> {
        if self.names.is_empty() {
            return self
                .tables
                .iter()
                .map(|t| (t.index, t.event.as_str(), Some(t)))
                .collect();
        }
        self.names
            .iter()
            .enumerate()
            .map(|(i, name)| (i, name.as_str(), self.tables.iter().find(|t| t.index == i)))
            .collect()
    }
}

/// The diff of `recordings[0]` (the baseline) with each other recording: per event of
/// the baseline, samples or not (a recording without the event has no row of it), rows
/// whose cells are of `keys` matched, computed and sorted as `view` says.
pub fn diff(recordings: &[Recording], keys: &[SortKey], view: &DiffView) -> Vec<EventDiff> {
    let Some((base, others)) = recordings.split_first() else {
        return Vec::new();
    };
    base.baseline_events()
        .into_iter()
        .map(|(index, name, table)| {
            let mut event = vec![table];
            event.extend(others.iter().map(|o| o.matching(index, name, base)));
            event_diff(name, &event, keys, view)
        })
        .collect()
}

/// A percent of `total`, as perf's `period_percent` divides: unguarded, so of a total
/// of 0 (a filter that left a recording nothing, with relative percentages) it is
/// infinite, or NaN for nothing of nothing.
fn percent(p: u64, total: u64) -> f64 {
    100.0 * p as f64 / total as f64
}

/// The rows of event `name` over the recordings (`None`: the recording lacks it).
fn event_diff(
    name: &str,
    tables: &[Option<&EventTable>],
    keys: &[SortKey],
    view: &DiffView,
) -> EventDiff {
    let n = tables.len();
    // The totals as perf's samples made them, which the values are of: with relative
    // percentages, the period of the samples no filter hid.
    let counted: Vec<u64> = tables
        .iter()
        .map(|t| {
            t.map_or(0, |t| {
                if view.relative {
                    t.unfiltered_period
                } else {
                    t.period
                }
            })
        })
        .collect();
    // The baseline's as its output sort sums them again, over its entries (with
    // relative percentages, those shown, each with all its samples).
    let mut totals = counted.clone();
    totals[0] = tables[0].map_or(0, |t| t.period);
    let mut rows: Vec<DiffRow> = matched(tables)
        .into_iter()
        .map(|m| {
            let values = (1..n)
                .map(|i| value(view.compute, m.periods[0], m.periods[i]?, &counted, i))
                .collect();
            DiffRow {
                cells: m.cells,
                periods: m.periods,
                values,
                comm_len: m.comm_len,
                filtered: m.filtered,
            }
        })
        .collect();
    if view.baseline_only {
        // perf drops the baseline's entries no other recording has; the values were
        // computed before, of the whole.
        rows.retain(|r| !r.dummy() && r.has_pairs());
    }
    if view.baseline_only || view.relative {
        // Sorting its output, perf sums the baseline's period again over the entries
        // left, as collapsed (filtered ones too, unless percentages are relative: a
        // shown entry then counts the hidden ones collapsed into it).
        totals[0] = rows
            .iter()
            .filter(|r| !(view.relative && r.filtered))
            .filter_map(|r| r.periods[0])
            .sum();
    }
    rows.sort_by(|a, b| compare(a, b, keys, view));
    EventDiff {
        event: name.to_string(),
        totals,
        rows,
    }
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

/// A matched row.
struct Match {
    /// Its cells, as the recording that named them printed them.
    cells: Vec<String>,
    /// The recording that named them (the first that has the row).
    by: usize,
    /// Its period in each recording.
    periods: Vec<Option<u64>>,
    /// Its command's length, in the recording that named it.
    comm_len: usize,
    /// Whether that recording's filter hid it.
    filtered: bool,
}

/// Rows matched over the recordings: each row's printed cells and its period in each.
/// Rows printing alike are summed, as perf's collapsed entries are one. An unresolved
/// symbol (`[.] 0x...`) matches every unresolved symbol of the same other cells: perf's
/// diff collapses a DSO's unnamed addresses into one entry, shown with the lowest of
/// them (its entries are sorted by address, the first one collapsing the rest), of the
/// first recording that has one (the baseline's, else the dummy's it was made from).
fn matched(tables: &[Option<&EventTable>]) -> Vec<Match> {
    let n = tables.len();
    // By match key: the printed cells, the recording that named them, and the periods.
    let mut by_key: HashMap<Vec<String>, Match> = HashMap::new();
    let mut order: Vec<Vec<String>> = Vec::new();
    for (i, table) in tables.iter().enumerate() {
        // perf pairs the entries a filter hides too (its hists__match walks them all).
        let shown = table.iter().flat_map(|t| &t.rows).map(|r| (r, false));
        let hidden = table.iter().flat_map(|t| &t.filtered).map(|r| (r, true));
        for (r, filtered) in shown.chain(hidden) {
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
                Match {
                    cells: r.cells.clone(),
                    by: i,
                    periods: vec![None; n],
                    comm_len: r.comm_len,
                    filtered,
                }
            });
            // Rows printing alike are one, named by the lowest and hidden as it is
            // (perf's collapsed entry keeps the first entry's flag, adding the others'
            // periods to it, hidden or not).
            if e.by == i && r.cells < e.cells {
                e.cells = r.cells.clone();
                e.comm_len = r.comm_len;
                e.filtered = filtered;
            }
            e.periods[i] = Some(e.periods[i].unwrap_or(0) + r.period);
        }
    }
    order
        .into_iter()
        .filter_map(|k| by_key.remove(&k))
        .collect()
}

/// perf's output order of two rows (`Less`: `a` first): the `-o` recording's column
/// (`hist_entry__cmp_*_idx`), the baseline's period, each recording's column
/// (`hist_entry__cmp_compute`), then the cells as each of `keys` orders them (perf's
/// `sort` of the key: a symbol by its name, without its `[k] ` mode).
fn compare(a: &DiffRow, b: &DiffRow, keys: &[SortKey], view: &DiffView) -> Ordering {
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
        .then_with(|| {
            keys.iter()
                .enumerate()
                .map(|(i, &k)| compare_cells(k, &a.cells[i], &b.cells[i]))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        })
        .then_with(|| a.cells.cmp(&b.cells))
}

#[cfg(test)]
mod tests;
