//! readperf's tables (`perfdata report --csv DIR`) against perf 6.1: stat.csv against
//! `perf report --stats`; overview.csv against stat.csv (one line per record, in time
//! order); processes.csv's samples and period per pid against `perf report --sort pid -n
//! --show-total-period` (threads summed into their processes by `perf script -F
//! pid,tid`), and its fork and exit times against `perf script --show-task-events`;
//! results.csv's samples and period per symbol against `perf report --sort sym -n
//! --show-total-period`, and the samples' sum against the SAMPLE count.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{name, perf_run, perf_stats, run_perfdata};

use super::report_rows::{perf_rows, perf_rows_summed};

/// A table: its header's names and its rows.
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Csv {
    /// Read an RFC 4180 file (quoted fields do not span lines here).
    pub fn read(path: &Path) -> Csv {
        let text = std::fs::read_to_string(path).expect("table written");
        let mut lines = text.lines().map(split);
        let header = lines.next().expect("a header line");
        let rows: Vec<Vec<String>> = lines.collect();
        for r in &rows {
            assert_eq!(r.len(), header.len(), "{}: {r:?}", path.display());
        }
        Csv { header, rows }
    }

    /// The cells of column `name`.
    pub fn column(&self, name: &str) -> Vec<&str> {
        let i = self.index(name);
        self.rows.iter().map(|r| r[i].as_str()).collect()
    }

    /// The index of column `name`.
    pub fn index(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("column {name}"))
    }
}

fn split(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().expect("cell").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            (c, _) => cells.last_mut().expect("cell").push(c),
        }
    }
    cells
}

/// perf's time format (`sec.usec`, truncated) of a time in nanoseconds.
fn perf_time(ns: &str) -> String {
    let ns: u64 = ns.parse().expect("time");
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

/// Write the tables of `input` into `dir` and compare them with perf; the problems.
pub fn check(input: &Path, dir: &Path) -> Vec<String> {
    let out_dir = dir.join(format!("{}.csv", name(input)));
    let args: Vec<&OsStr> = vec![
        OsStr::new("report"),
        input.as_os_str(),
        OsStr::new("--csv"),
        out_dir.as_os_str(),
    ];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "report --csv {}: {}",
        name(input),
        String::from_utf8_lossy(&out.stderr)
    );
    let table = |f: &str| Csv::read(&out_dir.join(f));
    let mut problems = Vec::new();
    let mut expect = |what: &str, ok: bool, detail: String| {
        if !ok {
            problems.push(format!("{} {what}: {detail}", name(input)));
        }
    };

    // stat.csv: perf report --stats.
    let perf = perf_stats(input);
    assert!(
        perf.clean && !perf.records.is_empty(),
        "perf --stats on {}",
        name(input)
    );
    let stat = table("stat.csv");
    let ours: BTreeMap<String, u64> = stat
        .rows
        .iter()
        .map(|r| (r[0].clone(), r[1].parse().expect("count")))
        .collect();
    expect(
        "stat.csv",
        ours == perf.records,
        format!("{ours:?} vs perf {:?}", perf.records),
    );

    // overview.csv: every record once, in time order.
    let overview = table("overview.csv");
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    for t in overview.column("type") {
        *by_type.entry(t.to_string()).or_insert(0) += 1;
    }
    expect(
        "overview.csv types",
        by_type == ours,
        format!("{by_type:?}"),
    );
    let mut nrs: Vec<u64> = overview
        .column("nr")
        .iter()
        .map(|n| n.parse().expect("nr"))
        .collect();
    nrs.sort_unstable();
    expect(
        "overview.csv nr",
        nrs.iter().enumerate().all(|(i, n)| i as u64 == *n),
        "not 0..n".into(),
    );
    let times: Vec<u64> = overview
        .column("time")
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().expect("time"))
        .collect();
    expect(
        "overview.csv time order",
        times.windows(2).all(|w| w[0] <= w[1]) && !times.is_empty(),
        format!("{} times", times.len()),
    );

    // processes.csv: samples and period per pid, fork and exit times.
    let processes = table("processes.csv");
    let pids = processes.column("pid");
    let mut unique = pids.clone();
    unique.sort_unstable();
    unique.dedup();
    expect(
        "processes.csv one line per process",
        unique.len() == pids.len() && !pids.is_empty(),
        format!("{} lines, {} pids", pids.len(), unique.len()),
    );
    // (samples, period) per pid.
    let ours: BTreeMap<i64, (u64, u64)> = pids
        .iter()
        .zip(processes.column("samples"))
        .zip(processes.column("period"))
        .map(|((p, n), q)| {
            let values = (n.parse().expect("samples"), q.parse().expect("period"));
            (p.parse().expect("pid"), values)
        })
        .filter(|(_, (n, _))| *n > 0)
        .collect();
    let script = perf_run(&["script", "-F", "pid,tid"], input);
    assert!(script.clean(), "perf script -F pid,tid: {}", script.stderr);
    let pid_of: BTreeMap<i64, i64> = script
        .stdout
        .lines()
        .filter_map(|l| l.trim().split_once('/'))
        .map(|(p, t)| {
            (
                t.trim().parse().expect("tid"),
                p.trim().parse().expect("pid"),
            )
        })
        .collect();
    let mut theirs: BTreeMap<i64, (u64, u64)> = BTreeMap::new();
    for rows in perf_rows(input, "pid", &[]).values() {
        for (cells, row) in rows {
            let tid: i64 = cells[0]
                .split(':')
                .next()
                .expect("tid")
                .trim()
                .parse()
                .expect("tid");
            let sum = theirs
                .entry(pid_of.get(&tid).copied().unwrap_or(tid))
                .or_insert((0, 0));
            sum.0 += row.samples;
            sum.1 += row.period;
        }
    }
    expect(
        "processes.csv samples and period",
        ours == theirs && !ours.is_empty(),
        format!("{ours:?} vs perf {theirs:?}"),
    );
    let tasks = perf_run(
        &["script", "--show-task-events", "-F", "pid,tid,time"],
        input,
    );
    assert!(
        tasks.clean(),
        "perf script --show-task-events: {}",
        tasks.stderr
    );
    let (mut forks, mut exits) = (BTreeMap::new(), BTreeMap::new());
    for l in tasks.stdout.lines() {
        let Some((head, ev)) = l.split_once(": PERF_RECORD_") else {
            continue;
        };
        if !ev.starts_with("FORK(") && !ev.starts_with("EXIT(") {
            continue;
        }
        let time = head.split_whitespace().last().expect("time").to_string();
        let ids = &ev[ev.find('(').expect("(") + 1..ev.find(')').expect(")")];
        let (p, t) = ids.split_once(':').expect("pid:tid");
        if p != t {
            continue;
        }
        let pid: i64 = p.parse().expect("pid");
        if ev.starts_with("FORK") {
            forks.entry(pid).or_insert(time);
        } else if ev.starts_with("EXIT") {
            exits.insert(pid, time);
        }
    }
    // Each recording here ends with its workload's EXIT.
    assert!(
        !exits.is_empty(),
        "no EXIT in perf script of {}",
        name(input)
    );
    for (col, perf) in [("fork_time", &forks), ("exit_time", &exits)] {
        let ours: BTreeMap<i64, String> = pids
            .iter()
            .zip(processes.column(col))
            .filter(|(_, t)| !t.is_empty())
            .map(|(p, t)| (p.parse().expect("pid"), perf_time(t)))
            .collect();
        expect(
            &format!("processes.csv {col}"),
            &ours == perf,
            format!("{ours:?} vs perf {perf:?}"),
        );
    }

    // results.csv: samples and period per symbol, rows perf shows above 0.1%.
    let results = table("results.csv");
    let mut ours: BTreeMap<(String, String), (u64, u64)> = BTreeMap::new();
    for r in &results.rows {
        let sum = ours.entry((r[0].clone(), r[1].clone())).or_insert((0, 0));
        sum.0 += r[results.index("samples")].parse::<u64>().expect("samples");
        sum.1 += r[results.index("period")].parse::<u64>().expect("period");
    }
    let sample_records = stat
        .rows
        .iter()
        .find(|r| r[0] == "SAMPLE")
        .map_or(0, |r| r[1].parse().expect("count"));
    let total: u64 = ours.values().map(|(n, _)| n).sum();
    expect(
        "results.csv total",
        total == sample_records && total > 0,
        format!("{total} vs {sample_records} SAMPLE records"),
    );
    // Symbols of one name in several DSOs are rows of their own in perf, one name here.
    for (event, rows) in perf_rows_summed(input, "sym", &[]) {
        for (cells, row) in rows {
            let got = ours.get(&(event.clone(), cells[0].clone())).copied();
            if row.percent > 0.1 && got != Some((row.samples, row.period)) {
                expect(
                    "results.csv",
                    false,
                    format!("{event} {}: perf {row:?}, ours {got:?}", cells[0]),
                );
            }
        }
    }
    eprintln!(
        "{}: {} records, {} processes, {} result rows",
        name(input),
        overview.rows.len(),
        processes.rows.len(),
        results.rows.len()
    );
    problems
}
