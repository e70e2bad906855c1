//! perf's trees of hist entries: `hists->entries_in`, where `hists__findnew_entry`
//! looks each sample's entries up and inserts those it misses, and
//! `entries_collapsed`, where `hists__collapse_resort` moves them, merging equals.
//!
//! Both walk a red-black tree with `hist_entry__cmp` (each sort key's `se_cmp`), and
//! for the `sym` key that comparison is not one order: sort.c's `_sort__sym_cmp`
//! compares a symbol with an inlined one by name (the new entry's name against the
//! node's, the other way round from addresses) and two others by start address. So
//! where inlined and out-of-line functions of one DSO meet, a walk can pass an entry
//! that holds an equal key by and insert a second one: perf prints such a function on
//! two rows. The same insertions into the same tree give the same shape; this is that
//! tree, balanced as lib/rbtree.c ([`crate::callgraph::rbtree`]).

use std::cmp::Ordering;

use crate::callgraph::rbtree::{Links, NIL};
use crate::inlines::INLINED;
use crate::keys::Value;
use crate::model::{Replay, SortKey};
use crate::symbolize::SymbolName;

/// One event's tree of entries: each entry is the row its first key was named
/// ([`crate::keys::Rows`]), which perf's comparison reads.
#[derive(Debug, Default)]
pub(crate) struct Entries {
    links: Links,
    root: u32,
    rows: Vec<u32>,
}

impl Entries {
    /// No entries.
    pub(crate) fn new() -> Entries {
        Entries {
            root: NIL,
            ..Entries::default()
        }
    }

    /// How many entries the tree holds (each insertion changes its shape).
    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The row entry `e` was made for.
    pub(crate) fn row(&self, e: u32) -> u32 {
        self.rows[e as usize]
    }

    /// perf's `hists__findnew_entry`: the entry the walk from the root finds equal to
    /// `row` (`cmp(node's row, row)`, less going left), else a new one where the walk
    /// ended; whether it is new.
    pub(crate) fn findnew(&mut self, row: u32, cmp: impl Fn(u32, u32) -> Ordering) -> (u32, bool) {
        let (mut at, mut parent, mut side) = (self.root, NIL, 0);
        while at != NIL {
            side = match cmp(self.rows[at as usize], row) {
                Ordering::Equal => return (at, false),
                Ordering::Less => 0,
                Ordering::Greater => 1,
            };
            parent = at;
            at = self.links.child(at, side);
        }
        let z = self.rows.len() as u32;
        self.rows.push(row);
        self.links.insert(&mut self.root, z, parent, side);
        (z, true)
    }

    /// perf's `hists__collapse_resort`: every entry, in the tree's order, inserted into
    /// a new tree by the same walk, an entry found equal there merged into the one it
    /// finds.
    pub(crate) fn collapse(&self, cmp: impl Fn(u32, u32) -> Ordering) -> Collapsed {
        let mut order = Vec::with_capacity(self.rows.len());
        self.links.in_order(self.root, &mut order);
        let mut collapsed = Entries::new();
        let mut out = Collapsed {
            into: vec![0; self.rows.len()],
            first: Vec::new(),
            part: vec![0; self.rows.len()],
        };
        let mut merged: Vec<u32> = Vec::new();
        for e in order {
            let (c, new) = collapsed.findnew(self.rows[e as usize], &cmp);
            if new {
                out.first.push(e);
                merged.push(0);
            }
            out.into[e as usize] = c;
            out.part[e as usize] = merged[c as usize];
            merged[c as usize] += 1;
        }
        out
    }

    /// The collapse of a tree that has no collapse pass: each entry its own.
    pub(crate) fn uncollapsed(&self) -> Collapsed {
        let all: Vec<u32> = (0..self.rows.len() as u32).collect();
        Collapsed {
            into: all.clone(),
            first: all,
            part: vec![0; self.rows.len()],
        }
    }
}

/// Where [`Entries::collapse`] put each entry.
#[derive(Debug, Clone)]
pub(crate) struct Collapsed {
    /// Each entry's entry in the collapsed tree.
    pub(crate) into: Vec<u32>,
    /// Each collapsed entry's first entry (the one the others were merged into).
    pub(crate) first: Vec<u32>,
    /// Each entry's place among those merged into its collapsed entry, in the order
    /// they were (0: the first; perf's `callchain_merge` then merges each other's call
    /// graph into the first's, in this order).
    pub(crate) part: Vec<u32>,
}

/// Whether perf's comparison of entries is modelled for the sort keys `keys` (others
/// keep exact keys), and whether it merges entries in a collapse pass (a key with its
/// own `se_collapse`: comm).
pub(crate) fn modelled(keys: &[SortKey]) -> Option<bool> {
    let known = keys.iter().all(|k| {
        matches!(
            k,
            SortKey::Comm | SortKey::Pid | SortKey::Dso | SortKey::Sym
        )
    });
    (known && keys.contains(&SortKey::Sym)).then(|| keys.contains(&SortKey::Comm))
}

/// Whether a row's symbol is an inlined function's (perf's `sym->inlined`).
pub(crate) fn inlined(values: &[Value]) -> bool {
    values.iter().any(|v| {
        matches!(v, Value::Sym(_, SymbolName::Function { name, .. }) if name.ends_with(INLINED))
    })
}

/// The sign of an `int64_t` perf computes as a difference of two `u64`s.
fn wrapped(left: u64, right: u64) -> Ordering {
    (right.wrapping_sub(left) as i64).cmp(&0)
}

/// perf's `cmp_null`: none before some.
fn cmp_null<T>(l: &Option<T>, r: &Option<T>) -> Ordering {
    match (l, r) {
        (None, None) => Ordering::Equal,
        (None, _) => Ordering::Less,
        _ => Ordering::Greater,
    }
}

/// One sort key's value as perf's comparison reads it, its strings as their ranks
/// in byte order (`strcmp`'s), so that comparing is comparing numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Comm(u32),
    Thread(i32),
    Dso(Option<u32>),
    /// The DSO, and the function (start, name without ` (inlined)`, whether inlined)
    /// or else the address.
    Sym(Option<u32>, Result<(u64, u32, bool), u64>),
    Other,
}

/// Every row's [`Part`]s, numbered as the rows.
pub(crate) struct Parts(Vec<Vec<Part>>);

impl Parts {
    /// The parts of each of `rows` (their values, by row number). `verbose`: perf's
    /// `_sort__dso_cmp` compares DSOs by their long names (paths) under `-v`, by their
    /// short names otherwise, so the trees, and where they split a function, differ.
    pub(crate) fn new<'a>(
        replay: &Replay,
        rows: impl Iterator<Item = &'a [Value]>,
        verbose: bool,
    ) -> Parts {
        let m = &replay.machine;
        let dso_name = |d: usize| -> &str {
            if verbose {
                m.dsos[d].long_name.as_str()
            } else {
                m.dsos[d].short_name.as_str()
            }
        };
        let rows: Vec<&[Value]> = rows.collect();
        let bare = |n: &'a str| n.strip_suffix(INLINED).unwrap_or(n);
        let (mut comms, mut dsos, mut names) = (Vec::new(), Vec::new(), Vec::new());
        for v in rows.iter().flat_map(|r| r.iter()) {
            match v {
                Value::Comm(c) => comms.push(m.comms[*c].as_str()),
                Value::Dso(Some(d)) => dsos.push(dso_name(*d)),
                Value::Sym(d, name) => {
                    dsos.extend(d.map(dso_name));
                    if let SymbolName::Function { name, .. } = name {
                        names.push(bare(name));
                    }
                }
                _ => {}
            }
        }
        for list in [&mut comms, &mut dsos, &mut names] {
            list.sort_unstable();
            list.dedup();
        }
        let rank = |list: &[&str], s: &str| list.binary_search(&s).unwrap_or(0) as u32;
        let dso = |d: &Option<usize>| d.map(|d| rank(&dsos, dso_name(d)));
        let parts = rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|v| match v {
                        Value::Comm(c) => Part::Comm(rank(&comms, &m.comms[*c])),
                        Value::Thread(t) => Part::Thread(*t),
                        Value::Dso(d) => Part::Dso(dso(d)),
                        Value::Sym(d, SymbolName::Function { start, name }) => Part::Sym(
                            dso(d),
                            Ok((*start, rank(&names, bare(name)), name.ends_with(INLINED))),
                        ),
                        Value::Sym(d, SymbolName::Address(a)) => Part::Sym(dso(d), Err(*a)),
                        _ => Part::Other,
                    })
                    .collect()
            })
            .collect();
        Parts(parts)
    }

    /// perf's `hist_entry__cmp(left, right)` of rows `left` and `right`, key by key
    /// (`keys` are those [`modelled`] accepts): the first key that differs decides.
    pub(crate) fn cmp(&self, left: u32, right: u32) -> Ordering {
        if left == right {
            return Ordering::Equal;
        }
        let (l, r) = (&self.0[left as usize], &self.0[right as usize]);
        l.iter()
            .zip(r)
            .map(|(l, r)| key_cmp(l, r))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    }
}

/// One sort key's `se_cmp`.
fn key_cmp(l: &Part, r: &Part) -> Ordering {
    match (l, r) {
        // sort__comm_cmp: strcmp(right, left).
        (Part::Comm(l), Part::Comm(r)) => r.cmp(l),
        // sort__thread_cmp: right's tid - left's.
        (Part::Thread(l), Part::Thread(r)) => r.cmp(l),
        (Part::Dso(l), Part::Dso(r)) => dso_cmp(l, r),
        (Part::Sym(ld, ls), Part::Sym(rd, rs)) => sym_cmp(ld, ls, rd, rs),
        _ => Ordering::Equal,
    }
}

/// sort__dso_cmp: `_sort__dso_cmp(right's map, left's map)`, names compared as
/// `strcmp(right, left)`, no DSO first.
fn dso_cmp(l: &Option<u32>, r: &Option<u32>) -> Ordering {
    match (l, r) {
        (Some(l), Some(r)) => r.cmp(l),
        _ => cmp_null(l, r),
    }
}

/// sort.c's `sort__sym_cmp`: two entries without a symbol by address, others by DSO
/// then `_sort__sym_cmp`.
fn sym_cmp(
    ld: &Option<u32>,
    ls: &Result<(u64, u32, bool), u64>,
    rd: &Option<u32>,
    rs: &Result<(u64, u32, bool), u64>,
) -> Ordering {
    if let (Err(li), Err(ri)) = (ls, rs) {
        return wrapped(*li, *ri);
    }
    let by_dso = dso_cmp(ld, rd);
    if by_dso.is_ne() {
        return by_dso;
    }
    let (Ok((lstart, lname, linl)), Ok((rstart, rname, rinl))) = (ls, rs) else {
        return cmp_null(&ls.ok(), &rs.ok());
    };
    if *linl || *rinl {
        // By name (strcmp(left, right)); one name over ranges that overlap (an inlined
        // function's range is its frame function's: one start) is one symbol.
        let by_name = lname.cmp(rname);
        if by_name.is_ne() || lstart == rstart {
            return by_name;
        }
    }
    wrapped(*lstart, *rstart)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as (start, name): perf's `_sort__sym_cmp` of one DSO.
    fn sym(start: u64, name: &str) -> Vec<Value> {
        vec![Value::Sym(
            None,
            SymbolName::Function {
                start,
                name: name.to_string(),
            },
        )]
    }

    fn cmp_of(rows: &[Vec<Value>]) -> impl Fn(u32, u32) -> Ordering + '_ {
        let mut names: Vec<&str> = rows
            .iter()
            .map(|r| match &r[0] {
                Value::Sym(_, SymbolName::Function { name, .. }) => {
                    name.strip_suffix(INLINED).unwrap_or(name)
                }
                _ => unreachable!(),
            })
            .collect();
        names.sort_unstable();
        names.dedup();
        let parts: Vec<Part> = rows
            .iter()
            .map(|r| match &r[0] {
                Value::Sym(_, SymbolName::Function { start, name }) => {
                    let bare = name.strip_suffix(INLINED).unwrap_or(name);
                    let rank = names.binary_search(&bare).expect("named") as u32;
                    Part::Sym(None, Ok((*start, rank, name.ends_with(INLINED))))
                }
                _ => unreachable!(),
            })
            .collect();
        let parts = Parts(parts.into_iter().map(|p| vec![p]).collect());
        move |a, b| parts.cmp(a, b)
    }

    #[test]
    fn names_go_the_other_way_from_addresses() {
        let rows = [
            sym(0x100, "b_outer"),
            sym(0x200, "a_inner (inlined)"),
            sym(0x300, "z_other"),
        ];
        let c = cmp_of(&rows);
        // By address 0x100 < 0x300: the new entry goes right of the node.
        assert_eq!(c(0, 2), Ordering::Greater);
        // By name: left's "b_outer" > right's "a_inner": greater, right.
        assert_eq!(c(0, 1), Ordering::Greater);
        // An inlined function and one of another start but the same name differ.
        let same = [sym(0x100, "f (inlined)"), sym(0x500, "f")];
        assert_eq!(cmp_of(&same)(0, 1), Ordering::Greater);
        let one = [sym(0x100, "f (inlined)"), sym(0x100, "f (inlined)")];
        assert_eq!(cmp_of(&one)(0, 1), Ordering::Equal);
    }

    /// An inlined function `d` looked up as functions of lower addresses and names
    /// before "d" come: `d` went right of `e` (by name), the others go left of it (by
    /// address), and once one of them is rotated above `e` the walk for `d` turns left
    /// there (by name) and misses it: a second entry.
    #[test]
    fn a_walk_can_miss_an_equal_entry_and_make_a_second() {
        let mut rows = vec![sym(0x300, "e"), sym(0x150, "d (inlined)")];
        let names = ["c", "b", "a", "aa", "ab", "ac", "ad", "ae"];
        for (i, n) in names.iter().enumerate() {
            rows.push(sym(0x100 - 0x10 * i as u64, n));
        }
        let c = cmp_of(&rows);
        let mut t = Entries::new();
        t.findnew(0, &c);
        let (d, _) = t.findnew(1, &c);
        let mut split = None;
        for r in 2..rows.len() as u32 {
            t.findnew(r, &c);
            let (again, new) = t.findnew(1, &c);
            if new {
                split = Some((r, again));
                break;
            }
            assert_eq!(again, d);
        }
        // After c, b, a, aa, ab and ac the root is one of them, d right of it.
        let (r, second) = split.expect("a split");
        assert_eq!((r, t.len()), (7, 9));
        assert_ne!(second, d);
        // Both hold `d`; the collapse pass inserts them in the tree's order into a
        // new tree, where here the second finds the first: one entry again, as perf's
        // default sort (comm has a collapse) often has it.
        let collapsed = t.collapse(&c);
        let into = &collapsed.into;
        assert_eq!(into[d as usize], into[second as usize]);
        assert_eq!(collapsed.first.len(), 8);
        // The first in the tree's order is the one the other is merged into (part 0),
        // the other part 1.
        let kept = collapsed.first[into[d as usize] as usize];
        let other = if kept == d { second } else { d };
        assert!(kept == d || kept == second);
        let parts = [
            collapsed.part[kept as usize],
            collapsed.part[other as usize],
        ];
        assert_eq!(parts, [0, 1]);
    }

    #[test]
    fn a_total_order_never_splits() {
        let rows: Vec<Vec<Value>> = (0..50).map(|i| sym((i * 37 % 50) as u64, "f")).collect();
        let c = cmp_of(&rows);
        let mut t = Entries::new();
        for i in 0..50 {
            t.findnew(i, &c);
        }
        for i in 0..50 {
            assert_eq!(t.findnew(i, &c), (i, false));
        }
        let collapsed = t.collapse(&c);
        assert!(collapsed.part.iter().all(|&p| p == 0));
        let mut seen = collapsed.into.clone();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 50);
    }
}
