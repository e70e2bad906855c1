//! `perf report --stdio -n --show-total-period` of perf 6.1 parsed into rows, for the
//! tests that compare perfdata's tables with perf's: each row's samples, period and
//! percentages.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{fixtures_dir, name, perf_output, run_perfdata};

/// One row's values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// The Samples column.
    pub samples: u64,
    /// The Period column (the self period with `--children`).
    pub period: u64,
    /// The Overhead column, in percent.
    pub percent: f64,
}

impl Row {
    /// Whether `other` shows what perf shows of this row: the same samples and period,
    /// and the same percent with two decimals (perf's `%.2f%%`).
    pub fn same(&self, other: &Row) -> bool {
        self.samples == other.samples
            && self.period == other.period
            && format!("{:.2}", self.percent) == format!("{:.2}", other.percent)
    }
}

/// Rows of one event: cells -> values.
pub type Rows = BTreeMap<Vec<String>, Row>;

/// What perf says on stderr that is not about the file: the recording's kernel is not
/// this one.
pub fn benign(line: &str) -> bool {
    line.trim().is_empty() || line.starts_with("No kallsyms or vmlinux with build-id")
}

/// `perf report --stdio -n --sort KEYS`, parsed per event by the columns its dotted rule
/// lays out. Of rows printing the same cells, the last is kept (see [`perf_rows_summed`]).
/// `extra`: more options for perf (filters), given to perfdata too by [`compare`].
pub fn perf_rows(path: &Path, sort: &str, extra: &[&str]) -> BTreeMap<String, Rows> {
    let mut args = vec!["--no-children"];
    args.extend_from_slice(extra);
    perf_table(path, sort, &args)
        .into_iter()
        .map(|(ev, rows)| {
            let rows = rows
                .into_iter()
                .map(|(cells, pcts, samples, period)| {
                    let row = Row {
                        samples,
                        period,
                        percent: pcts[0],
                    };
                    (cells, row)
                })
                .collect();
            (ev, rows)
        })
        .collect()
}

/// As [`perf_rows`], rows that print the same cells summed (samples, period, percent): with
/// `--sort sym`, perf keeps functions of the same name in different DSOs (ld.so's and
/// libc's `strcmp`) apart, where a table keyed by name adds them up.
#[allow(dead_code)]
pub fn perf_rows_summed(path: &Path, sort: &str, extra: &[&str]) -> BTreeMap<String, Rows> {
    let mut args = vec!["--no-children"];
    args.extend_from_slice(extra);
    perf_table(path, sort, &args)
        .into_iter()
        .map(|(ev, rows)| {
            let mut summed = Rows::new();
            for (cells, pcts, samples, period) in rows {
                let row = summed.entry(cells).or_insert(Row {
                    samples: 0,
                    period: 0,
                    percent: 0.0,
                });
                row.samples += samples;
                row.period += period;
                row.percent += pcts[0];
            }
            (ev, summed)
        })
        .collect()
}

/// As [`perf_rows`], every row as perf prints it, in its order: rows that print the
/// same cells (functions of one name) each once.
#[allow(dead_code)]
pub fn perf_rows_each(
    path: &Path,
    sort: &str,
    extra: &[&str],
) -> BTreeMap<String, Vec<(Vec<String>, Row)>> {
    perf_table(path, sort, &options("--no-children", extra))
        .into_iter()
        .map(|(ev, rows)| {
            let rows = rows
                .into_iter()
                .map(|(cells, pcts, samples, period)| {
                    let percent = pcts[0];
                    (
                        cells,
                        Row {
                            samples,
                            period,
                            percent,
                        },
                    )
                })
                .collect();
            (ev, rows)
        })
        .collect()
}

/// `perf report --stdio -n --children -g none --sort KEYS`, per event: cells ->
/// ([children %, self %], samples, self period).
#[allow(dead_code)]
pub fn perf_children_rows(path: &Path, sort: &str) -> BTreeMap<String, ChildrenRows> {
    perf_children_rows_with(path, sort, &[])
}

/// [`perf_children_rows`] with more options for perf (`--no-inline`).
#[allow(dead_code)]
pub fn perf_children_rows_with(
    path: &Path,
    sort: &str,
    extra: &[&str],
) -> BTreeMap<String, ChildrenRows> {
    perf_table(path, sort, &options("--children", extra))
        .into_iter()
        .map(|(ev, rows)| {
            let rows = rows
                .into_iter()
                .map(|(c, p, n, period)| (c, (p, n, period)))
                .collect();
            (ev, rows)
        })
        .collect()
}

/// Rows of one event with children: cells -> ([children %, self %], samples, self
/// period).
pub type ChildrenRows = BTreeMap<Vec<String>, (Vec<f64>, u64, u64)>;

/// Whether a row's symbol cell is an address without a symbol: for a callchain entry
/// perf prints the absolute address (`[.] 0x000055cfaafbe143`, `0000000000000000` for
/// 0, whose `%#llx` has no `0x`) with the mode of its last map lookup (`[k]` for a user
/// address in no map), where perfdata prints the DSO-relative address as in self rows.
#[allow(dead_code)]
pub fn unresolved(cells: &[String]) -> bool {
    cells.iter().any(|c| {
        let tail = c.rsplit(' ').next().unwrap_or_default();
        let hex = tail.strip_prefix("0x").unwrap_or(tail);
        (c.starts_with("[.] ") || c.starts_with("[k] "))
            && hex.len() == 16
            && hex.chars().all(|h| h.is_ascii_hexdigit())
    })
}

/// `rows` without the rows of [`unresolved`] addresses.
#[allow(dead_code)]
pub fn resolved(rows: BTreeMap<String, ChildrenRows>) -> BTreeMap<String, ChildrenRows> {
    rows.into_iter()
        .map(|(ev, r)| (ev, r.into_iter().filter(|(c, _)| !unresolved(c)).collect()))
        .collect()
}

/// `first`, then `extra`: a command line's options.
fn options<'a>(first: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![first];
    args.extend_from_slice(extra);
    args
}

/// perf report's table per event: (cells, the percent columns, samples, period) per row.
type Table = Vec<(Vec<String>, Vec<f64>, u64, u64)>;

fn perf_table(path: &Path, sort: &str, extra: &[&str]) -> BTreeMap<String, Table> {
    let mut args = vec![
        "report",
        "--stdio",
        "-n",
        "--show-total-period",
        "-g",
        "none",
        "--sort",
        sort,
    ];
    args.extend_from_slice(extra);
    perf_table_of(path, &args)
}

/// `perf report --stdio --no-children -g none --sort sym`, per event: each row's symbol
/// cell (`[.] name`) and period.
#[allow(dead_code)]
pub fn perf_period_rows(path: &Path) -> BTreeMap<String, Vec<(String, u64)>> {
    perf_table(path, "sym", &["--no-children"])
        .into_iter()
        .map(|(ev, rows)| {
            let rows = rows
                .into_iter()
                .map(|(c, _, _, period)| (c[0].clone(), period))
                .collect();
            (ev, rows)
        })
        .collect()
}

/// perf report's table per event, `args` its whole command line.
fn perf_table_of(path: &Path, args: &[&str]) -> BTreeMap<String, Table> {
    let out = perf_output(args, path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "perf report failed on {}: {stderr}",
        path.display()
    );
    let odd: Vec<&str> = stderr.lines().filter(|l| !benign(l)).collect();
    assert!(odd.is_empty(), "perf report on {}: {odd:?}", path.display());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut events = BTreeMap::new();
    let mut event: Option<String> = None;
    let mut columns: Vec<(usize, usize)> = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            // "of events" above a group leader's table.
            let name = rest.split_once(" of event").map_or("", |(_, n)| n);
            let name = name.trim_start_matches('s').trim_start_matches(" '");
            event = Some(name.trim_end_matches('\'').to_string());
            columns.clear();
        } else if line.starts_with("# ..") {
            columns = rule_columns(line);
        } else if !line.starts_with('#') && !line.trim().is_empty() && !columns.is_empty() {
            let cell = |&(s, e): &(usize, usize)| {
                line.get(s..e.min(line.len()))
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            let mut cells: Vec<String> = columns.iter().map(cell).collect();
            let last = columns.last().expect("columns").0;
            *cells.last_mut().expect("cells") = line.get(last..).unwrap_or_default().trim().into();
            // The percent columns, then Samples and Period, then the keys.
            let pcts = cells.iter().take_while(|c| c.ends_with('%')).count();
            let percents: Vec<f64> = cells[..pcts]
                .iter()
                .map(|c| c.trim_end_matches('%').parse().expect("percent"))
                .collect();
            let samples: u64 = cells[pcts].parse().expect("samples");
            let period: u64 = cells[pcts + 1].parse().expect("period");
            let ev = event.clone().expect("a row follows an event header");
            events.entry(ev).or_insert_with(Table::new).push((
                cells[pcts + 2..].to_vec(),
                percents,
                samples,
                period,
            ));
        }
    }
    events
}

/// (start, end) of each run of dots in perf's rule line.
fn rule_columns(line: &str) -> Vec<(usize, usize)> {
    let mut cols = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c == '.', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                cols.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    cols
}

/// `perfdata report --json --sort KEYS`, per event.
#[allow(dead_code)] // not every test that shares this module compares rows
pub fn our_rows(path: &Path, sort: &str, extra: &[&str]) -> BTreeMap<String, Rows> {
    // Self rows, as perf's --no-children, without the call graphs.
    let extra: Vec<&str> = ["--no-children", "-g", "none"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    our_table(path, sort, &extra, |r| Row {
        samples: r["samples"].as_u64().expect("samples"),
        period: r["period"].as_u64().expect("period"),
        percent: r["overhead"].as_f64().expect("overhead"),
    })
}

/// `perfdata report --json --children --sort KEYS`, per event: cells -> ([children %,
/// self %], samples, self period).
#[allow(dead_code)]
pub fn our_children_rows(path: &Path, sort: &str) -> BTreeMap<String, ChildrenRows> {
    our_children_rows_with(path, sort, &[])
}

/// [`our_children_rows`] with more options for perfdata (`--no-unwind`).
#[allow(dead_code)]
pub fn our_children_rows_with(
    path: &Path,
    sort: &str,
    extra: &[&str],
) -> BTreeMap<String, ChildrenRows> {
    let extra: Vec<&str> = ["-g", "none"]
        .into_iter()
        .chain(extra.iter().copied())
        .collect();
    our_table(path, sort, &options("--children", &extra), |r| {
        let pct = |f: &str| r[f].as_f64().expect("percent");
        let n = r["samples"].as_u64().expect("samples");
        let period = r["period"].as_u64().expect("period");
        (vec![pct("children"), pct("overhead")], n, period)
    })
}

/// `perfdata report --json --sort KEYS EXTRA`, per event: cells -> `value(row)`.
fn our_table<V>(
    path: &Path,
    sort: &str,
    extra: &[&str],
    value: impl Fn(&serde_json::Value) -> V,
) -> BTreeMap<String, BTreeMap<Vec<String>, V>> {
    let args: Vec<&OsStr> = ["report", "--json", "--sort", sort]
        .into_iter()
        .chain(extra.iter().copied())
        .map(OsStr::new)
        .chain([path.as_os_str()])
        .collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "perfdata report failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let keys: Vec<&str> = sort.split(',').collect();
    let mut events = BTreeMap::new();
    for ev in doc["events"].as_array().expect("events") {
        let rows = ev["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| {
                let cells = keys
                    .iter()
                    .map(|k| r[*k].as_str().expect("cell").to_string())
                    .collect();
                (cells, value(r))
            })
            .collect();
        events.insert(ev["event"].as_str().expect("event").to_string(), rows);
    }
    events
}

/// Compare perf's rows above 0.1% and ours, both given the same `extra` options
/// (filters): the same rows, each with the same samples, period and percent (two
/// decimals, as perf prints it); returns the number of rows compared.
#[allow(dead_code)]
pub fn compare(path: &Path, sort: &str, extra: &[&str]) -> Result<usize, String> {
    let perf = perf_rows(path, sort, extra);
    let ours = our_rows(path, sort, extra);
    if perf.keys().collect::<Vec<_>>() != ours.keys().collect::<Vec<_>>() {
        return Err(format!(
            "events differ: perf {:?}, perfdata {:?}",
            perf.keys(),
            ours.keys()
        ));
    }
    let mut compared = 0;
    for (ev, rows) in &perf {
        let o = &ours[ev];
        let mut problems = Vec::new();
        for (cells, row) in rows.iter().filter(|(_, r)| r.percent > 0.1) {
            match o.get(cells) {
                Some(mine) if mine.same(row) => {}
                got => problems.push(format!("  {cells:?}: perf {row:?}, perfdata {got:?}")),
            }
            compared += 1;
        }
        for (cells, mine) in o {
            if mine.percent > 0.1 && !rows.contains_key(cells) {
                problems.push(format!("  {cells:?}: perfdata {mine:?}, not in perf"));
            }
        }
        if !problems.is_empty() {
            return Err(format!("event {ev}:\n{}", problems.join("\n")));
        }
    }
    Ok(compared)
}

/// Fixtures not compared with perf report, each with the reason.
pub const NOT_COMPARED: &[(&str, &str)] = &[
    ("stat-record.data", "no samples: perf report refuses it"),
    (
        "pipe-stat-record.data",
        "no samples: perf report refuses it",
    ),
    (
        "pipe-tracepoint.data",
        "perf 6.1 stops reading after HEADER_TRACING_DATA",
    ),
    (
        "strip-system-wide.data",
        "perf 6.1 leaves one rustc sample unresolved (`-v`: 'Failed to open \
         .../librustc_driver-6108105cd7e839cf.so, continuing without symbols', once) that \
         perfdata names ThinVec::push, as perf script names the same address in the other \
         process; a row of 3.33%: every other row is equal (C++ names included)",
    ),
];

/// The fixtures compared with perf report, sorted.
#[allow(dead_code)]
pub fn reported_fixtures() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| name(p).ends_with(".data") && !NOT_COMPARED.iter().any(|(n, _)| *n == name(p)))
        .collect();
    v.sort();
    v
}

/// Recordings of event groups, compared per event (`--no-group`, both sides): perf's group
/// view has a column per member, which the row parser does not read; report_text_oracle
/// compares that view as text.
#[allow(dead_code)]
pub const GROUPED: &[&str] = &["file-group.data"];
