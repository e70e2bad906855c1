//! readperf's four tables (CERN, 2011), with what readperf did not have (event, DSO and
//! build id): `stat.csv` records by type, `overview.csv` every record in time order,
//! `processes.csv` one line per process, `results.csv` one line per function.
//!
//! Records are counted as `perf report --stats` counts them: each COMPRESSED record
//! and each record inside it. Values are written as CSV (RFC 4180: a field holding a
//! comma, quote or line break is quoted, quotes doubled).

use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::Path;

use perfdata_core::record::{RecordBody, RecordType};
use perfdata_core::stats::Stats;
use perfdata_core::{PerfReader, ReadOptions, Result};

use crate::process::DsoId;
use crate::replay::Replay;
use crate::symbolize::{SymbolName, Symbolizer};

/// The four tables, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// `stat.csv`: records by type.
    Stat,
    /// `overview.csv`: every record in time order.
    Overview,
    /// `processes.csv`: one line per process.
    Processes,
    /// `results.csv`: samples per symbol.
    Results,
}

impl Table {
    /// All four, in readperf's order.
    pub const ALL: [Table; 4] = [
        Table::Stat,
        Table::Overview,
        Table::Processes,
        Table::Results,
    ];

    /// The file the table is written to.
    pub fn file_name(self) -> &'static str {
        match self {
            Table::Stat => "stat.csv",
            Table::Overview => "overview.csv",
            Table::Processes => "processes.csv",
            Table::Results => "results.csv",
        }
    }
}

/// One record of `overview.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverviewRow {
    /// The record's number in file order (from 0; a compressed record comes before the
    /// records inside it).
    pub nr: u64,
    /// perf's name of its type (`MMAP2`, `SAMPLE`).
    pub kind: String,
    /// Its process, where the record names one.
    pub pid: Option<i32>,
    /// Its thread, where the record names one.
    pub tid: Option<i32>,
    /// Its time, where the record has one.
    pub time: Option<u64>,
    /// MMAP: `file addr len pgoff`; COMM: the name; FORK/EXIT: `ppid ptid`; SAMPLE:
    /// `ip period`.
    pub info: String,
}

/// One line of `processes.csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    /// The process id.
    pub pid: i32,
    /// The process's name: its main thread's last one.
    pub comm: String,
    /// MMAP and MMAP2 records of the process.
    pub mmaps: u64,
    /// Its main thread's first FORK and last EXIT, at the times perf script shows.
    pub fork_time: Option<u64>,
    /// When it exited, if it did in the recording.
    pub exit_time: Option<u64>,
    /// Its samples.
    pub samples: u64,
    /// The sum of their periods.
    pub period: u64,
}

/// One line of `results.csv`: a function (or an address without one) of an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultRow {
    /// The event, as `perf script` names it.
    pub event: String,
    /// As perf report's Symbol column: `[k] name`, `[.] name` or `[.] 0x...`.
    pub symbol: String,
    /// The DSO's file, `[unknown]` without one.
    pub dso: String,
    /// Its build id in hex, where the recording gives one.
    pub build_id: String,
    /// Where the function starts in its source, `/path/file.c:LINE` from the DSO's
    /// DWARF line table (what `addr2line` gives for its first address); empty without
    /// DWARF, for the kernel and for addresses without a symbol.
    pub source: String,
    /// Samples of the symbol.
    pub samples: u64,
    /// The sum of their periods.
    pub period: u64,
}

/// readperf's tables of one recording.
#[derive(Debug, Clone, Default)]
pub struct Tables {
    /// (perf's name of the type, records).
    pub stat: Vec<(String, u64)>,
    /// In time order (a record without a time keeps its place after the one before it).
    pub overview: Vec<OverviewRow>,
    /// By pid.
    pub processes: Vec<ProcessRow>,
    /// Per event, by period, largest first.
    pub results: Vec<ResultRow>,
}

/// The tables of the recording at `path`, already replayed as `replay`.
pub fn tables(path: &Path, replay: &Replay, symbols: &mut Symbolizer) -> Result<Tables> {
    let mut reader = PerfReader::open_with(path, ReadOptions::ContainersAndContents)?;
    let mut stats = Stats::default();
    let mut overview = Vec::new();
    let mut seen: HashMap<i32, Seen> = HashMap::new();
    let mut last_time = 0;
    while let Some(item) = reader.next_record()? {
        stats.add(&item);
        let at = item.locate();
        let kind = item.raw.record_type();
        let mut row = OverviewRow {
            nr: overview.len() as u64,
            kind: kind.name(),
            pid: at.pid,
            tid: at.tid,
            time: at.time,
            info: String::new(),
        };
        if matches!(
            kind,
            RecordType::Mmap
                | RecordType::Mmap2
                | RecordType::Comm
                | RecordType::Fork
                | RecordType::Exit
                | RecordType::Sample
        ) {
            describe(&mut row, item.decode()?.body, &mut seen);
        }
        last_time = row.time.unwrap_or(last_time);
        overview.push((last_time, row));
    }
    overview.sort_by_key(|(t, _)| *t);
    Ok(Tables {
        stat: stats
            .records()
            .iter()
            .map(|(t, n)| (t.name(), *n))
            .collect(),
        overview: overview.into_iter().map(|(_, r)| r).collect(),
        processes: processes(replay, &seen),
        results: results(replay, symbols),
    })
}

/// What the records say of a process.
#[derive(Debug, Default)]
struct Seen {
    mmaps: u64,
    /// Its main thread's first FORK and last EXIT, at the record's time as perf script
    /// shows it (the sample_id's, else the body's).
    fork_time: Option<u64>,
    exit_time: Option<u64>,
}

/// Fill in what the record's body says.
fn describe(row: &mut OverviewRow, body: RecordBody, seen: &mut HashMap<i32, Seen>) {
    let (pid, tid, info) = match body {
        RecordBody::Mmap(m) => {
            let name = m.filename.as_str_lossy();
            let info = format!("{name} {:#x} {:#x} {:#x}", m.addr, m.len, m.pgoff);
            (m.pid, m.tid, info)
        }
        RecordBody::Mmap2(m) => {
            let name = m.filename.as_str_lossy();
            let info = format!("{name} {:#x} {:#x} {:#x}", m.addr, m.len, m.pgoff);
            (m.pid, m.tid, info)
        }
        RecordBody::Comm(c) => (c.pid, c.tid, c.comm.as_str_lossy()),
        RecordBody::Fork(f) | RecordBody::Exit(f) => {
            let time = *row.time.get_or_insert(f.time);
            if f.pid == f.tid {
                let p = seen.entry(f.pid).or_default();
                if row.kind == "FORK" {
                    p.fork_time = p.fork_time.or(Some(time));
                } else {
                    p.exit_time = Some(time);
                }
            }
            (f.pid, f.tid, format!("{} {}", f.ppid, f.ptid))
        }
        RecordBody::Sample(s) => {
            let pt = s.tid.unwrap_or_default();
            let period = s.period.map_or(String::new(), |p| p.to_string());
            let info = format!("{:#x} {period}", s.ip.unwrap_or(0));
            (pt.pid, pt.tid, info.trim_end().to_string())
        }
        _ => return,
    };
    if matches!(row.kind.as_str(), "MMAP" | "MMAP2") {
        seen.entry(pid).or_default().mmaps += 1;
    }
    (row.pid, row.tid, row.info) = (Some(pid), Some(tid), info);
}

fn processes(replay: &Replay, seen: &HashMap<i32, Seen>) -> Vec<ProcessRow> {
    let m = &replay.machine;
    let mut rows: BTreeMap<i32, ProcessRow> = BTreeMap::new();
    // Main threads give names (the latest thread of a reused pid wins).
    for t in m.threads.iter().filter(|t| t.pid >= 0) {
        let r = rows
            .entry(t.pid)
            .or_insert_with(|| new_process(t.pid, seen));
        if t.tid == t.pid {
            r.comm = m.comms[t.comm].clone();
        }
    }
    for s in &replay.samples {
        let r = rows
            .entry(s.pid)
            .or_insert_with(|| new_process(s.pid, seen));
        r.samples += 1;
        r.period = r.period.saturating_add(s.period);
    }
    rows.into_values().collect()
}

fn new_process(pid: i32, seen: &HashMap<i32, Seen>) -> ProcessRow {
    let s = seen.get(&pid);
    ProcessRow {
        pid,
        comm: format!(":{pid}"),
        mmaps: s.map_or(0, |s| s.mmaps),
        fork_time: s.and_then(|s| s.fork_time),
        exit_time: s.and_then(|s| s.exit_time),
        samples: 0,
        period: 0,
    }
}

fn results(replay: &Replay, symbols: &mut Symbolizer) -> Vec<ResultRow> {
    let m = &replay.machine;
    // (event, kernel mode, DSO, symbol) -> (samples, period)
    type Key = (usize, bool, Option<DsoId>, SymbolName);
    let mut groups: HashMap<Key, (u64, u64)> = HashMap::new();
    for s in &replay.samples {
        let ip = &s.ip;
        let name = match ip.dso {
            Some(d) => symbols.name(d, &m.dsos[d], ip.addr),
            None => SymbolName::Address(ip.addr),
        };
        let g = groups
            .entry((s.event, ip.kernel, ip.dso, name))
            .or_default();
        g.0 += 1;
        g.1 = g.1.saturating_add(s.period);
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut rows: Vec<ResultRow> = groups
        .into_iter()
        .map(|((event, kernel, dso, name), (samples, period))| {
            let d = dso.map(|d| &m.dsos[d]);
            // The function's own frame at its first address: the outermost one.
            let source = match (&name, dso) {
                (SymbolName::Function { start, .. }, Some(id)) => symbols
                    .source_frames(id, &m.dsos[id], *start)
                    .last()
                    .and_then(|f| Some(format!("{}:{}", f.file.as_deref()?, f.line)))
                    .unwrap_or_default(),
                _ => String::new(),
            };
            ResultRow {
                event: replay.event_names[event].clone(),
                symbol: format!("[{}] {name}", if kernel { 'k' } else { '.' }),
                dso: d.map_or("[unknown]".into(), |d| d.long_name.clone()),
                build_id: d
                    .and_then(|d| d.build_id.as_deref())
                    .map_or(String::new(), hex),
                source,
                samples,
                period,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        (&a.event, b.period, b.samples, &a.symbol, &a.dso)
            .cmp(&(&b.event, a.period, a.samples, &b.symbol, &b.dso))
    });
    rows
}

/// A CSV field, quoted where it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

impl Tables {
    /// Write `table` as CSV with a header line.
    pub fn write(&self, table: Table, out: &mut dyn Write) -> io::Result<()> {
        let mut line = |cells: &[String]| -> io::Result<()> {
            let cells: Vec<String> = cells.iter().map(|c| field(c)).collect();
            writeln!(out, "{}", cells.join(","))
        };
        let header = |names: &str| -> Vec<String> { names.split(',').map(String::from).collect() };
        match table {
            Table::Stat => {
                line(&header("type,count"))?;
                for (kind, n) in &self.stat {
                    line(&[kind.clone(), n.to_string()])?;
                }
            }
            Table::Overview => {
                line(&header("nr,type,pid,tid,time,info"))?;
                for r in &self.overview {
                    line(&[
                        r.nr.to_string(),
                        r.kind.clone(),
                        opt(r.pid),
                        opt(r.tid),
                        opt(r.time),
                        r.info.clone(),
                    ])?;
                }
            }
            Table::Processes => {
                line(&header("pid,comm,mmaps,fork_time,exit_time,samples,period"))?;
                for r in &self.processes {
                    line(&[
                        r.pid.to_string(),
                        r.comm.clone(),
                        r.mmaps.to_string(),
                        opt(r.fork_time),
                        opt(r.exit_time),
                        r.samples.to_string(),
                        r.period.to_string(),
                    ])?;
                }
            }
            Table::Results => {
                line(&header("event,symbol,dso,build_id,source,samples,period"))?;
                for r in &self.results {
                    line(&[
                        r.event.clone(),
                        r.symbol.clone(),
                        r.dso.clone(),
                        r.build_id.clone(),
                        r.source.clone(),
                        r.samples.to_string(),
                        r.period.to_string(),
                    ])?;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(opt(Some(3)), "3");
        assert_eq!(opt::<u64>(None), "");
    }
}
