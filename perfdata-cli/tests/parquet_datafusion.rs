//! The README's query in DataFusion (the `datafusion` Python package), run by
//! docs/parquet-query.py --engine datafusion: each symbol's period equals perf 6.1's,
//! and over every fixture, flat and in `--partition host,date` folders, the rows equal
//! DuckDB's. (Spark SQL, `--engine spark`, was checked by hand: pyspark is too large
//! for the tests.)

use perfdata_tests::{fixtures_dir, perf_available};

use crate::parquet_support;

use parquet_support::{export_parquet as export, perf_periods, query_script};

#[perfdata_oracle::needs(perf, python_datafusion, parquet)]
#[test]
fn datafusion_sums_perfs_periods() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-callgraph-fp.data");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("pq");
    export(std::slice::from_ref(&input), &out, &[]);
    let ours = query_script(&["--engine", "datafusion"], &out);
    let perf = perf_periods(&input);
    assert!(perf.len() > 3, "{perf:?}");
    assert_eq!(ours, perf);
}

#[perfdata_oracle::needs(python_duckdb, python_datafusion, parquet)]
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
        let duck = query_script(&["--engine", "duckdb"], &out);
        assert!(duck.len() > 50, "{name}: {} symbols", duck.len());
        let fusion = query_script(&["--engine", "datafusion"], &out);
        assert_eq!(fusion, duck, "{name}");
    }
}
