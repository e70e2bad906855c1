//! What a sample is counted by: its raw key as it comes (ids and addresses), and the
//! values perf's sort keys compare once symbols are known, printed as perf prints them.

use crate::intern::Interner;

use crate::callgraph::frames::FrameNamer;
use crate::intern::Chunked;
use crate::model::{Replay, ResolvedSample, SortKey};
use crate::process::{DsoId, Location};
use crate::same_names::SameNames;
use crate::symbolize::{SymbolName, Symbolizer};

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
    /// A tracepoint sample's text; `None` for a sample without one ("N/A").
    Trace(Option<String>),
}

/// What a sample is counted by as it comes: the parts of it the sort keys use (the
/// others left at their defaults), before symbols are looked up. Packed small: a report
/// keeps one per distinct key (a raw key of a symbol is its address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub(crate) struct RawKey {
    event: u32,
    /// The comm entry (entries past 2^32, which no recording reaches, share the last).
    comm: u32,
    tid: i32,
    cpu: u32,
    /// DSO + 1, 0 for none.
    dso: u32,
    /// [`KERNEL`], [`HAS_CPU`], [`CHAIN_IP`], [`ADDRESS_LISTED`].
    flags: u8,
    /// For an entry perf lists at an unwound frame ([`crate::inlines`]): its number
    /// among the frame's entries, innermost 1; 0 for a frame as it is.
    inline: u16,
    addr: u64,
    /// A callchain frame's ip as sampled, which perf's cumulative entries print for an
    /// address without a symbol (`fill_callchain_info` takes the node's ip, not `map_ip`).
    chain_ip: u64,
    /// The sample's trace text ([`SortKey::Trace`]): its number among the distinct texts
    /// plus one, 0 for none.
    trace: u32,
}

const KERNEL: u8 = 1;
const HAS_CPU: u8 = 2;
const CHAIN_IP: u8 = 4;
/// The sample's ip is an address of perf's `--symbols` list.
const ADDRESS_LISTED: u8 = 8;

fn small(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl RawKey {
    /// The event's index.
    pub(crate) fn event(&self) -> usize {
        self.event as usize
    }

    /// The DSO, if the key has one.
    pub(crate) fn dso(&self) -> Option<DsoId> {
        self.dso.checked_sub(1).map(|d| d as usize)
    }

    /// Kernel mode (`[k]`).
    pub(crate) fn kernel(&self) -> bool {
        self.flags & KERNEL != 0
    }

    pub(crate) fn set_kernel(&mut self, kernel: bool) {
        self.flags = (self.flags & !KERNEL) | if kernel { KERNEL } else { 0 };
    }

    /// Key by the sample's DSO and address too (for `--symbols`, which is decided once
    /// the address is named).
    pub(crate) fn locate(&mut self, at: &Location) {
        self.dso = at.dso.map_or(0, |d| small(d + 1));
        self.addr = at.addr;
    }

    /// Mark the key's sample as selected by its address (an address entry of perf's
    /// `--symbols`, see [`crate::filter::SampleFilter::symbol_addresses`]).
    pub(crate) fn set_address_listed(&mut self) {
        self.flags |= ADDRESS_LISTED;
    }

    /// Key a callchain frame by its ip as sampled too.
    pub(crate) fn set_chain_ip(&mut self, ip: u64) {
        self.flags |= CHAIN_IP;
        self.chain_ip = ip;
    }

    /// Key by the trace text numbered `text` (see [`Traces`]).
    pub(crate) fn set_trace(&mut self, text: Option<u32>) {
        self.trace = text.map_or(0, |t| t.saturating_add(1));
    }

    /// Key by the trace text of `other` (a callchain frame by its sample's).
    pub(crate) fn trace_of(&mut self, other: &RawKey) {
        self.trace = other.trace;
    }

    /// Key the `j`th (1: innermost) of the entries perf lists at the frame.
    pub(crate) fn set_inline(&mut self, j: u16) {
        self.inline = j;
    }

    /// perf's `he->ip` of an entry this key makes: the sample's `al->addr` (the
    /// DSO-relative address, or the ip outside every map) for the sample's `own` entry,
    /// a callchain frame's ip as sampled for the others (`fill_callchain_info` takes the
    /// node's ip).
    pub(crate) fn entry_ip(&self, own: bool) -> u64 {
        match self.chain_ip() {
            Some(ip) if !own => ip,
            _ => self.addr,
        }
    }

    /// The DSO plus one, 0 for none, as [`Creator::dso`] holds it.
    pub(crate) fn dso_plus_one(&self) -> u32 {
        self.dso
    }

    fn chain_ip(&self) -> Option<u64> {
        (self.flags & CHAIN_IP != 0).then_some(self.chain_ip)
    }

    fn cpu(&self) -> i64 {
        if self.flags & HAS_CPU != 0 {
            i64::from(self.cpu)
        } else {
            -1
        }
    }
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
    /// Where the entry's frame was in the sample's walk (0: the sample's own entry,
    /// then the callchain's frames in the order perf's cursor meets them): perf makes a
    /// sample's entries in that order, and prints entries of equal overhead in the
    /// order they were made.
    pub(crate) pos: u32,
    /// Its level at the entry's frame: kernel (`[k]`) or not (`[.]`).
    pub(crate) kernel: bool,
    /// perf's `he->ip` of the entry, which `perf report -v` prints before its symbol
    /// (see [`RawKey::entry_ip`]); 0 unless symbols are a sort key.
    pub(crate) ip: u64,
    /// The DSO of the entry's frame plus one, 0 for none (whose symtab origin `-v`
    /// prints); 0 unless symbols or DSOs are a sort key.
    pub(crate) dso: u32,
}

impl Creator {
    /// The entry's DSO, if its frame was in one.
    pub(crate) fn dso(&self) -> Option<DsoId> {
        self.dso.checked_sub(1).map(|d| d as usize)
    }

    /// The earlier of two; `self` on a tie (the entry seen first in a sample's walk).
    pub(crate) fn earlier(self, other: Creator) -> Creator {
        if (other.first, other.pos) < (self.first, self.pos) {
            other
        } else {
            self
        }
    }
}

/// The raw key of a sample's frame `at` (its ip or a callchain entry) for `keys`, the
/// sample's comm entry `comm` (see [`crate::same_names::SettledComms`]).
pub(crate) fn raw_key(keys: &[SortKey], s: &ResolvedSample, at: &Location, comm: usize) -> RawKey {
    let mut k = RawKey {
        event: small(s.event),
        ..RawKey::default()
    };
    let dso = at.dso.map_or(0, |d| small(d + 1));
    for key in keys {
        match key {
            SortKey::Comm => k.comm = small(comm),
            SortKey::Pid | SortKey::Tid => k.tid = s.tid,
            SortKey::Dso => k.dso = dso,
            SortKey::Sym | SortKey::Srcline => {
                k.set_kernel(at.kernel);
                (k.dso, k.addr) = (dso, at.addr);
            }
            SortKey::Cpu => {
                if let Some(cpu) = s.cpu {
                    (k.cpu, k.flags) = (cpu, k.flags | HAS_CPU);
                }
            }
            SortKey::Event | SortKey::Trace => {}
        }
    }
    k
}

/// What a raw key's row is keyed by, symbols looked up, names as perf compares them,
/// trace texts from `traces`.
pub(crate) fn values(
    keys: &[SortKey],
    k: &RawKey,
    replay: &Replay,
    same: &SameNames,
    symbols: &mut Symbolizer,
    traces: &Traces,
) -> Vec<Value> {
    let m = &replay.machine;
    keys.iter()
        .map(|key| match key {
            SortKey::Comm => Value::Comm(same.comm(k.comm as usize)),
            SortKey::Pid => Value::Thread(k.tid),
            SortKey::Tid => Value::Int(i64::from(k.tid)),
            SortKey::Dso => Value::Dso(same.dso(k.dso())),
            SortKey::Sym => {
                let name = match k.dso() {
                    Some(d) if k.inline > 0 => {
                        crate::inlines::entry_name(symbols, d, &m.dsos[d], k.addr, k.inline)
                    }
                    Some(d) => symbols.name(d, &m.dsos[d], k.addr),
                    None => SymbolName::Address(k.addr),
                };
                match (name, k.chain_ip()) {
                    (SymbolName::Address(_), Some(ip)) => Value::Sym(None, SymbolName::Address(ip)),
                    (name @ SymbolName::Address(_), None) => Value::Sym(None, name),
                    (name, _) => Value::Sym(same.dso(k.dso()), name),
                }
            }
            SortKey::Srcline => {
                Value::Srcline(symbols.srcline(k.dso().map(|d| (d, &m.dsos[d])), k.addr))
            }
            SortKey::Cpu => Value::Cpu(k.cpu()),
            SortKey::Event => Value::Event(k.event()),
            SortKey::Trace => {
                Value::Trace(k.trace.checked_sub(1).map(|t| traces.text(t).to_string()))
            }
        })
        .collect()
}

/// Whether the function of a key's address is one of `list` (perf's `--symbols` names:
/// a sample without a symbol is in no list), or its sample's ip one of the addresses.
fn symbol_listed(list: &[String], k: &RawKey, replay: &Replay, symbols: &mut Symbolizer) -> bool {
    if k.flags & ADDRESS_LISTED != 0 {
        return true;
    }
    let Some(d) = k.dso() else {
        return false;
    };
    match symbols.name(d, &replay.machine.dsos[d], k.addr) {
        SymbolName::Function { name, .. } => list.contains(&name),
        SymbolName::Address(_) => false,
    }
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
        Value::Trace(t) => t.clone().unwrap_or_else(|| "N/A".to_string()),
    }
}

/// The distinct trace texts of the samples counted ([`SortKey::Trace`]), numbered as
/// first seen: a report holds each once, as perf's entries hold theirs.
#[derive(Debug, Default)]
pub(crate) struct Traces(Interner<String>);

impl Traces {
    /// The number of `text`.
    pub(crate) fn id(&mut self, text: String) -> u32 {
        self.0.intern(text).0
    }

    /// Text number `id`.
    pub(crate) fn text(&self, id: u32) -> &str {
        self.0.get(id)
    }
}

/// The distinct rows' key values ([`values`]), numbered as first named, and the trace
/// texts their keys number.
#[derive(Debug, Default)]
pub(crate) struct Rows {
    values: Interner<Vec<Value>>,
    traces: Traces,
    /// Rows numbered after the distinct values, each a copy of another's: a second
    /// entry perf made of equal values ([`crate::hist_split`]).
    copies: Vec<u32>,
}

impl Rows {
    /// The number of the row of `values`.
    fn id(&mut self, values: Vec<Value>) -> u32 {
        self.values.intern(values).0
    }

    /// The values of row `id`.
    pub(crate) fn get(&self, id: u32) -> &[Value] {
        let n = self.values.len() as u32;
        match id.checked_sub(n) {
            Some(i) => self.values.get(self.copies[i as usize]),
            None => self.values.get(id),
        }
    }

    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.values.len() + self.copies.len()
    }

    /// The row `id` is a copy of (`id` itself if none).
    pub(crate) fn original(&self, id: u32) -> u32 {
        let n = self.values.len() as u32;
        id.checked_sub(n).map_or(id, |i| self.copies[i as usize])
    }

    /// A new row of row `id`'s values, named as every row is: all rows are named
    /// before any is copied.
    pub(crate) fn copy(&mut self, id: u32) -> u32 {
        let n = self.values.len() as u32;
        let of = id.checked_sub(n).map_or(id, |i| self.copies[i as usize]);
        self.copies.push(of);
        n + self.copies.len() as u32 - 1
    }

    /// Rows whose raw keys number the texts of `traces`.
    pub(crate) fn with_traces(traces: Traces) -> Rows {
        Rows {
            traces,
            ..Rows::default()
        }
    }
}

/// The row of every key of each of `sets`, per set and key. Keys are named one DSO
/// after another, and each DSO's symbols and DWARF are let go of once its keys (and the
/// callchain frames of `frames`, if given) are named, so that memory holds one DSO's
/// tables at a time.
pub(crate) fn name_keys(
    sort: &[SortKey],
    sets: &[&Chunked<RawKey>],
    replay: &Replay,
    symbols: &mut Symbolizer,
    rows: &mut Rows,
    mut frames: Option<&mut FrameNamer>,
    mut symbols_kept: Option<(&[String], &mut Vec<Vec<bool>>)>,
) -> Vec<Vec<u32>> {
    let same = SameNames::new(&replay.machine);
    let mut order: Vec<(u32, u32, u32)> = Vec::new();
    for (set, keys) in sets.iter().enumerate() {
        order.extend(
            keys.iter()
                .enumerate()
                .map(|(i, k)| (k.dso, set as u32, i as u32)),
        );
    }
    // The frames' DSOs are visited too, after the keys of each.
    if let Some(f) = &frames {
        order.extend(f.dsos().map(|d| (d, u32::MAX, 0)));
    }
    order.sort_unstable();
    let mut named: Vec<Vec<u32>> = sets.iter().map(|k| vec![0; k.len()]).collect();
    if let Some((_, kept)) = &mut symbols_kept {
        **kept = sets.iter().map(|k| vec![false; k.len()]).collect();
    }
    for group in order.chunk_by(|a, b| a.0 == b.0) {
        for &(dso, set, i) in group {
            if set == u32::MAX {
                if let Some(f) = frames.as_deref_mut() {
                    f.name_dso(dso, replay, symbols);
                }
                continue;
            }
            let k = sets[set as usize].get(i as usize);
            let v = values(sort, k, replay, &same, symbols, &rows.traces);
            named[set as usize][i as usize] = rows.id(v);
            if let Some((list, kept)) = &mut symbols_kept {
                kept[set as usize][i as usize] = symbol_listed(list, k, replay, symbols);
            }
        }
        if let Some(d) = group[0].0.checked_sub(1) {
            symbols.forget(d as usize);
        }
    }
    named
}
