//! `perfdata strip` against perf 6.1: for every selector, `--keep` and combinations,
//! `perf script -F comm,pid,tid,cpu,time,ip,sym,period,event` of the output must be the
//! input's lines minus exactly the selected ones, line for line. The selected lines are
//! computed by perf itself (`perf script --pid/--tid/--comms/-C/--time` on the input) or
//! from the fields of perf's own output, never by perfdata. The side-band of a stripped
//! pid must be gone from `perf script --show-task-events --show-mmap-events` and from
//! the counts of `perf report --stats`.

use perfdata_tests::{fixtures_dir, perf_available, perf_stats};

mod common;
use common::strip::*;

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn every_selector_on_several_processes() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-multi.data");
    let dir = tempdir();
    let d = dir.path();
    let all = script(&input, &[]);
    assert!(all.len() > 100);
    let lines: Vec<Line> = all.iter().map(|l| parse(l)).collect();
    let parent = lines[0].pid;
    let children: Vec<i64> = pids_by_samples(&all)
        .into_iter()
        .filter(|&p| p != parent)
        .collect();
    assert_eq!(children.len(), 2, "two children in {children:?}");
    let (c1, c2) = (children[0].to_string(), children[1].to_string());

    // --pid: a child (no descendants), then the parent (its children inherit).
    let sel = script(&input, &["--pid", &c1]);
    let out = check(&input, d, "pid", &["--pid", &c1], &minus(&all, &sel));
    check_sideband(&input, &out, &[children[0]], ALL_KINDS, true);
    let p = parent.to_string();
    let sel = script(&input, &["--pid", &p]);
    let out = check(&input, d, "pid-parent", &["--pid", &p], &minus(&all, &sel));
    check_sideband(&input, &out, &[parent], ALL_KINDS, false);

    // --tid, --comm (exact and glob), --cpu.
    let sel = script(&input, &["--tid", &c2]);
    let out = check(&input, d, "tid", &["--tid", &c2], &minus(&all, &sel));
    check_sideband(&input, &out, &[children[1]], THREAD_KINDS, true);
    let sel = script(&input, &["--comms", "perfdata-spin"]);
    assert!(lines.iter().any(|l| l.comm == "perfdata-spin"));
    let expected = minus(&all, &sel);
    check(&input, d, "comm", &["--comm", "perfdata-spin"], &expected);
    check(&input, d, "glob", &["--comm", "perf*-sp?n"], &expected);
    let cpu = lines[0]
        .cpu
        .expect("the fixture samples the cpu")
        .to_string();
    let sel = script(&input, &["-C", &cpu]);
    check(&input, d, "cpu", &["--cpu", &cpu], &minus(&all, &sel));

    // --event: the event goes whole (attr, ids, EVENT_DESC).
    let kept: Vec<String> = all
        .iter()
        .filter(|l| parse(l).event != "task-clock")
        .cloned()
        .collect();
    let out = check(&input, d, "event", &["--event", "task-clock"], &kept);
    let stats = perf_stats(&out);
    let names: Vec<&str> = stats.samples.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["cpu-clock"], "events left");
    let header = perf(&["report", "--header-only", "-I"], &out);
    assert!(header.contains("# event : name = cpu-clock"));
    assert!(!header.contains("name = task-clock"), "{header}");

    // --time: absolute (nanoseconds, both ends inclusive) and percent slices.
    let range = format!(
        "{},{}",
        lines[all.len() / 4].time,
        lines[all.len() / 2].time
    );
    let sel = script(&input, &["--time", &range]);
    check(&input, d, "time", &["--time", &range], &minus(&all, &sel));
    let sel = script(&input, &["--time", "10%-20%"]);
    check(
        &input,
        d,
        "percent",
        &["--time", "10%-20%"],
        &minus(&all, &sel),
    );

    // --keep: only what matches, and no side-band of the others.
    let sel = script(&input, &["--pid", &c1]);
    let out = check(&input, d, "keep", &["--keep", "--pid", &c1], &sel);
    check_sideband(&input, &out, &[parent, children[1]], ALL_KINDS, false);

    // Combined: a pid on one cpu; and keep a comm's cpu-clock samples.
    let sel = script(&input, &["--pid", &c1, "-C", &cpu]);
    assert!(!sel.is_empty());
    let args = ["--pid", c1.as_str(), "--cpu", cpu.as_str()];
    check(&input, d, "pid-cpu", &args, &minus(&all, &sel));
    let sel: Vec<String> = script(&input, &["--comms", "perfdata-spin"])
        .into_iter()
        .filter(|l| parse(l).event == "cpu-clock")
        .collect();
    let args = ["--keep", "--comm", "perfdata-spin", "--event", "cpu-clock"];
    check(&input, d, "keep-comm-event", &args, &sel);

    // Both children: the BUILD_ID entry of the binary only they mapped goes too.
    let both = format!("{c1},{c2}");
    let sel = script(&input, &["--pid", &both]);
    let out = check(&input, d, "children", &["--pid", &both], &minus(&all, &sel));
    let ids_in = perf(&["buildid-list"], &input);
    assert!(ids_in.contains(" /tmp/perfdata-spin\n"), "{ids_in}");
    let expected: String = ids_in
        .lines()
        .filter(|l| !l.ends_with(" /tmp/perfdata-spin"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(perf(&["buildid-list"], &out), expected);

    // --keep-sideband keeps the stripped pid's records.
    let out = dir.path().join("keep-sideband");
    strip(&input, &out, &["--pid", &c1, "--keep-sideband"]);
    assert_eq!(sideband(&out), sideband(&input));
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn system_wide() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-system-wide.data");
    let dir = tempdir();
    let all = script_fields(&input, FIELDS_DSO, &[]);
    let busiest = pids_by_samples(&all)
        .into_iter()
        .find(|&p| p > 0)
        .expect("a process with samples");
    let p = busiest.to_string();
    let d = dir.path();
    let sel = script_fields(&input, FIELDS_DSO, &["--pid", &p]);
    let expected = minus(&all, &sel);
    let out = check_fields(&input, FIELDS_DSO, d, "pid", &["--pid", &p], &expected);
    check_sideband(&input, &out, &[busiest], ALL_KINDS, false);
    // Keep one process: every other process's side-band goes, the kernel's stays.
    let out = check_fields(
        &input,
        FIELDS_DSO,
        d,
        "keep",
        &["--keep", "--pid", &p],
        &sel,
    );
    let left = sideband(&out);
    assert!(
        left.iter().all(|(_, q)| *q == busiest || *q <= 0),
        "{left:?}"
    );
    assert!(
        left.iter().any(|(k, q)| k == "MMAP" && *q == -1),
        "kernel map kept"
    );
    let n = |s: &[(String, i64)]| s.iter().filter(|(_, q)| *q <= 0).count();
    assert_eq!(n(&left), n(&sideband(&input)), "kernel side-band kept");
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn compressed_input_stays_compressed() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-compressed.data");
    let dir = tempdir();
    let all = script(&input, &[]);
    let lines: Vec<Line> = all.iter().map(|l| parse(l)).collect();
    let pid = lines
        .iter()
        .find(|l| l.comm == "perfdata-spin")
        .expect("child")
        .pid;
    let p = pid.to_string();
    let sel = script(&input, &["--pid", &p]);
    let expected = minus(&all, &sel);
    let out = check(&input, dir.path(), "z", &["--pid", &p], &expected);
    check_sideband(&input, &out, &[pid], ALL_KINDS, true);
    let stats = perf_stats(&out);
    assert!(stats.records.get("COMPRESSED").copied().unwrap_or(0) > 0);
    let header = perf(&["report", "--header-only", "-I"], &out);
    assert!(
        header.contains("# compressed : Zstd, level = 1"),
        "{header}"
    );
    // perf counts a compressed record and its contents: the records inside were
    // filtered, each once.
    assert_eq!(
        stats.samples.iter().map(|(_, n)| n).sum::<u64>(),
        expected.len() as u64
    );
    let out = check(
        &input,
        dir.path(),
        "plain",
        &["--pid", &p, "--decompress"],
        &expected,
    );
    assert!(!perf_stats(&out).records.contains_key("COMPRESSED"));
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn pipe_and_directory_inputs() {
    assert!(perf_available());
    let dir = tempdir();
    let pipe = to_pipe(&fixtures_dir().join("strip-multi.data"), dir.path());
    let all = script(&pipe, &[]);
    let pid = pids_by_samples(&all)[0].to_string();
    let sel = script(&pipe, &["--pid", &pid]);
    check(
        &pipe,
        dir.path(),
        "from-pipe",
        &["--pid", &pid],
        &minus(&all, &sel),
    );
    // A pipe's attrs arrive as records before the edits know every event: its
    // HEADER_ATTR and EVENT_DESC records of a removed event go too.
    let kept: Vec<String> = all
        .iter()
        .filter(|l| parse(l).event != "task-clock")
        .cloned()
        .collect();
    let out = check(
        &pipe,
        dir.path(),
        "pipe-event",
        &["--event", "task-clock"],
        &kept,
    );
    let info = perfdata_stdout(&["info", out.to_str().unwrap()]);
    assert_eq!(info.matches("# event : name = ").count(), 1, "{info}");
    assert!(info.contains("# event : name = cpu-clock,"));
    // And their sample_type when sample fields go.
    let dwarf = to_pipe(
        &fixtures_dir().join("file-callgraph-dwarf.data"),
        dir.path(),
    );
    let out = dir.path().join("pipe-fields");
    strip(
        &dwarf,
        &out,
        &["--drop-sample-fields", "REGS_USER,STACK_USER"],
    );
    assert_eq!(
        script_fields(&out, FIELDS_NO_CPU, &["-G"]),
        script_fields(&dwarf, FIELDS_NO_CPU, &["-G"])
    );

    let threads = fixtures_dir().join("dir-threads.data");
    let all = script_fields(&threads, FIELDS_NO_CPU, &[]);
    let pid = pids_by_samples(&all)[0].to_string();
    let sel = script_fields(&threads, FIELDS_NO_CPU, &["--pid", &pid]);
    let args = ["--pid", pid.as_str()];
    let expected = minus(&all, &sel);
    check_fields(
        &threads,
        FIELDS_NO_CPU,
        dir.path(),
        "from-dir",
        &args,
        &expected,
    );
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn drop_record_types() {
    assert!(perf_available());
    let input = fixtures_dir().join("strip-multi.data");
    let dir = tempdir();
    let out = dir.path().join("noexit");
    strip(&input, &out, &["--drop", "EXIT,FINISHED_ROUND"]);
    let (si, so) = (perf_stats(&input), perf_stats(&out));
    assert!(so.clean);
    assert!(si.records["EXIT"] > 0 && !so.records.contains_key("EXIT"));
    assert!(!so.records.contains_key("FINISHED_ROUND"));
    assert_eq!(si.records["SAMPLE"], so.records["SAMPLE"]);
    assert_eq!(script(&out, &[]), script(&input, &[]));
}

#[test]
fn bad_selections_write_nothing() {
    let input = fixtures_dir().join("strip-multi.data");
    let dir = tempdir();
    let cases: [(&[&str], &str); 7] = [
        (&["--event", "cycles"], "no event \"cycles\""),
        (&["--pid", "999999999"], "matches no sample"),
        (&["--cpu", "3-1"], "runs backwards"),
        (&["--pid", "1,x"], "is not a number"),
        (&["--time", "20%-10%"], "time range"),
        (&["--time", "5"], "time range"),
        (&["--drop", "NOPE"], "not a record type"),
    ];
    for (args, message) in cases {
        strip_fails(&input, dir.path(), args, message);
    }
}

#[test]
#[cfg_attr(perf_missing, ignore = "perf is not installed")]
fn drop_sample_fields_of_a_dwarf_recording() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-callgraph-dwarf.data");
    let dir = tempdir();
    let out = dir.path().join("no-stacks");
    strip(
        &input,
        &out,
        &["--drop-sample-fields", "REGS_USER,STACK_USER"],
    );
    let (size_in, size_out) = (
        std::fs::metadata(&input).unwrap().len(),
        std::fs::metadata(&out).unwrap().len(),
    );
    // 90232 -> 8912 bytes when this was written: the stacks were nearly everything.
    assert!(size_out * 5 < size_in, "{size_in} -> {size_out}");
    // perf reads it: the same samples, without call graphs (-G) as with.
    let (a, b) = (
        script_fields(&input, FIELDS_NO_CPU, &["-G"]),
        script_fields(&out, FIELDS_NO_CPU, &["-G"]),
    );
    assert!(!a.is_empty());
    assert_eq!(a, b);
    let (si, so) = (perf_stats(&input), perf_stats(&out));
    assert!(so.clean);
    assert_eq!(si.samples, so.samples);
    let header = perf(&["report", "--header-only", "-I"], &out);
    let event = header
        .lines()
        .find(|l| l.starts_with("# event :"))
        .expect("event line");
    assert!(
        event.contains("sample_type = IP|TID|TIME|ADDR|CALLCHAIN|DATA_SRC,"),
        "{event}"
    );
    assert!(!event.contains("sample_regs_user") && !event.contains("sample_stack_user"));
    assert!(!perf(&["report", "--stdio"], &out).is_empty());
}

#[test]
fn drop_sample_fields_refuses_what_it_cannot_do() {
    let dir = tempdir();
    let cases = [
        ("file-callgraph-dwarf.data", "TID", "cannot be dropped"),
        ("file-callgraph-dwarf.data", "NOPE", "not a sample field"),
        ("strip-multi.data", "REGS_USER", "no event samples"),
    ];
    for (file, fields, message) in cases {
        let input = fixtures_dir().join(file);
        strip_fails(
            &input,
            dir.path(),
            &["--drop-sample-fields", fields],
            message,
        );
    }
}
