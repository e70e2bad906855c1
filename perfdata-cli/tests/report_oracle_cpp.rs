//! C++ names against perf 6.1: a g++ build of tests/srcline/hot.cpp recorded here, and
//! `perfdata report --sort comm,dso,sym` compared with `perf report --stdio -n` row for
//! row above 0.1% (symbols demangled as perf demangles by default: no parameters, no
//! return type). Without g++ the test says it skips.

use perfdata_tests::perf_available;

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows};

#[perfdata_oracle::needs(perf, gxx)]
#[test]
fn cpp_symbols_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_hot_cpp(dir.path()).expect("g++ builds the C++ workload");
    let data = workload::record(
        dir.path(),
        "hotpp.data",
        &["-e", "task-clock", "-c", "100000"],
        &[exe.to_str().expect("utf-8 path"), "300"],
    );
    let mut compared = 0;
    for sort in ["comm,dso,sym", "sym"] {
        compared += compare(&data, sort, &[]).unwrap_or_else(|e| panic!("--sort {sort}: {e}"));
    }
    // The hot template member is named as perf names it (perf's string, checked above).
    let ours = our_rows(&data, "sym", &[]);
    assert!(
        ours.values()
            .any(|rows| rows.contains_key(&vec!["[.] busy::Mixer<unsigned long>::step".into()])),
        "{ours:?}"
    );
    eprintln!("{compared} rows compared");
}
