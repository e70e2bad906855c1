//! `perfdata report --sort srcline` against `perf report --stdio --sort srcline -n` of
//! perf 6.1, run live, on a program compiled here with debug info (tests/srcline/hot.c)
//! at -O0 (one function, distinct lines) and at -O2 (its hot step inlined, so the
//! innermost line is the inlined function's): every row perf shows above 0.1% must be
//! ours with the same `file.c:LINE` (or perf's `symbol+offset` for the kernel and for code
//! without DWARF) and sample count, and every row of ours above 0.1% must be perf's. The
//! same recordings are compared with `--sort comm,dso,sym` and `--sort pid,dso`.

use std::collections::BTreeMap;

use perfdata_tests::perf_available;

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows};

#[perfdata_oracle::needs(perf)]
#[test]
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
            .filter(|(_, row)| row.percent > 1.0)
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

/// results.csv's source column: for each function of the workload with samples, where
/// it starts in its source, as binutils' `addr2line` gives it for the function's first
/// address (`nm`'s value of the symbol); empty for the kernel's functions.
#[perfdata_oracle::needs(perf)]
#[test]
fn results_csv_gives_each_functions_source_as_addr2line_does() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_hot(dir.path(), "-O0");
    let exe_str = exe.to_str().expect("utf-8 path");
    let data = workload::record(
        dir.path(),
        "hot.data",
        &["-e", "task-clock", "-c", "100000"],
        &[exe_str, "300"],
    );
    let csv = dir.path().join("csv");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .arg("report")
        .arg(&data)
        .arg("--csv")
        .arg(&csv)
        .output()
        .expect("perfdata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(csv.join("results.csv")).expect("results.csv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).expect("column");
    let (sym, dso, source) = (col("symbol"), col("dso"), col("source"));
    let nm = std::process::Command::new("nm")
        .arg(&exe)
        .output()
        .expect("nm runs");
    let nm = String::from_utf8_lossy(&nm.stdout).into_owned();
    let mut checked = Vec::new();
    for line in lines {
        let cells: Vec<&str> = line.split(',').collect();
        if cells[sym].starts_with("[k] ") {
            assert_eq!(cells[source], "", "{line}");
            continue;
        }
        let Some(function) = cells[sym].strip_prefix("[.] ") else {
            continue;
        };
        if cells[dso] != exe_str {
            continue;
        }
        let addr = nm
            .lines()
            .find_map(|l| {
                let mut f = l.split_whitespace();
                let (a, kind, n) = (f.next()?, f.next()?, f.next()?);
                (n == function && kind.eq_ignore_ascii_case("t")).then(|| a.to_string())
            })
            .unwrap_or_else(|| panic!("nm has no {function}: {nm}"));
        let a2l = std::process::Command::new("addr2line")
            .arg("-e")
            .arg(&exe)
            .arg(format!("0x{addr}"))
            .output()
            .expect("addr2line runs");
        let expected = String::from_utf8_lossy(&a2l.stdout).trim().to_string();
        // addr2line may add " (discriminator N)".
        let expected = expected.split(" (").next().unwrap_or_default().to_string();
        // A function without line information (crt1.o's `_start`, sampled now and then)
        // is `??:?` or `??:0` to addr2line and empty in results.csv (docs/report.md).
        let expected = if expected.starts_with("??:") {
            String::new()
        } else {
            expected
        };
        assert_eq!(cells[source], expected, "{function}: {line}");
        checked.push(function.to_string());
    }
    eprintln!("sources checked: {checked:?}");
    assert!(checked.iter().any(|f| f == "work"), "{text}");
}
