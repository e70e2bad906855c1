//! A symbol of over 1023 characters against perf 6.1 live: perf formats each column's
//! header into a 1024-byte buffer (`hists__fprintf_headers`), so the Symbol header is
//! cut at 1023 characters while the dotted rule and the rows keep the column's width.
//! Seen on a system-wide recording (an LLVM `DenseMapBase<...>` name of 3,394
//! characters): perfdata padded the header to the full width. tests/workload/
//! long_name.cpp has a 1,400-character template name; `perf report --stdio` (two sorts)
//! and `perf diff` compared byte for byte.

use std::path::Path;
use std::process::Command;

use perfdata_tests::{perf_available, run_perfdata};

use crate::report_graph_oracle::differs;
use crate::workload;

#[perfdata_oracle::needs(perf, gxx)]
#[test]
fn a_long_symbols_header_is_cut_as_perf_cuts_it() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = dir.path().join("long_name");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/long_name.cpp");
    workload::run(
        Command::new("g++")
            .args(["-O1", "-g", "-o"])
            .arg(&exe)
            .arg(&src),
    );
    let data = workload::record(
        dir.path(),
        "long.data",
        &["-e", "task-clock", "-c", "100000"],
        &[exe.to_str().expect("utf-8 path"), "50000000"],
    );
    let mut problems: Vec<String> = [&[][..], &["--sort", "sym"]]
        .iter()
        .filter_map(|view| differs(&data, view, view))
        .collect();
    let perf = Command::new("perf")
        .arg("diff")
        .args([&data, &data])
        .output()
        .expect("perf runs");
    let ours = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &["diff".as_ref(), data.as_os_str(), data.as_os_str()],
        None,
    );
    if perf.stdout != ours.stdout {
        problems.push(format!(
            "diff: perf\n{}\nours\n{}",
            String::from_utf8_lossy(&perf.stdout),
            String::from_utf8_lossy(&ours.stdout)
        ));
    }
    // The name is there, longer than perf's header buffer.
    let text = String::from_utf8_lossy(&ours.stdout);
    assert!(
        text.lines()
            .any(|l| l.contains("spin<std::map") && l.len() > 1100),
        "{text}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
