//! The edit stage on the fixtures: records seen once, edits composed, derived features
//! recomputed, bad readers refused.

use std::cell::RefCell;
use std::io::Cursor;
use std::rc::Rc;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::record::RecordType;
use perfdata_core::{PerfReader, ReadOptions};

use super::*;
use crate::convert::testing::{open, run};
use crate::convert::{ConvertOptions, Report, Target};

fn fixture(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

/// Records of `bytes` by type, compressed containers and their contents both counted.
fn count(bytes: Vec<u8>, ty: RecordType) -> usize {
    let mut r =
        PerfReader::from_vec(bytes, ReadOptions::ContainersAndContents).expect("output reads");
    let mut n = 0;
    while let Some(item) = r.next_record().expect("output reads to its end") {
        n += usize::from(item.raw.record_type() == ty);
    }
    n
}

fn run_file(reader: PerfReader, edits: Vec<Box<dyn RecordEdit>>) -> (Vec<u8>, Report) {
    let opts = ConvertOptions::default();
    let (out, report) =
        run(reader, Target::File, Cursor::new(Vec::new()), &opts, edits).expect("edits run");
    (out.into_inner(), report)
}

/// Samples per event name, each decoded whole (no bytes past what its event's
/// sample_type describes), and the events' sample_type.
fn samples_by_event(
    bytes: Vec<u8>,
) -> (
    std::collections::BTreeMap<String, usize>,
    Vec<perfdata_core::attr::SampleType>,
) {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).expect("reads");
    let mut by_event = std::collections::BTreeMap::<String, usize>::new();
    while let Some(item) = r.next_record().expect("reads to its end") {
        if item.raw.record_type() == RecordType::Sample {
            let rec = item.decode().expect("a sample decodes");
            assert!(rec.extra.is_empty(), "a sample longer than its sample_type");
            let e = item.locate().event.expect("an event");
            *by_event
                .entry(r.meta().event_name(e).to_string())
                .or_default() += 1;
        }
    }
    let types = r
        .meta()
        .attrs()
        .iter()
        .map(|a| a.attr.sample_type)
        .collect();
    (by_event, types)
}

fn keep_all() -> Box<dyn RecordEdit> {
    Box::new(FnEdit(|_: &RecordRef<'_>| Ok(Action::Keep)))
}

#[test]
fn compressed_records_are_seen_once_and_recompressed() {
    let path = fixture("strip-compressed.data");
    let input = std::fs::read(&path).unwrap();
    let samples = count(input.clone(), RecordType::Sample);
    assert!(samples > 100);
    // A reader that returns containers and then their records as well
    // as one that returns only the records.
    let both = PerfReader::open_with(&path, ReadOptions::ContainersAndContents).unwrap();
    for reader in [both, open(&path).unwrap()] {
        let (out, report) = run_file(reader, vec![keep_all()]);
        assert_eq!(count(out.clone(), RecordType::Sample), samples);
        assert!(count(out, RecordType::Compressed) > 0, "recompressed");
        let s = report.edits.unwrap();
        assert_eq!(s.kept(RecordType::Sample) as usize, samples);
        assert_eq!(
            s.removed(RecordType::Compressed),
            0,
            "containers not counted"
        );
    }
}

#[test]
fn edits_compose_in_order() {
    let path = fixture("strip-multi.data");
    let samples = count(std::fs::read(&path).unwrap(), RecordType::Sample);
    // The first edit doubles every COMM and drops every other sample; the second sees
    // exactly what the first left.
    let mut nth = 0;
    let first = FnEdit(move |item: &RecordRef<'_>| {
        Ok(match item.raw.record_type() {
            RecordType::Comm => {
                let copy = item.raw.to_owned_record();
                Action::Replace(vec![copy.clone(), copy])
            }
            RecordType::Sample => {
                nth += 1;
                if nth % 2 == 0 {
                    Action::Drop
                } else {
                    Action::Keep
                }
            }
            _ => Action::Keep,
        })
    });
    let seen = Rc::new(RefCell::new((0usize, 0usize)));
    let seen2 = seen.clone();
    let second = FnEdit(move |item: &RecordRef<'_>| {
        let mut s = seen2.borrow_mut();
        match item.raw.record_type() {
            RecordType::Comm => s.0 += 1,
            RecordType::Sample => s.1 += 1,
            _ => {}
        }
        Ok(Action::Keep)
    });
    let reader = open(&path).unwrap();
    let (out, report) = run_file(reader, vec![Box::new(first), Box::new(second)]);
    let comms = count(std::fs::read(&path).unwrap(), RecordType::Comm);
    assert_eq!(*seen.borrow(), (2 * comms, samples.div_ceil(2)));
    assert_eq!(count(out.clone(), RecordType::Comm), 2 * comms);
    assert_eq!(count(out, RecordType::Sample), samples.div_ceil(2));
    let s = report.edits.unwrap();
    assert_eq!(s.removed(RecordType::Sample) as usize, samples / 2);
}

#[test]
fn sample_time_follows_the_kept_samples() {
    let path = fixture("strip-multi.data");
    // Keep the samples of the middle third of the file only.
    let mut nth = 0;
    let (mut lo, mut hi) = (u64::MAX, 0);
    let total = count(std::fs::read(&path).unwrap(), RecordType::Sample);
    let mut r = open(&path).unwrap();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() == RecordType::Sample {
            nth += 1;
            if nth > total / 3 && nth <= 2 * total / 3 {
                let t = item.locate().time.unwrap();
                (lo, hi) = (lo.min(t), hi.max(t));
            }
        }
    }
    let mut nth = 0;
    let middle = FnEdit(move |item: &RecordRef<'_>| {
        if item.raw.record_type() != RecordType::Sample {
            return Ok(Action::Keep);
        }
        nth += 1;
        Ok(if nth > total / 3 && nth <= 2 * total / 3 {
            Action::Keep
        } else {
            Action::Drop
        })
    });
    let (out, _) = run_file(open(&path).unwrap(), vec![Box::new(middle)]);
    let r = PerfReader::from_vec(out, ReadOptions::ContainersAndContents).unwrap();
    match r.meta().feature(FeatureId::SampleTime) {
        Some(Feature::SampleTime(t)) => assert_eq!((t.first, t.last), (lo, hi)),
        other => panic!("SAMPLE_TIME {other:?}"),
    }
}

#[test]
fn readers_that_hide_compressed_records_are_refused() {
    let path = fixture("strip-compressed.data");
    let ro = ReadOptions::Containers;
    let reader = PerfReader::open_with(&path, ro).unwrap();
    let opts = ConvertOptions::default();
    let err = run(
        reader,
        Target::File,
        Cursor::new(Vec::new()),
        &opts,
        vec![keep_all()],
    )
    .expect_err("refused");
    assert!(err.to_string().contains("ReadOptions::Contents"), "{err}");
}

#[test]
fn a_removed_event_takes_its_ids_with_it() {
    let path = fixture("strip-multi.data");
    let input = open(&path).unwrap();
    let keep_ids = input.meta().attrs()[0].ids.clone();
    let gone_ids = input.meta().attrs()[1].ids.clone();
    assert_eq!(input.meta().event_name(1), "task-clock");
    let strip = Strip::new(Selection {
        select: Selectors {
            events: vec!["task-clock".into()],
            ..Default::default()
        },
        ..Default::default()
    });
    let (out, report) = run_file(input, vec![Box::new(strip)]);
    let mut r = PerfReader::from_vec(out, ReadOptions::ContainersAndContents).unwrap();
    assert_eq!(r.meta().attrs().len(), 1);
    assert_eq!(r.meta().attrs()[0].ids, keep_ids);
    match r.meta().feature(FeatureId::EventDesc) {
        Some(Feature::EventDesc(d)) => {
            assert_eq!(d.events.len(), 1);
            assert_eq!(d.events[0].name.as_str_lossy(), "cpu-clock");
        }
        other => panic!("EVENT_DESC {other:?}"),
    }
    let mut index_ids = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        let at = item.locate();
        if let Some(id) = at.id {
            assert!(!gone_ids.contains(&id), "record with a removed id");
        }
        if let perfdata_core::record::RecordBody::IdIndex(ix) = item.decode().unwrap().body {
            index_ids.extend(ix.entries.iter().map(|e| e.id));
        }
    }
    assert_eq!(index_ids, keep_ids);
    let s = report.edits.unwrap();
    assert_eq!(s.samples[&1].kept, 0);
    assert!(s.samples[&1].removed > 0 && s.samples[&0].removed == 0);
}

/// (tid, time) of the samples of a recording.
fn sample_threads(bytes: Vec<u8>) -> Vec<(i32, u64)> {
    let mut r = PerfReader::from_vec(bytes, ReadOptions::Contents).expect("output reads");
    let mut out = Vec::new();
    while let Some(item) = r.next_record().unwrap() {
        if item.raw.record_type() == RecordType::Sample {
            let at = item.locate();
            out.push((at.tid.unwrap(), at.time.unwrap()));
        }
    }
    out
}

/// In strip-multi.data a child's exec COMM and its first two samples on CPU 0 come
/// before its FORK on CPU 1 in the file; perf 6.1 takes them in time order, and names
/// those two samples "sh" (`perf script --comms sh` prints 30 samples, these among
/// them): strip must too, not the 28 of the file's order.
#[test]
fn comm_selectors_name_threads_in_perfs_time_order() {
    let path = fixture("strip-multi.data");
    let by_comm = |keep: bool| {
        Strip::new(Selection {
            select: Selectors {
                comms: vec![Glob("sh".into())],
                ..Default::default()
            },
            keep,
            ..Default::default()
        })
    };
    let all = sample_threads(std::fs::read(&path).unwrap());
    let (kept, report) = run_file(open(&path).unwrap(), vec![Box::new(by_comm(true))]);
    let kept = sample_threads(kept);
    assert_eq!(kept.len(), 30, "perf's count of sh samples");
    for early in [(31452, 1_250_125_584_810), (31452, 1_250_125_588_125)] {
        assert!(kept.contains(&early), "{early:?} named sh by perf");
    }
    assert_eq!(report.edits.unwrap().kept(RecordType::Sample), 30);
    // The others, in the file's order.
    let (rest, _) = run_file(open(&path).unwrap(), vec![Box::new(by_comm(false))]);
    let rest = sample_threads(rest);
    let expected: Vec<_> = all.iter().filter(|s| !kept.contains(s)).copied().collect();
    assert_eq!(rest, expected);
    // The kept ones too: the output keeps the input's order.
    let in_order: Vec<_> = all.iter().filter(|s| kept.contains(s)).copied().collect();
    assert_eq!(kept, in_order);
}

/// file-sample-identifier.data: cpu-clock's sample_id trailer is TID|TIME|IDENTIFIER,
/// the tracepoint's TID|TIME|CPU|IDENTIFIER. The tracepoint has no record but its
/// samples: it goes whole. cpu-clock's side-band (perf's first event takes the tracking
/// records) would have no event to carry it: the error names the first such record.
#[test]
fn an_event_goes_unless_a_record_of_its_stays_with_no_event_to_carry_it() {
    let path = fixture("file-sample-identifier.data");
    let drop = |name: &str| {
        let strip = Strip::new(Selection {
            select: Selectors {
                events: vec![name.into()],
                ..Default::default()
            },
            ..Default::default()
        });
        let opts = ConvertOptions::default();
        let out = Cursor::new(Vec::new());
        run(
            open(&path).unwrap(),
            Target::File,
            out,
            &opts,
            vec![Box::new(strip)],
        )
    };
    let (out, report) = drop("sched:sched_switch").expect("the tracepoint goes");
    let r = PerfReader::from_vec(out.into_inner(), ReadOptions::Contents).unwrap();
    assert_eq!(r.meta().attrs().len(), 1);
    assert_eq!(r.meta().event_name(0), "cpu-clock/period=100000/");
    let s = report.edits.unwrap();
    assert_eq!((s.samples[&0].kept, s.samples[&1].removed), (141, 7));
    let err = drop("cpu-clock/period=100000/").expect_err("its MMAP stays");
    assert_eq!(
        err.to_string(),
        "at input byte offset 568 (0x238), event \"cpu-clock/period=100000/\" cannot be \
         removed: its MMAP record stays and no remaining event has its sample_id layout \
         (TID|TIME|IDENTIFIER) to carry it"
    );
}

/// strip's edits in their order: fields dropped while every event is still there, then
/// an event removed. The events left lose the field, and keep every sample.
#[test]
fn strip_edits_drop_fields_before_an_event_goes() {
    use perfdata_core::attr::SampleType;
    let path = fixture("file-tracepoint.data");
    let (before, _) = samples_by_event(std::fs::read(&path).unwrap());
    let sel = Selection {
        select: Selectors {
            events: vec!["sched:sched_process_exec".into()],
            ..Selectors::default()
        },
        keep: false,
        keep_sideband: false,
        drop_types: Vec::new(),
    };
    let (out, _) = run_file(
        open(&path).unwrap(),
        strip_edits(sel.clone(), Some(SampleType::PERIOD)),
    );
    let (after, types) = samples_by_event(out);
    let mut want = before.clone();
    assert_eq!(want.remove("sched:sched_process_exec"), Some(3));
    assert_eq!(after, want);
    assert_eq!(types.len(), after.len());
    assert!(types
        .iter()
        .all(|t| !t.contains(SampleType::PERIOD) && t.contains(SampleType::RAW)));
    // A field that locates records is refused however the edit was made.
    let opts = ConvertOptions::default();
    let edits = strip_edits(sel, Some(SampleType::TIME));
    let out = Cursor::new(Vec::new());
    let Err(err) = run(open(&path).unwrap(), Target::File, out, &opts, edits) else {
        panic!("dropping TIME was not refused");
    };
    assert!(err.to_string().contains("cannot be dropped"), "{err}");
}

/// `strip --drop TYPES` with no selector: strip_edits still strips, and the types go
/// (the other records stay). And DropSampleFields refuses every field that locates
/// records, each alone, not only TIME.
#[test]
fn strip_edits_drop_types_alone_and_every_locating_field_is_refused() {
    use perfdata_core::attr::SampleType;
    let path = fixture("file-tracepoint.data");
    let input = std::fs::read(&path).unwrap();
    let (comms, samples) = (
        count(input.clone(), RecordType::Comm),
        count(input, RecordType::Sample),
    );
    assert!(comms > 0 && samples > 0);
    let sel = Selection {
        drop_types: vec![RecordType::Comm],
        ..Selection::default()
    };
    let (out, _) = run_file(open(&path).unwrap(), strip_edits(sel, None));
    assert_eq!(count(out.clone(), RecordType::Comm), 0);
    assert_eq!(count(out, RecordType::Sample), samples);
    let opts = ConvertOptions::default();
    for field in [
        SampleType::IP,
        SampleType::TID,
        SampleType::TIME,
        SampleType::ADDR,
        SampleType::ID,
        SampleType::STREAM_ID,
        SampleType::CPU,
        SampleType::IDENTIFIER,
        SampleType::READ,
    ] {
        let edits = strip_edits(Selection::default(), Some(field));
        let out = Cursor::new(Vec::new());
        let Err(err) = run(open(&path).unwrap(), Target::File, out, &opts, edits) else {
            panic!("dropping {field:?} was not refused");
        };
        assert!(
            err.to_string().contains("cannot be dropped"),
            "{field:?}: {err}"
        );
    }
}

/// strip_edits where events differ: RAW, which only the tracepoint has, dropped while
/// every event is still there, with either event removed. Removing the tracepoint
/// leaves cpu-clock's samples as they were; removing cpu-clock (the first event, so the
/// tracepoint's index changes) leaves the tracepoint's samples, without RAW.
#[test]
fn strip_edits_drop_a_field_events_differ_in() {
    use perfdata_core::attr::SampleType;
    use perfdata_synth::{write_workload, SynthSpec, SynthWriter};
    let spec = SynthSpec {
        samples: 300,
        events: "cpu-clock,tracepoint".into(),
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build().unwrap();
    let file = tempfile::NamedTempFile::new().unwrap();
    let w = SynthWriter::file(std::io::BufWriter::new(file.reopen().unwrap()), trace).unwrap();
    write_workload(&workload, w).unwrap();
    let input = open(file.path()).unwrap();
    let types: Vec<SampleType> = input
        .meta()
        .attrs()
        .iter()
        .map(|a| a.attr.sample_type)
        .collect();
    assert_eq!(input.meta().event_name(0), "cpu-clock");
    assert_eq!(input.meta().event_name(1), "synth:synth_tick");
    assert!(!types[0].contains(SampleType::RAW) && types[1].contains(SampleType::RAW));
    // Samples per event, each decoded: its event's sample_type and its bytes agree.
    let (before, _) = samples_by_event(std::fs::read(file.path()).unwrap());
    assert!(
        before.len() == 2 && before.values().all(|&n| n > 0),
        "{before:?}"
    );
    for (gone, kept, kept_type) in [
        ("synth:synth_tick", "cpu-clock", types[0]),
        ("cpu-clock", "synth:synth_tick", types[1] - SampleType::RAW),
    ] {
        let sel = Selection {
            select: Selectors {
                events: vec![gone.into()],
                ..Selectors::default()
            },
            ..Selection::default()
        };
        // strip's order, and the other order a library user may compose: the fields
        // edit drops each remaining attr's own fields, whatever was removed before it.
        let swapped: Vec<Box<dyn RecordEdit>> = vec![
            Box::new(Strip::new(sel.clone())),
            Box::new(DropSampleFields::new(SampleType::RAW)),
        ];
        for edits in [strip_edits(sel, Some(SampleType::RAW)), swapped] {
            let (out, _) = run_file(open(file.path()).unwrap(), edits);
            let (after, types) = samples_by_event(out);
            assert_eq!(types, [kept_type], "{gone} removed");
            assert_eq!(after.get(kept), before.get(kept), "{gone} removed");
            assert_eq!(after.len(), 1, "{gone} removed: {after:?}");
        }
    }
}
