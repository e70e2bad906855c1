//! What a sample is counted by: its raw key as it comes (ids and addresses), and the
//! values perf's sort keys compare once symbols are known, printed as perf prints them.

use crate::process::{DsoId, Location};
use crate::replay::{Replay, ResolvedSample};
use crate::same_names::SameNames;
use crate::symbolize::{SymbolName, Symbolizer};
use crate::table::SortKey;

/// What a row is keyed by, before it is printed: what perf's sort keys compare. A
/// symbol is its DSO and function, or (without one) its address alone, as perf's
/// `sort__sym_cmp`; its level (`[k]`/`[.]`) is not compared but printed from the
/// entry's [`Creator`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Value {
    Comm(usize),
    Thread(i32),
    Int(i64),
    Cpu(i64),
    Dso(Option<DsoId>),
    Sym(Option<DsoId>, SymbolName),
    Event(usize),
    Srcline(String),
}

/// What a sample is counted by as it comes: the parts of it the sort keys use (the
/// others left at their defaults), before symbols are looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub(crate) struct RawKey {
    pub(crate) event: usize,
    comm: usize,
    tid: i32,
    cpu: i64,
    dso: Option<DsoId>,
    pub(crate) kernel: bool,
    addr: u64,
    /// A callchain frame's ip as sampled, which perf's cumulative entries print for an
    /// address without a symbol (`fill_callchain_info` takes the node's ip, not `map_ip`).
    pub(crate) chain_ip: Option<u64>,
}

/// The sample that created a hist entry, the earliest counted into it: perf prints its
/// thread's name in a Pid cell and its level in a Symbol cell, whatever later samples of
/// the entry had.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Creator {
    /// The sample's number, in the order samples were counted.
    pub(crate) first: u64,
    /// Its thread.
    pub(crate) thread: usize,
    /// Its level at the entry's frame: kernel (`[k]`) or not (`[.]`).
    pub(crate) kernel: bool,
}

impl Creator {
    /// The earlier of two; `self` on a tie (the entry seen first in a sample's walk).
    pub(crate) fn earlier(self, other: Creator) -> Creator {
        if other.first < self.first {
            other
        } else {
            self
        }
    }
}

/// The raw key of a sample's frame `at` (its ip or a callchain entry) for `keys`.
pub(crate) fn raw_key(keys: &[SortKey], s: &ResolvedSample, at: &Location) -> RawKey {
    let mut k = RawKey {
        event: s.event,
        ..RawKey::default()
    };
    for key in keys {
        match key {
            SortKey::Comm => k.comm = s.ip.comm,
            SortKey::Pid | SortKey::Tid => k.tid = s.tid,
            SortKey::Dso => k.dso = at.dso,
            SortKey::Sym | SortKey::Srcline => {
                (k.kernel, k.dso, k.addr) = (at.kernel, at.dso, at.addr)
            }
            SortKey::Cpu => k.cpu = s.cpu.map_or(-1, i64::from),
            SortKey::Event => {}
        }
    }
    k
}

/// What a raw key's row is keyed by, symbols looked up, names as perf compares them.
pub(crate) fn values(
    keys: &[SortKey],
    k: &RawKey,
    replay: &Replay,
    same: &SameNames,
    symbols: &mut Symbolizer,
) -> Vec<Value> {
    let m = &replay.machine;
    keys.iter()
        .map(|key| match key {
            SortKey::Comm => Value::Comm(same.comm(k.comm)),
            SortKey::Pid => Value::Thread(k.tid),
            SortKey::Tid => Value::Int(i64::from(k.tid)),
            SortKey::Dso => Value::Dso(same.dso(k.dso)),
            SortKey::Sym => {
                let name = match k.dso {
                    Some(d) => symbols.name(d, &m.dsos[d], k.addr),
                    None => SymbolName::Address(k.addr),
                };
                match (name, k.chain_ip) {
                    (SymbolName::Address(_), Some(ip)) => Value::Sym(None, SymbolName::Address(ip)),
                    (name @ SymbolName::Address(_), None) => Value::Sym(None, name),
                    (name, _) => Value::Sym(same.dso(k.dso), name),
                }
            }
            SortKey::Srcline => {
                Value::Srcline(symbols.srcline(k.dso.map(|d| (d, &m.dsos[d])), k.addr))
            }
            SortKey::Cpu => Value::Cpu(k.cpu),
            SortKey::Event => Value::Event(k.event),
        })
        .collect()
}

/// A value printed as perf prints it, for the entry `creator` made.
pub(crate) fn cell(replay: &Replay, v: &Value, creator: &Creator) -> String {
    let m = &replay.machine;
    match v {
        Value::Comm(c) => m.comms[*c].clone(),
        Value::Thread(tid) => format!("{tid}:{}", m.comms[m.threads[creator.thread].comm]),
        Value::Int(i) => i.to_string(),
        // perf's "%*.*d" with the header's width: at least three digits, "-001".
        Value::Cpu(c) => match c {
            c if *c < 0 => format!("-{:03}", c.unsigned_abs()),
            c => format!("{c:03}"),
        },
        Value::Dso(d) => d.map_or("[unknown]".to_string(), |d| m.dsos[d].short_name.clone()),
        Value::Sym(_, name) => {
            format!("[{}] {name}", if creator.kernel { 'k' } else { '.' })
        }
        Value::Event(e) => replay.event_names[*e].clone(),
        Value::Srcline(s) => s.clone(),
    }
}
