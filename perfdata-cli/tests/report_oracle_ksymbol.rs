//! `perfdata report` on samples in a BPF program, which perf names from the recording's
//! KSYMBOL record (a map and a DSO `bpf_prog_<tag>_<name>` with one symbol), against
//! `perf report --stdio -n --no-children -g none` of perf 6.1, run live: tests/srcline/
//! bpf_hot.c loads a socket filter of 4000 additions and sends datagrams through it, so
//! about a third of the samples are in the JIT-compiled program. Every row above 0.1% of
//! `--sort comm,dso,sym` must be equal, and the program must be a row of its own DSO.
//! Skipped, saying so, without perf or gcc, or where the program cannot be loaded (no
//! privilege to load BPF).

use std::path::Path;
use std::process::Command;

use perfdata_tests::perf_available;

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows};

#[perfdata_oracle::needs(perf)]
#[test]
fn bpf_program_rows_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = dir.path().join("bpf_hot");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/bpf_hot.c");
    let cc = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("gcc runs");
    assert!(
        cc.status.success(),
        "gcc: {}",
        String::from_utf8_lossy(&cc.stderr)
    );
    let probe = Command::new(&exe).arg("1").output().expect("bpf_hot runs");
    if probe.status.code() == Some(2) {
        eprintln!(
            "SKIPPED: no BPF program can be loaded here: {}",
            String::from_utf8_lossy(&probe.stderr)
        );
        return;
    }
    assert!(probe.status.success(), "bpf_hot 1: {probe:?}");

    let data = workload::record(
        dir.path(),
        "bpf.data",
        &["-e", "cpu-clock", "-c", "100000"],
        &[exe.to_str().expect("utf-8 path"), "300000"],
    );
    let n = compare(&data, "comm,dso,sym", &[]).unwrap_or_else(|e| panic!("{e}"));
    let bpf: Vec<(Vec<String>, f64)> = our_rows(&data, "comm,dso,sym", &[])
        .into_values()
        .flat_map(|rows| rows.into_iter())
        .filter(|(cells, _)| cells[1].starts_with("bpf_prog_"))
        .map(|(cells, row)| (cells, row.percent))
        .collect();
    eprintln!("{n} rows compared; BPF rows {bpf:?}");
    assert!(
        bpf.iter().any(|(cells, pct)| {
            cells[1].ends_with("_perfdata_hot")
                && cells[2] == format!("[k] {}", cells[1])
                && *pct > 5.0
        }),
        "the program is not a row of its own: {bpf:?}"
    );
}
