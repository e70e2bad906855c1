//! `perfdata report` with perf report's filters (`--pid`, `--tid`, `--comms`, `--cpu`,
//! `--percentage`) against `perf report --stdio -n` of perf 6.1 given the same options,
//! run live: every row perf shows above 0.1% must be ours with the same cells and sample
//! count, and every row of ours above 0.1% must be perf's; the percentages compared are
//! perf's own (absolute by default: of the event's unfiltered samples). `--event`, which
//! perf 6.1's report does not have, must give exactly that event's table of perf's
//! unfiltered report.

use std::collections::BTreeMap;

use perfdata_tests::{fixtures_dir, perf_available};

use crate::report_rows;
use crate::workload;

use report_rows::{compare, our_rows, perf_rows};

#[perfdata_oracle::needs(perf)]
#[test]
fn filtered_rows_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let o0 = workload::build_hot(dir.path(), "-O0");
    let o2 = workload::build_hot(dir.path(), "-O2");
    // Two processes of different names after a shell, on whichever CPUs they run.
    let script = format!("{} 200; {} 200", o0.display(), o2.display());
    let data = workload::record(
        dir.path(),
        "two.data",
        &["-e", "task-clock", "-c", "100000", "--sample-cpu"],
        &["sh", "-c", &script],
    );
    // The threads as perf shows them (`tid:comm`, one thread per process here).
    let threads: BTreeMap<String, String> = perf_rows(&data, "pid", &[])
        .values()
        .flat_map(|rows| rows.keys())
        .filter_map(|c| c[0].split_once(':'))
        .map(|(tid, comm)| (comm.to_string(), tid.to_string()))
        .collect();
    let (Some(p0), Some(p2)) = (threads.get("hot-O0"), threads.get("hot-O2")) else {
        panic!("perf shows no hot-O0 and hot-O2 threads: {threads:?}");
    };
    let pids = format!("{p0},{p2}");
    let filters: Vec<Vec<&str>> = vec![
        vec!["--pid", p2],
        vec!["--pid", &pids],
        vec!["--tid", p0],
        vec!["--comms", "hot-O2,sh"],
        vec!["--pid", p2, "--cpu", "0-1"],
        vec!["--percentage", "relative", "--comms", "hot-O0,sh"],
        vec!["--percentage", "relative", "--pid", p2],
        vec!["--percentage", "relative", "--tid", p0],
    ];
    // Each CPU that has samples (perf refuses a filter that leaves none).
    let cpus: Vec<String> = perf_rows(&data, "cpu", &[])
        .values()
        .flat_map(|rows| rows.keys())
        .map(|c| c[0].clone())
        .collect();
    assert!(!cpus.is_empty());
    let mut filters = filters;
    filters.extend(cpus.iter().map(|c| vec!["--cpu", c.as_str()]));
    let mut compared = 0;
    let mut problems = Vec::new();
    for f in &filters {
        for sort in ["comm,dso,sym", "pid,dso"] {
            // Samples, periods and percentages: with `--percentage relative` this checks
            // the base too: perf's total_non_filtered_period, the unfiltered hist
            // entries' periods. A child's `sh` sample before its exec joins the shell's
            // earlier, filtered `sh` entry of the same dso and symbol (comms compare by
            // name), so it is left out.
            match compare(&data, sort, f) {
                Ok(n) => compared += n,
                Err(e) => problems.push(format!("{f:?} --sort {sort}: {e}")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // At least the hot process's own row under each filter but the CPU ones (a CPU
    // may have run nothing of note).
    assert!(compared >= 2 * 8, "{compared} rows compared");
    eprintln!("CPUs with samples: {cpus:?}");
    eprintln!("{compared} rows compared over {} filters", filters.len());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn event_filter_gives_perfs_table_of_that_event() {
    assert!(perf_available());
    let path = fixtures_dir().join("file-multi-event.data");
    let sort = "comm,dso,sym";
    let perf = perf_rows(&path, sort, &[]);
    assert!(perf.len() >= 2, "events: {:?}", perf.keys());
    let mut compared = 0;
    for (event, rows) in &perf {
        let ours = our_rows(&path, sort, &["--event", event]);
        assert_eq!(ours.keys().collect::<Vec<_>>(), [event]);
        // Every row, with its samples, period and percent (of that event's total).
        let differ: Vec<String> = rows
            .iter()
            .filter(|(c, r)| ours[event].get(*c).is_none_or(|m| !m.same(r)))
            .map(|(c, r)| format!("{c:?}: perf {r:?}, ours {:?}", ours[event].get(c)))
            .collect();
        assert!(differ.is_empty(), "event {event}:\n{}", differ.join("\n"));
        assert_eq!(ours[event].len(), rows.len(), "event {event}");
        compared += rows.len();
    }
    eprintln!("{compared} rows of {} events compared", perf.len());
}
