//! Names as perf's sort keys compare them.

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::process::{CommId, DsoId, Location, Machine};

/// Comms and DSOs as perf's sort keys compare them: by name. Each thread has comm
/// entries of its own and DSOs are told apart by file, but perf 6.1's `sort__comm_cmp`
/// is `strcmp` of the comm strings and `_sort__dso_cmp` (also under `sort__sym_cmp`)
/// `strcmp` of the short names, so a hist entry gathers every thread's samples of one
/// name. Keying rows by the first index of each name makes them the same entries, so the
/// filtered mark is the earliest sample's of all of them, not one per thread.
pub(crate) struct SameNames {
    /// Per comm index: the first comm index of the same string.
    comm: Vec<usize>,
    /// Per DSO: the first DSO of the same short name.
    dso: Vec<DsoId>,
}

impl SameNames {
    pub(crate) fn new(m: &Machine) -> SameNames {
        fn firsts<'a>(names: impl Iterator<Item = &'a str>) -> Vec<usize> {
            let mut first: HashMap<&str, usize> = HashMap::new();
            names
                .enumerate()
                .map(|(i, n)| *first.entry(n).or_insert(i))
                .collect()
        }
        SameNames {
            comm: firsts(m.comms.iter().map(String::as_str)),
            dso: firsts(m.dsos.iter().map(|d| d.short_name.as_str())),
        }
    }

    pub(crate) fn comm(&self, c: usize) -> usize {
        self.comm.get(c).copied().unwrap_or(c)
    }

    pub(crate) fn dso(&self, d: Option<DsoId>) -> Option<DsoId> {
        d.map(|d| self.dso.get(d).copied().unwrap_or(d))
    }
}

/// Comm entries as samples come, each named by the first entry of its string once its
/// string is final: what perf's sort keys compare is the string, and a report or export
/// that counts per comm entry would keep as many counts per address as there are
/// processes running the same program. An entry is final once its thread is named; an
/// unnamed thread's `:tid` entry may still be renamed, and stays itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct SettledComms {
    first: FxHashMap<CommId, CommId>,
    by_name: HashMap<String, CommId>,
}

impl SettledComms {
    /// The entry that stands for the comm of `at` (whose string is the same at the end).
    pub(crate) fn of(&mut self, m: &Machine, at: &Location) -> CommId {
        if !m.named(at.thread) {
            return at.comm;
        }
        let by_name = &mut self.by_name;
        *self.first.entry(at.comm).or_insert_with(|| {
            let name = m.comms.get(at.comm).cloned().unwrap_or_default();
            *by_name.entry(name).or_insert(at.comm)
        })
    }
}
