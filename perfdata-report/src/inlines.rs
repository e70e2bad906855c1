//! The functions perf 6.1 lists at a callchain frame from the binary's DWARF (its
//! `--inline`, on by default): tools/perf/util/machine.c's `append_inlines` with
//! srcline.c's `addr2line` and `new_inline_sym`.
//!
//! perf 6.1 calls `append_inlines` for the frames a DWARF unwinding of a user stack copy
//! gives (`unwind_entry`, `--call-graph dwarf`), not for the frames of a recorded
//! callchain (`-g`: its `add_callchain_ip` does not; later perfs do). For such a frame
//! with a symbol, in a DSO whose symbol file has line tables, it asks binutils' addr2line
//! (`-i -f`) about the address and turns each answer, innermost first, into an entry:
//! the frame's own symbol where the answer names it, else a new symbol of that name, at
//! the frame symbol's start, marked inlined (printed with ` (inlined)`, counted as a
//! function of its own by perf report). So the outermost answer stands for the frame
//! itself, and where DWARF names the function otherwise than the symbol table
//! (`init_cpu_features` for `init_cpu_features.constprop.0`, `__libc_start_main_impl` for
//! `__libc_start_main@@GLIBC_2.34`) perf lists it as inlined too, under DWARF's name, and
//! the symbol table's name is not shown. The answers here come from the DSO's DWARF (the
//! `addr2line` crate, in process), found where symbols are, and are kept per DSO and
//! address by the [`Symbolizer`] that found them: a report's counting hands them to its
//! naming, which so reads no DWARF again.

use crate::process::{perf_map_pid, Dso, DsoId, Location, Machine};
use crate::srcline::SourceFrame;
use crate::symbolize::{SymbolName, Symbolizer};

/// perf's MAX_INLINE_NEST: the answers after the first that perf takes at most.
const MAX_INLINE_NEST: usize = 1024;

/// One entry perf lists for a frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlineEntry {
    /// The function's name, as perf prints it.
    pub name: String,
    /// A function inlined at the address (or named by DWARF otherwise than the frame's
    /// symbol): printed with ` (inlined)`, without its DSO. False for the frame's own
    /// symbol.
    pub inlined: bool,
    /// The entry's own source position as perf prints it (`file.c:LINE`, basename):
    /// the address's line for the innermost, the line of the inlined call for the
    /// others. perf script's srcline field prints it in place of the address's.
    pub srcline: String,
}

/// The entries perf 6.1 lists for the frame at `addr` (DSO-relative) of `dso`, whose
/// symbol is named `symbol`, innermost first (perf's callee order; reverse them for
/// `caller`). Empty when perf lists the frame alone, as a recorded frame: a DSO perf
/// asks no addr2line of (the kernel's, a JIT's map, one without line tables). An
/// address DWARF knows nothing of is one entry, the frame itself, with srcline `??:0`.
/// Found once per address, and kept by `symbols`.
pub fn inline_entries(
    symbols: &mut Symbolizer,
    id: DsoId,
    dso: &Dso,
    addr: u64,
    symbol: &str,
) -> Vec<InlineEntry> {
    symbols.inline_entries(id, dso, addr, symbol).to_vec()
}

/// Whether perf asks addr2line about frames of `dso` at all (perf's dso__name): not of
/// `[...]` DSOs, nor of /tmp/perf-PID.map, nor of a DSO without line tables.
pub(crate) fn asks_addr2line(symbols: &mut Symbolizer, id: DsoId, dso: &Dso) -> bool {
    perf_map_pid(&dso.long_name).is_none() && symbols.has_source_lines(id, dso)
}

/// The entries perf lists for a frame whose symbol is `symbol`, from the DWARF `frames`
/// at its address (innermost first); without frames, from the file binutils' symbol
/// table gives the address (`symbol_file`, see [`crate::srcline::symbol_file`]).
pub(crate) fn entries_of(
    frames: &[SourceFrame],
    symbol: &str,
    symbol_file: Option<&str>,
) -> Vec<InlineEntry> {
    if frames.is_empty() {
        // binutils' addr2line names the symbol that covers the address, with no line
        // (`FILE:?`, `??:?` without a file): one entry, the frame itself.
        return vec![InlineEntry {
            name: symbol.to_string(),
            inlined: false,
            srcline: crate::srcline::file_line(symbol_file.unwrap_or("??"), 0),
        }];
    }
    let last = frames.len() - 1;
    frames
        .iter()
        .enumerate()
        .take(1 + MAX_INLINE_NEST)
        .map(|(i, f)| {
            // Without a DWARF function, binutils' addr2line names the symbol that
            // covers the address (the outermost answer) and prints `??` otherwise.
            let name = match (&f.function, i == last) {
                (Some(n), _) => n.as_str(),
                (None, true) => symbol,
                (None, false) => "??",
            };
            // perf's srcline_from_fileline of addr2line's `FILE:LINE` (`??` for no
            // file, `?`, read as 0, for no line), the file's basename.
            let file = f.perf_file.as_deref().or(f.file.as_deref()).unwrap_or("??");
            InlineEntry {
                name: name.to_string(),
                inlined: name != symbol,
                srcline: crate::srcline::file_line(file, f.line),
            }
        })
        .collect()
}

/// What perf appends to an inlined function's name wherever it prints it.
pub(crate) const INLINED: &str = " (inlined)";

/// The name of the `j`th (1: innermost) entry perf lists at `addr` of `dso`: an inlined
/// function's name with [`INLINED`] after it, at its frame symbol's start (perf's
/// `new_inline_sym`), or the frame's own symbol.
pub(crate) fn entry_name(
    symbols: &mut Symbolizer,
    id: DsoId,
    dso: &Dso,
    addr: u64,
    j: u16,
) -> SymbolName {
    let base = symbols.name(id, dso, addr);
    let SymbolName::Function { start, name } = &base else {
        return base;
    };
    let entries = symbols.inline_entries(id, dso, addr, name);
    match usize::from(j).checked_sub(1).and_then(|i| entries.get(i)) {
        Some(e) if e.inlined => SymbolName::Function {
            start: *start,
            name: format!("{}{INLINED}", e.name),
        },
        _ => base,
    }
}

/// The source line perf keeps with the `j`th entry at `addr` (its callchain node's
/// srcline): the entry's own, else the address's as an address-keyed graph prints it.
pub(crate) fn entry_srcline(
    symbols: &mut Symbolizer,
    dso: Option<(DsoId, &Dso)>,
    addr: u64,
    j: u16,
) -> String {
    let own = dso.and_then(|(id, d)| {
        let base = match symbols.name(id, d, addr) {
            SymbolName::Function { name, .. } => name,
            SymbolName::Address(_) => return None,
        };
        let entries = symbols.inline_entries(id, d, addr, &base);
        let i = usize::from(j).checked_sub(1)?;
        entries.get(i).map(|e| e.srcline.clone())
    });
    own.unwrap_or_else(|| symbols.graph_srcline(dso, addr))
}

/// The count [`InlineCounts::at`] gives while its answer is looked for: the frame's
/// key stands for its entries until [`InlineCounts::finish`] says how many they are
/// (never a real count: perf takes at most [`MAX_INLINE_NEST`] + 1 entries).
pub(crate) const PENDING: u16 = u16::MAX;

/// Addresses asked about at a time (a DSO the first time with its description).
type Asks = Vec<(DsoId, Option<Dso>, u64)>;

/// Asks sent to the looking thread at a time: fewer wake-ups than one each.
const ASKS: usize = 64;

/// How many entries perf lists at each unwound frame, found as a report's samples are
/// counted (their walks hold one key per entry): the symbols and DWARF of the DSOs that
/// unwound frames are in, loaded once each, and a count per distinct frame address.
/// They are looked for on a thread of their own, beside the replay (which so only
/// unwinds): reading libc's and libpython's compressed DWARF and their line programs
/// was a third of a 104 MiB python recording's replay.
#[derive(Debug)]
pub(crate) struct InlineCounts {
    /// The addresses asked about, and the DSOs described to the looking thread.
    asked: rustc_hash::FxHashSet<(DsoId, u64)>,
    described: rustc_hash::FxHashSet<DsoId>,
    asks: Asks,
    tx: Option<std::sync::mpsc::Sender<Asks>>,
    looking: Option<std::thread::JoinHandle<Found>>,
}

/// What the looking thread found: a count per address, and the entries.
type Found = (
    rustc_hash::FxHashMap<(DsoId, u64), u16>,
    crate::symbolize::InlineEntries,
);

impl InlineCounts {
    /// Counts with binaries found as `opts` says.
    pub(crate) fn new(opts: crate::symbolize::SymbolOptions) -> Self {
        let (tx, rx) = std::sync::mpsc::channel::<Asks>();
        let looking = std::thread::spawn(move || {
            let mut symbols = Symbolizer::new(opts);
            let mut dsos = rustc_hash::FxHashMap::default();
            let mut counts = rustc_hash::FxHashMap::default();
            for asks in rx {
                for (d, dso, addr) in asks {
                    if let Some(dso) = dso {
                        dsos.insert(d, dso);
                    }
                    let n = dsos
                        .get(&d)
                        .map_or(0, |dso| count(&mut symbols, d, dso, addr));
                    counts.insert((d, addr), n);
                }
            }
            (counts, symbols.into_inline_entries())
        });
        InlineCounts {
            asked: Default::default(),
            described: Default::default(),
            asks: Vec::new(),
            tx: Some(tx),
            looking: Some(looking),
        }
    }

    /// The number of entries perf lists at the unwound frame `at`: 0 where it lists
    /// the frame as it is, [`PENDING`] until [`InlineCounts::finish`] says.
    pub(crate) fn at(&mut self, m: &Machine, at: &Location) -> u16 {
        let Some(d) = at.dso else {
            return 0;
        };
        let dso = &m.dsos[d];
        if !dso.ksymbols.is_empty() {
            return 0;
        }
        if self.asked.insert((d, at.addr)) {
            let described = !self.described.insert(d);
            self.asks
                .push((d, (!described).then(|| dso.clone()), at.addr));
            // A DSO new to the looking thread goes at once: it loads the DSO's symbols
            // and DWARF (the longest of its work) while the next asks gather.
            if self.asks.len() >= ASKS || !described {
                self.send();
            }
        }
        PENDING
    }

    fn send(&mut self) {
        let asks = std::mem::take(&mut self.asks);
        // A looking thread that died (a panic) answers nothing: its counts are 0, the
        // frames as they are.
        if let Some(tx) = &self.tx {
            let _ = tx.send(asks);
        }
    }

    /// The count at each address asked about (`(DSO, address)`: 0 for none found), and
    /// the entries found (see [`Symbolizer::adopt_inline_entries`]); the symbols and
    /// DWARF loaded to find them go.
    pub(crate) fn finish(
        mut self,
    ) -> (
        rustc_hash::FxHashMap<(DsoId, u64), u16>,
        crate::symbolize::InlineEntries,
    ) {
        self.send();
        drop(self.tx.take());
        self.looking
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_default()
    }
}

/// The number of entries perf lists at `addr` of `dso` when it is an unwound frame.
fn count(symbols: &mut Symbolizer, d: DsoId, dso: &Dso, addr: u64) -> u16 {
    let Some((_, name)) = symbols.function(d, dso, addr) else {
        return 0;
    };
    let name = name.to_string();
    let entries = symbols.inline_entries(d, dso, addr, &name);
    if entries.len() > 1 || entries.iter().any(|e| e.inlined) {
        u16::try_from(entries.len()).unwrap_or(u16::MAX - 1)
    } else {
        0
    }
}
