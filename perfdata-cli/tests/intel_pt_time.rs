//! perf script's `--time` bounds the Intel PT decoding (intel-pt.c
//! `intel_pt_setup_time_ranges`, `intel_pt_time_filter`): each queue starts at the last
//! PSB before the range (the decoder's fast forward), samples nothing before the range's
//! start and stops after its end. So the error lines (which `--time` does not filter)
//! are those of the range's neighbourhood only, and a `cbr` sample comes at the first
//! state sampled in the range (the queue has not sampled the ratio yet). perfdata's
//! listing of the corpus recording on several windows equals perf's, byte for byte
//! (perf run live), and its line counts are pinned for machines without perf.

use perfdata_tests::{corpus_dir, perf_available};
use std::process::Command;

const FILE: &str = "google-perf.data.intel_pt-4.14";

/// Windows (perf's `--time` text) and how many lines perf 6.1 prints for each: inside
/// the trace, before and after it, open at either end, and one ending before the first
/// PSB of a queue.
const WINDOWS: &[(&str, usize)] = &[
    ("641.257,641.2575", 98),
    ("641.2571,641.2579", 106),
    ("641.25705,", 139),
    (",641.2573", 88),
    ("641.2574,641.2577", 21),
    ("641.257929,", 21),
    ("641.2569,641.257", 21),
    ("641.2566,641.2569", 5),
    ("641.25792,641.25793", 16),
];

fn perfdata_script(path: &std::path::Path, window: &str) -> String {
    let out = perfdata_tests::run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[
            "script".as_ref(),
            "-i".as_ref(),
            path.as_os_str(),
            "--time".as_ref(),
            window.as_ref(),
        ],
        None,
    );
    assert!(out.status.success(), "perfdata script --time {window}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[perfdata_oracle::needs(corpus)]
#[test]
fn time_windows_bound_the_decoding_as_perfs() {
    let path = corpus_dir().expect("corpus").join(FILE);
    let live = perf_available();
    for &(window, lines) in WINDOWS {
        let ours = perfdata_script(&path, window);
        assert_eq!(ours.lines().count(), lines, "--time {window}: lines");
        if live {
            let perf = Command::new("perf")
                .args(["script", "-i"])
                .arg(&path)
                .args(["--time", window])
                .output()
                .expect("perf runs");
            let perf = String::from_utf8_lossy(&perf.stdout);
            assert!(
                ours == perf,
                "--time {window}: perfdata's listing is not perf's"
            );
        }
    }
}

/// The `cbr` perf prints at a window's start: the queue's first sample in the range,
/// the ratio unchanged since the trace began.
#[perfdata_oracle::needs(corpus)]
#[test]
fn a_window_begins_with_a_cbr_sample() {
    let path = corpus_dir().expect("corpus").join(FILE);
    let ours = perfdata_script(&path, "641.257,641.2575");
    let cbr: Vec<&str> = ours.lines().filter(|l| l.contains(" cbr: ")).collect();
    assert_eq!(
        cbr,
        [
            "            echo  3174 [003]   641.257000:          cbr:  cbr: 29 freq: 2900 MHz \
          (242%)                    0 [unknown] ([unknown])"
        ]
    );
    // A window after the first PSB: the decoding restarts at the last PSB before it
    // (0xc090, at 641.257315), so no error before that is printed.
    let later = perfdata_script(&path, "641.2574,641.2577");
    assert!(
        later.lines().next().unwrap_or_default().starts_with(
            " instruction trace error type 1 time 641.257315823 cpu 3 pid 3174 tid 3174 \
             ip 0x7fb36d0a6990"
        ),
        "{later}"
    );
}
