//! The README's query in DataFusion (the `datafusion` Python package), run by
//! docs/parquet-query.py --engine datafusion: each symbol's period equals perf 6.1's,
//! and over every fixture, flat and in `--partition host,date` folders, the rows equal
//! DuckDB's. (Spark SQL, `--engine spark`, was checked by hand: pyspark is too large
//! for the tests.)

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available, run_perfdata, workspace_root};

mod report_rows;

use report_rows::{perf_rows_summed, unresolved};

/// `perfdata export --format parquet INPUTS -o DIR EXTRA`, which must succeed.
fn export(inputs: &[std::path::PathBuf], dir: &Path, extra: &[&str]) {
    let mut args: Vec<&OsStr> = vec![OsStr::new("export")];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["--format", "parquet", "-o"].map(OsStr::new));
    args.push(dir.as_os_str());
    args.extend(extra.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// docs/parquet-query.py --engine ENGINE DIR: symbol -> period (each symbol once).
fn query(engine: &str, dir: &Path) -> BTreeMap<String, u64> {
    let run = Command::new("python3")
        .arg(workspace_root().join("docs/parquet-query.py"))
        .args(["--engine", engine])
        .arg(dir)
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{engine}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let text = String::from_utf8(run.stdout).expect("UTF-8");
    let rows: Vec<(u64, String)> = text
        .lines()
        .map(|l| {
            let (p, s) = l.split_once('\t').expect("PERIOD\\tSYMBOL");
            (p.parse().expect("period"), s.to_string())
        })
        .collect();
    assert!(
        rows.windows(2).all(|w| w[0].0 >= w[1].0),
        "{engine}: not sorted: {rows:?}"
    );
    let n = rows.len();
    let map: BTreeMap<String, u64> = rows.into_iter().map(|(p, s)| (s, p)).collect();
    assert_eq!(map.len(), n, "{engine}: a symbol twice");
    map
}

#[perfdata_oracle::needs(perf, python_datafusion)]
#[test]
fn datafusion_sums_perfs_periods() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-callgraph-fp.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pq");
    export(std::slice::from_ref(&input), &out, &[]);
    let ours = query("datafusion", &out);
    let mut perf: BTreeMap<String, u64> = BTreeMap::new();
    for rows in perf_rows_summed(&input, "sym", &[]).values() {
        for (cells, row) in rows {
            let sym = if unresolved(cells) {
                "[unknown]".to_string()
            } else {
                cells[0].get(4..).unwrap_or_default().to_string()
            };
            *perf.entry(sym).or_default() += row.period;
        }
    }
    assert!(perf.len() > 3, "{perf:?}");
    assert_eq!(ours, perf);
}

#[perfdata_oracle::needs(python_duckdb, python_datafusion)]
#[test]
fn datafusion_and_duckdb_agree_flat_and_partitioned() {
    let mut inputs: Vec<_> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data") && p.is_file())
        .collect();
    inputs.sort();
    assert!(inputs.len() > 10);
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("flat", &[][..]),
        ("part", &["--partition", "host,date"][..]),
    ] {
        let out = dir.path().join(name);
        export(&inputs, &out, extra);
        let duck = query("duckdb", &out);
        assert!(duck.len() > 50, "{name}: {} symbols", duck.len());
        assert_eq!(query("datafusion", &out), duck, "{name}");
    }
}
