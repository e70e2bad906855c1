//! What the Parquet tests share: the export, docs/parquet-query.py's rows, and perf's
//! period per symbol named as the tables name it.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{run_perfdata, workspace_root};

use super::report_rows::perf_rows_summed;

/// `perfdata export --format parquet INPUTS -o DIR EXTRA`, which must succeed; its
/// stderr.
pub fn export_parquet(inputs: &[PathBuf], dir: &Path, extra: &[&str]) -> String {
    let mut args: Vec<&OsStr> = vec![OsStr::new("export")];
    args.extend(inputs.iter().map(|p| p.as_os_str()));
    args.extend(["--format", "parquet", "-o"].map(OsStr::new));
    args.push(dir.as_os_str());
    args.extend(extra.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "export --format parquet: {stderr}");
    stderr
}

/// `python3 docs/parquet-query.py OPTIONS DIR`: symbol -> period, the lines checked
/// sorted by period and each symbol once.
#[allow(dead_code)]
pub fn query_script(options: &[&str], dir: &Path) -> BTreeMap<String, u64> {
    let run = Command::new("python3")
        .arg(workspace_root().join("docs/parquet-query.py"))
        .args(options)
        .arg(dir)
        .output()
        .expect("python3 runs");
    assert!(
        run.status.success(),
        "{options:?}: {}",
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
        "{options:?}: not sorted: {rows:?}"
    );
    let n = rows.len();
    let map: BTreeMap<String, u64> = rows.into_iter().map(|(p, s)| (s, p)).collect();
    assert_eq!(map.len(), n, "{options:?}: a symbol twice");
    map
}

/// A sym cell of perf report without its `[.] ` / `[k] ` mode, as the `symbol` column
/// holds it (an address without a symbol included: `0x00007f...`).
pub fn perf_symbol(cells: &[String]) -> String {
    let sym = &cells[2];
    match sym.get(..4) {
        Some(m) if m.starts_with('[') && m.ends_with("] ") => sym[4..].to_string(),
        _ => sym.clone(),
    }
}

/// perf report's period per symbol (`--sort sym`, every event), named as the tables
/// name it.
#[allow(dead_code)]
pub fn perf_periods(input: &Path) -> BTreeMap<String, u64> {
    let mut perf: BTreeMap<String, u64> = BTreeMap::new();
    for rows in perf_rows_summed(input, "sym", &[]).values() {
        for (cells, row) in rows {
            let cells = vec![String::new(), String::new(), cells[0].clone()];
            *perf.entry(perf_symbol(&cells)).or_default() += row.period;
        }
    }
    perf
}

/// Whether `symbol` is an address as perf report prints one without a symbol.
#[allow(dead_code)]
pub fn is_address(symbol: &str) -> bool {
    let hex = symbol.strip_prefix("0x").unwrap_or(symbol);
    hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit())
}

/// An address as perf report's Symbol column prints one without a symbol (`%#.16llx`:
/// 16 zeros alone for 0, as C's `#` gives 0 no prefix).
#[allow(dead_code)]
pub fn perf_address(a: u64) -> String {
    match a {
        0 => "0000000000000000".to_string(),
        a => format!("{a:#018x}"),
    }
}

/// The files under `dir`, recursively.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("a folder") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `python3 -c SCRIPT DIR ARGS...` (a DuckDB script printing JSON), which must succeed:
/// its JSON rows.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn duckdb_rows(script: &str, dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let run = Command::new("python3")
        .args(["-c", script])
        .arg(dir)
        .args(args)
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
