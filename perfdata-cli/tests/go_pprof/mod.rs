//! `go tool pprof -top` (Debian's golang-go) reads our pprof files: the flat sample count
//! of each function must equal perf report's self samples of that symbol.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use perfdata_tests::name;

use super::report_rows::perf_rows;

/// Whether `go` runs (the CI script installs golang-go).
pub fn go_available() -> bool {
    Command::new("go")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `go tool pprof -top` of `profile` for `<event>_samples`: function -> flat count, the
/// total it names.
fn go_top(profile: &Path, event: &str) -> (BTreeMap<String, u64>, u64) {
    let out = Command::new("go")
        .args([
            "tool",
            "pprof",
            "-top",
            "-symbolize=none",
            "-nodefraction=0",
        ])
        .args([
            "-nodecount=1000000",
            &format!("-sample_index={event}_samples"),
        ])
        .arg(profile)
        .output()
        .expect("go tool pprof runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "go tool pprof -top {}: {stderr}",
        profile.display()
    );
    let total = stdout
        .lines()
        .find_map(|l| l.split("Total samples = ").nth(1))
        .map(|t| t.trim().parse().expect("total"))
        .unwrap_or_else(|| panic!("no total in {stdout}"));
    let mut flat = BTreeMap::new();
    let rows = stdout
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"));
    for l in rows.skip(1) {
        let cols: Vec<&str> = l.split_whitespace().collect();
        assert!(cols.len() >= 6, "pprof row {l:?}");
        let name = cols[5..].join(" ");
        let n: u64 = cols[0].parse().expect("flat");
        *flat.entry(name).or_insert(0) += n;
    }
    (flat, total)
}

/// Compare `go tool pprof -top` of `profile` (the pprof export of `input`) with `perf
/// report --sort sym -n`, per event: the total, and every function either names (perf's
/// rows summed by name; an address without a symbol is left out, as pprof shows those
/// by mapping); the problems, and how many functions were compared.
pub fn check(input: &Path, profile: &Path) -> (Vec<String>, usize) {
    let mut problems = Vec::new();
    let mut named = 0;
    for (event, rows) in perf_rows(input, "sym", &[]) {
        let mut perf: BTreeMap<String, u64> = BTreeMap::new();
        let mut total = 0;
        for (cells, row) in &rows {
            total += row.samples;
            let sym = cells[0].split_once("] ").map_or("", |(_, s)| s);
            if !sym.starts_with("0x") {
                *perf.entry(sym.to_string()).or_insert(0) += row.samples;
            }
        }
        let (go, go_total) = go_top(profile, &event);
        let go: BTreeMap<String, u64> = go
            .into_iter()
            .filter(|(f, n)| *n > 0 && !f.starts_with('[') && f != "<unknown>")
            .collect();
        if go_total != total {
            problems.push(format!(
                "{} {event}: pprof total {go_total}, perf {total}",
                name(input)
            ));
        }
        for f in perf.keys().chain(go.keys()) {
            if perf.get(f) != go.get(f) {
                problems.push(format!(
                    "{} {event} {f}: perf {:?}, go tool pprof {:?}",
                    name(input),
                    perf.get(f),
                    go.get(f)
                ));
            }
        }
        named += perf.len();
    }
    eprintln!(
        "{}: {named} functions compared with go tool pprof",
        name(input)
    );
    (problems, named)
}
