//! `perfdata report` prints what perf 6.1's `perf report --stdio --no-children -g none`
//! prints, to the byte: the preamble ("Total Lost Samples", `# comm: NAME` for a
//! `--comms` of one name, which also leaves the Command column out), each event's
//! sample count in perf's units (`2K`), the column widths, the dotted rules and each
//! row's padding, for every fixture, six sort orders, `--comms` of one name (matching
//! and not) and a recording of more than a thousand samples made here. Two things are
//! not compared: the random tip perf ends with, and the order of rows of equal overhead
//! (perf's order among ties follows its tree's insertion order); rows themselves must
//! be equal as text.
//!
//! Event groups (file-group.data here, and recordings made by
//! `groups_print_as_perf_prints_them`) are printed as perf prints them: one table per
//! group with a column per member, or with `--no-group` a table per event.
//!
//! Left out, and why:
//! - strip-system-wide.data, where perf leaves one rustc sample unresolved (`-v` says
//!   "Failed to open .../librustc_driver-6108105cd7e839cf.so, continuing without
//!   symbols" once, and `perf script` names the same address in the other process's
//!   sample `ThinVec::push`); perfdata names both;
//! - sorts with `dso` but not `sym`: perf widens the DSO column to 16 when the first
//!   sample of a row had no symbol, which perfdata's rows do not record (with `sym`
//!   among the keys the rule is followed and compared).

use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixture_files, fixtures_dir, name, perf_available};

use crate::report_text;
use crate::workload;

/// perf's output without its closing tip, as `--no-children -g none`.
fn perf_text(input: &Path, args: &[&str]) -> String {
    report_text::perf_stdio(
        input,
        &[&["--no-children", "-g", "none"][..], args].concat(),
    )
}

fn our_text(input: &Path, args: &[&str]) -> String {
    // perf's text is --no-children -g none unless --children is asked for.
    let view: &[&str] = if args.contains(&"--children") {
        &["-g", "none"]
    } else {
        &["--no-children", "-g", "none"]
    };
    report_text::perfdata_report(input, &[view, args].concat())
}

/// The lines with each run of rows of equal overhead sorted (perf orders ties its way).
fn canonical(text: &str) -> Vec<String> {
    let overhead = |l: &str| l.split_whitespace().next().map(str::to_string);
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let flush = |run: &mut Vec<String>, out: &mut Vec<String>| {
        run.sort();
        out.append(run);
    };
    for line in text.lines() {
        let is_row = line.starts_with("  ") && line.trim_start().starts_with(char::is_numeric);
        if !is_row || run.last().is_some_and(|r| overhead(r) != overhead(line)) {
            flush(&mut run, &mut out);
        }
        if is_row {
            run.push(line.to_string());
        } else {
            out.push(line.to_string());
        }
    }
    flush(&mut run, &mut out);
    out
}

/// Compare one report; a description of the first difference.
fn differs(input: &Path, args: &[&str]) -> Option<String> {
    let perf = canonical(&perf_text(input, args));
    let ours = canonical(&our_text(input, args));
    if perf == ours {
        return None;
    }
    let at = perf
        .iter()
        .zip(&ours)
        .position(|(a, b)| a != b)
        .unwrap_or(perf.len().min(ours.len()));
    Some(format!(
        "{} {args:?}: line {}: perf {:?}, ours {:?}",
        name(input),
        at + 1,
        perf.get(at),
        ours.get(at)
    ))
}

#[perfdata_oracle::needs(perf)]
#[test]
fn report_text_equals_perfs() {
    assert!(perf_available());
    let mut compared = 0;
    let mut problems = Vec::new();
    for input in fixture_files() {
        let n = name(&input);
        if n.contains("strip-system-wide") {
            continue;
        }
        for sort in ["comm,dso,sym", "dso,sym", "comm", "sym", "cpu", "pid"] {
            problems.extend(differs(&input, &["--sort", sort, "-n"]));
            compared += 1;
        }
        // One comm (the first sample's), and one that matches nothing.
        let script = Command::new("perf")
            .args(["script", "-F", "comm", "-i"])
            .arg(&input)
            .output()
            .expect("perf script runs");
        let first = String::from_utf8_lossy(&script.stdout);
        // (perf script of a recording without samples prints a header line instead.)
        let comm = first
            .lines()
            .next()
            .map(str::trim)
            .filter(|_| !n.contains("stat"));
        for comm in comm.into_iter().chain(["no-such-comm"]) {
            let sorted = ["--sort", "comm,dso,sym", "--comms", comm];
            problems.extend(differs(&input, &sorted));
            compared += 1;
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // 27 fixtures, six sorts each, and the comm filters of those with samples.
    assert!(compared >= 200, "{compared} reports compared");
}

/// Sort keys filtered to one name each (`--comms`, `--dsos`, `--symbols`): perf says
/// them above the table in its columns' order (`sort__setup_elide` walks them), and
/// where every key is filtered so it shows them all as columns again, sorting by them.
/// Before, perfdata said them dso, comm, symbol whatever the sort and left every column
/// out.
#[perfdata_oracle::needs(perf)]
#[test]
fn keys_filtered_to_one_name_are_said_in_the_sorts_order() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-callgraph-fp.data");
    let (comm, dso) = (["--comms", "perfdata-spin"], ["--dsos", "perfdata-spin"]);
    let runs: [&[&[&str]]; 4] = [
        &[&["-s", "comm,dso"], &comm, &dso],
        &[&["-s", "dso,comm,sym"], &comm, &dso],
        &[&["-s", "sym,comm"], &comm, &["--symbols", "main"]],
        &[&["-s", "sym,dso,comm"], &comm, &dso, &["--symbols", "main"]],
    ];
    let problems: Vec<String> = runs
        .iter()
        .filter_map(|args| differs(&input, &args.concat()))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// More than a thousand samples: perf prints the count in thousands ("30K").
#[perfdata_oracle::needs(perf)]
#[test]
fn thousands_of_samples_are_counted_as_perf_counts_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let data = workload::record(
        dir.path(),
        "many.data",
        &["-e", "task-clock", "-c", "20000"],
        &[&spin],
    );
    let ours = our_text(&data, &["--sort", "comm,dso,sym", "-n"]);
    let count = ours
        .lines()
        .find_map(|l| l.strip_prefix("# Samples: "))
        .expect("a sample count");
    assert!(
        count.starts_with(|c: char| c.is_ascii_digit()) && count.contains("K of event"),
        "{count}"
    );
    assert_eq!(differs(&data, &["--sort", "comm,dso,sym", "-n"]), None);
}

/// Event groups, recorded here: samples that read the group (`:S`, with callchains), a
/// group whose events sample on their own, and the same through a pipe; each in perf's
/// group view, with `--no-group`, with `--children`, with a filter and relative
/// percentages, and `--group` forcing the events of a recording without groups into one.
/// A sample that reads the group is a sample of each member, its period the member's
/// counter's increase since the last (perf's `deliver_sample_group`).
#[perfdata_oracle::needs(perf)]
#[test]
fn groups_print_as_perf_prints_them() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let twice = format!("{spin}; {spin}");
    let group = "{cpu-clock,task-clock}";
    let leader_samples = format!("{group}:S");
    let read = workload::record(
        dir.path(),
        "read.data",
        &["-g", "-e", &leader_samples, "-c", "50000"],
        &["sh", "-c", &twice],
    );
    let own = workload::record(
        dir.path(),
        "own.data",
        &["-e", group, "-c", "50000"],
        &[&spin],
    );
    let pipe = dir.path().join("pipe.data");
    let recorded = Command::new("perf")
        .args([
            "record",
            "-e",
            &leader_samples,
            "-c",
            "50000",
            "-o",
            "-",
            "--",
        ])
        .arg(&spin)
        .stdout(std::fs::File::create(&pipe).expect("pipe file"))
        .output()
        .expect("perf record runs");
    assert!(recorded.status.success(), "perf record -o -");
    let multi = perfdata_tests::fixtures_dir().join("file-multi-event.data");
    let cases: Vec<(&Path, Vec<&str>)> = vec![
        (&read, vec!["--sort", "comm,dso,sym", "-n"]),
        (&read, vec!["--sort", "pid", "-n"]),
        (&read, vec!["--sort", "dso,sym", "-n", "--no-group"]),
        (&read, vec!["--sort", "comm,dso,sym", "-n", "--children"]),
        (
            &read,
            vec![
                "--sort",
                "sym",
                "--comms",
                "spin",
                "--percentage",
                "relative",
            ],
        ),
        (&own, vec!["--sort", "comm,dso,sym", "-n"]),
        (&own, vec!["--sort", "dso", "--no-group"]),
        (&pipe, vec!["--sort", "comm,dso,sym", "-n"]),
        (&multi, vec!["--sort", "comm,sym", "-n", "--group"]),
    ];
    let mut problems = Vec::new();
    for (input, args) in &cases {
        problems.extend(differs(input, args));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    // The recordings are what the cases say: perf shows the group as one table, and its
    // members' periods are the counters' (not the attr's fixed 50000 per sample).
    let text = our_text(&read, &["--sort", "comm", "-n"]);
    assert!(
        text.contains("of events 'anon group { cpu-clock, task-clock }'"),
        "{text}"
    );
    let count = |t: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix("# Event count (approx.): "))
            .and_then(|n| n.parse::<u64>().ok())
            .expect("an event count")
    };
    let per_event = our_text(&read, &["--sort", "comm", "-n", "--no-group"]);
    assert_ne!(count(&per_event) % 50000, 0, "{per_event}");
}
