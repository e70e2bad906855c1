//! `perfdata report --sort srcline` against `perf report --stdio --sort srcline -n` of
//! perf 6.1, run live, on a program compiled here with debug info (tests/srcline/hot.c)
//! at -O0 (one function, distinct lines) and at -O2 (its hot step inlined, so the
//! innermost line is the inlined function's): every row perf shows above 0.1% must be
//! ours with the same `file.c:LINE` (or perf's `symbol+offset` for the kernel and for code
//! without DWARF) and sample count, and every row of ours above 0.1% must be perf's. The
//! same recordings are compared with `--sort comm,dso,sym` and `--sort pid,dso`.

use std::collections::BTreeMap;

use perfdata_tests::perf_available;

mod report_rows;
mod workload;

use report_rows::{compare, our_rows};

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn srcline_rows_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let mut compared = BTreeMap::new();
    for opt in ["-O0", "-O2"] {
        let exe = workload::build_hot(dir.path(), opt);
        let exe = exe.to_str().expect("utf-8 path");
        let data = workload::record(
            dir.path(),
            &format!("hot{opt}.data"),
            &["-e", "task-clock", "-c", "100000"],
            &[exe, "400"],
        );
        for sort in ["srcline", "comm,dso,sym", "pid,dso"] {
            let n =
                compare(&data, sort, &[]).unwrap_or_else(|e| panic!("hot{opt} --sort {sort}: {e}"));
            eprintln!("hot{opt} --sort {sort}: {n} rows compared");
            compared.insert(format!("{opt} {sort}"), n);
        }
        // The loop's lines are named from DWARF: more than one line of hot.c, and at -O2
        // lines of mix() (13-16), the function inlined into work().
        let ours = our_rows(&data, "srcline", &[]);
        let lines: Vec<&str> = ours
            .values()
            .flat_map(|rows| rows.iter())
            .filter(|(_, (_, pct))| *pct > 1.0)
            .filter_map(|(cells, _)| cells[0].strip_prefix("hot.c:"))
            .collect();
        assert!(lines.len() >= 2, "hot{opt}: {ours:?}");
        if opt == "-O2" {
            assert!(
                lines.iter().any(|l| ["13", "14", "15", "16"].contains(l)),
                "hot-O2: no line of the inlined mix(): {lines:?}"
            );
        }
    }
    eprintln!("rows compared: {compared:?}");
}
