//! `perfdata strip --tid T` (T removed) of a two-thread process: the process's maps stay
//! whatever thread's tid they carry, because a map belongs to the process (MMAP and MMAP2
//! are process-scoped in their facts). The other thread's samples then resolve as in the
//! input: perf script's lines of the output are the input's without T's.

use perfdata_tests::{perf_available, perf_stats};

use crate::common;
use crate::workload;
use common::strip::*;

#[perfdata_oracle::needs(perf)]
#[test]
fn drop_tid_keeps_the_maps_its_thread_made() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let exe = workload::build_threads(d);
    let data = workload::record(d, "threads.data", &["-N", "-c", "200000"], &[exe.as_str()]);
    let fields = "comm,pid,tid,time,ip,sym,dso,period,event";
    let all = script_fields(&data, fields, &[]);
    // The main thread (tid = pid) made the process's maps; the worker's samples are
    // named through them.
    let task = |l: &String| l.split(' ').nth(1).unwrap_or("").to_string();
    let main = all
        .iter()
        .map(task)
        .find(|t| t.split_once('/').is_some_and(|(p, t)| p == t))
        .expect("a sample of the main thread");
    let (_, tid) = main.split_once('/').unwrap();
    let rest: Vec<String> = all.iter().filter(|l| task(l) != main).cloned().collect();
    assert!(rest.iter().any(|l| l.contains(" work ")), "{rest:?}");
    let out = check_fields(&data, fields, d, "drop-main", &["--tid", tid], &rest);
    assert!(
        perf_stats(&out).clean,
        "perf reads the output without a warning"
    );
}

/// NAMESPACES is about one thread (its pid/tid fields): `strip --tid T` removes T's and
/// keeps the others'.
#[perfdata_oracle::needs(perf)]
#[test]
fn drop_tid_drops_its_namespaces_records() {
    let dir = tempdir();
    let d = dir.path();
    let exe = workload::build_threads(d);
    let args = ["-N", "--namespaces", "-c", "200000"];
    let data = workload::record(d, "ns.data", &args, &[exe.as_str()]);
    // `PERF_RECORD_NAMESPACES PID/TID - ...`: the tasks named.
    let named = |input: &std::path::Path| -> Vec<String> {
        perf(&["script", "--show-namespace-events"], input)
            .lines()
            .filter_map(|l| l.split("PERF_RECORD_NAMESPACES ").nth(1))
            .filter_map(|r| r.split_whitespace().next().map(str::to_string))
            .collect()
    };
    let before = named(&data);
    let main = before
        .iter()
        .find(|t| t.split_once('/').is_some_and(|(p, t)| p == t && p != "0"))
        .expect("a NAMESPACES record of the process")
        .clone();
    let (_, tid) = main.split_once('/').unwrap();
    let out = d.join("no-main.data");
    strip(&data, &out, &["--tid", tid]);
    let want: Vec<String> = before.iter().filter(|t| **t != main).cloned().collect();
    assert!(
        !want.is_empty(),
        "the worker's NAMESPACES record: {before:?}"
    );
    assert_eq!(named(&out), want);
}
