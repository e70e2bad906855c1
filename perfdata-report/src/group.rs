//! Event groups as perf 6.1's report shows them: a recording of `-e '{a,b}'` has a
//! GROUP_DESC feature, and `perf report` then prints one table per group, its rows the
//! leader's and every member's hist entries matched by their sort keys (`hists__match`,
//! `hists__link`), with an Overhead and a Samples column per member (perf's
//! `symbol_conf.event_group`, on by default when the recording has groups, off with
//! `--no-group`; `--group` on a recording without groups makes all its events one group,
//! perf's forced leader).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::model::{EventGroup, EventTable, MemberCount, Row};

/// The size of the group each event leads, by event index (1 for an event that leads
/// none): perf says "of events" above the table of an event whose `nr_members` is more
/// than one.
pub fn group_sizes(groups: &[EventGroup], events: usize) -> Vec<usize> {
    let mut sizes = vec![1; events];
    for g in groups {
        if let Some(s) = sizes.get_mut(g.leader) {
            *s = g.size;
        }
    }
    sizes
}

/// The tables as perf's group view prints them: each group whose leader has a table
/// becomes one table (its members' tables folded in, rows matched by their cells, a
/// member without the row counting zero), named by [`EventGroup::describe`], its sample
/// count and period the sums of its members'. Tables of events outside any group are
/// kept as they are.
pub fn group_view(
    tables: Vec<EventTable>,
    groups: &[EventGroup],
    event_names: &[String],
) -> Vec<EventTable> {
    // A group prints once, where its leader's table was; a member whose leader has no
    // table stays as it is.
    let mut slots: Vec<Option<EventTable>> = tables.into_iter().map(Some).collect();
    for i in 0..slots.len() {
        let Some(index) = slots[i].as_ref().map(|t| t.index) else {
            continue;
        };
        let Some(g) = groups.iter().find(|g| g.leader == index) else {
            continue;
        };
        let members: Vec<Option<EventTable>> = g
            .events()
            .skip(1)
            .map(|e| {
                let slot = slots
                    .iter_mut()
                    .find(|s| s.as_ref().is_some_and(|t| t.index == e));
                slot.and_then(Option::take)
            })
            .collect();
        slots[i] = slots[i].take().map(|t| fold(t, g, &members, event_names));
    }
    slots.into_iter().flatten().collect()
}

/// Which event groups a report shows as one table each (perf's `--group` and
/// `--no-group`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GroupView {
    /// The recording's groups (perf's default).
    #[default]
    AsRecorded,
    /// `--group`: the recording's groups, or all its events as one when it has none
    /// (perf's forced leader).
    Forced,
    /// `--no-group`: a table per event.
    None,
}

impl GroupView {
    /// The groups shown for a recording of `events` events whose groups are `recorded`.
    pub fn groups(self, recorded: &[EventGroup], events: usize) -> Vec<EventGroup> {
        match self {
            GroupView::None => Vec::new(),
            GroupView::Forced if recorded.is_empty() => {
                EventGroup::forced(events).into_iter().collect()
            }
            _ => recorded.to_vec(),
        }
    }
}

/// The leader's table with its members' folded in.
fn fold(
    leader: EventTable,
    g: &EventGroup,
    members: &[Option<EventTable>],
    event_names: &[String],
) -> EventTable {
    let zero = |children: bool| MemberCount {
        samples: 0,
        period: 0,
        percent: 0.0,
        children: children.then_some((0, 0.0)),
    };
    let with_children = leader.children;
    let mut rows: Vec<Row> = leader.rows;
    let mut at: HashMap<Vec<String>, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.cells.clone(), i))
        .collect();
    for r in &mut rows {
        r.members = vec![zero(with_children); members.len()];
    }
    let (mut samples, mut period) = (leader.samples, leader.period);
    for (m, table) in members.iter().enumerate() {
        let Some(table) = table else {
            continue;
        };
        samples += table.samples;
        period += table.period;
        for r in &table.rows {
            // perf's hists__link: a row the leader lacks is added with nothing of its own.
            let i = *at.entry(r.cells.clone()).or_insert_with(|| {
                rows.push(Row {
                    cells: r.cells.clone(),
                    samples: 0,
                    period: 0,
                    percent: 0.0,
                    children: with_children.then_some((0, 0.0)),
                    callchain: None,
                    members: vec![zero(with_children); members.len()],
                    comm_len: r.comm_len,
                    verbose: r.verbose.clone(),
                    created: r.created,
                    depth: r.depth,
                });
                rows.len() - 1
            });
            rows[i].members[m] = MemberCount {
                samples: r.samples,
                period: r.period,
                percent: r.percent,
                children: r.children,
            };
        }
    }
    rows.sort_by(group_order);
    EventTable {
        event: g.describe(event_names),
        index: leader.index,
        group_size: g.size,
        samples,
        period,
        rows,
        filtered: Vec::new(),
        unfiltered_period: period,
        children: with_children,
        members: g
            .events()
            .skip(1)
            .map(|e| event_names.get(e).cloned().unwrap_or_default())
            .collect(),
    }
}

/// perf's order of a group's rows: children period first (with `--children`), then the
/// leader's period and each member's in turn (`__hpp__sort`), largest first; then the
/// samples and the cells, as the tables of single events.
fn group_order(a: &Row, b: &Row) -> Ordering {
    let key = |r: &Row| {
        let mut k = vec![r.children.map_or(0, |c| c.0), r.period];
        k.extend(r.members.iter().map(|m| m.period));
        k.push(r.samples);
        k
    };
    key(b).cmp(&key(a)).then_with(|| a.cells.cmp(&b.cells))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cell: &str, samples: u64, period: u64, percent: f64) -> Row {
        Row {
            cells: vec![cell.to_string()],
            samples,
            period,
            percent,
            children: None,
            callchain: None,
            members: Vec::new(),
            comm_len: 0,
            verbose: None,
            created: (0, 0),
            depth: None,
        }
    }

    fn table(index: usize, rows: Vec<Row>) -> EventTable {
        EventTable {
            event: format!("e{index}"),
            index,
            group_size: 1,
            samples: rows.iter().map(|r| r.samples).sum(),
            period: rows.iter().map(|r| r.period).sum(),
            unfiltered_period: rows.iter().map(|r| r.period).sum(),
            rows,
            filtered: Vec::new(),
            children: false,
            members: Vec::new(),
        }
    }

    /// A group of events 0 and 1 with an outside event 2: rows matched by cells, a row
    /// of the member alone added with zeros for the leader, sums in the header.
    #[test]
    fn members_fold_into_their_leaders_table() {
        let names: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let g = EventGroup {
            leader: 0,
            size: 2,
            name: None,
            forced: false,
        };
        let tables = vec![
            table(0, vec![row("x", 3, 30, 75.0), row("y", 1, 10, 25.0)]),
            table(1, vec![row("x", 2, 20, 50.0), row("z", 2, 20, 50.0)]),
            table(2, vec![row("x", 1, 1, 100.0)]),
        ];
        let out = group_view(tables, &[g], &names);
        assert_eq!(out.len(), 2);
        let t = &out[0];
        assert_eq!(t.event, "anon group { a, b }");
        assert_eq!((t.samples, t.period, t.group_size), (8, 80, 2));
        assert_eq!(t.members, ["b"]);
        let cells: Vec<(&str, u64, u64)> = t
            .rows
            .iter()
            .map(|r| (r.cells[0].as_str(), r.period, r.members[0].period))
            .collect();
        assert_eq!(cells, [("x", 30, 20), ("y", 10, 0), ("z", 0, 20)]);
        assert_eq!(t.rows[2].members[0].percent, 50.0);
        assert_eq!(out[1].event, "e2");
        assert!(out[1].members.is_empty());
    }

    #[test]
    fn descriptions_as_perfs() {
        let names: Vec<String> = ["cycles", "instructions"].map(String::from).to_vec();
        let mut g = EventGroup::forced(2).expect("two events");
        assert_eq!(g.describe(&names), "cycles, instructions");
        g.forced = false;
        assert_eq!(g.describe(&names), "anon group { cycles, instructions }");
        g.name = Some("mine".into());
        assert_eq!(g.describe(&names), "mine { cycles, instructions }");
        assert_eq!(EventGroup::forced(1), None);
        assert_eq!(group_sizes(&[g], 3), [2, 1, 1]);
    }
}
