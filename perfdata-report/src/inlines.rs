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
//! the symbol table's name is not shown. The answers here come from the DSO's DWARF through
//! [`Symbolizer::source_frames`] (the `addr2line` crate, in process, cached per DSO and
//! address), found where symbols are.

use crate::process::{perf_map_pid, Dso, DsoId};
use crate::symbolize::Symbolizer;

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
pub fn inline_entries(
    symbols: &mut Symbolizer,
    id: DsoId,
    dso: &Dso,
    addr: u64,
    symbol: &str,
) -> Vec<InlineEntry> {
    // perf's dso__name: no addr2line of `[...]` DSOs nor of /tmp/perf-PID.map; and
    // none of a DSO without line tables.
    if perf_map_pid(&dso.long_name).is_some() || !symbols.has_source_lines(id, dso) {
        return Vec::new();
    }
    let frames = symbols.source_frames(id, dso, addr);
    if frames.is_empty() {
        // binutils' addr2line names the symbol that covers the address, with no line
        // (`??:?`): one entry, the frame itself.
        return vec![InlineEntry {
            name: symbol.to_string(),
            inlined: false,
            srcline: "??:0".to_string(),
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
            let file = f.file.as_deref().unwrap_or("??");
            let base = file.rsplit('/').next().unwrap_or(file);
            InlineEntry {
                name: name.to_string(),
                inlined: name != symbol,
                srcline: format!("{base}:{}", f.line),
            }
        })
        .collect()
}
