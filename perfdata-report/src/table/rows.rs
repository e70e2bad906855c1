//! The tally's groups made rows: perf's hist entries (self and children counts of the
//! same values one entry), their cells printed and percentages taken, one table per
//! event. Apart from [`super`] because the counting and this printing of its result
//! are two steps that change for different reasons.

use rustc_hash::FxHashMap;

use super::Count;
use crate::callgraph::CallTree;
use crate::children::ChildrenTables;
use crate::group::group_sizes;
use crate::keys::{cell, Rows};
use crate::model::{ChainDepth, EventTable, Replay, Row};

/// The rows of each event's groups, their cells printed, sorted as perf sorts them;
/// percentages of `totals(event)` (samples, period before filtering) when it gives one
/// and the percentages are not `relative`, else of the rows'.
/// With `origins` (each DSO's symtab origin letter), rows carry their `-v` cells.
/// With `children` (per event: key values -> children period and a thread), rows also
/// have children periods, and rows of children alone are added.
#[allow(clippy::too_many_arguments)] // the tally's parts, taken apart as it ends
pub(super) fn named_tables(
    replay: &Replay,
    names: &Rows,
    groups: Vec<FxHashMap<u32, Count>>,
    children: Option<ChildrenTables>,
    mut trees: FxHashMap<(u32, u32), CallTree>,
    totals: impl Fn(usize) -> Option<(u64, u64)>,
    relative: bool,
    origins: Option<&[char]>,
) -> Vec<EventTable> {
    let with_children = children.is_some();
    let graphed = !trees.is_empty();
    let mut children = children.unwrap_or_default();
    // Groups are perf's hist entries (names compared as perf does, see `SameNames`),
    // each marked filtered by its creator; any that still print the same cells are one
    // row here.
    let mut tables = Vec::new();
    let sizes = group_sizes(&replay.groups, replay.event_names.len());
    for (event, g) in groups.into_iter().enumerate() {
        // perf prints every event that has samples, rows or not (filtered away; with
        // relative percentages its counts are then zero).
        if g.is_empty() && totals(event).is_none_or(|(samples, _)| samples == 0) {
            continue;
        }
        let base = totals(event).filter(|_| !relative);
        let (samples, period) = base.unwrap_or_else(|| {
            (
                g.values().filter(|v| !v.filtered).map(|v| v.samples).sum(),
                g.values().filter(|v| !v.filtered).map(|v| v.period).sum(),
            )
        });
        // perf's hist entries: self and children counts of the same values are one
        // entry, printed as its earliest sample (self or in a callchain) made it.
        let mut entries = g;
        let mut children_of: FxHashMap<u32, (u64, i64)> = FxHashMap::default();
        if let Some(ch) = children.get_mut(event) {
            for (row, c) in ch.drain() {
                let e = entries.entry(row).or_insert(Count {
                    samples: 0,
                    period: 0,
                    kept: 0,
                    creator: c.creator,
                    filtered: c.hidden,
                });
                if e.creator.earlier(c.creator) != e.creator {
                    (e.creator, e.filtered) = (c.creator, c.hidden);
                }
                children_of.insert(row, (c.period, c.rank));
            }
        }
        // An entry its first sample made filtered is not shown (perf's filters); it is
        // kept aside, for perf diff's pairing.
        let pct = |p: u64| {
            if period == 0 {
                0.0
            } else {
                100.0 * p as f64 / period as f64
            }
        };
        // One row per entry, even where two print alike: perf's `sort__sym_cmp` tells
        // functions apart by their start, so two kernel functions of one name (kallsyms
        // has eleven `p4d_offset`) are two rows, as in perf.
        let all: Vec<(Row, bool)> = entries
            .into_iter()
            .map(|(row, c)| {
                let (ch, rank) = children_of.get(&row).copied().unwrap_or((0, 0));
                let callchain = trees.remove(&(event as u32, row));
                let row = Row {
                    cells: names
                        .get(row)
                        .iter()
                        .map(|v| match (v, origins) {
                            (crate::keys::Value::Dso(d), Some(_)) => {
                                crate::verbose::dso_cell(replay, *d)
                            }
                            _ => cell(replay, v, &c.creator),
                        })
                        .collect(),
                    samples: c.samples,
                    period: c.period,
                    percent: pct(c.period),
                    children: with_children.then(|| (ch, pct(ch))),
                    // perf's __hpp__sort_acc asks the depth where it draws graphs.
                    depth: (with_children && graphed).then_some(ChainDepth {
                        thread: c.creator.thread,
                        rank,
                    }),
                    callchain,
                    created: (c.creator.first, c.creator.pos),
                    verbose: origins.map(|o| Box::new(crate::verbose::cells(&c.creator, o))),
                    members: Vec::new(),
                    comm_len: replay
                        .machine
                        .threads
                        .get(c.creator.thread)
                        .and_then(|t| replay.machine.comms.get(t.comm))
                        .map_or(0, String::len),
                };
                (row, c.filtered)
            })
            .collect();
        let (mut rows, mut filtered) = (Vec::new(), Vec::new());
        for (row, hidden) in all {
            if hidden {
                filtered.push(row);
            } else {
                rows.push(row);
            }
        }
        tables.push(EventTable {
            event: replay.event_names[event].clone(),
            index: event,
            group_size: sizes[event],
            members: Vec::new(),
            samples,
            period,
            rows,
            filtered,
            unfiltered_period: period,
            children: with_children,
        });
    }
    tables
}

/// The Self counts of the functions perf made two entries of (`own`: per (event,
/// row), samples, period and first sample, see [`crate::hist_split::Refined::own`]),
/// in place of their exact keys' counts.
pub(super) fn split_own(
    groups: &mut [FxHashMap<u32, Count>],
    own: &FxHashMap<(usize, u32), (u64, u64, u64)>,
    rows: &Rows,
) {
    let mut of: FxHashMap<(usize, u32), Count> = FxHashMap::default();
    for &(event, row) in own.keys() {
        let original = rows.original(row);
        if let Some(c) = groups.get_mut(event).and_then(|g| g.remove(&original)) {
            of.insert((event, original), c);
        }
    }
    for (&(event, row), &(samples, period, first)) in own {
        let Some(c) = of.get(&(event, rows.original(row))) else {
            continue;
        };
        if samples == 0 {
            continue;
        }
        let mut c = *c;
        (c.samples, c.period) = (samples, period);
        (c.creator.first, c.creator.pos) = (first, 0);
        groups[event].insert(row, c);
    }
}
