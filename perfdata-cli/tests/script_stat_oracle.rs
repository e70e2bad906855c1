//! `perf stat record` recordings made here, listed by `perfdata script` as perf 6.1's
//! `perf script` lists them, byte for byte: the counts at each STAT_ROUND, per interval
//! (`-I`: perf prints each interval's difference from the one before), per CPU (`-a
//! -A`), aggregated per core and per socket, one line per event, thread and CPU
//! (perfdata-report/src/script/stat.rs). The two stat fixtures are script_oracle's; these
//! cover the aggregation modes and intervals no fixture has.

use std::ffi::OsStr;
use std::process::Command;

use perfdata_tests::{perf_available, perf_output, run_perfdata};

#[perfdata_oracle::needs(perf)]
#[test]
fn stat_recordings_list_as_perf_script_lists_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let modes: &[&[&str]] = &[
        &["-I", "100"],
        &["-a", "-A"],
        &["-a", "-A", "-I", "100"],
        &["-a", "--per-core"],
        &["-a", "--per-socket", "-I", "100"],
    ];
    let mut problems = Vec::new();
    for (i, mode) in modes.iter().enumerate() {
        let out = dir.path().join(format!("stat-{i}.data"));
        let st = Command::new("perf")
            .args(["stat", "record"])
            .args(*mode)
            .arg("-o")
            .arg(&out)
            .args(["--", "sleep", "0.25"])
            .output()
            .expect("perf stat record runs");
        assert!(
            st.status.success(),
            "perf stat record {mode:?}: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        let perf = perf_output(&["script"], &out);
        assert!(perf.status.success(), "perf script {mode:?}");
        let ours = run_perfdata(
            env!("CARGO_BIN_EXE_perfdata"),
            &[OsStr::new("script"), out.as_os_str()],
            None,
        );
        assert!(
            ours.status.success(),
            "{mode:?}: {}",
            String::from_utf8_lossy(&ours.stderr)
        );
        let text = String::from_utf8_lossy(&perf.stdout);
        // The listing has its header and a line per event at each round.
        assert!(
            text.starts_with("CPU   THREAD") && text.lines().count() > 10,
            "{mode:?}: {text}"
        );
        if perf.stdout != ours.stdout {
            let mine = String::from_utf8_lossy(&ours.stdout);
            let at = text
                .lines()
                .zip(mine.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(text.lines().count().min(mine.lines().count()));
            problems.push(format!(
                "{mode:?}: line {}: perf {:?}, ours {:?}",
                at + 1,
                text.lines().nth(at),
                mine.lines().nth(at)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
