//! docs/parquet.md's caveats, where a query over the Parquet tables groups otherwise
//! than `perf report --sort comm,dso,sym`, each shown on a synthetic recording against
//! perf 6.1 and DuckDB (and addresses without a symbol, a caveat of schema version 1,
//! now perf's rows):
//!
//! - two functions of one name (at two addresses) are one row of `GROUP BY symbol`,
//!   where perf shows two;
//! - a comm that is not UTF-8 has U+FFFD for each bad byte (Parquet strings are
//!   UTF-8), as perf's bytes read lossily; two comms that differ only in such bytes are
//!   one row, where perf has two.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{name, perf_available, run_perfdata};

use crate::parquet_support;
use crate::report_rows;

use parquet_support::{duckdb_rows, export_parquet};
use report_rows::{perf_period_rows, perf_rows, perf_rows_each, unresolved};

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
    duckdb_rows(script, &out, &[sql])
}

/// DuckDB rows of (text, count) as pairs.
fn text_counts(rows: &[serde_json::Value]) -> Vec<(String, u64)> {
    rows.iter()
        .map(|r| (text(&r[0]), r[1].as_u64().unwrap()))
        .collect()
}

fn text(v: &serde_json::Value) -> String {
    v.as_str().expect("text").to_string()
}

/// Not a caveat any more (schema version 1 had one `[unknown]` row per command and
/// DSO): an address without a symbol is a row of its own, its `symbol` the address as
/// perf prints it, with perf's counts: in a DSO without symbols (DSO-relative), and in
/// no map at all (the ip). The kernel's, without kallsyms, are in the fixtures
/// (parquet_engines).
#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn addresses_without_a_symbol_are_perfs_rows() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    // No --dso-dir: the DSOs are paths that do not exist, no function has a name.
    let nosym = synth(dir.path(), "nosym", &[]);
    // Without its MMAP2 records (the DSOs'; the kernel's is an MMAP), no user address is
    // in a map.
    let nomap = dir.path().join("nomap.data");
    let drop = ["strip", "--drop", "MMAP2", "-o"].map(OsStr::new);
    perfdata(&[&drop[..], &[nomap.as_os_str(), nosym.as_os_str()]].concat());
    for (input, dsos) in [(&nosym, 2), (&nomap, 0)] {
        let perf = perf_rows(input, "comm,dso,sym", &[]);
        let theirs: BTreeMap<(String, String, String), u64> = perf["cpu-clock"]
            .iter()
            .map(|(cells, row)| {
                assert!(unresolved(cells), "{cells:?}");
                let sym = cells[2].get(4..).expect("[.] ADDRESS");
                (
                    (cells[0].clone(), cells[1].clone(), sym.to_string()),
                    row.samples,
                )
            })
            .collect();
        assert!(theirs.len() > 40, "{theirs:?}");
        let named = theirs.keys().filter(|k| k.1 != "[unknown]").count();
        assert_eq!(named > 0, dsos > 0, "{theirs:?}");
        let rows = duckdb(
            input,
            &dir.path().join(format!("{}-pq", name(input))),
            "SELECT comm, dso, symbol, count(*) FROM samples GROUP BY ALL ORDER BY ALL",
        );
        let ours: BTreeMap<(String, String, String), u64> = rows
            .iter()
            .map(|r| {
                (
                    (text(&r[0]), text(&r[1]), text(&r[2])),
                    r[3].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(ours, theirs, "{}", name(input));
    }
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
    let ours = text_counts(&duckdb(
        &input,
        dir.path(),
        "SELECT symbol, sum(period)::BIGINT FROM samples GROUP BY symbol ORDER BY symbol",
    ));
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
    // synth0's COMM records (the name padded with NULs): "syn\xffh0"; synth1's
    // "syn\xfeh0": two names that differ only in bytes that are not UTF-8.
    let mut bytes = std::fs::read(&input).unwrap();
    let mut patched = [0, 0];
    for at in 0..bytes.len() - 7 {
        for (n, name, byte) in [(0, b"synth0\0", 0xff), (1, b"synth1\0", 0xfe)] {
            if &bytes[at..at + 7] == name {
                bytes[at + 3] = byte;
                bytes[at + 5] = b'0';
                patched[n] += 1;
            }
        }
    }
    assert!(patched[0] > 0 && patched[1] > 0, "{patched:?}");
    std::fs::write(&input, bytes).unwrap();
    // perf prints the bytes, a row per name; read lossily, each bad byte is U+FFFD, and
    // the two rows print the same text.
    let perf = perf_rows_each(&input, "comm", &[]);
    let mut theirs: BTreeMap<String, u64> = BTreeMap::new();
    let mut rows_of_one_text = 0;
    for (cells, row) in &perf["cpu-clock"] {
        rows_of_one_text += usize::from(cells[0] == "syn\u{fffd}h0");
        *theirs.entry(cells[0].clone()).or_default() += row.samples;
    }
    assert_eq!(rows_of_one_text, 2, "{perf:?}");
    let ours = text_counts(&duckdb(
        &input,
        dir.path(),
        "SELECT comm, count(*) FROM samples GROUP BY comm ORDER BY comm",
    ));
    // One row of both, as many samples as perf's two.
    assert_eq!(ours, theirs.into_iter().collect::<Vec<_>>());
}

/// A thread that ran as `pyenv-hooks` and then exec'd `bash-sub` (8 bytes): perf 6.1
/// sets its Command column's width from the rows' threads' last names, so it prints the
/// first name cut to 8 (`pyenv-ho`), as perfdata report does; the `comm` column holds
/// the whole name, with the same counts.
#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn a_comm_longer_than_perfs_column_is_whole() {
    use perfdata_synth::{EventSpec, SampleSpec, SynthWriter, TraceSpec};
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("exec.data");
    let trace = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000)],
        ..Default::default()
    };
    let file = std::fs::File::create(&input).unwrap();
    let mut w = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
    // perf warns of restricted kernel maps in a recording without the kernel's MMAP.
    w.kernel_mmap(0xffff_ffff_8100_0000, 0x100_0000, 1).unwrap();
    w.fork(700, 1, 700, 1, 10).unwrap();
    let mut time = 10;
    for (comm, n) in [("pyenv-hooks", 3), ("bash-sub", 5)] {
        time += 1;
        w.comm(700, 700, comm, true, time).unwrap();
        for _ in 0..n {
            time += 1000;
            let ip = 0x40_0000;
            let s = SampleSpec {
                pid: 700,
                tid: 700,
                time,
                ip,
                ..Default::default()
            };
            w.sample(&s).unwrap();
        }
    }
    w.finish().unwrap();
    let perf: Vec<(String, u64)> = perf_rows_each(&input, "comm", &[])["cpu-clock"]
        .iter()
        .map(|(cells, row)| (cells[0].clone(), row.samples))
        .collect();
    assert_eq!(perf, [("bash-sub".to_string(), 5), ("pyenv-ho".into(), 3)]);
    // perfdata report prints perf's rows, the name cut alike.
    let args = ["report", "-q", "-n", "--sort", "comm"].map(OsStr::new);
    let out = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[&args[..], &[input.as_os_str()]].concat(),
        None,
    );
    assert!(out.status.success());
    let report: Vec<(String, u64)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[2].to_string(), w[1].parse().unwrap())
        })
        .collect();
    assert_eq!(report, perf);
    let ours = text_counts(&duckdb(
        &input,
        dir.path(),
        "SELECT comm, count(*) FROM samples GROUP BY comm ORDER BY 2 DESC",
    ));
    assert_eq!(
        ours,
        [("bash-sub".to_string(), 5), ("pyenv-hooks".into(), 3)]
    );
}
