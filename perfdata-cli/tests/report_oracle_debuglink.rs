//! `perfdata report` on a stripped binary whose symbols and DWARF were split off into a
//! debug file that its `.gnu_debuglink` names (perf's DSO_BINARY_TYPE__DEBUGLINK), against
//! `perf report --stdio -n --no-children -g none` of perf 6.1, run live: tests/srcline/hot.c
//! built with `-g -O0`, `objcopy --only-keep-debug`, `strip --strip-all`, `objcopy
//! --add-gnu-debuglink`, and the debug file put in `.debug/` beside the binary. Every row
//! above 0.1% of `--sort comm,dso,sym` and `--sort srcline` must be equal, and the
//! workload's functions and lines must be named. Then, the debug file moved away, both
//! tools must still agree and no longer name them: the names came from the debug file.
//!
//! The build-id cache is kept out of it, so that it is the debuglink lookup that finds the
//! symbols: HOME is a fresh directory for perf record, perf report and perfdata (perf's
//! cache is `$HOME/.debug` unless PERF_BUILDID_DIR says otherwise, which is unset),
//! recording uses `perf record -N` (`--no-buildid-cache`), and the test checks that no
//! cache was made.

use std::path::Path;
use std::process::Command;

use perfdata_tests::perf_available;

mod report_rows;
mod workload;

use report_rows::{compare, our_rows};

/// Whether `tool --version` runs; the test is skipped, saying so, when one is missing.
fn have(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `cmd args` in `dir`, its exit status checked.
fn run(dir: &Path, cmd: &str, args: &[&str]) {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{cmd} runs: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `sym` cells of our `--sort comm,dso,sym` rows of DSO `dso` above 1%.
fn functions_of(data: &Path, dso: &str) -> Vec<String> {
    our_rows(data, "comm,dso,sym", &[])
        .values()
        .flat_map(|rows| rows.iter())
        .filter(|(cells, row)| cells[1] == dso && row.percent > 1.0)
        .map(|(cells, _)| cells[2].clone())
        .collect()
}

/// Our `--sort srcline` cells of hot.c above 1%.
fn hot_lines(data: &Path) -> Vec<String> {
    our_rows(data, "srcline", &[])
        .values()
        .flat_map(|rows| rows.iter())
        .filter(|(cells, row)| cells[0].starts_with("hot.c:") && row.percent > 1.0)
        .map(|(cells, _)| cells[0].clone())
        .collect()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn debuglink_rows_match_perf_report() {
    assert!(perf_available());
    // gcc and binutils, as every test that compiles a workload needs them.
    let missing: Vec<&str> = ["gcc", "objcopy", "strip"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    assert!(missing.is_empty(), "not installed: {missing:?}");
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    std::fs::create_dir(&home).expect("home");
    // The only test of this binary, so no other thread reads the environment meanwhile;
    // perf and perfdata, run by the helpers below, inherit it.
    std::env::set_var("HOME", &home);
    std::env::remove_var("PERF_BUILDID_DIR");

    let exe = workload::build_hot(dir.path(), "-O0");
    let name = exe.file_name().and_then(|n| n.to_str()).expect("name");
    let debug = format!("{name}.debug");
    run(dir.path(), "objcopy", &["--only-keep-debug", name, &debug]);
    run(dir.path(), "strip", &["--strip-all", name]);
    run(
        dir.path(),
        "objcopy",
        &[&format!("--add-gnu-debuglink={debug}"), name],
    );
    let dot_debug = dir.path().join(".debug");
    std::fs::create_dir(&dot_debug).expect(".debug");
    std::fs::rename(dir.path().join(&debug), dot_debug.join(&debug)).expect("move debug file");

    let data = workload::record(
        dir.path(),
        "hot.data",
        &["-N", "-e", "task-clock", "-c", "100000"],
        &[exe.to_str().expect("utf-8 path"), "400"],
    );
    assert!(
        !home.join(".debug").exists(),
        "perf record -N made a build-id cache in {}",
        home.display()
    );

    let mut compared = Vec::new();
    for sort in ["comm,dso,sym", "srcline"] {
        let n = compare(&data, sort, &[]).unwrap_or_else(|e| panic!("--sort {sort}: {e}"));
        compared.push((sort, n));
    }
    let functions = functions_of(&data, name);
    let lines = hot_lines(&data);
    eprintln!("with {debug}: rows compared {compared:?}, functions {functions:?}, lines {lines:?}");
    assert!(
        functions.iter().any(|f| f == "[.] work"),
        "work() not named from {debug}: {functions:?}"
    );
    assert!(lines.len() >= 2, "hot.c's lines not named: {lines:?}");

    // Without the debug file the binary has no symbols and no DWARF: perf and perfdata
    // agree on bare addresses, so the names above came through the debuglink.
    std::fs::rename(&dot_debug, dir.path().join("moved-away")).expect("move .debug");
    let mut compared = Vec::new();
    for sort in ["comm,dso,sym", "srcline"] {
        let n = compare(&data, sort, &[])
            .unwrap_or_else(|e| panic!("--sort {sort}, no debug file: {e}"));
        compared.push((sort, n));
    }
    let functions = functions_of(&data, name);
    let lines = hot_lines(&data);
    eprintln!("without it: rows compared {compared:?}, functions {functions:?}, lines {lines:?}");
    assert!(
        functions.iter().all(|f| f.starts_with("[.] 0x")),
        "named without the debug file: {functions:?}"
    );
    assert!(lines.is_empty(), "lines without the debug file: {lines:?}");
}
