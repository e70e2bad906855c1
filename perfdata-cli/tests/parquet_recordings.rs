//! The `recordings` table's per-event counts (docs/parquet.md: "per event with samples:
//! samples and the sum of their periods") against perf 6.1: `perf report`'s
//! `# Samples: N of event 'E'` and `# Event count (approx.): P` of each event.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available};

use crate::parquet_support;

use parquet_support::{duckdb_rows, export_parquet};

/// path -> event -> (samples, period), as perf report's headers say.
fn perf_events(input: &Path) -> BTreeMap<String, (u64, u64)> {
    let out = Command::new("perf")
        .args(["report", "--stdio", "-i"])
        .arg(input)
        .output()
        .expect("perf runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut events = BTreeMap::new();
    let mut event = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            let (n, name) = rest.split_once("  of event '").expect("perf's header");
            let n = n.trim().parse::<u64>().expect("a count");
            event = Some((name.trim_end_matches('\'').to_string(), n));
        } else if let Some(p) = line.strip_prefix("# Event count (approx.): ") {
            let (name, n) = event.take().expect("after # Samples");
            events.insert(name, (n, p.trim().parse().expect("a period")));
        }
    }
    events
}

#[perfdata_oracle::needs(perf, python_duckdb, parquet)]
#[test]
fn recordings_events_are_perfs_samples_and_periods() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("pq");
    let inputs: Vec<PathBuf> = ["file-multi-event.data", "file-cpu-clock.data"]
        .iter()
        .map(|f| fixtures_dir().join(f))
        .collect();
    export_parquet(&inputs, &out, &[]);
    let script = "import duckdb, json, sys\n\
        q = f\"SELECT path, events FROM read_parquet('{sys.argv[1]}/recordings/*.parquet')\"\n\
        print(json.dumps(duckdb.connect().execute(q).fetchall()))\n";
    let rows = duckdb_rows(script, &out, &[]);
    assert_eq!(rows.len(), inputs.len());
    for input in &inputs {
        let row = rows
            .iter()
            .find(|r| r[0].as_str() == Some(&*input.display().to_string()))
            .expect("a recordings row per input");
        let ours: BTreeMap<String, (u64, u64)> = row[1]
            .as_array()
            .expect("events")
            .iter()
            .map(|e| {
                let n = |k: &str| e[k].as_u64().expect("a count");
                let name = e["event"].as_str().expect("text").to_string();
                (name, (n("samples"), n("period")))
            })
            .collect();
        let perf = perf_events(input);
        assert!(!perf.is_empty(), "{}: perf's headers", input.display());
        assert_eq!(ours, perf, "{}", input.display());
    }
}
