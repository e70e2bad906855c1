//! JIT code named from the map file a JIT writes (`/tmp/perf-PID.map`), against perf 6.1:
//! node run with `--perf-basic-prof` on tests/jit/hot.js, recorded here, and `perfdata
//! report --sort comm,dso,sym` compared with `perf report --stdio -n` row for row above
//! 0.1%: the JIT's rows are `[JIT] tid PID` with the JavaScript function's name, as perf
//! prints them. And a jitdump (node `--perf-prof`, recorded with `-k mono`): perfdata's
//! rows of the recording as made equal perf's of it after `perf inject --jit`. Without
//! node the tests say they skip.
//!
//! And the names of node's own builtins, where a label lies inside a sized function,
//! without node: tests/workload/labels.c, built and recorded here.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::{perf_available, perf_output, run_perfdata};

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows, perf_rows};

/// Removes the map file node wrote (named by its pid) when the test ends, however.
struct MapFile(Option<PathBuf>);

impl Drop for MapFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// The pid in the `[JIT] tid PID` rows of `data`.
fn jit_pid(data: &Path) -> Option<String> {
    let ours = our_rows(data, "dso", &[]);
    ours.values()
        .flat_map(|rows| rows.keys())
        .find_map(|cells| {
            let pid = cells[0].strip_prefix("[JIT] tid ")?;
            Some(pid.to_string())
        })
}

/// A temporary directory and tests/jit/hot.js (the tests need perf and node: reported
/// ignored without them).
fn node_workload() -> (tempfile::TempDir, PathBuf) {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    (
        dir,
        perfdata_tests::workspace_root().join("perfdata-cli/tests/jit/hot.js"),
    )
}

#[perfdata_oracle::needs(perf, node)]
#[test]
fn node_jit_symbols_match_perf_report() {
    let (dir, script) = node_workload();
    // node writes its isolate log into its working directory: the temporary one.
    let run = format!(
        "cd '{}' && exec node --perf-basic-prof '{}'",
        dir.path().display(),
        script.display()
    );
    let data = workload::record(
        dir.path(),
        "node.data",
        &["-e", "task-clock", "-c", "100000"],
        &["sh", "-c", &run],
    );
    let pid = jit_pid(&data).expect("a [JIT] tid row");
    let map = MapFile(Some(PathBuf::from(format!("/tmp/perf-{pid}.map"))));
    let mut compared = 0;
    for sort in ["comm,dso,sym", "sym"] {
        compared += compare(&data, sort, &[]).unwrap_or_else(|e| panic!("--sort {sort}: {e}"));
    }
    // The hot function is named, and holds most samples (perf's share, checked above;
    // summed over the rows of each compiled version of it).
    let hot = |data: &Path, extra: &[&str]| -> u64 {
        let mut args = vec!["report", "--json", "--sort", "dso,sym"];
        args.extend_from_slice(extra);
        let args: Vec<&OsStr> = args.into_iter().map(OsStr::new).collect();
        let args = [&args[..], &[data.as_os_str()]].concat();
        let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let rows = doc["events"][0]["rows"].as_array().expect("rows").clone();
        rows.iter()
            .filter(|r| {
                r["dso"] == format!("[JIT] tid {pid}").as_str()
                    && r["sym"].as_str().unwrap_or("").contains("JS:*hotLoopJs")
            })
            .map(|r| r["samples"].as_u64().expect("samples"))
            .sum()
    };
    let total: u64 = our_rows(&data, "dso", &[])
        .values()
        .flat_map(|rows| rows.values())
        .map(|r| r.samples)
        .sum();
    let share = hot(&data, &[]);
    assert!(
        share * 2 > total,
        "JS:*hotLoopJs {share} of {total} samples"
    );
    // Read elsewhere: the map file moved under --symfs names the same code.
    let symfs = dir.path().join("symfs");
    std::fs::create_dir_all(symfs.join("tmp")).expect("symfs/tmp");
    let moved = symfs.join(format!("tmp/perf-{pid}.map"));
    std::fs::copy(map.0.as_ref().expect("map"), &moved).expect("map copied");
    drop(map);
    assert_eq!(hot(&data, &[]), 0, "named without the map file");
    let symfs_arg = symfs.to_str().expect("utf-8 path");
    assert_eq!(hot(&data, &["--symfs", symfs_arg]), share);
    eprintln!("{compared} rows compared, JS:*hotLoopJs {share} of {total} samples");
}

#[perfdata_oracle::needs(perf, node)]
#[test]
fn node_jitdump_rows_match_perf_inject_jit() {
    let (dir, script) = node_workload();
    let data = dir.path().join("jd.data");
    // node writes jit-PID.dump (and its log) into its working directory.
    let st = Command::new("perf")
        .current_dir(dir.path())
        .args([
            "record",
            "-q",
            "-k",
            "mono",
            "-e",
            "task-clock",
            "-c",
            "100000",
            "-o",
        ])
        .arg(&data)
        .args(["--", "node", "--perf-prof"])
        .arg(&script)
        .output()
        .expect("perf record runs");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let injected = dir.path().join("jd.injected.data");
    let st = Command::new("perf")
        .args(["inject", "--jit", "-i"])
        .arg(&data)
        .arg("-o")
        .arg(&injected)
        .output()
        .expect("perf inject runs");
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    for sort in ["comm,dso,sym", "sym"] {
        let perf = perf_rows(&injected, sort, &[]);
        let ours = our_rows(&data, sort, &[]);
        assert_eq!(
            perf.keys().collect::<Vec<_>>(),
            ours.keys().collect::<Vec<_>>()
        );
        let mut compared = 0;
        for (ev, rows) in &perf {
            for (cells, row) in rows.iter().filter(|(_, r)| r.percent > 0.1) {
                let mine = ours[ev].get(cells);
                assert!(
                    mine.is_some_and(|m| m.same(row)),
                    "--sort {sort} {cells:?}: perf {row:?}, perfdata {mine:?}"
                );
                compared += 1;
            }
            for (cells, mine) in ours[ev].iter().filter(|(_, r)| r.percent > 0.1) {
                assert!(
                    rows.contains_key(cells),
                    "{cells:?}: perfdata {mine:?}, not in perf"
                );
            }
        }
        // The hot function is a jitted DSO's row, as perf inject names it (by sym alone,
        // its compiled versions print the same cells and the table keeps one of them).
        if sort == "sym" {
            continue;
        }
        let hot = ours
            .values()
            .flat_map(|rows| rows.iter())
            .filter(|(cells, _)| cells.iter().any(|c| c.contains("JS:*hotLoopJs")))
            .map(|(_, r)| r.percent)
            .fold(0.0, f64::max);
        eprintln!("--sort {sort}: {compared} rows compared, JS:*hotLoopJs {hot}%");
        assert!(hot > 50.0, "--sort {sort}: JS:*hotLoopJs at most {hot}%");
    }
}

/// Labels inside sized functions (node's `construct_stub_create_deopt_addr` inside
/// `Builtins_JSConstructStubGeneric`): `perfdata script -F ip,sym,symoff,dso` prints
/// what perf prints, byte for byte, and `--sort sym` gives perf's rows. perf names
/// some loops after the function and others after the label (by the shape of its
/// symbol tree, checked here in its own output, so the test sees both); naming all
/// after the label (the last symbol starting before the address) or all after the
/// function fails.
#[perfdata_oracle::needs(perf)]
#[test]
fn labels_inside_functions_named_as_perf_names_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_labels(dir.path());
    let data = workload::record(
        dir.path(),
        "labels.data",
        &["-e", "task-clock", "-c", "100000"],
        &[&exe, "3000000"],
    );
    let fields = ["script", "-F", "ip,sym,symoff,dso"];
    let perf = perf_output(&fields, &data);
    assert!(perf.status.success());
    let perf = String::from_utf8_lossy(&perf.stdout).into_owned();
    let spin = |line: &str, label: bool| {
        line.split_whitespace()
            .nth(1)
            .is_some_and(|sym| sym.starts_with("spin_") && sym.contains("_loop+") == label)
    };
    assert!(perf.lines().any(|l| spin(l, true)), "{perf}");
    assert!(perf.lines().any(|l| spin(l, false)), "{perf}");
    let args: Vec<&OsStr> = fields.iter().map(OsStr::new).collect();
    let args = [&args[..], &[data.as_os_str()]].concat();
    let ours = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(ours.status.success());
    assert_eq!(String::from_utf8_lossy(&ours.stdout), perf);
    let compared = compare(&data, "sym", &[]).unwrap_or_else(|e| panic!("--sort sym: {e}"));
    eprintln!("{} samples, {compared} rows compared", perf.lines().count());
}
