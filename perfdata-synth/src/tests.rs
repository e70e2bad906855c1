//! Reading back what the builder wrote: attrs, features and every record give back
//! what the builder was told, in every container, compression and byte order.

use std::io::Cursor;

use binrw::Endian;
use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::{misc, Mmap2Id, ReadData, RecordBody, RecordType};
use perfdata_core::{PerfReader, ReadOptions};

use super::*;
use perfdata_write::compress::CompressFormat;

const CALLERS: [u64; 2] = [0x5000_0100, 0x5000_0200];

/// The events and machine of [`script`]: cpu-clock (with callchains and more fields),
/// a tracepoint, and a group read.
fn trace_spec(opts: SynthOptions) -> TraceSpec {
    let mut events = vec![EventSpec::cpu_clock(5000).with(
        SampleType::CALLCHAIN | SampleType::ADDR | SampleType::WEIGHT | SampleType::PHYS_ADDR,
    )];
    events.push(EventSpec::tracepoint());
    events.extend(EventSpec::group_read(
        EventSpec::task_clock(7000),
        vec![EventSpec::cycles(0)],
        2,
    ));
    let host = HostInfo {
        nr_cpus: 2,
        hostname: "box".into(),
        clock: Some((1, 5_000_000_000, 7)),
        ..Default::default()
    };
    TraceSpec { events, host, opts }
}

/// One small trace: a process with two threads, a mapping, samples of each event.
fn write_trace(pipe: bool, opts: SynthOptions) -> Vec<u8> {
    let spec = trace_spec(opts);
    if pipe {
        let w = SynthWriter::pipe(Vec::new(), spec).unwrap();
        script(w).unwrap()
    } else {
        let w = SynthWriter::file(Cursor::new(Vec::new()), spec).unwrap();
        script(w).unwrap().into_inner()
    }
}

fn script<T: SynthTarget>(mut w: SynthWriter<T>) -> perfdata_write::Result<T::Output> {
    w.fork(100, 1, 100, 1, 10)?;
    w.comm(100, 100, "app", true, 11)?;
    w.mmap2(
        &Mapping {
            pid: 100,
            tid: 100,
            addr: 0x5000_0000,
            len: 0x1000,
            pgoff: 0,
            path: "/x/app".into(),
            build_id: Some([7; 20]),
        },
        12,
    )?;
    w.fork(100, 100, 101, 100, 13)?;
    w.cgroup(5, "/g", 14)?;
    w.ksymbol(0xffff_ffff_c000_0000, 64, "bpf_x", 15)?;
    w.namespaces(100, 100, 40, 16)?;
    w.switch(100, 101, true, 17, 1)?;
    w.lost(9, 18, 1)?;
    w.lost_samples(4, 19, 0)?;
    w.throttle(false, 20, 0)?;
    w.throttle(true, 21, 0)?;
    for i in 0..30u64 {
        w.sample(&SampleSpec {
            // cpu-clock, the tracepoint and the group leader in turn (event 3, the
            // group member, is read by its leader).
            event: (i % 3) as usize,
            pid: 100,
            tid: 100 + (i % 2) as i32,
            time: 100 + i * 10,
            cpu: (i % 2) as u32,
            ip: 0x5000_0010 + i,
            period: None,
            callers: &CALLERS,
            addr: 0xdead_0000 + i,
            weight: i,
        })?;
    }
    w.exit(100, 100, 101, 100, 500)?;
    w.finish()
}

fn mixes() -> Vec<(bool, SynthOptions)> {
    let mut v = Vec::new();
    for pipe in [false, true] {
        for endian in [Endian::Little, Endian::Big] {
            for compress in [
                None,
                Some((3, CompressFormat::Compressed)),
                Some((1, CompressFormat::Compressed2)),
            ] {
                for sample_id_all in [true, false] {
                    v.push((
                        pipe,
                        SynthOptions {
                            endian,
                            sample_id_all,
                            compress,
                            round_every: 7,
                        },
                    ));
                }
            }
        }
    }
    v
}

#[test]
fn reading_back_gives_what_the_builder_was_told() {
    for (pipe, opts) in mixes() {
        let what = format!("pipe {pipe} {opts:?}");
        let bytes = write_trace(pipe, opts);
        let mut r = PerfReader::from_vec(bytes, ReadOptions::ContainersAndContents).unwrap();
        let mut types = Vec::new();
        let mut samples = 0u64;
        let mut compressed = 0;
        while let Some(item) = r.next_record().unwrap() {
            let rec = item.decode().unwrap();
            let ty = rec.record_type();
            if matches!(ty, RecordType::Compressed | RecordType::Compressed2) {
                compressed += 1;
                continue;
            }
            if ty.is_kernel() {
                assert_eq!(
                    rec.sample_id.is_some(),
                    opts.sample_id_all && ty != RecordType::Sample,
                    "{what} {ty}"
                );
            }
            types.push(ty);
            match rec.body {
                RecordBody::Comm(c) => {
                    assert_eq!(
                        (c.pid, c.tid, c.comm.as_str_lossy()),
                        (100, 100, "app".into())
                    );
                    assert_eq!(rec.header.misc, misc::COMM_EXEC);
                }
                RecordBody::Mmap2(m) => {
                    assert_eq!((m.pid, m.addr, m.len), (100, 0x5000_0000, 0x1000));
                    assert_eq!(m.filename.as_str_lossy(), "/x/app");
                    assert!(
                        matches!(m.id, Mmap2Id::BuildId { build_id, .. } if build_id == [7; 20])
                    );
                }
                RecordBody::Exit(e) => assert_eq!((e.pid, e.tid, e.time), (100, 101, 500)),
                RecordBody::Cgroup(c) => {
                    assert_eq!((c.id, c.path.as_str_lossy()), (5, "/g".into()))
                }
                RecordBody::Ksymbol(k) => {
                    assert_eq!((k.len, k.name.as_str_lossy()), (64, "bpf_x".into()))
                }
                RecordBody::Namespaces(n) => assert_eq!((n.links.len(), n.links[6].ino), (7, 46)),
                RecordBody::Switch => assert_eq!(rec.header.misc, misc::SWITCH_OUT),
                RecordBody::Lost(l) => assert_eq!((l.lost, l.id), (9, r.meta().attrs()[0].ids[1])),
                RecordBody::LostSamples(l) => assert_eq!(l.lost, 4),
                RecordBody::Throttle(t) | RecordBody::Unthrottle(t) => {
                    assert!(t.time == 20 || t.time == 21)
                }
                RecordBody::Sample(s) => {
                    let i = samples;
                    samples += 1;
                    let at = item.locate();
                    assert_eq!(at.event, Some((i % 3) as usize), "{what} sample {i}");
                    assert_eq!(s.ip, Some(0x5000_0010 + i));
                    assert_eq!(s.time, Some(100 + i * 10));
                    let tid = s.tid.unwrap();
                    assert_eq!((tid.pid, tid.tid), (100, 100 + (i % 2) as i32));
                    assert_eq!(s.cpu.unwrap().cpu, (i % 2) as u32);
                    match i % 3 {
                        0 => {
                            let cc = s.callchain.unwrap().ips;
                            assert_eq!(
                                cc,
                                vec![-512i64 as u64, 0x5000_0010 + i, CALLERS[0], CALLERS[1]]
                            );
                            assert_eq!(
                                (s.addr, s.weight, s.phys_addr),
                                (Some(0xdead_0000 + i), Some(i), Some(0xdead_0000 + i))
                            );
                            assert_eq!(s.period, Some(5000));
                        }
                        1 => {
                            let raw = s.raw.unwrap().data;
                            let u64_at = |o: usize| perfdata_core::u64_at(&raw, o, opts.endian);
                            // seq counts the tracepoint's hits from 1.
                            assert_eq!(u64_at(8), Some(i / 3 + 1), "{what}");
                        }
                        _ => {
                            let Some(ReadData::Group { values, .. }) = s.read else {
                                panic!("{what}: no group read")
                            };
                            // Both counters on this CPU advanced by the leader's period
                            // once per leader sample on it so far.
                            let on_cpu =
                                (0..=i).filter(|j| j % 3 == 2 && j % 2 == i % 2).count() as u64;
                            assert_eq!(values.len(), 2);
                            assert!(
                                values.iter().all(|v| v.value == 7000 * on_cpu),
                                "{what} {values:?}"
                            );
                            assert_eq!(values[1].id, Some(r_ids(&item.meta.attrs()[3].ids, i)));
                        }
                    }
                }
                _ => {}
            }
        }
        assert_eq!(samples, 30, "{what}");
        assert_eq!(compressed > 0, opts.compress.is_some(), "{what}");
        let kernel: Vec<_> = types.iter().filter(|t| t.is_kernel()).collect();
        assert_eq!(kernel.len(), 43, "{what}: {types:?}");
        assert!(types.contains(&RecordType::FinishedRound), "{what}");
        check_meta(r.meta(), pipe, opts, &what);
    }
}

/// The id of event `ids` on the CPU of sample `i`.
fn r_ids(ids: &[u64], i: u64) -> u64 {
    ids[(i % 2) as usize]
}

fn check_meta(meta: &perfdata_core::Metadata, pipe: bool, opts: SynthOptions, what: &str) {
    assert_eq!(meta.endian, opts.endian, "{what}");
    assert!(meta.warnings.is_empty(), "{what}: {:?}", meta.warnings);
    assert_eq!(meta.attrs().len(), 4);
    let st = |i: usize| meta.attrs()[i].attr.sample_type;
    // Layouts differ, so every event names itself with IDENTIFIER.
    assert!(
        (0..4).all(|i| st(i).contains(SampleType::IDENTIFIER) && !st(i).contains(SampleType::ID))
    );
    assert!(st(0).contains(SampleType::CALLCHAIN | SampleType::WEIGHT));
    assert!(st(1).contains(SampleType::RAW) && st(2).contains(SampleType::READ));
    assert_eq!(meta.attrs()[1].attr.config, 9001);
    assert!(meta
        .attrs()
        .iter()
        .all(|a| a.ids.len() == 2 && a.attr.sample_id_all() == opts.sample_id_all));
    let names: Vec<_> = meta
        .attrs()
        .iter()
        .map(|a| a.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["cpu-clock", "synth:synth_tick", "task-clock", "cycles"],
        "{what}"
    );
    let text = |id| match meta.feature(id) {
        Some(Feature::Hostname(s)) | Some(Feature::Arch(s)) => s.as_str_lossy(),
        other => panic!("{what}: {id}: {other:?}"),
    };
    assert_eq!(
        (text(FeatureId::Hostname), text(FeatureId::Arch)),
        ("box".into(), "x86_64".into())
    );
    let Some(Feature::GroupDesc(g)) = meta.feature(FeatureId::GroupDesc) else {
        panic!("{what}: no GROUP_DESC")
    };
    assert_eq!((g.groups[0].leader_idx, g.groups[0].nr_members), (2, 2));
    let blob = perfdata_core::tracing::tracing_blob(meta).expect("tracing data");
    assert_eq!(
        perfdata_core::tracing::tracepoints(blob),
        Some(vec![("synth".into(), "synth_tick".into(), 9001)])
    );
    assert_eq!(
        meta.feature(FeatureId::Compressed).is_some(),
        opts.compress.is_some()
    );
    assert_eq!(meta.feature(FeatureId::ClockId), Some(&Feature::ClockId(1)));
    let Some(Feature::ClockData(c)) = meta.feature(FeatureId::ClockData) else {
        panic!("{what}: no CLOCK_DATA")
    };
    assert_eq!(
        (c.clockid, c.wall_clock_ns, c.clockid_time_ns),
        (1, 5_000_000_000, 7)
    );
    assert!(meta.attrs().iter().all(|a| a.attr.clockid == 1
        && a.attr
            .flags
            .contains(perfdata_core::attr::AttrFlags::USE_CLOCKID)));
    let Some(Feature::NumaTopology(n)) = meta.feature(FeatureId::NumaTopology) else {
        panic!("{what}: no NUMA_TOPOLOGY")
    };
    assert_eq!(n.nodes[0].cpus.as_str_lossy(), "0-1");
    if !pipe {
        let Some(Feature::SampleTime(t)) = meta.feature(FeatureId::SampleTime) else {
            panic!("{what}: no SAMPLE_TIME")
        };
        assert_eq!((t.first, t.last), (100, 390));
        let Some(Feature::BuildId(b)) = meta.feature(FeatureId::BuildId) else {
            panic!("{what}: no BUILD_ID")
        };
        assert_eq!(b.entries.len(), 1);
        assert_eq!(
            (b.entries[0].build_id(), b.entries[0].filename_str()),
            (&[7u8; 20][..], "/x/app".into())
        );
    }
}

#[test]
fn workload_plan_sums_to_the_samples_and_follows_weights() {
    let spec = WorkloadSpec {
        processes: 1,
        threads_per_process: 2,
        dsos: 2,
        functions_per_dso: 1,
        stop: Stop::Samples(90),
        thread_weights: Some(vec![1, 2]),
        function_weights: Some(vec![1, 2]),
        ..Default::default()
    };
    let w = Workload::new(spec).unwrap();
    let planned = w.planned(&[EventSpec::cpu_clock(1)]).unwrap();
    let counts: Vec<(i32, &str, u64)> = planned
        .iter()
        .map(|p| (p.tid, p.dso.as_str(), p.samples))
        .collect();
    assert_eq!(
        counts,
        [
            (10_000, "/synth/libsynth0.so", 10),
            (10_000, "/synth/libsynth1.so", 20),
            (10_001, "/synth/libsynth0.so", 20),
            (10_001, "/synth/libsynth1.so", 40),
        ]
    );
}

/// `w` written as a file of one cpu-clock event with callchains.
fn callchain_file(w: &Workload) -> Vec<u8> {
    let spec = TraceSpec {
        events: vec![EventSpec::cpu_clock(1000).with(SampleType::CALLCHAIN)],
        ..Default::default()
    };
    let out = SynthWriter::file(Cursor::new(Vec::new()), spec).unwrap();
    write_workload(w, out).unwrap().0.into_inner()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let make = |seed| {
        let w = Workload::new(WorkloadSpec {
            seed,
            ..Default::default()
        })
        .unwrap();
        callchain_file(&w)
    };
    assert_eq!(make(5), make(5));
    assert_ne!(make(5), make(6));
}

#[test]
fn size_stop_writes_about_that_many_bytes() {
    let w = Workload::new(WorkloadSpec {
        stop: Stop::Bytes(100_000),
        ..Default::default()
    })
    .unwrap();
    let out = SynthWriter::file(
        Cursor::new(Vec::new()),
        TraceSpec {
            events: vec![EventSpec::cpu_clock(1)],
            ..Default::default()
        },
    )
    .unwrap();
    let (bytes, samples) = write_workload(&w, out).unwrap();
    let bytes = bytes.into_inner();
    let (_, header) = perfdata_core::header::read_file_header(&bytes).unwrap();
    // Records stop at the first that reaches the size; the EXITs (4 of 56 bytes with
    // their trailer) follow.
    let data = header.data.size;
    assert!(
        (100_000..100_000 + 48 + 4 * 56 + 8).contains(&data),
        "{data}"
    );
    // Samples of cpu-clock with IP, TID, TIME, CPU, PERIOD are 48 bytes.
    assert!(samples > 100_000 / 48 - 40, "{samples}");
}

#[test]
fn a_directory_reads_back_with_every_record() {
    for compress in [None, Some((2, CompressFormat::Compressed))] {
        directory_reads_back(compress);
    }
}

fn directory_reads_back(compress: Option<(i32, CompressFormat)>) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("perf.data");
    let opts = SynthOptions {
        compress,
        ..Default::default()
    };
    script(SynthWriter::dir(&path, trace_spec(opts)).unwrap()).unwrap();
    let names: Vec<String> = (0..2).map(|i| format!("data.{i}")).collect();
    for n in names.iter().chain([&"data".to_string()]) {
        assert!(path.join(n).is_file(), "{n}");
    }
    let mut r = PerfReader::open(&path).unwrap();
    assert_eq!(r.meta().container, perfdata_core::ContainerKind::Directory);
    let (mut samples, mut others) = (0, 0);
    while let Some(item) = r.next_record().unwrap() {
        match item.decode().unwrap().body {
            RecordBody::Sample(s) => {
                samples += 1;
                if let Some(c) = s.callchain {
                    assert_eq!(c.ips[2..], CALLERS);
                }
            }
            RecordBody::FinishedRound => panic!("a directory has no rounds"),
            RecordBody::Compressed(_) => assert!(compress.is_some()),
            _ => others += 1,
        }
    }
    assert!(r.meta().warnings.is_empty(), "{:?}", r.meta().warnings);
    assert_eq!((samples, others), (30, 13));
    let compressed = r.meta().feature(FeatureId::Compressed);
    assert_eq!(compressed.is_some(), compress.is_some());
    // A sample of an event the trace does not have is an error, not a panic.
    let mut w =
        SynthWriter::dir(&tmp.path().join("x"), trace_spec(SynthOptions::default())).unwrap();
    let bad = SampleSpec {
        event: 9,
        ..Default::default()
    };
    assert!(w.sample(&bad).unwrap_err().to_string().contains("event 9"));
    assert_eq!(
        r.meta().feature(FeatureId::DirFormat),
        Some(&Feature::DirFormat(1))
    );
}

#[test]
fn an_empty_json_spec_is_the_default_and_builds() {
    let spec: SynthSpec = serde_json::from_str("{}").unwrap();
    assert_eq!(spec, SynthSpec::default());
    let (workload, trace) = spec.build().unwrap();
    assert_eq!(workload.threads.len(), 4);
    assert_eq!(trace.events[0].name, "cpu-clock");
    let bad: Result<SynthSpec, _> = serde_json::from_str(r#"{"host": {"cpus": 2}}"#);
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("unknown field `cpus`"));
    let zero = SynthSpec {
        compress: Some(0),
        ..Default::default()
    };
    assert!(zero.build().is_err());
}

/// The distinct (ip, callchain) stacks of a seeded trace of `ips_per_function`.
fn distinct_stacks(
    ips_per_function: Option<u32>,
) -> (Workload, std::collections::HashSet<Vec<u64>>) {
    let w = Workload::new(WorkloadSpec {
        dsos: 2,
        functions_per_dso: 4,
        stop: Stop::Samples(20_000),
        ips_per_function,
        ..Default::default()
    })
    .unwrap();
    let mut r = PerfReader::from_vec(callchain_file(&w), ReadOptions::default()).unwrap();
    let mut stacks = std::collections::HashSet::new();
    while let Some(item) = r.next_record().unwrap() {
        if let RecordBody::Sample(s) = item.decode().unwrap().body {
            stacks.insert(s.callchain.unwrap().ips);
        }
    }
    (w, stacks)
}

#[test]
fn ips_per_function_bounds_the_distinct_stacks() {
    let (w, stacks) = distinct_stacks(Some(3));
    // 8 functions of 3 addresses each, every one drawn in 20,000 samples.
    assert_eq!(stacks.len(), 24);
    for cc in &stacks {
        let ip = cc[1];
        let f = w
            .functions
            .iter()
            .find(|f| (f.start..f.start + f.size).contains(&ip))
            .unwrap();
        let step = f.size / 3.min(f.size);
        assert_eq!((ip - f.start) % step, 0, "{ip:#x} in {f:?}");
    }
    // Without the bound, any byte: thousands of stacks.
    let (_, any) = distinct_stacks(None);
    assert!(any.len() > 2000, "{}", any.len());
}
