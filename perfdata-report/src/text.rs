//! The tables printed as `perf report --stdio` prints them, and as JSON.

use std::io::{self, Write};

use serde::Serialize;

use crate::table::{EventTable, SortKey};

/// perf's width for an unresolved symbol cell: `[.] ` and a 64-bit address, plus 2.
const UNRESOLVED_SYM_WIDTH: usize = 16 + 4 + 2;

/// Print `tables` as perf 6.1's `perf report --stdio` does: a preamble, then per event
/// its sample count, event count, column headers, dotted rules and rows; `samples` adds
/// the Samples column (`-n`).
pub fn write_stdio(
    out: &mut dyn Write,
    tables: &[EventTable],
    keys: &[SortKey],
    samples: bool,
) -> io::Result<()> {
    writeln!(
        out,
        "# To display the perf.data header info, please use --header/--header-only options."
    )?;
    writeln!(out, "#")?;
    for t in tables {
        writeln!(out, "#")?;
        writeln!(out, "# Samples: {}  of event '{}'", t.samples, t.event)?;
        writeln!(out, "# Event count (approx.): {}", t.period)?;
        writeln!(out, "#")?;
        let widths: Vec<usize> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| column_width(*k, t.rows.iter().map(|r| r.cells[i].as_str())))
            .collect();
        // perf's --children: Children then Self where Overhead was.
        let (mut header, mut rule) = if t.children {
            (
                vec![format!("{:>8}", "Children"), format!("{:>8}", "Self")],
                vec![".".repeat(8), ".".repeat(8)],
            )
        } else {
            (vec![format!("{:>8}", "Overhead")], vec![".".repeat(8)])
        };
        if samples {
            header.push(format!("{:>12}", "Samples"));
            rule.push(".".repeat(12));
        }
        for (k, w) in keys.iter().zip(&widths) {
            header.push(format!("{:<w$}", k.header()));
            rule.push(".".repeat(*w));
        }
        writeln!(out, "# {}", header.join("  "))?;
        writeln!(out, "# {}", rule.join("  "))?;
        writeln!(out, "#")?;
        for r in &t.rows {
            let mut line = Vec::new();
            if let Some((_, pct)) = r.children {
                line.push(format!("{:>8}", format!("{pct:.2}%")));
            }
            line.push(format!("{:>8}", format!("{:.2}%", r.percent)));
            if samples {
                line.push(format!("{:>12}", r.samples));
            }
            for ((k, w), c) in keys.iter().zip(&widths).zip(&r.cells) {
                line.push(match (k, c.split_once(':')) {
                    (SortKey::Pid, Some((tid, comm))) => format!("{tid:>7}:{comm:<0$}", w - 8),
                    _ => format!("{c:<w$}"),
                });
            }
            writeln!(out, "  {}", line.join("  ").trim_end())?;
        }
        writeln!(out)?;
        writeln!(out)?;
    }
    Ok(())
}

fn column_width<'a>(key: SortKey, cells: impl Iterator<Item = &'a str>) -> usize {
    let longest = cells
        .map(|c| match key {
            // perf counts a symbol's name with its NUL; unresolved ones get a fixed width.
            SortKey::Sym if c.starts_with("[.] 0x") || c.starts_with("[k] 0x") => {
                UNRESOLVED_SYM_WIDTH
            }
            SortKey::Sym => c.len() + 1,
            SortKey::Pid => c
                .split_once(':')
                .map_or(c.len(), |(_, comm)| comm.len() + 8),
            _ => c.len(),
        })
        .max()
        .unwrap_or(0);
    longest.max(key.header().len())
}

#[derive(Serialize)]
struct JsonTable<'a> {
    event: &'a str,
    samples: u64,
    period: u64,
    rows: Vec<serde_json::Map<String, serde_json::Value>>,
}

/// The tables as JSON: `{"sort": [keys], "events": [{event, samples, period, rows}]}`,
/// each row `{overhead, samples, period, [children, children_period,] <key>: cell...}`
/// (`overhead` the self percent), cells as `write_stdio` prints
/// them (trimmed).
pub fn write_json(out: &mut dyn Write, tables: &[EventTable], keys: &[SortKey]) -> io::Result<()> {
    let events: Vec<JsonTable> = tables
        .iter()
        .map(|t| JsonTable {
            event: &t.event,
            samples: t.samples,
            period: t.period,
            rows: t
                .rows
                .iter()
                .map(|r| {
                    let mut o = serde_json::Map::new();
                    o.insert("overhead".into(), r.percent.into());
                    o.insert("samples".into(), r.samples.into());
                    o.insert("period".into(), r.period.into());
                    if let Some((period, pct)) = r.children {
                        o.insert("children".into(), pct.into());
                        o.insert("children_period".into(), period.into());
                    }
                    for (k, c) in keys.iter().zip(&r.cells) {
                        let name = serde_json::to_value(k).expect("a key serializes");
                        let name = name.as_str().unwrap_or_default().to_string();
                        o.insert(name, c.clone().into());
                    }
                    o
                })
                .collect(),
        })
        .collect();
    let doc = serde_json::json!({ "sort": keys, "events": events });
    // Counts and periods above 2^53 become strings, as in every --json output.
    perfdata_core::json::write_pretty(out, &doc)
}
