//! `perfdata merge` against perf 6.1 (issue #28, done-means 1 and 2), on recordings made
//! here: two programs, two `--switch-output` rotations of one run, two event sets, two
//! hosts (one recording's HOSTNAME rewritten), and a recording with itself. perf must
//! read every output cleanly; its sample counts per event, its `--sort comm,dso,sym`
//! rows and its `perf script` lines must be the inputs' added up and merged in time
//! order.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_core::PerfReader;
use perfdata_tests::{perf_available, perf_stats, run_perfdata};

use crate::common;
mod merge_inputs;
use crate::workload;
use common::strip::{perf, tempdir};
use merge_inputs::{merge, merged_lines, on_host, script};

/// Samples per row of `perf report --sort comm,dso,sym -n` (self, no call graph).
fn rows(input: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let text = perf(
        &[
            "report",
            "--stdio",
            "--no-children",
            "-g",
            "none",
            "--sort",
            "comm,dso,sym",
            "-n",
        ],
        input,
    );
    for l in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let w: Vec<&str> = l.split_whitespace().collect();
        let n: u64 = w[1].parse().unwrap_or_else(|_| panic!("a count: {l}"));
        *out.entry(w[2..].join(" ")).or_default() += n;
    }
    out
}

fn add(into: &mut BTreeMap<String, u64>, from: BTreeMap<String, u64>, times: u64) {
    for (k, v) in from {
        *into.entry(k).or_default() += v * times;
    }
}

/// Every record type perf counts but FINISHED_ROUND (regenerated), the first input's
/// THREAD_MAP and CPU_MAP (the others' are left out) and a pipe stream's metadata
/// records (and -z's COMPRESSED containers): the side-band kept.
fn records(input: &Path) -> BTreeMap<String, u64> {
    let stats = perf_stats(input);
    assert!(stats.clean, "perf report --stats reads {}", input.display());
    let mut r = stats.records;
    let left = [
        "FINISHED_ROUND",
        "THREAD_MAP",
        "CPU_MAP",
        "ATTR",
        "FEATURE",
        "BUILD_ID",
        "TRACING_DATA",
        "COMPRESSED",
    ];
    r.retain(|k, _| !left.contains(&k.as_str()));
    r
}

/// Samples per event name of `perf report --stats`.
fn samples(input: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (ev, n) in perf_stats(input).samples {
        *out.entry(ev).or_default() += n;
    }
    out
}

/// The merged output of `inputs` read by perf: per-event samples, records by type and
/// report rows the inputs' added up.
fn assert_sums(inputs: &[&Path], out: &Path) {
    let (want, got) = sums(inputs, out);
    assert_eq!(got, want, "report rows");
}

/// [`assert_sums`] but the rows: those wanted and those got.
type Rows = BTreeMap<String, u64>;
fn sums(inputs: &[&Path], out: &Path) -> (Rows, Rows) {
    assert_time_order(out);
    let (mut want_samples, mut want_records, mut want_rows) =
        (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    for input in inputs {
        add(&mut want_samples, samples(input), 1);
        add(&mut want_records, records(input), 1);
        add(&mut want_rows, rows(input), 1);
    }
    assert!(want_samples.values().sum::<u64>() > 20);
    assert_eq!(samples(out), want_samples, "samples per event");
    assert_eq!(records(out), want_records, "records by type");
    (want_rows, rows(out))
}

/// The output's records with a time come in time order in the file (what perf's
/// rounds let out is then never earlier than what they let out before), and an input
/// whose file order is not time order (two CPUs' buffers, one after the other) does
/// not make it otherwise.
fn assert_time_order(out: &Path) {
    let mut r = PerfReader::open(out).expect("reads");
    let mut last = 0;
    while let Some(item) = r.next_record().expect("reads") {
        if let Some(t) = item.locate().time.filter(|&t| t != 0) {
            assert!(t >= last, "{t} after {last} at {}", item.raw.offset);
            last = t;
        }
    }
}

/// Two programs recorded with `-e cpu-clock -g`: the spin fixture, and two threads.
fn two_programs(d: &Path) -> (PathBuf, PathBuf) {
    let spin = workload::build_spin(d);
    let threads = workload::build_threads(d);
    let args = ["-e", "cpu-clock", "-g"];
    let a = workload::record(d, "a.data", &args, &[spin.as_str()]);
    let b = workload::record(d, "b.data", &args, &[threads.as_str()]);
    (a, b)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn two_programs_merge_as_perf_reads_them() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let (a, b) = two_programs(d);
    let want = merged_lines(&[(&a, 0), (&b, 0)]);
    // A file, a pipe stream (-o - piped into a file here), compressed.
    for (name, extra) in [
        ("file", &[][..]),
        ("pipe", &["--to-pipe"][..]),
        ("z", &["-z"][..]),
    ] {
        let out = d.join(format!("merged-{name}.data"));
        let said = merge(&[&a, &b], &out, extra);
        // One host: the pids kept, as the table says.
        assert!(said.contains("+0\t+0"), "{said}");
        assert!(!said.contains("+4194304"), "{said}");
        assert_sums(&[&a, &b], &out);
        assert_eq!(script(&out), want, "{name}: perf script");
    }
    // -o -: a pipe stream on stdout.
    let run = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[
            OsStr::new("merge"),
            a.as_os_str(),
            b.as_os_str(),
            OsStr::new("-o"),
            OsStr::new("-"),
        ],
        None,
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert_eq!(&run.stdout[..8], b"PERFILE2");
    assert_eq!(
        run.stdout[8..16],
        16u64.to_le_bytes(),
        "a pipe stream's header"
    );
    let out = d.join("stdout.data");
    std::fs::write(&out, &run.stdout).unwrap();
    assert_sums(&[&a, &b], &out);
    assert_eq!(script(&out), want, "-o -: perf script");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn switch_output_rotations_merge_into_the_run() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let spin = workload::build_spin(d);
    let rot = d.join("rot");
    std::fs::create_dir(&rot).unwrap();
    // 2.5 s of work by the clock, however fast the machine: two or more one-second
    // rotations (60 runs of spin took 1.5 s under load and under 1 s idle: one file).
    let run = format!(
        "end=$(( $(date +%s%N) + 2500000000 )); \
         while [ $(date +%s%N) -lt $end ]; do {spin}; done"
    );
    let mut files = Vec::new();
    for _ in 0..3 {
        workload::record(
            &rot,
            "perf.data",
            // -N (no build-id cache): perf 6.1 then writes SAMPLE_TIME, and every
            // rotation has the run's first sample time (not refused as a copy).
            &["-N", "-e", "cpu-clock", "-g", "--switch-output=1s"],
            &["sh", "-c", &run],
        );
        files = std::fs::read_dir(&rot)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        if files.len() >= 2 {
            break;
        }
        files.iter().for_each(|f| std::fs::remove_file(f).unwrap());
    }
    assert!(files.len() >= 2, "rotations: {files:?}");
    let inputs: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let out = d.join("run.data");
    merge(&inputs, &out, &[]);
    // A later rotation's first samples may come before its side-band names their
    // thread (perf script shows ":TID" and perf cannot find its maps); merged, the
    // earlier rotation's COMM and MMAPs name it: those samples move to named rows, the
    // others stay. perf report's row of such a sample is ":TID" only if no COMM comes
    // for the thread in that rotation: when one comes (an exec), perf overrides the
    // thread's first, default comm in place (`____thread__set_comm`), and the sample
    // sits in the exec'd name's row; merged, it is the parent's name's (seen: a
    // subshell's sample in `date`'s row in its rotation, in `sh`'s merged).
    let offsets: Vec<(&Path, i64)> = inputs.iter().map(|p| (*p, 0)).collect();
    let want_lines = merged_lines(&offsets);
    let unnamed_lines = want_lines
        .iter()
        .filter(|w| w.0 == format!(":{}", w.2))
        .count() as u64;
    let (want, got) = sums(&inputs, &out);
    let unnamed_rows: u64 = want
        .iter()
        .filter(|(k, _)| k.starts_with(':'))
        .map(|(_, v)| v)
        .sum();
    // Every row whose count changed, said whole on failure.
    let changed: Vec<(&String, u64, u64)> = want
        .keys()
        .chain(got.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|row| {
            (
                row,
                want.get(row).copied().unwrap_or(0),
                got.get(row).copied().unwrap_or(0),
            )
        })
        .filter(|(_, before, after)| before != after)
        .collect();
    if let Some(row) = got.keys().find(|row| row.starts_with(':')) {
        panic!("{row}: merged, every thread is named; changed rows {changed:#?}");
    }
    let left: u64 = changed.iter().map(|&(_, b, a)| b.saturating_sub(a)).sum();
    let came: u64 = changed.iter().map(|&(_, b, a)| a.saturating_sub(b)).sum();
    assert_eq!(left, came, "changed rows {changed:#?}");
    assert!(
        (unnamed_rows..=unnamed_lines).contains(&left),
        "{left} samples moved: at least the {unnamed_rows} in \":TID\" rows, at most \
         the {unnamed_lines} perf script shows unnamed; changed rows {changed:#?}"
    );
    assert!(
        unnamed_lines * 10 < got.values().sum::<u64>(),
        "{unnamed_lines} unnamed samples"
    );
    let want = want_lines;
    let got = script(&out);
    assert_eq!(got.len(), want.len());
    let mut named = 0;
    for (g, w) in got.iter().zip(&want) {
        if w.0 == format!(":{}", w.2) && g.0 != w.0 {
            named += 1;
            assert_eq!((&g.1, &g.2, &g.3, &g.4), (&w.1, &w.2, &w.3, &w.4));
        } else {
            assert_eq!(g, w);
        }
    }
    assert!(named * 10 < got.len(), "{named} lines named by the merge");
}

#[perfdata_oracle::needs(perf)]
#[test]
fn two_event_sets_keep_both_events_by_name() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let spin = workload::build_spin(d);
    let a = workload::record(d, "a.data", &["-e", "cpu-clock", "-g"], &[spin.as_str()]);
    let b = workload::record(d, "b.data", &["-e", "task-clock", "-g"], &[spin.as_str()]);
    let c = workload::record(
        d,
        "c.data",
        &["-e", "cpu-clock", "-e", "sched:sched_process_exec"],
        &[spin.as_str()],
    );
    let out = d.join("ab.data");
    merge(&[&a, &b], &out, &[]);
    assert_sums(&[&a, &b], &out);
    let events: Vec<String> = samples(&out).into_keys().collect();
    assert_eq!(events, ["cpu-clock", "task-clock"]);
    assert_eq!(script(&out), merged_lines(&[(&a, 0), (&b, 0)]));
    // Three events from two inputs: a's cpu-clock (no ids in its records) and c's
    // (IDENTIFIER) differ in layout, so both stay; c's tracepoint is the third.
    let out = d.join("ac.data");
    merge(&[&a, &c], &out, &[]);
    let got = samples(&out);
    let (sa, sc) = (samples(&a), samples(&c));
    assert_eq!(got.len(), 2, "{got:?}"); // two cpu-clock events count as one name
    assert_eq!(got["cpu-clock"], sa["cpu-clock"] + sc["cpu-clock"]);
    assert_eq!(
        got["sched:sched_process_exec"],
        sc["sched:sched_process_exec"]
    );
    assert_eq!(script(&out), merged_lines(&[(&a, 0), (&c, 0)]));
}

#[perfdata_oracle::needs(perf)]
#[test]
fn hosts_apart_move_pids_by_the_offset_printed() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let (a, b) = two_programs(d);
    let b = on_host(&b, "elsewhere", &d.join("b-elsewhere.data"));
    for (extra, offset) in [
        (&["--pid-offset", "100000"][..], 100_000),
        (&[][..], 4_194_304),
    ] {
        let out = d.join(format!("hosts-{offset}.data"));
        let said = merge(&[&a, &b], &out, extra);
        let table = format!("{}\telsewhere\t+{offset}\t+0", b.display());
        assert!(said.contains(&table), "{said}");
        assert!(
            said.contains("feature HOSTNAME is the first input's"),
            "{said}"
        );
        // Both hosts named with their inputs (a's is this machine's name).
        let kernels = said
            .lines()
            .find(|l| l.contains("the inputs ran on 2 kernels"))
            .unwrap_or_else(|| panic!("no kernel warning: {said}"));
        for host in [
            format!("({})", a.display()),
            format!("host elsewhere ({})", b.display()),
        ] {
            assert!(kernels.contains(&host), "{host} not in {kernels}");
        }
        assert_sums(&[&a, &b], &out);
        assert_eq!(script(&out), merged_lines(&[(&a, 0), (&b, offset)]));
    }
}

/// `perf script -F pid,tod,event` lines: the wall-clock time perf works out from each
/// sample's time and the recording's CLOCK_DATA.
fn wall_clock_lines(input: &Path) -> Vec<String> {
    perf(&["script", "-G", "-F", "pid,tod,event"], input)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Two recordings on different clocks (monotonic and monotonic_raw, each with the
/// CLOCK_DATA perf writes for `--clockid`): kept as they are, a warning says their times
/// do not compare; with `--align clock`, every sample of the second is on the first's
/// clock, so perf's wall-clock time of each sample in the output (through the first's
/// CLOCK_DATA) is the one perf gives it in its own recording, and the output is in
/// wall-clock order.
#[perfdata_oracle::needs(perf)]
#[test]
fn clocks_apart_line_up_by_clock_data() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let spin = workload::build_spin(d);
    let threads = workload::build_threads(d);
    let on = |clock: &'static str| ["-N", "-e", "cpu-clock", "-c", "200000", "--clockid", clock];
    let a = workload::record(d, "a.data", &on("monotonic"), &[spin.as_str()]);
    let b = workload::record(d, "b.data", &on("monotonic_raw"), &[threads.as_str()]);
    let c = workload::record(d, "c.data", &on("monotonic"), &[threads.as_str()]);

    // One host's recordings on one clock are on it already: no shift, every sample at
    // the time perf gives it in its own recording (CLOCK_DATA's references of one clock
    // differ by about a microsecond, its wall time being gettimeofday's: the second
    // moved by that before, -1073 ns in one run).
    let out = d.join("same-clock.data");
    let said = merge(&[&a, &c], &out, &["--align", "clock"]);
    assert_eq!(script(&out), merged_lines(&[(&a, 0), (&c, 0)]));
    let row = said
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{}\t", c.display())))
        .unwrap_or_else(|| panic!("no row for c: {said}"));
    assert!(row.ends_with("\t+0\t+0"), "{row}");

    let kept = merge(&[&a, &b], &d.join("kept.data"), &[]);
    assert!(
        kept.contains(&format!("{} (another clock)", b.display())),
        "{kept}"
    );
    assert!(!kept.contains("feature CLOCK_DATA"), "{kept}");

    let out = d.join("aligned.data");
    let said = merge(&[&a, &b], &out, &["--align", "clock"]);
    assert!(!said.contains("another clock"), "{said}");
    assert!(perf_stats(&out).clean, "perf reads the output cleanly");
    assert_sums(&[&a, &b], &out);
    let got = wall_clock_lines(&out);
    let mut want = wall_clock_lines(&a);
    want.extend(wall_clock_lines(&b));
    assert_eq!(got.len(), want.len());
    let tod = |l: &String| l.split(' ').skip(1).take(2).collect::<Vec<_>>().join(" ");
    let order: Vec<String> = got.iter().map(tod).collect();
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "wall-clock order");
    let (mut got, mut want) = (got, want);
    got.sort();
    want.sort();
    assert_eq!(
        got, want,
        "each sample at the wall-clock time perf gives it alone"
    );

    // Without CLOCK_DATA there is nothing to align by: refused, naming the input.
    let plain = workload::record(d, "plain.data", &["-e", "cpu-clock"], &[spin.as_str()]);
    let refused = d.join("refused.data");
    let args = [
        OsStr::new("merge"),
        a.as_os_str(),
        plain.as_os_str(),
        OsStr::new("-o"),
        refused.as_os_str(),
        OsStr::new("--align"),
        OsStr::new("clock"),
    ];
    let run = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{err}");
    assert!(
        err.contains("no CLOCK_DATA") && err.contains("plain.data"),
        "{err}"
    );
    assert!(!refused.exists());
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_recording_with_itself_is_refused_or_counts_twice() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let spin = workload::build_spin(d);
    // Two events: the records carry ids, which the second copy must have remapped for
    // perf to count its samples (an id no event lists is no event's).
    let a = workload::record(
        d,
        "a.data",
        &["-e", "cpu-clock", "-e", "sched:sched_process_exec", "-g"],
        &[spin.as_str()],
    );
    let copy = d.join("copy.data");
    std::fs::copy(&a, &copy).unwrap();
    let out = d.join("twice.data");
    for other in [&a, &copy] {
        let args = [
            OsStr::new("merge"),
            a.as_os_str(),
            other.as_os_str(),
            OsStr::new("-o"),
            out.as_os_str(),
        ];
        let run = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
        assert!(!run.status.success());
        let said = String::from_utf8_lossy(&run.stderr);
        assert!(
            said.contains("same recording") && said.contains("--allow-duplicates"),
            "{said}"
        );
        assert!(!out.exists());
    }
    merge(&[&a, &a], &out, &["--allow-duplicates"]);
    let mut want = BTreeMap::new();
    add(&mut want, rows(&a), 2);
    assert_eq!(rows(&out), want);
    let mut want = BTreeMap::new();
    add(&mut want, samples(&a), 2);
    assert_eq!(want.len(), 2);
    assert_eq!(samples(&out), want);
    assert_eq!(script(&out), merged_lines(&[(&a, 0), (&a, 0)]));
}

#[perfdata_oracle::needs(perf)]
#[test]
fn every_kind_of_input_merges() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let spin = workload::build_spin(d);
    let threads = workload::build_threads(d);
    let args = ["-e", "cpu-clock", "-g"];
    // A directory (--threads), a compressed file (-z), a pipe stream read from stdin.
    let threads_dir = workload::record(
        d,
        "dir.data",
        &[&args[..], &["--threads"]].concat(),
        &[threads.as_str()],
    );
    let z = workload::record(
        d,
        "z.data",
        &[&args[..], &["-z"]].concat(),
        &[spin.as_str()],
    );
    let pipe = workload::record(d, "p.file", &args, &[spin.as_str()]);
    let pipe = common::strip::to_pipe(&pipe, d);
    let out = d.join("kinds.data");
    let stdin = std::fs::read(&pipe).unwrap();
    let run = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[
            OsStr::new("merge"),
            threads_dir.as_os_str(),
            z.as_os_str(),
            OsStr::new("-"),
            OsStr::new("-o"),
            out.as_os_str(),
        ],
        Some(&stdin),
    );
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let inputs = [threads_dir.as_path(), z.as_path(), pipe.as_path()];
    assert_sums(&inputs, &out);
    let offsets: Vec<(&Path, i64)> = inputs.iter().map(|p| (*p, 0)).collect();
    assert_eq!(script(&out), merged_lines(&offsets));
}

#[perfdata_oracle::needs(perf)]
#[test]
fn build_ids_a_stream_sends_among_its_records_are_kept() {
    assert!(perf_available());
    let dir = tempdir();
    let d = dir.path();
    let (_, b) = two_programs(d);
    let spin = workload::build_spin(d);
    // perf inject -b writes HEADER_BUILD_ID records as samples hit each binary: after
    // the stream's first data records, once the merge's header was made.
    let stream = d.join("injected.pipe");
    let run = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "perf record -q -e cpu-clock -g -o - -- {spin} | perf inject -b -o {}",
            stream.display()
        ))
        .output()
        .expect("sh runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let list = |p: &Path| perf(&["buildid-list"], p);
    let spin_line = list(&stream)
        .lines()
        .find(|l| l.ends_with("/spin"))
        .expect("the stream lists spin")
        .to_string();
    assert!(!list(&b).contains(&spin_line));
    let out = d.join("with-stream.data");
    merge(&[&b, &stream], &out, &[]);
    assert!(list(&out).contains(&spin_line), "{}", list(&out));
    assert_sums(&[&b, &stream], &out);
}
