//! The tables printed as `perf report --stdio` prints them, and as JSON.

use std::io::{self, Write};

use crate::callgraph::draw::{write_tree, Totals};
use crate::callgraph::CallGraph;
use crate::fields::{is_unresolved, Field};
use crate::model::{EventTable, SortKey};

/// perf's width for an unresolved symbol cell: `[.] ` and a 64-bit address, plus 2.
const UNRESOLVED_SYM_WIDTH: usize = 16 + 4 + 2;

/// perf's least DSO width beside an unresolved symbol: a 64-bit address in hex.
pub(crate) const UNRESOLVED_DSO_WIDTH: usize = 16;

/// What perf prints before the tables, besides its fixed first lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preamble {
    /// Samples the kernel lost ("Total Lost Samples").
    pub lost_samples: u64,
    /// The one name of a `--comms` filter of one name: perf says `# comm: NAME` and
    /// leaves the Command column out (perf's `sort__setup_elide`), unless every column
    /// would be left out.
    pub single_comm: Option<String>,
    /// The one name of a `--dsos` filter of one name: perf says `# dso: NAME` and leaves
    /// the Shared Object column out, as for a comm.
    pub single_dso: Option<String>,
    /// The one name of a `--symbols` filter of one name (`# symbol: NAME`, the Symbol
    /// column left out).
    pub single_sym: Option<String>,
    /// The sort keys left out as columns (perf's `sort__setup_elide`, see
    /// [`crate::filter::SampleFilter::elided`]): those of the names above, unless that
    /// would be every key.
    pub elided: Vec<SortKey>,
    /// perf's `--time` argument as given, said after each event's sample count.
    pub time_slices: Option<String>,
    /// Whether a `--dsos` filter was given: perf then leaves the Shared Object column as
    /// wide as its names even beside unresolved symbols (`hists__set_unres_dso_col_len`
    /// is skipped when `symbol_conf.dso_list` is set).
    pub dso_filter: bool,
}

/// perf's `convert_unit` for the sample count: thousands as K, millions as M, billions
/// as G (truncated), else the number and a space.
fn sample_count(n: u64) -> String {
    let (mut n, mut unit) = (n, ' ');
    for u in ['K', 'M', 'G'] {
        if n > 1000 {
            n /= 1000;
            unit = u;
        }
    }
    format!("{n}{unit}")
}

/// What a printed report shows besides its keys.
#[derive(Debug, Clone, Copy, Default)]
pub struct View<'a> {
    /// The Samples column (perf's `-n`).
    pub samples: bool,
    /// The call graph under each entry that has one.
    pub graph: Option<&'a CallGraph>,
    /// Entries under this percent (Children's with children, else Overhead's) are not
    /// printed, though they set the columns' widths (perf's `--percent-limit`).
    pub percent_limit: f64,
    /// The columns, perf's output fields (`-F`), in place of the default ones.
    pub fields: Option<&'a [Field]>,
    /// Whether the `--sort` given (or perf's default one) starts with `sym` and no
    /// output fields were given: perf then does not print an entry's own symbol again
    /// atop its call graph.
    pub sym_first: bool,
    /// No header lines, those starting with `#` (perf's `-q/--quiet`): the rows, their
    /// call graphs and the blank lines between events only.
    pub quiet: bool,
}

/// A writer that leaves out the lines starting with `#` (perf report's `--quiet`
/// prints none of its header lines and changes nothing else, measured on perf 6.1).
struct Unheaded<'a> {
    out: &'a mut dyn Write,
    at_line_start: bool,
    dropping: bool,
}

impl Write for Unheaded<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut kept = Vec::with_capacity(buf.len());
        for &b in buf {
            if self.at_line_start {
                self.dropping = b == b'#';
            }
            if !self.dropping {
                kept.push(b);
            }
            self.at_line_start = b == b'\n';
        }
        self.out.write_all(&kept)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The one name a sort key is filtered to, if one ([`Preamble`]).
fn single_name(preamble: &Preamble, k: SortKey) -> Option<&String> {
    match k {
        SortKey::Comm => preamble.single_comm.as_ref(),
        SortKey::Dso => preamble.single_dso.as_ref(),
        SortKey::Sym => preamble.single_sym.as_ref(),
        _ => None,
    }
}

/// perf's `__get_elide` lines: `# comm: NAME` for each sort key filtered to one name,
/// in the keys' order (said even where every column stays, and with `-q`).
fn write_single_names(
    out: &mut dyn Write,
    keys: &[SortKey],
    preamble: &Preamble,
) -> io::Result<()> {
    for &k in keys {
        let label = match k {
            SortKey::Comm => "comm",
            SortKey::Dso => "dso",
            SortKey::Sym => "symbol",
            _ => continue,
        };
        if let Some(v) = single_name(preamble, k) {
            writeln!(out, "# {label}: {v}")?;
        }
    }
    Ok(())
}

/// Print `tables` as perf 6.1's `perf report --stdio` does (but for the random tip it
/// ends with): a preamble, then per event its sample count, event count, column
/// headers, dotted rules and rows, each with its call graph if the view has one.
pub fn write_stdio(
    out: &mut dyn Write,
    tables: &[EventTable],
    keys: &[SortKey],
    view: View,
    preamble: &Preamble,
) -> io::Result<()> {
    if view.quiet {
        // perf says the filters' single names as it sets the columns up, before the
        // text `-q` leaves its header out of.
        write_single_names(out, keys, preamble)?;
        let mut out = Unheaded {
            out,
            at_line_start: true,
            dropping: false,
        };
        let view = View {
            quiet: false,
            ..view
        };
        return write_stdio(&mut out, tables, keys, view, preamble);
    }
    let samples = view.samples;
    writeln!(
        out,
        "# To display the perf.data header info, please use --header/--header-only options."
    )?;
    writeln!(out, "#")?;
    // The columns printed: a comm, DSO or symbol filtered to one name is said once,
    // above, instead (perf's `sort__setup_elide`), unless every column would go.
    let elide = |k: SortKey| preamble.elided.contains(&k);
    write_single_names(out, keys, preamble)?;
    // A recording without samples has nothing more (perf stops there).
    if tables.is_empty() {
        return Ok(());
    }
    writeln!(out, "#")?;
    writeln!(out, "# Total Lost Samples: {}", preamble.lost_samples)?;
    writeln!(out, "#")?;
    let shown: Vec<usize> = (0..keys.len()).filter(|&i| !elide(keys[i])).collect();
    let all_keys = keys;
    let keys: Vec<SortKey> = shown.iter().map(|&i| keys[i]).collect();
    for t in tables {
        // perf's plural is the event's nr_members: a group's leader says "events" with
        // or without the group view.
        write!(
            out,
            "# Samples: {} of event{} '{}'",
            sample_count(t.samples),
            if t.group_size > 1 { "s" } else { "" },
            t.event
        )?;
        match &preamble.time_slices {
            Some(time) => writeln!(out, " (time slices: {time})")?,
            None => writeln!(out)?,
        }
        writeln!(out, "# Event count (approx.): {}", t.period)?;
        writeln!(out, "#")?;
        let widths: Vec<usize> = key_widths(all_keys, &t.rows, preamble.dso_filter, |r| {
            (&r.cells, r.comm_len)
        })
        .into_iter()
        .zip(all_keys)
        .enumerate()
        .filter(|(i, _)| shown.contains(i))
        .map(|(_, (w, k))| match k {
            SortKey::Trace => trace_width(all_keys, t),
            _ => w,
        })
        .collect();
        // perf's --children: Children then Self where Overhead was. In a group's table
        // each is a column per member (perf's hpp__width_fn: members times the width).
        let members = 1 + t.members.len();
        let (pct_w, n_w) = (8 * members, 12 * members);
        let cols = columns(t.children, samples, &keys, view.fields);
        let mut header = Vec::new();
        let mut rule = Vec::new();
        for c in &cols {
            let (text, w) = match *c {
                Col::Children => (format!("{:>pct_w$}", "Children"), pct_w),
                Col::Overhead(name) => (format!("{name:>pct_w$}"), pct_w),
                Col::Samples => (format!("{:>n_w$}", "Samples"), n_w),
                Col::Period => (format!("{:>n_w$}", "Period"), n_w),
                Col::Key(j) => (key_header(keys[j], widths[j]), widths[j]),
            };
            header.push(text);
            rule.push(".".repeat(w));
        }
        writeln!(out, "# {}", header.join("  "))?;
        writeln!(out, "# {}", rule.join("  "))?;
        writeln!(out, "#")?;
        for r in &t.rows {
            let shown_pct = r.children.map_or(r.percent, |c| c.1);
            if shown_pct < view.percent_limit {
                continue;
            }
            let mut line = Vec::new();
            // perf's " %6.2f%%" and " %11lu", once per member.
            let pct = |p: f64| format!("{:>8}", format!("{p:.2}%"));
            let num = |n: u64| format!("{n:>12}");
            for (at, c) in cols.iter().enumerate() {
                line.push(match *c {
                    // Without children (`--no-children`), perf says N/A once, in the
                    // first member's place (padded to the column unless it is the last).
                    Col::Children if !t.children && at + 1 == cols.len() => {
                        format!("{:>8}", "N/A")
                    }
                    Col::Children if !t.children => {
                        format!("{:<pct_w$}", format!("{:>8}", "N/A"))
                    }
                    Col::Children => {
                        let ms = r.members.iter().map(|m| m.children.map_or(0.0, |c| c.1));
                        let own = r.children.map_or(0.0, |c| c.1);
                        std::iter::once(own).chain(ms).map(pct).collect()
                    }
                    Col::Overhead(_) => {
                        let ms = r.members.iter().map(|m| m.percent);
                        std::iter::once(r.percent).chain(ms).map(pct).collect()
                    }
                    Col::Samples => {
                        let ms = r.members.iter().map(|m| m.samples);
                        std::iter::once(r.samples).chain(ms).map(num).collect()
                    }
                    Col::Period => {
                        let ms = r.members.iter().map(|m| m.period);
                        std::iter::once(r.period).chain(ms).map(num).collect()
                    }
                    Col::Key(j) => {
                        key_cell(keys[j], &r.cells[shown[j]], widths[j], at + 1 == cols.len())
                    }
                });
            }
            writeln!(out, "  {}", line.join("  "))?;
            if let (Some(g), Some(tree)) = (view.graph, &r.callchain) {
                let totals = Totals {
                    total: t.period,
                    entry: r.children.map_or(r.period, |c| c.0),
                    sym_first: view.sym_first,
                };
                write_tree(out, tree, g, totals)?;
            }
        }
        writeln!(out)?;
        writeln!(out)?;
    }
    Ok(())
}

/// A key's cell `c` as perf prints it in a column `w` wide (`last`: the line's last
/// column), for report and diff alike.
pub(crate) fn key_cell(k: SortKey, c: &str, w: usize, last: bool) -> String {
    match (k, c.split_once(':')) {
        // perf's `%7d:%-*.*s`, the command as wide as the column leaves.
        (SortKey::Pid, Some((tid, comm))) => format!("{tid:>7}:{comm:<0$}", w.saturating_sub(8)),
        // perf pads every cell to its column but the symbol's and the source line's
        // (printed with a precision, not a width), which perf's
        // hist_entry__snprintf_alignment pads unless theirs is the last column.
        (SortKey::Sym | SortKey::Srcline, _) if last => c.to_string(),
        // perf's `%-.*s`: cut to the column, padded unless last.
        (SortKey::Trace, _) if last => format!("{c:.w$}"),
        (SortKey::Trace, _) => format!("{c:<w$.w$}"),
        // perf's `%-*.*s`: a longer name is cut to the column.
        (SortKey::Comm, _) => format!("{c:<w$.w$}"),
        _ => format!("{c:<w$}"),
    }
}

/// perf's width of the Trace output column of `t`, whose cells are `keys`'. perf makes
/// an entry's trace text only when it compares the entry with another of equal keys
/// before `trace` (`sort__trace_cmp`; its entry trees put such entries side by side),
/// and sizes the column by the texts made: those of the rows whose earlier keys are
/// shared by two samples or more. Other rows' texts are cut to that width (the header's,
/// where none is made: an event of one sample).
fn trace_width(keys: &[SortKey], t: &EventTable) -> usize {
    let header = SortKey::Trace.header().len();
    let Some(at) = keys.iter().position(|k| *k == SortKey::Trace) else {
        return header;
    };
    let mut samples: rustc_hash::FxHashMap<&[String], u64> = Default::default();
    for r in &t.rows {
        *samples.entry(&r.cells[..at]).or_default() += r.samples;
    }
    t.rows
        .iter()
        .filter(|r| samples[&r.cells[..at]] >= 2)
        .map(|r| r.cells[at].len())
        .fold(header, usize::max)
}

/// One printed column.
#[derive(Debug, Clone, Copy)]
enum Col {
    Children,
    /// The self percentage under its header (`Overhead`, or `Self` beside Children).
    Overhead(&'static str),
    Samples,
    Period,
    /// The key of this index among the printed keys.
    Key(usize),
}

/// The columns of a table: perf's default ones (Children and Self, or Overhead; Samples
/// with `-n`; the keys), or the output fields as given (`-F`: a key only where it is
/// printed).
fn columns(children: bool, samples: bool, keys: &[SortKey], fields: Option<&[Field]>) -> Vec<Col> {
    let Some(fields) = fields else {
        let mut cols = if children {
            vec![Col::Children, Col::Overhead("Self")]
        } else {
            vec![Col::Overhead("Overhead")]
        };
        if samples {
            cols.push(Col::Samples);
        }
        cols.extend((0..keys.len()).map(Col::Key));
        return cols;
    };
    fields
        .iter()
        .filter_map(|f| match f {
            Field::Overhead => Some(Col::Overhead("Overhead")),
            Field::OverheadChildren => Some(Col::Children),
            Field::Sample => Some(Col::Samples),
            Field::Period => Some(Col::Period),
            Field::Key(k) => keys.iter().position(|x| x == k).map(Col::Key),
        })
        .collect()
}

/// The key columns' widths over `rows` (each's cells and `Row::comm_len`), as perf's
/// `hists__calc_col_len` makes them: the widest cell, at least the header's; the
/// Command column by its rows' threads' last names; with an unresolved symbol, the DSO
/// column at least an address wide (`hists__set_unres_dso_col_len`), unless `dso_filter`
/// (a `--dsos` list was given, which perf 6.1 checks there).
pub(crate) fn key_widths<'a, R>(
    keys: &[SortKey],
    rows: &'a [R],
    dso_filter: bool,
    of: impl Fn(&'a R) -> (&'a Vec<String>, usize),
) -> Vec<usize> {
    let unresolved = !dso_filter
        && keys
            .iter()
            .position(|k| *k == SortKey::Sym)
            .is_some_and(|s| rows.iter().any(|r| is_unresolved(&of(r).0[s])));
    keys.iter()
        .enumerate()
        .map(|(i, &k)| match k {
            SortKey::Comm => rows
                .iter()
                .map(|r| of(r).1)
                .fold(k.header().len(), usize::max),
            _ => {
                let w = column_width(k, rows.iter().map(|r| of(r).0[i].as_str()));
                if k == SortKey::Dso && unresolved {
                    w.max(UNRESOLVED_DSO_WIDTH)
                } else {
                    w
                }
            }
        })
        .collect()
}

/// perf's header of a key column `width` wide: its name padded to the width, but
/// formatted into perf's 1024-byte buffer (`hists__fprintf_headers`' `bf`), so at most
/// 1023 characters where a symbol is longer (a C++ name of thousands); the dotted rule
/// under it is not cut.
pub(crate) fn key_header(key: SortKey, width: usize) -> String {
    const PERF_HEADER_BUF: usize = 1024;
    let mut text = format!("{:<width$}", key.header());
    text.truncate(PERF_HEADER_BUF - 1);
    text
}

/// perf's width of key `key`'s column over its `cells` (`hists__calc_col_len`), at least
/// the header's.
pub(crate) fn column_width<'a>(key: SortKey, cells: impl Iterator<Item = &'a str>) -> usize {
    let longest = cells
        .map(|c| match key {
            // Unresolved symbols get a fixed width.
            SortKey::Sym if is_unresolved(c) => UNRESOLVED_SYM_WIDTH,
            // perf's width is the name's, without the ` (inlined)` it prints after it.
            SortKey::Sym => c
                .strip_suffix(crate::inlines::INLINED)
                .map_or(c.len(), str::len),
            // perf's CPU column stays as wide as its header ("-001" overflows it).
            SortKey::Cpu => 0,
            SortKey::Pid => c
                .split_once(':')
                .map_or(c.len(), |(_, comm)| comm.len() + 8),
            _ => c.len(),
        })
        .max()
        .unwrap_or(0);
    longest.max(key.header().len())
}

/// The tables as JSON: `{"sort": [keys], "events": [{event, samples, period, rows}]}`,
/// each row `{overhead, samples, period, [children, children_period,] <key>: cell...}`
/// (`overhead` the self percent), cells as `write_stdio` prints
/// them (trimmed); with `unwind` (a recording with user stack copies), an `unwind`
/// object says what became of them ([`crate::unwind::UnwindStats`]). Written a row at a
/// time, as serde_json pretty-prints the whole document: no tree of the whole report is
/// built (it took about 3 KiB a row).
pub fn write_json(
    out: &mut dyn Write,
    tables: &[EventTable],
    keys: &[SortKey],
    graph: Option<&CallGraph>,
    unwind: Option<&crate::unwind::UnwindStats>,
) -> io::Result<()> {
    use perfdata_view::json::write_pretty_at as at;
    let names: Vec<String> = keys
        .iter()
        .map(|k| {
            let name = serde_json::to_value(k).expect("a key serializes");
            name.as_str().unwrap_or_default().to_string()
        })
        .collect();
    out.write_all(b"{\n  \"sort\": ")?;
    at(out, keys, 1)?;
    out.write_all(b",\n  \"events\": [")?;
    for (i, t) in tables.iter().enumerate() {
        out.write_all(if i == 0 { b"\n    {" } else { b",\n    {" })?;
        out.write_all(b"\n      \"event\": ")?;
        at(out, &t.event, 3)?;
        out.write_all(b",\n      \"samples\": ")?;
        at(out, &t.samples, 3)?;
        out.write_all(b",\n      \"period\": ")?;
        at(out, &t.period, 3)?;
        out.write_all(b",\n      \"rows\": [")?;
        let mut o = serde_json::Map::new();
        for (j, r) in t.rows.iter().enumerate() {
            o.clear();
            o.insert("overhead".into(), r.percent.into());
            o.insert("samples".into(), r.samples.into());
            o.insert("period".into(), r.period.into());
            if let Some((period, pct)) = r.children {
                o.insert("children".into(), pct.into());
                o.insert("children_period".into(), period.into());
            }
            for (name, c) in names.iter().zip(&r.cells) {
                o.insert(name.clone(), c.as_str().into());
            }
            if let (Some(_), Some(tree)) = (graph, &r.callchain) {
                o.insert(
                    "callchain".into(),
                    crate::callgraph::json::tree(tree, t.period),
                );
            }
            out.write_all(if j == 0 {
                b"\n        "
            } else {
                b",\n        "
            })?;
            at(out, &o, 4)?;
        }
        out.write_all(if t.rows.is_empty() {
            b"]"
        } else {
            b"\n      ]"
        })?;
        out.write_all(b"\n    }")?;
    }
    out.write_all(if tables.is_empty() { b"]" } else { b"\n  ]" })?;
    if let Some(u) = unwind {
        out.write_all(b",\n  \"unwind\": ")?;
        at(out, u, 1)?;
    }
    out.write_all(b"\n}\n")
}
