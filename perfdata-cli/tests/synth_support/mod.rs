//! Helpers shared by the synth test files: running `perfdata synth` and perf, reading
//! perf's report, and the hand-weighted workload whose counts are known.
// Each test file uses part of these.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_core::record::RecordBody;
use perfdata_core::PerfReader;
use perfdata_synth::{Stop, Workload, WorkloadSpec};
use perfdata_tests::{perf_output, run_perfdata};

/// Run `perfdata synth -o DIR/NAME ARGS` and return the output's path.
pub fn synth(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(name);
    let mut all: Vec<&OsStr> = vec![OsStr::new("synth"), OsStr::new("-o"), path.as_os_str()];
    all.extend(args.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "synth {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    path
}

/// Write `json` to DIR/NAME.json and run `perfdata synth --spec` on it.
pub fn synth_spec(dir: &Path, name: &str, json: &str, extra: &[&str]) -> PathBuf {
    let spec = dir.join(format!("{name}.json"));
    std::fs::write(&spec, json).unwrap();
    let mut args = vec!["--spec", spec.to_str().unwrap()];
    args.extend_from_slice(extra);
    synth(dir, name, &args)
}

/// Run perf on `path`; it must exit 0, print nothing on stderr and something on stdout.
pub fn perf_clean(args: &[&str], path: &Path) -> String {
    let out = perf_output(args, path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "perf {args:?} on {}: status {:?}, stderr: {stderr}",
        path.display(),
        out.status
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!stdout.trim().is_empty(), "perf {args:?}: empty output");
    stdout
}

/// `perf report --stdio --no-children -g none --sort SORT -n --show-total-period`: each
/// row's fields split at white space (overhead, samples, period, then the keys), every
/// row `fields` long (at least one row).
pub fn report_rows(path: &Path, sort: &str, fields: usize) -> Vec<Vec<String>> {
    // --no-children and -g none: no inclusive column, no call graphs under the rows.
    let args = [
        "report",
        "--stdio",
        "--no-children",
        "-g",
        "none",
        "--sort",
        sort,
        "-n",
        "--show-total-period",
    ];
    let text = perf_clean(&args, path);
    let rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let f: Vec<String> = line.split_whitespace().map(String::from).collect();
            assert_eq!(f.len(), fields, "unexpected report line {line:?}");
            f
        })
        .collect();
    assert!(!rows.is_empty());
    rows
}

/// The pid of a `pid:comm` column.
pub fn pid_of(column: &str) -> i32 {
    column.split(':').next().unwrap().parse().expect("a pid")
}

/// What perf report shows of one row: its samples, its period and its overhead, as
/// perf prints it (`18.40%`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub samples: u64,
    pub period: u64,
    pub overhead: String,
}

impl Cell {
    /// A row of perf report's fields (overhead, samples, period first).
    pub fn of_row(f: &[String]) -> Cell {
        Cell {
            overhead: f[0].clone(),
            samples: f[1].parse().expect("a sample count"),
            period: f[2].parse().expect("a period"),
        }
    }
}

/// The cells perf must show for `counts` samples per key when every sample's period is
/// `period`: each row's period, and its share of the whole period as perf prints it
/// (`%.2f%%` of `100.0 * period / total`).
pub fn cells<K: Ord + Clone>(counts: &BTreeMap<K, u64>, period: u64) -> BTreeMap<K, Cell> {
    let total = counts.values().sum::<u64>() * period;
    counts
        .iter()
        .map(|(k, &n)| {
            let cell = Cell {
                samples: n,
                period: n * period,
                overhead: format!("{:.2}%", 100.0 * (n * period) as f64 / total as f64),
            };
            (k.clone(), cell)
        })
        .collect()
}

/// `perf report --sort comm,pid,dso -n --show-total-period --stdio`: the cell per
/// (comm, tid, DSO name).
pub fn report_counts(path: &Path) -> BTreeMap<(String, i32, String), Cell> {
    let mut counts = BTreeMap::new();
    for f in report_rows(path, "comm,pid,dso", 6) {
        let key = (f[3].clone(), pid_of(&f[4]), f[5].clone());
        assert!(
            counts.insert(key, Cell::of_row(&f)).is_none(),
            "one row per key: {f:?}"
        );
    }
    counts
}

/// The samples each (thread, function) cell of `workload` gets when `total` are spread
/// by weight, computed here from the model's seeded weights (a thread's times a
/// function's), not by the planner under test: each cell the whole part of its share,
/// the samples left one each to the largest remainders, the first cell first on ties,
/// as the README says. Keyed by thread and function index.
pub fn spread(workload: &Workload, total: u64) -> BTreeMap<(usize, usize), u64> {
    let mut shares = Vec::new();
    for (t, thread) in workload.threads.iter().enumerate() {
        for (f, function) in workload.functions.iter().enumerate() {
            shares.push(((t, f), u128::from(thread.weight * function.weight)));
        }
    }
    let sum: u128 = shares.iter().map(|(_, w)| w).sum();
    let mut out: BTreeMap<(usize, usize), u64> = shares
        .iter()
        .map(|&(key, w)| (key, (u128::from(total) * w / sum) as u64))
        .collect();
    let left = total - out.values().sum::<u64>();
    // Largest remainder first; `shares` is in cell order, and the sort is stable.
    let mut by_remainder = shares.clone();
    by_remainder.sort_by_key(|&(_, w)| std::cmp::Reverse(u128::from(total) * w % sum));
    for (key, _) in by_remainder.into_iter().take(left as usize) {
        *out.get_mut(&key).unwrap() += 1;
    }
    out
}

/// Every sample's callchain as written (read back with perfdata), without the
/// PERF_CONTEXT_USER marker.
pub fn callchains(path: &Path) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut r = PerfReader::open(path).unwrap();
    while let Some(item) = r.next_record().unwrap() {
        if let RecordBody::Sample(s) = item.decode().unwrap().body {
            out.push(s.callchain.expect("a callchain").ips[1..].to_vec());
        }
    }
    out
}

/// `perf script -F FIELDS` on samples with callchains and no other fields: each
/// sample's frames, one line each, white space runs made single spaces.
pub fn script_callchains(path: &Path, fields: &str) -> Vec<Vec<String>> {
    let text = perf_clean(&["script", "-F", fields], path);
    text.split("\n\n")
        .filter(|b| !b.trim().is_empty())
        .map(|b| {
            // Each sample's first line holds its (here no) fields.
            b.lines()
                .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
                .filter(|l| !l.is_empty())
                .collect()
        })
        .collect()
}

pub fn basename(path: &str) -> String {
    path.rsplit('/').next().unwrap().to_string()
}

/// 4 threads of weights 1 to 4; DSO 0's two functions weigh 1 and 1, DSO 1's 3 and 0.
/// 1000 samples over a total weight of 10 x 5: each (thread, function) cell has 20 x
/// its weight, so a thread of weight w has 40w samples in DSO 0 and 60w in DSO 1.
pub fn hand_spec() -> WorkloadSpec {
    WorkloadSpec {
        seed: 3,
        processes: 2,
        threads_per_process: 2,
        dsos: 2,
        functions_per_dso: 2,
        stop: Stop::Samples(1000),
        thread_weights: Some(vec![1, 2, 3, 4]),
        function_weights: Some(vec![1, 1, 3, 0]),
        ..Default::default()
    }
}

/// What `perf report` must show for [`hand_spec`]: a thread of weight w has 40w samples
/// in DSO 0 and 60w in DSO 1.
pub fn hand_expected() -> BTreeMap<(String, i32, String), u64> {
    let mut expected = BTreeMap::new();
    for (i, w) in [1u64, 2, 3, 4].into_iter().enumerate() {
        let comm = format!("synth{}", i / 2);
        let tid = 10_000 + i as i32;
        expected.insert((comm.clone(), tid, "libsynth0.so".to_string()), 40 * w);
        expected.insert((comm, tid, "libsynth1.so".to_string()), 60 * w);
    }
    expected
}

/// A file's bytes, or a directory's files' bytes one after the other in name order.
pub fn read_all(path: &Path) -> Vec<u8> {
    if path.is_file() {
        return std::fs::read(path).unwrap();
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(path)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() > 2);
    names
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect()
}
