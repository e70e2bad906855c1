//! A diff printed as perf 6.1's `perf diff --stdio` prints it: per event `# Event`, the
//! recordings listed when there are more than two, the column headers and dotted rules,
//! then the rows. Each recording has its columns (the baseline: Baseline and, with `-p`,
//! Base period; every other one: the computation, with `-F` its formula, with `-p` its
//! period), named `NAME/INDEX` when there are more than two recordings.

use std::io::{self, Write};

use super::{Compute, DiffRow, DiffView, EventDiff};
use crate::model::SortKey;
use crate::text::{key_cell, key_widths};

/// perf's widest formula column (`MAX_COL_WIDTH`); a formula is cut one short of it.
const FORMULA_WIDTH: usize = 70;

/// What a column of a recording shows (perf's `PERF_HPP_DIFF__*`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Baseline,
    BasePeriod,
    Computed(Compute),
    Formula(Compute),
    Period,
}

/// One of the recordings' columns: what it shows, of which recording, its header and
/// width (perf's `init_header`: at least the header's).
struct Column {
    kind: Kind,
    file: usize,
    header: String,
    width: usize,
}

impl Column {
    fn new(kind: Kind, file: usize, files: usize) -> Column {
        let (name, least) = match kind {
            Kind::Baseline => ("Baseline", 0),
            Kind::BasePeriod => ("Base period", 14),
            Kind::Formula(_) => ("Formula", FORMULA_WIDTH),
            Kind::Computed(Compute::DeltaAbs) => ("Delta Abs", 7),
            Kind::Computed(Compute::Delta) => ("Delta", 7),
            Kind::Computed(Compute::Ratio) => ("Ratio", 14),
            Kind::Computed(Compute::WeightedDiff(..)) => ("Weighted diff", 14),
            Kind::Period => ("Period", 14),
        };
        let header = if files > 2 {
            format!("{name}/{file}")
        } else {
            name.to_string()
        };
        Column {
            kind,
            file,
            width: least.max(header.len()),
            header,
        }
    }

    /// The columns perf registers, in its order (`ui_init`).
    fn all(files: usize, view: &DiffView) -> Vec<Column> {
        let mut columns = Vec::new();
        for i in 0..files {
            if i == 0 {
                columns.push(Column::new(Kind::Baseline, 0, files));
            } else {
                columns.push(Column::new(Kind::Computed(view.compute), i, files));
                if view.formula {
                    columns.push(Column::new(Kind::Formula(view.compute), i, files));
                }
            }
            if view.period {
                let kind = if i == 0 {
                    Kind::BasePeriod
                } else {
                    Kind::Period
                };
                columns.push(Column::new(kind, i, files));
            }
        }
        columns
    }

    /// The cell of `row`, as wide as the column at least (perf pads a shorter one after
    /// it: `hist_entry__snprintf_alignment`).
    fn cell(&self, row: &DiffRow, d: &EventDiff) -> String {
        let w = self.width;
        let pair = row.periods.get(self.file).copied().flatten();
        let base = row.periods[0].unwrap_or(0);
        let text = match self.kind {
            Kind::Baseline if row.dummy() => " ".repeat(w),
            Kind::Baseline => {
                let p = c_float(super::percent(base, d.totals[0]), false);
                format!("{p:>width$}%", width = w - 1)
            }
            // The baseline's own period, 0 for a dummy (perf's `hpp__entry_unpair`).
            Kind::BasePeriod => format!("{base:>w$}"),
            _ if self.file == 0 => " ".repeat(w),
            Kind::Computed(c) => match (pair, row.values[self.file - 1]) {
                (Some(_), Some(v)) => match c {
                    Compute::DeltaAbs | Compute::Delta => {
                        format!("{:>width$}%", c_float(v, true), width = w - 1)
                    }
                    Compute::Ratio | Compute::WeightedDiff(..) if row.dummy() => {
                        format!("{:>w$}", "N/A")
                    }
                    Compute::Ratio => format!("{v:>w$.6}"),
                    // perf's `%14ld`, whatever the column's width.
                    Compute::WeightedDiff(..) => format!("{:>14}", v as i64),
                },
                _ => " ".repeat(w),
            },
            Kind::Formula(c) => match pair {
                Some(p) => {
                    let mut f = formula(c, base, p, d.totals[0], d.totals[self.file]);
                    f.truncate(FORMULA_WIDTH - 1);
                    format!("{f:>w$}")
                }
                None => " ".repeat(w),
            },
            Kind::Period => match pair {
                Some(p) => format!("{p:>w$}"),
                None => " ".repeat(w),
            },
        };
        format!("{text:<w$}")
    }
}

/// `v` as C's `%.2f` prints it (`%+.2f` with `plus`): glibc's `nan`, `-nan` and `inf`
/// where Rust would say `NaN` and `inf`.
pub(super) fn c_float(v: f64, plus: bool) -> String {
    let sign = if v.is_sign_negative() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    };
    if v.is_nan() {
        format!("{sign}nan")
    } else if v.is_infinite() {
        format!("{sign}inf")
    } else if plus {
        format!("{v:+.2}")
    } else {
        format!("{v:.2}")
    }
}

/// perf's formula of a row's value (`formula_delta`, `formula_ratio`, `formula_wdiff`).
fn formula(c: Compute, base: u64, p: u64, base_total: u64, total: u64) -> String {
    match c {
        Compute::DeltaAbs | Compute::Delta => {
            format!("({p} * 100 / {total}) - ({base} * 100 / {base_total})")
        }
        Compute::Ratio => format!("{p} / {base}"),
        Compute::WeightedDiff(w1, w2) => format!("({p} * {w2}) - ({base} * {w1})"),
    }
}

/// Print `diffs` of the recordings `paths` (the baseline first) as perf 6.1's `perf
/// diff` prints them (stdio). `elided` keys are left out (a `--dsos` or `--comms` of one
/// name, perf's `sort__setup_elide`, unless every key would be); `quiet` prints the rows
/// alone (perf's `-q`). The key columns are as wide as their widest cell over the rows.
pub fn write_stdio(
    out: &mut dyn Write,
    diffs: &[EventDiff],
    paths: &[String],
    keys: &[SortKey],
    elided: &[SortKey],
    view: &DiffView,
    quiet: bool,
) -> io::Result<()> {
    let columns = Column::all(paths.len(), view);
    let shown: Vec<usize> = if keys.iter().all(|k| elided.contains(k)) {
        (0..keys.len()).collect()
    } else {
        (0..keys.len())
            .filter(|&i| !elided.contains(&keys[i]))
            .collect()
    };
    for (n, d) in diffs.iter().enumerate() {
        if !quiet {
            if n > 0 {
                writeln!(out)?;
            }
            writeln!(out, "# Event '{}'", d.event)?;
            writeln!(out, "#")?;
            if paths.len() > 2 {
                writeln!(out, "# Data files:")?;
                for (i, p) in paths.iter().enumerate() {
                    let tag = if i == 0 { "(Baseline)" } else { "" };
                    writeln!(out, "#  [{i}] {p} {tag}")?;
                }
                writeln!(out, "#")?;
            }
        }
        let widths = widths(d, keys);
        if !quiet {
            let mut header: Vec<String> = columns
                .iter()
                .map(|c| format!("{:>w$}", c.header, w = c.width))
                .collect();
            let mut rule: Vec<String> = columns.iter().map(|c| ".".repeat(c.width)).collect();
            for &i in &shown {
                header.push(crate::text::key_header(keys[i], widths[i]));
                rule.push(".".repeat(widths[i]));
            }
            writeln!(out, "# {}", header.join("  "))?;
            writeln!(out, "# {}", rule.join("  "))?;
            writeln!(out, "#")?;
        }
        // A filtered row is paired and computed, not printed (perf's hists__fprintf).
        for r in d.rows.iter().filter(|r| !r.filtered) {
            let mut line: Vec<String> = columns.iter().map(|c| c.cell(r, d)).collect();
            for (at, &i) in shown.iter().enumerate() {
                let last = at + 1 == shown.len();
                line.push(key_cell(keys[i], &r.cells[i], widths[i], last));
            }
            writeln!(out, "  {}", line.join("  "))?;
        }
    }
    Ok(())
}

/// The key columns' widths of a diff, as the report's (perf's `hists__calc_col_len`
/// over the baseline's entries shown, its dummies among them): the widest cell of any row
/// (a command by its thread's name), at least the header's; with an unresolved symbol,
/// the DSO column at least an address wide (`hists__set_unres_dso_col_len`).
fn widths(d: &EventDiff, keys: &[SortKey]) -> Vec<usize> {
    let shown: Vec<&DiffRow> = d.rows.iter().filter(|r| !r.filtered).collect();
    key_widths(keys, &shown, false, |r| (&r.cells, r.comm_len))
}
