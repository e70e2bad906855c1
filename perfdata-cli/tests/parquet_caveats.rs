//! docs/parquet.md's caveats, where a query over the Parquet tables groups otherwise
//! than `perf report --sort comm,dso,sym`, each shown on a synthetic recording against
//! perf 6.1 and DuckDB:
//!
//! - addresses without a symbol are one `[unknown]` row per command and DSO, where perf
//!   shows one row per address;
//! - two functions of one name (at two addresses) are one row of `GROUP BY symbol`,
//!   where perf shows two;
//! - a comm that is not UTF-8 has U+FFFD for each bad byte (Parquet strings are
//!   UTF-8), as perf's bytes read lossily.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{perf_available, run_perfdata};

mod parquet_support;
mod report_rows;

use parquet_support::export_parquet;
use report_rows::{perf_period_rows, perf_rows, unresolved};

/// `perfdata ARGS`, which must succeed.
fn perfdata(args: &[&OsStr]) {
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None);
    assert!(
        out.status.success(),
        "perfdata {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `perfdata synth` of one process per comm, 4 DSOs functions each, callchains of 3,
/// into DIR/NAME.data, with `extra` options.
fn synth(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(format!("{name}.data"));
    let mut args: Vec<&OsStr> = [
        "synth",
        "--samples",
        "3000",
        "--seed",
        "7",
        "--callchain",
        "3",
        "--processes",
        "2",
        "--threads-per-process",
        "1",
        "--dsos",
        "2",
        "--functions",
        "4",
        "-o",
    ]
    .iter()
    .map(OsStr::new)
    .collect();
    args.push(path.as_os_str());
    args.extend(extra.iter().map(OsStr::new));
    perfdata(&args);
    path
}

/// Export `input` into DIR/pq and run `sql` over its samples in DuckDB: the rows.
fn duckdb(input: &Path, dir: &Path, sql: &str) -> Vec<serde_json::Value> {
    let out = dir.join("pq");
    export_parquet(&[input.to_path_buf()], &out, &[]);
    let script = "import duckdb, json, sys\n\
        con = duckdb.connect()\n\
        con.execute(f\"CREATE VIEW samples AS SELECT * FROM read_parquet('{sys.argv[1]}/samples/**/*.parquet')\")\n\
        print(json.dumps(con.execute(sys.argv[2]).fetchall()))\n";
    let run = Command::new("python3")
        .args(["-c", script])
        .arg(&out)
        .arg(sql)
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
    rows.as_array().expect("rows").clone()
}

fn text(v: &serde_json::Value) -> String {
    v.as_str().expect("text").to_string()
}

#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn addresses_without_a_symbol_are_one_unknown_row() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    // No --dso-dir: the DSOs are paths that do not exist, no function has a name.
    let input = synth(dir.path(), "nosym", &[]);
    let perf = perf_rows(&input, "comm,dso,sym", &[]);
    let perf = &perf["cpu-clock"];
    // perf: a row per address; summed per (comm, DSO), with how many rows.
    let mut theirs: BTreeMap<(String, String), (u64, usize)> = BTreeMap::new();
    for (cells, row) in perf {
        assert!(unresolved(cells), "{cells:?}");
        let e = theirs
            .entry((cells[0].clone(), cells[1].clone()))
            .or_default();
        e.0 += row.samples;
        e.1 += 1;
    }
    assert_eq!(theirs.len(), 4, "{theirs:?}");
    assert!(theirs.values().all(|(_, rows)| *rows > 10), "{theirs:?}");
    let rows = duckdb(
        &input,
        dir.path(),
        "SELECT comm, dso, symbol, count(*) FROM samples GROUP BY ALL ORDER BY ALL",
    );
    let ours: BTreeMap<(String, String), (u64, usize)> = rows
        .iter()
        .map(|r| {
            assert_eq!(text(&r[2]), "[unknown]");
            ((text(&r[0]), text(&r[1])), (r[3].as_u64().unwrap(), 1))
        })
        .collect();
    let theirs: BTreeMap<_, _> = theirs.into_iter().map(|(k, v)| (k, (v.0, 1))).collect();
    assert_eq!(ours, theirs);
}

#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn functions_of_one_name_are_one_row() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let dsos = dir.path().join("dsos");
    std::fs::create_dir(&dsos).unwrap();
    let input = synth(dir.path(), "twins", &["--dso-dir", dsos.to_str().unwrap()]);
    // Rename synth0_fn1 to synth0_fn0 in the symbol table (same length, the build-id
    // note untouched): two functions of one name at two addresses.
    let so = dsos.join("libsynth0.so");
    let mut bytes = std::fs::read(&so).unwrap();
    let at = bytes
        .windows(11)
        .position(|w| w == b"synth0_fn1\0")
        .expect("the symbol's name");
    bytes[at + 9] = b'0';
    std::fs::write(&so, bytes).unwrap();
    let perf = perf_period_rows(&input);
    let twins: Vec<u64> = perf["cpu-clock"]
        .iter()
        .filter(|(sym, _)| sym == "[.] synth0_fn0")
        .map(|(_, period)| *period)
        .collect();
    assert_eq!(twins.len(), 2, "perf's rows: {perf:?}");
    let rows = duckdb(
        &input,
        dir.path(),
        "SELECT symbol, sum(period)::BIGINT FROM samples GROUP BY symbol ORDER BY symbol",
    );
    let ours: Vec<(String, u64)> = rows
        .iter()
        .map(|r| (text(&r[0]), r[1].as_u64().unwrap()))
        .collect();
    let named: Vec<&(String, u64)> = ours.iter().filter(|(s, _)| s == "synth0_fn0").collect();
    assert_eq!(named.len(), 1, "{ours:?}");
    assert_eq!(named[0].1, twins.iter().sum::<u64>(), "{ours:?}");
    assert!(!ours.iter().any(|(s, _)| s == "synth0_fn1"), "{ours:?}");
}

#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn a_comm_that_is_not_utf8_has_replacement_characters() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let input = synth(dir.path(), "comm", &[]);
    // synth0's COMM records (the name padded with NULs): "syn\xffh0".
    let mut bytes = std::fs::read(&input).unwrap();
    let mut patched = 0;
    for at in 0..bytes.len() - 7 {
        if &bytes[at..at + 7] == b"synth0\0" {
            bytes[at + 3] = 0xff;
            patched += 1;
        }
    }
    assert!(patched > 0);
    std::fs::write(&input, bytes).unwrap();
    // perf prints the bytes; read lossily, each bad byte is U+FFFD.
    let perf = perf_rows(&input, "comm", &[]);
    let theirs: BTreeMap<String, u64> = perf["cpu-clock"]
        .iter()
        .map(|(cells, row)| (cells[0].clone(), row.samples))
        .collect();
    assert!(theirs.contains_key("syn\u{fffd}h0"), "{theirs:?}");
    let rows = duckdb(
        &input,
        dir.path(),
        "SELECT comm, count(*) FROM samples GROUP BY comm ORDER BY comm",
    );
    let ours: BTreeMap<String, u64> = rows
        .iter()
        .map(|r| (text(&r[0]), r[1].as_u64().unwrap()))
        .collect();
    assert_eq!(ours, theirs);
}
