//! Property test: any workload spec, any events and sample fields, written in any
//! container, compression and byte order, reads back as the builder was told: the
//! attrs and their names, the samples each event was planned to get, the count of every
//! record type, the features.

use std::collections::BTreeMap;
use std::io::Cursor;

use binrw::Endian;
use perfdata_core::attr::SampleType;
use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_synth::{
    write_workload, EventSpec, HostInfo, Stop, SynthOptions, SynthWriter, TraceSpec, Workload,
    WorkloadSpec, EXTRA_RECORD_FLAGS,
};
use perfdata_write::compress::CompressFormat;
use proptest::prelude::*;

/// Fields any event may add (RAW is the tracepoint's own; WEIGHT_STRUCT shares WEIGHT's
/// slot, so only one of them).
const FIELDS: [SampleType; 13] = [
    SampleType::ADDR,
    SampleType::CALLCHAIN,
    SampleType::STREAM_ID,
    SampleType::BRANCH_STACK,
    SampleType::REGS_USER,
    SampleType::STACK_USER,
    SampleType::WEIGHT,
    SampleType::DATA_SRC,
    SampleType::TRANSACTION,
    SampleType::REGS_INTR,
    SampleType::PHYS_ADDR,
    SampleType::CGROUP,
    SampleType::DATA_PAGE_SIZE,
];

#[derive(Debug, Clone)]
struct Case {
    spec: WorkloadSpec,
    /// Preset indexes: 0 cpu-clock, 1 task-clock, 2 cycles, 3 tracepoint, 4 a group read
    /// of cpu-clock and task-clock.
    events: Vec<u8>,
    fields: SampleType,
    pipe: bool,
    opts: SynthOptions,
    cpus: u32,
}

fn case() -> impl Strategy<Value = Case> {
    let spec = (
        any::<u64>(),
        (1u32..4, 1u32..4, 1u32..4, 1u32..6),
        0u64..300,
        1u32..7,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(seed, (p, t, d, f), samples, depth, build_ids, extras)| WorkloadSpec {
                seed,
                processes: p,
                threads_per_process: t,
                dsos: d,
                functions_per_dso: f,
                stop: Stop::Samples(samples),
                callchain_depth: depth,
                build_ids,
                extras,
                ..Default::default()
            },
        );
    let compress = prop_oneof![
        Just(None),
        (1i32..6).prop_map(|l| Some((l, CompressFormat::Compressed))),
        (1i32..6).prop_map(|l| Some((l, CompressFormat::Compressed2))),
    ];
    let opts = (any::<bool>(), any::<bool>(), compress, 0u64..40).prop_map(
        |(big, sample_id_all, compress, round_every)| SynthOptions {
            endian: if big { Endian::Big } else { Endian::Little },
            sample_id_all,
            compress,
            round_every,
        },
    );
    (
        spec,
        prop::collection::vec(0u8..5, 1..4),
        any::<u16>(),
        any::<bool>(),
        opts,
        1u32..5,
    )
        .prop_map(|(spec, events, bits, pipe, opts, cpus)| Case {
            spec,
            events,
            fields: FIELDS
                .iter()
                .enumerate()
                .filter(|(i, _)| bits & (1 << i) != 0)
                .fold(SampleType::empty(), |a, (_, &f)| a | f),
            pipe,
            opts,
            cpus,
        })
}

fn events(case: &Case) -> Vec<EventSpec> {
    let mut out: Vec<EventSpec> = Vec::new();
    for &e in &case.events {
        match e {
            0 => out.push(EventSpec::cpu_clock(1000)),
            1 => out.push(EventSpec::task_clock(2000)),
            2 => out.push(EventSpec::cycles(3000)),
            3 => out.push(EventSpec::tracepoint()),
            _ => {
                let first = out.len();
                let group = EventSpec::group_read(
                    EventSpec::cpu_clock(500),
                    vec![EventSpec::task_clock(0)],
                    first,
                );
                out.extend(group);
            }
        }
    }
    let mut out: Vec<EventSpec> = out.into_iter().map(|e| e.with(case.fields)).collect();
    if case.spec.extras {
        out[0].attr.flags |= EXTRA_RECORD_FLAGS;
    }
    out
}

fn write(case: &Case, events: Vec<EventSpec>) -> Vec<u8> {
    let trace = TraceSpec {
        events,
        host: HostInfo {
            nr_cpus: case.cpus,
            ..Default::default()
        },
        opts: case.opts,
    };
    let workload = Workload::new(case.spec.clone()).unwrap();
    if case.pipe {
        write_workload(&workload, SynthWriter::pipe(Vec::new(), trace).unwrap())
            .unwrap()
            .0
    } else {
        let w = SynthWriter::file(Cursor::new(Vec::new()), trace).unwrap();
        write_workload(&workload, w).unwrap().0.into_inner()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_trace_reads_back_as_it_was_told(case in case()) {
        let events = events(&case);
        let workload = Workload::new(case.spec.clone()).unwrap();
        let mut planned = vec![0u64; events.len()];
        for p in workload.planned(&events).unwrap() {
            planned[p.event] += p.samples;
        }
        let bytes = write(&case, events.clone());
        let mut r = PerfReader::from_vec(bytes, ReadOptions::ContainersAndContents).unwrap();
        let mut types: BTreeMap<RecordType, u64> = BTreeMap::new();
        let mut per_event = vec![0u64; events.len()];
        let mut times = Vec::new();
        while let Some(item) = r.next_record().unwrap() {
            let ty = item.raw.record_type();
            if ty == RecordType::Sample {
                let at = item.locate();
                per_event[at.event.unwrap()] += 1;
                times.push(at.time.unwrap());
                // Every sample decodes with its event's layout.
                item.decode().unwrap();
            }
            *types.entry(ty).or_default() += 1;
        }
        let meta = r.meta();
        prop_assert!(meta.warnings.is_empty(), "{:?}", meta.warnings);
        prop_assert_eq!(meta.endian, case.opts.endian);
        prop_assert_eq!(meta.attrs().len(), events.len());
        for (a, e) in meta.attrs().iter().zip(&events) {
            // ID may become IDENTIFIER (perf's rule when layouts differ).
            let asked = (case.fields | e.attr.sample_type).difference(SampleType::ID);
            prop_assert!(a.attr.sample_type.contains(asked));
            prop_assert_eq!(a.ids.len() as u32, case.cpus);
            prop_assert_eq!(a.name.as_deref(), Some(e.name.as_str()));
        }
        prop_assert_eq!(&per_event, &planned);
        prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "sample times out of order");
        let s = &case.spec;
        let threads = u64::from(s.processes * s.threads_per_process);
        let count = |ty| types.get(&ty).copied().unwrap_or(0);
        prop_assert_eq!(count(RecordType::Comm), threads);
        prop_assert_eq!(count(RecordType::Fork), threads);
        prop_assert_eq!(count(RecordType::Exit), threads);
        prop_assert_eq!(count(RecordType::Mmap2), u64::from(s.processes * s.dsos));
        prop_assert_eq!(count(RecordType::Mmap), 1);
        let extra = u64::from(s.extras);
        prop_assert_eq!(count(RecordType::Switch), 2 * threads * extra);
        prop_assert_eq!(count(RecordType::Namespaces), u64::from(s.processes) * extra);
        for ty in [RecordType::Cgroup, RecordType::Ksymbol] {
            prop_assert_eq!(count(ty), extra);
        }
        let total_samples: u64 = planned.iter().sum();
        for ty in [RecordType::Lost, RecordType::Throttle] {
            prop_assert_eq!(count(ty), extra);
        }
        prop_assert_eq!(count(RecordType::Sample), total_samples);
        prop_assert_eq!(
            count(RecordType::Compressed) + count(RecordType::Compressed2) > 0,
            case.opts.compress.is_some()
        );
        prop_assert!(matches!(meta.feature(FeatureId::Hostname), Some(Feature::Hostname(_))));
        let has_tp = case.events.contains(&3);
        prop_assert_eq!(perfdata_core::tracing::tracing_blob(meta).is_some(), has_tp);
        if !case.pipe {
            let sample_time = match meta.feature(FeatureId::SampleTime) {
                Some(Feature::SampleTime(t)) => Some((t.first, t.last)),
                _ => None,
            };
            prop_assert_eq!(sample_time, times.first().map(|&f| (f, *times.last().unwrap())));
            let build_ids = match meta.feature(FeatureId::BuildId) {
                Some(Feature::BuildId(b)) => b.entries.len() as u32,
                _ => 0,
            };
            prop_assert_eq!(build_ids, if s.build_ids { s.dsos } else { 0 });
        }
    }
}
