//! perf report's `trace` key, byte for byte with perf 6.1 (but for the random tip): the
//! default view of a recording whose events are all tracepoints (perf sorts by `trace`
//! there, `get_default_sort_order`), `--sort trace` beside other keys and events that
//! are not tracepoints ("N/A"), and perf's width of the "Trace output" column, which
//! holds only the texts perf made while comparing entries (a text of its own is cut to
//! the header: `fd: 0x000000`). Compared in order: perf puts entries of equal overhead in
//! the texts' byte order.

use std::path::Path;

use perfdata_tests::{fixtures_dir, perf_available};

use crate::report_text;
use crate::workload;

/// The views compared, by fixture.
const VIEWS: &[(&str, &[&str])] = &[
    ("file-tracepoint.data", &[]),
    ("file-tracepoint.data", &["--sort", "trace,comm", "-n"]),
    ("file-tracepoint.data", &["--sort", "comm,trace"]),
    ("file-tracepoint.data", &["--sort", "cpu,trace"]),
    ("file-tracepoint.data", &["-F", "overhead,trace"]),
    ("anon/secret-tp.data", &[]),
    ("anon/secret-tp.data", &["--sort", "comm,trace", "-n"]),
    ("file-sample-identifier.data", &["--sort", "trace", "-n"]),
];

#[perfdata_oracle::needs(perf)]
#[test]
fn trace_rows_equal_perfs() {
    assert!(perf_available());
    let mut problems = Vec::new();
    for (file, view) in VIEWS {
        let input = fixtures_dir().join(file);
        let perf = report_text::perf_stdio(&input, view);
        let ours = report_text::perfdata_report(&input, view);
        if perf != ours {
            problems.push(format!("{file} {view:?}:\nperf:\n{perf}\nours:\n{ours}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Tracepoints recorded with `-g`: perf's cumulative entries carry the sample's payload,
/// so under `trace` a sample's frames are its own entry (Children equal to Self), and
/// under `comm,trace` too; the call graph hangs under each text.
#[perfdata_oracle::needs(perf)]
#[test]
fn trace_rows_with_call_graphs_equal_perfs() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    // Up to three recordings. Once, under CI's load, the shell was switched out inside
    // execve (sched_exec's migration, and again in do_close_on_exec): perf 6.1 left
    // those two samples out of every view (its "Samples: 15" counts them) where
    // perfdata shows them; why perf drops them is not known (a known difference). A
    // difference of perfdata's own is in every recording; that one is rare.
    let mut problems = Vec::new();
    for attempt in 1..=3 {
        problems = compare_trace_views(dir.path(), attempt);
        if problems.is_empty() {
            break;
        }
        eprintln!(
            "recording {attempt} differs; recorded again:\n{}",
            problems.join("\n")
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The trace views of a fresh `-g` tracepoint recording in `dir`: each difference from
/// perf's text.
fn compare_trace_views(dir: &Path, attempt: usize) -> Vec<String> {
    let input = workload::record(
        dir,
        &format!("tp-g-{attempt}.data"),
        &[
            "-N",
            "-q",
            "-e",
            "sched:sched_switch",
            "-e",
            "sched:sched_process_exec",
            "-g",
        ],
        &["sh", "-c", "sleep 0.01; ls / >/dev/null; sleep 0.01"],
    );
    let views: &[&[&str]] = &[
        &[],
        &["--no-children"],
        &["-g", "none"],
        &["--sort", "trace,comm", "-n"],
        &["--sort", "comm,trace", "-g", "caller"],
    ];
    let mut problems = Vec::new();
    for view in views {
        let perf = report_text::perf_stdio(&input, view);
        let ours = report_text::perfdata_report(&input, view);
        // Entries of equal overhead may tie; perf orders those by text, as perfdata.
        if perf != ours {
            problems.push(format!("{view:?}:\nperf:\n{perf}\nours:\n{ours}"));
        }
    }
    problems
}

/// A pipe's events are not known when perf chooses its sort keys: it keeps
/// `comm,dso,sym` for an all-tracepoint pipe recording, and so does perfdata.
#[test]
fn a_pipe_of_tracepoints_keeps_comm_dso_sym() {
    let input = fixtures_dir().join("pipe-tracepoint.data");
    let text = report_text::perfdata_report(Path::new(&input), &[]);
    assert!(
        text.contains("# Overhead  Command  Shared Object"),
        "{text}"
    );
    let file = report_text::perfdata_report(&fixtures_dir().join("file-tracepoint.data"), &[]);
    assert!(file.contains("# Overhead  Trace output"), "{file}");
    assert!(file.contains("   100.00%  fd: 0x000000\n"), "{file}");
}
