//! `perfdata synth` against perf 6.1: perf reads synthetic traces of every option mix
//! without a complaint, and shows exactly the samples per command, thread and DSO that
//! the spec asked for, and the callchains the call tree gives.

use crate::synth_support;

use std::collections::BTreeMap;

use perfdata_core::record::RecordBody;
use perfdata_core::PerfReader;
use perfdata_synth::{
    write_workload, EventSpec, HostInfo, Stop, SynthOptions, SynthWriter, TraceSpec, Workload,
    WorkloadSpec,
};
use perfdata_tests::{perf_available, perf_output, perf_stats};
use synth_support::*;

/// The sample_type fields a mix can add to every event.
const ALL_FIELDS: &str = "addr,weight,data_src,phys_addr,cgroup,regs_user,stack_user,\
branch_stack,transaction,regs_intr,data_page_size,code_page_size,stream_id";

/// One option mix and what perf 6.1 can be asked about it.
struct Mix {
    name: &'static str,
    /// `perfdata synth` arguments, split at spaces; `FIELDS` stands for [`ALL_FIELDS`].
    args: &'static str,
    /// Sampling events: how many events `report --stats` lists with their samples.
    events: usize,
    stats: bool,
    header: bool,
}

const fn mix(name: &'static str, args: &'static str, events: usize) -> Mix {
    Mix {
        name,
        args,
        events,
        stats: true,
        header: true,
    }
}

#[rustfmt::skip]
const MIXES: &[Mix] = &[
    mix("file", "", 1),
    mix("callchain", "--callchain 6", 1),
    mix("tracepoint", "--events tracepoint", 1),
    mix("group", "--events {cpu-clock,task-clock}:S", 2),
    mix("multi", "--events cpu-clock,task-clock,cycles --callchain 3", 3),
    mix("big", "--endian big --callchain 4 --events cpu-clock,tracepoint", 2),
    mix("zstd", "--compress", 1),
    mix("zstd-big-group", "--compress=5 --endian big --callchain 3 --events {cpu-clock,task-clock}:S", 2),
    mix("bare", "--no-sample-id-all --no-build-ids --round-every 0", 1),
    mix("clock", "--clock --events cpu-clock,task-clock", 2),
    // Every sample_type field the builder fills but RAW (tracepoints only) and the id
    // fields it sets itself; BRANCH_STACK makes perf report in branch mode.
    mix("fields", "--fields FIELDS --callchain 3 --events cpu-clock,tracepoint", 2),
    mix("fields-zstd-big", "--fields FIELDS --compress --endian big", 1),
    mix("dir", "--dir --callchain 3 --events cpu-clock,tracepoint", 2),
    mix("dir-big-group", "--dir --endian big --events {cpu-clock,task-clock}:S", 2),
    mix("dir-zstd", "--dir --compress=3 --callchain 3", 1),
    mix("pipe", "--pipe --callchain 3", 1),
    mix("pipe-group", "--pipe --events {cpu-clock,task-clock}:S", 2),
    mix("pipe-clock", "--pipe --clock", 1),
    mix("pipe-fields", "--pipe --fields weight_struct,addr,phys_addr,stream_id", 1),
    // perf 6.1 does not swap HEADER_FEATURE's feat_id in pipe mode, so it cannot print
    // a big-endian stream's header (README, perf 6.1 defects).
    Mix { header: false, ..mix("pipe-big", "--pipe --endian big", 1) },
    // perf 6.1's report --stats stops after a pipe's tracing-data record (README).
    Mix { stats: false, ..mix("pipe-tracepoint", "--pipe --events tracepoint", 1) },
];

#[perfdata_oracle::needs(perf)]
#[test]
fn perf_reads_every_option_mix() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    for mix in MIXES {
        let mut args = vec!["--samples", "600", "--processes", "3", "--dsos", "2"];
        args.extend(mix.args.split_whitespace().map(|a| match a {
            "FIELDS" => ALL_FIELDS,
            a => a,
        }));
        let path = synth(dir.path(), mix.name, &args);
        let group = mix.name.contains("group");
        if mix.stats {
            // Exit 0 and nothing on stderr, then the counts.
            perf_clean(&["report", "--stats"], &path);
            let stats = perf_stats(&path);
            assert!(stats.clean, "{}: {stats:?}", mix.name);
            // A group read is delivered once per member.
            let per_sample = if group { 2 } else { 1 };
            assert_eq!(stats.records["SAMPLE"], 600, "{}", mix.name);
            assert_eq!(stats.samples.len(), mix.events, "{}: {stats:?}", mix.name);
            let sum: u64 = stats.samples.iter().map(|(_, n)| n).sum();
            assert_eq!(sum, 600 * per_sample, "{}", mix.name);
            for ty in ["COMM", "FORK", "EXIT"] {
                assert_eq!(stats.records[ty], 6, "{} {ty}", mix.name);
            }
            assert_eq!(
                (stats.records["MMAP2"], stats.records["MMAP"]),
                (6, 1),
                "{}",
                mix.name
            );
        }
        let script = perf_clean(&["script"], &path);
        if !mix.args.contains("--callchain") {
            let lines = script.lines().count() as u64;
            assert_eq!(lines, if group { 1200 } else { 600 }, "{}", mix.name);
        }
        if mix.args.contains("tracepoint") {
            let hits = script.matches("synth:synth_tick: seq=").count();
            // The events share the samples equally (600 splits evenly here).
            assert_eq!(hits, 600 / mix.events, "{}", mix.name);
        }
        if mix.header {
            let header = perf_clean(&["report", "--header-only", "-I"], &path);
            assert!(
                header.contains("# hostname : synth"),
                "{}: {header}",
                mix.name
            );
            assert!(
                header.contains("# event : name = cpu-clock") || mix.name.contains("tracepoint"),
                "{}: {header}",
                mix.name
            );
            for line in [
                "# nrcpus avail : 4",
                "# node0 cpu list : 0-3",
                "# pmu mappings: software = 1, tracepoint = 2, cpu = 4, breakpoint = 5",
            ] {
                assert!(header.contains(line), "{}: {line}", mix.name);
            }
            let clock = header.contains("# clockid: monotonic (1)");
            assert_eq!(clock, mix.args.contains("--clock"), "{}", mix.name);
            if !mix.args.contains("--pipe") {
                assert!(
                    header.contains("# time of first sample : 1.0"),
                    "{}: {header}",
                    mix.name
                );
            }
        }
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn report_shows_exactly_the_samples_the_weights_ask_for() {
    assert!(perf_available());
    let expected = hand_expected();
    let dir = tempfile::tempdir().unwrap();
    let workload = Workload::new(hand_spec()).unwrap();
    for (name, endian, compress) in [
        ("le", perfdata_core::Endian::Little, None),
        (
            "be-zstd",
            perfdata_core::Endian::Big,
            Some((2, Default::default())),
        ),
    ] {
        let path = dir.path().join(name);
        let trace = TraceSpec {
            events: vec![EventSpec::task_clock(10_000)],
            host: HostInfo::default(),
            opts: SynthOptions {
                endian,
                compress,
                ..Default::default()
            },
        };
        let file = std::fs::File::create(&path).unwrap();
        let writer = SynthWriter::file(std::io::BufWriter::new(file), trace).unwrap();
        let (_, samples) = write_workload(&workload, writer).unwrap();
        assert_eq!(samples, 1000);
        // Every sample's period is the event's 10,000 ns.
        assert_eq!(report_counts(&path), cells(&expected, 10_000), "{name}");
    }
}

/// The command line of the seeded-plan test.
const SEEDED: [&str; 12] = [
    "--seed",
    "42",
    "--processes",
    "3",
    "--threads-per-process",
    "3",
    "--dsos",
    "4",
    "--samples",
    "5000",
    "--callchain",
    "4",
];

#[perfdata_oracle::needs(perf)]
#[test]
fn report_matches_the_seeded_plan_of_the_command_line() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let path = synth(dir.path(), "seeded", &SEEDED);
    // The spec the command line builds from those arguments.
    let spec = WorkloadSpec {
        seed: 42,
        processes: 3,
        threads_per_process: 3,
        dsos: 4,
        stop: Stop::Samples(5000),
        callchain_depth: 4,
        ..Default::default()
    };
    // The samples per command, thread and DSO, spread here from the model's weights;
    // every sample's period is the default 100,000 ns.
    let workload = Workload::new(spec).unwrap();
    let mut counts = BTreeMap::new();
    for ((t, f), n) in spread(&workload, 5000) {
        let (thread, dso) = (&workload.threads[t], workload.functions[f].dso as usize);
        let key = (
            thread.comm.clone(),
            thread.tid,
            basename(&workload.dsos[dso].path),
        );
        *counts.entry(key).or_insert(0) += n;
    }
    assert_eq!(counts.values().sum::<u64>(), 5000);
    assert_eq!(counts.len(), 9 * 4);
    let expected = cells(&counts, 100_000);
    assert_eq!(report_counts(&path), expected);
    // The same workload as a directory: perf merges the per-CPU streams.
    let dir_path = synth(
        dir.path(),
        "seeded-dir",
        &[&SEEDED[..], &["--dir"]].concat(),
    );
    assert_eq!(report_counts(&dir_path), expected);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn script_shows_the_call_tree_frames() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let path = synth(
        dir.path(),
        "cc",
        &["--callchain", "5", "--samples", "300", "--seed", "9"],
    );
    let workload = Workload::new(WorkloadSpec {
        seed: 9,
        ..Default::default()
    })
    .unwrap();
    // Each frame as perf shows it without symbols: the offset in the DSO and its path.
    let frame = |ip: u64| {
        let d = workload
            .dsos
            .iter()
            .find(|d| (d.addr..d.addr + d.len).contains(&ip))
            .expect("every frame is inside a DSO");
        format!("{:x} ({})", ip - d.addr, d.path)
    };
    let expected: Vec<Vec<String>> = callchains(&path)
        .iter()
        .map(|ips| {
            assert!((1..=5).contains(&ips.len()));
            ips.iter().map(|&ip| frame(ip)).collect()
        })
        .collect();
    assert!(expected.iter().any(|c| c.len() == 5));
    let got = script_callchains(&path, "ip,dso");
    assert_eq!(got.len(), 300);
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "sample {i}");
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn script_prints_the_sample_fields_that_were_written() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--fields",
        "addr,weight,phys_addr",
        "--samples",
        "200",
        "--endian",
        "big",
    ];
    let path = synth(dir.path(), "fields", &args);
    let mut expected = Vec::new();
    let mut r = PerfReader::open(&path).unwrap();
    while let Some(item) = r.next_record().unwrap() {
        if let RecordBody::Sample(s) = item.decode().unwrap().body {
            let (addr, phys) = (s.addr.unwrap(), s.phys_addr.unwrap());
            assert!(addr != 0 && phys == addr);
            expected.push(format!(
                "{} {:x} {} {:x}",
                s.tid.unwrap().tid,
                addr,
                s.weight.unwrap(),
                phys
            ));
        }
    }
    let text = perf_clean(&["script", "-F", "tid,addr,weight,phys_addr"], &path);
    let got: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(got.len(), 200);
    assert_eq!(got, expected);
}

#[perfdata_oracle::needs(perf)]
#[test]
fn perf_counts_the_extra_records() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    for (name, extra) in [
        ("file", &[][..]),
        ("zstd-big", &["--compress", "--endian", "big"][..]),
    ] {
        let mut args = vec!["--extras", "--processes", "3", "--threads-per-process", "2"];
        args.extend_from_slice(extra);
        let path = synth(dir.path(), name, &args);
        perf_clean(&["report", "--stats"], &path);
        perf_clean(&["report", "--header-only", "-I"], &path);
        let stats = perf_stats(&path);
        assert!(stats.clean, "{stats:?}");
        for (ty, n) in [
            ("LOST", 1),
            ("LOST_SAMPLES", 1),
            ("THROTTLE", 1),
            ("UNTHROTTLE", 1),
            ("SWITCH", 12),
            ("NAMESPACES", 3),
            ("CGROUP", 1),
            ("KSYMBOL", 1),
            ("SAMPLE", 1000),
        ] {
            assert_eq!(stats.records.get(ty), Some(&n), "{name} {ty}: {stats:?}");
        }
        // perf script reads everything, and says (only) that records were lost.
        let out = perf_output(&["script"], &path);
        assert!(out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let warning = stderr.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            warning.starts_with("Warning: Processed")
                && warning.ends_with("events and lost 1 chunks! Check IO/CPU overload!"),
            "{name}: {stderr}"
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1000);
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_json_spec_sets_weights_and_the_machine() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    // hand_spec() as JSON, with a machine of its own.
    let path = synth_spec(
        dir.path(),
        "w",
        r#"{"seed": 3, "processes": 2, "threads_per_process": 2, "dsos": 2,
            "functions_per_dso": 2, "samples": 1000, "events": "task-clock",
            "thread_weights": [1, 2, 3, 4], "function_weights": [1, 1, 3, 0],
            "host": {"hostname": "json-host", "nr_cpus": 3, "cmdline": ["a", "b"]}}"#,
        &[],
    );
    // The default period, 100,000 ns, in every sample.
    assert_eq!(report_counts(&path), cells(&hand_expected(), 100_000));
    let header = perf_clean(&["report", "--header-only", "-I"], &path);
    for line in [
        "# hostname : json-host",
        "# nrcpus avail : 3",
        "# cmdline : a b",
    ] {
        assert!(header.contains(line), "{line}: {header}");
    }
}
