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
use perfdata_core::{Error, PerfReader, ReadOptions, Result};
use perfdata_view::stats::Stats;
use rustc_hash::FxHashMap;

use crate::model::{Replay, ResolvedSample};
use crate::process::DsoId;
use crate::spool::{Reader, Records, Spool};
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
#[derive(Debug)]
pub struct Tables {
    /// (perf's name of the type, records).
    pub stat: Vec<(String, u64)>,
    /// One row per record, on disk ([`Tables::overview`]).
    overview: Records,
    /// By pid.
    pub processes: Vec<ProcessRow>,
    /// Per event, by period, largest first.
    pub results: Vec<ResultRow>,
}

/// What readperf's tables count of the samples, as the replay hands them out (the
/// callback of [`crate::replay::replay`]): per process, and per event and address.
#[derive(Debug, Clone, Default)]
pub struct SampleCounts {
    /// Per pid: samples and their period (saturating).
    per_pid: BTreeMap<i32, (u64, u64)>,
    /// Per (event, kernel mode, DSO, DSO-relative address): samples and period.
    per_addr: FxHashMap<AddrKey, (u64, u64)>,
}

/// An address of an event's samples: (event, kernel mode, DSO, DSO-relative address).
type AddrKey = (usize, bool, Option<DsoId>, u64);

impl SampleCounts {
    /// Count one sample.
    pub fn count(&mut self, s: &ResolvedSample) {
        let add = |c: &mut (u64, u64)| {
            c.0 += 1;
            c.1 = c.1.saturating_add(s.period);
        };
        add(self.per_pid.entry(s.pid).or_default());
        let ip = &s.ip;
        add(self
            .per_addr
            .entry((s.event, ip.kernel, ip.dso, ip.addr))
            .or_default());
    }
}

/// The tables of the recording at `path`, already replayed as `replay`, its samples
/// counted into `counts`. The records are read again, for stat.csv and overview.csv;
/// overview.csv's rows wait on disk (see [`Tables::overview`]).
pub fn tables(
    path: &Path,
    replay: &Replay,
    counts: &SampleCounts,
    symbols: &mut Symbolizer,
) -> Result<Tables> {
    let mut reader = PerfReader::open_with(path, ReadOptions::ContainersAndContents)?;
    let spool_error = |e| Error::io("the temporary file of overview.csv", e);
    let mut stats = Stats::default();
    let mut overview = Spool::new().map_err(spool_error)?;
    let mut nr = 0u64;
    let mut record = Vec::new();
    let mut seen: HashMap<i32, Seen> = HashMap::new();
    let mut last_time = 0;
    while let Some(item) = reader.next_record()? {
        stats.add(&item);
        let at = item.locate();
        let kind = item.raw.record_type();
        let mut row = OverviewRow {
            nr,
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
        // Sorted by that time below, stably: records without a time stay where they were.
        record.clear();
        record.extend_from_slice(&last_time.to_le_bytes());
        row.encode(&mut record);
        overview.push(&record).map_err(spool_error)?;
        nr += 1;
    }
    let overview = overview
        .finish()
        .and_then(|r| r.sorted(|b| (u64::from_le_bytes(b[..8].try_into().expect("8 bytes")), 0)))
        .map_err(spool_error)?;
    Ok(Tables {
        stat: stats
            .records()
            .iter()
            .map(|(t, n)| (t.name(), *n))
            .collect(),
        overview,
        processes: processes(replay, counts, &seen),
        results: results(replay, counts, symbols),
    })
}

impl OverviewRow {
    /// The row as bytes: nr, which of pid, tid and time are there, the three, the type's
    /// length, the type and the info.
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.nr.to_le_bytes());
        let has = u8::from(self.pid.is_some())
            | u8::from(self.tid.is_some()) << 1
            | u8::from(self.time.is_some()) << 2;
        out.push(has);
        out.extend_from_slice(&self.pid.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&self.tid.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&self.time.unwrap_or(0).to_le_bytes());
        out.extend_from_slice(&(self.kind.len() as u32).to_le_bytes());
        out.extend_from_slice(self.kind.as_bytes());
        out.extend_from_slice(self.info.as_bytes());
    }

    /// [`OverviewRow::encode`] read back.
    fn decode(b: &[u8]) -> OverviewRow {
        let le_u64 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let le_i32 = |i: usize| i32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let has = b[8];
        let kind_len = u32::from_le_bytes(b[25..29].try_into().expect("4 bytes")) as usize;
        let text = |r: &[u8]| String::from_utf8_lossy(r).into_owned();
        OverviewRow {
            nr: le_u64(0),
            pid: (has & 1 != 0).then(|| le_i32(9)),
            tid: (has & 2 != 0).then(|| le_i32(13)),
            time: (has & 4 != 0).then(|| le_u64(17)),
            kind: text(&b[29..29 + kind_len]),
            info: text(&b[29 + kind_len..]),
        }
    }
}

/// overview.csv's rows, in order ([`Tables::overview`]).
pub struct OverviewRows<'a> {
    reader: Reader<'a>,
}

impl OverviewRows<'_> {
    /// The next row, None after the last.
    pub fn next_row(&mut self) -> io::Result<Option<OverviewRow>> {
        // Each record starts with the time it was sorted by.
        Ok(self
            .reader
            .next_record()?
            .map(|r| OverviewRow::decode(&r[8..])))
    }
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

fn processes(replay: &Replay, counts: &SampleCounts, seen: &HashMap<i32, Seen>) -> Vec<ProcessRow> {
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
    for (&pid, &(samples, period)) in &counts.per_pid {
        let r = rows.entry(pid).or_insert_with(|| new_process(pid, seen));
        r.samples += samples;
        r.period = r.period.saturating_add(period);
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

fn results(replay: &Replay, counts: &SampleCounts, symbols: &mut Symbolizer) -> Vec<ResultRow> {
    let m = &replay.machine;
    // (event, kernel mode, DSO, symbol) -> (samples, period, source)
    type Key = (usize, bool, Option<DsoId>, SymbolName);
    let mut groups: HashMap<Key, (u64, u64, String)> = HashMap::new();
    // One DSO after another, its symbols and DWARF let go of once its addresses are
    // named.
    let mut addrs: Vec<_> = counts.per_addr.iter().collect();
    addrs.sort_unstable_by_key(|(k, _)| (k.2, k.0, k.1, k.3));
    for group in addrs.chunk_by(|a, b| a.0 .2 == b.0 .2) {
        for (&(event, kernel, dso, addr), &(samples, period)) in group {
            let name = match dso {
                Some(d) => symbols.name(d, &m.dsos[d], addr),
                None => SymbolName::Address(addr),
            };
            let g = groups
                .entry((event, kernel, dso, name))
                .or_insert_with_key(|k| {
                    // The function's own frame at its first address: the outermost one.
                    let source = match (&k.3, dso) {
                        (SymbolName::Function { start, .. }, Some(id)) => symbols
                            .source_frames(id, &m.dsos[id], *start)
                            .last()
                            .and_then(|f| Some(format!("{}:{}", f.file.as_deref()?, f.line)))
                            .unwrap_or_default(),
                        _ => String::new(),
                    };
                    (0, 0, source)
                });
            g.0 += samples;
            g.1 = g.1.saturating_add(period);
        }
        if let Some(d) = group[0].0 .2 {
            symbols.forget(d);
        }
    }
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let mut rows: Vec<ResultRow> = groups
        .into_iter()
        .map(|((event, kernel, dso, name), (samples, period, source))| {
            let d = dso.map(|d| &m.dsos[d]);
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
    /// overview.csv's rows: one per record, in time order (a record without a time keeps
    /// its place after the one before it), read back from disk.
    pub fn overview(&self) -> OverviewRows<'_> {
        OverviewRows {
            reader: self.overview.read_all(),
        }
    }

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
                let mut rows = self.overview();
                while let Some(r) = rows.next_row()? {
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
