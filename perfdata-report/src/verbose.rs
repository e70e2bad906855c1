//! `perf report -v`'s entries: perf 6.1's sort.c prints a DSO by its long name
//! (`_hist_entry__dso_snprintf`: `dso->long_name` under `verbose`, the column as wide as
//! the longest, `dso__name_len`) and a symbol after the entry's address and the letter
//! of the kind of file its DSO's symbols came from (`_hist_entry__sym_snprintf`:
//! `%-#18llx %c ` before `[.] name`, `dso__symtab_origin`; the column 21 wider for an
//! entry with a symbol, `hists__calc_col_len`, not for one without). The other columns
//! print as they do without `-v`. perf also compares DSOs by their long names under
//! `-v` (`_sort__dso_cmp`), so that rows of equal overhead are ordered by the paths:
//! the DSO cells are the long names from the start, sorted and grouped by; the symbol's
//! prefix is put in last ([`apply`]), as the rows are sorted by their plain symbols.
//!
//! The address is perf's `he->ip`, that of the sample that made the entry: its
//! `al->addr` (the DSO-relative address, or the ip outside every map) for a sample's
//! own entry, the frame's ip as sampled for an entry a callchain made (`--children`).
//! perf moves a kernel DSO's address back with `unmap_ip` where the DSO's symbols came
//! from a vmlinux (`adjust_symbols`); perfdata reads the kernel's symbols from kallsyms
//! only, whose map is the identity, so the address is printed as it is.

use crate::keys::Creator;
use crate::model::{EventTable, Replay, SortKey, VerboseCells};
use crate::process::DsoId;
use crate::symbolize::Symbolizer;

/// The letter of each DSO of `replay`'s machine, by DSO number, as `perf report -v`
/// prints it ([`Symbolizer::symtab_origin`]: `!` for a DSO whose symbols were not asked
/// for, as no entry of it has a symbol cell).
pub(crate) fn origins(replay: &Replay, symbols: &Symbolizer) -> Vec<char> {
    let dsos = &replay.machine.dsos;
    (0..dsos.len())
        .map(|d: DsoId| symbols.symtab_origin(d, &dsos[d]))
        .collect()
}

/// The DSO cell `perf report -v` prints for `d`: its long name (its path).
pub(crate) fn dso_cell(replay: &Replay, d: Option<DsoId>) -> String {
    d.map_or("[unknown]".to_string(), |d| {
        replay.machine.dsos[d].long_name.clone()
    })
}

/// The verbose cells of the entry made by `creator`.
pub(crate) fn cells(creator: &Creator, origins: &[char]) -> VerboseCells {
    // perf: `map ? dso__symtab_origin(map->dso) : '!'`.
    let origin = creator
        .dso()
        .and_then(|d| origins.get(d).copied())
        .unwrap_or('!');
    VerboseCells {
        sym_prefix: format!("{:<18} {origin} ", c_hex(creator.ip)),
    }
}

/// C's `%#llx`: `0x` and the digits, but `0` alone for zero (the `#` flag gives zero
/// no prefix).
fn c_hex(v: u64) -> String {
    match v {
        0 => "0".to_string(),
        v => format!("{v:#x}"),
    }
}

/// Put each row's verbose prefix before its Symbol cell (of `keys`), where the rows
/// have one: done last, once the rows are sorted and grouped by their plain cells, so
/// that only the printing sees it.
pub(crate) fn apply(tables: &mut [EventTable], keys: &[SortKey]) {
    for row in tables.iter_mut().flat_map(|t| t.rows.iter_mut()) {
        let Some(v) = row.verbose.take() else {
            continue;
        };
        for (cell, key) in row.cells.iter_mut().zip(keys) {
            if *key == SortKey::Sym {
                cell.insert_str(0, &v.sym_prefix);
            }
        }
    }
}

/// The plain Symbol cell of `cell`, printed with or without `-v`: the verbose prefix
/// (an address of at most 18 characters, padded to 18, the origin letter and a space,
/// 21 in all) left out. A plain cell starts with its level (`[`), a verbose one with
/// the address (`0`).
pub(crate) fn plain_sym(cell: &str) -> &str {
    match cell.as_bytes().first() {
        Some(b'0') => cell.get(21..).unwrap_or(cell),
        _ => cell,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_print_as_cs_hash_flag_prints_them() {
        assert_eq!(c_hex(0), "0");
        assert_eq!(c_hex(0x1143), "0x1143");
        assert_eq!(c_hex(0xffffffff821f23e7), "0xffffffff821f23e7");
    }

    #[test]
    fn the_plain_cell_is_found_under_the_prefix() {
        let verbose = format!("{:<18} D [.] handle_amd", "0x1465f");
        assert_eq!(plain_sym(&verbose), "[.] handle_amd");
        assert_eq!(
            plain_sym("[k] 0xffffffff821f23e7"),
            "[k] 0xffffffff821f23e7"
        );
        let zero = format!("{:<18} ! [.] 0000000000000000", "0");
        assert_eq!(plain_sym(&zero), "[.] 0000000000000000");
    }
}
