//! Properties over every type: byte order, coverage, counts that do not fit.

use super::headers::auxtrace_error_head;
use super::sched::schedstat_cpu_counters;
use super::*;

#[test]
fn big_endian_round_trips() {
    let be = || Rec::new(Endian::Big);

    let bytes = be()
        .u16(1)
        .u16(1)
        .u16(8)
        .bytes(&[0; 4])
        .u64(0xff)
        .bytes(&[0; 6])
        .record(74, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(m.data.cpus(), (0..8).collect::<Vec<_>>());

    let bytes = be().u16(0).u16(2).u16(0).u16(3).u32(0).record(74, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!()
    };
    assert_eq!(m.data, CpuMapData::Cpus { cpus: vec![0, 3] });

    let bytes = be().u64(1).u64(55).u64(0.5f64.to_bits()).record(78, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!()
    };
    assert_eq!(
        (u.id, u.data.clone()),
        (55, EventUpdateData::Scale(0.5.into()))
    );

    let bytes = auxtrace_error_head(be(), 1)
        .u64(99)
        .str("be", 8)
        .record(72, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::AuxtraceError(e) = &r.body else {
        panic!()
    };
    assert_eq!((e.pid, e.fmt, e.time), (400, 1, Some(99)));

    let bytes = be()
        .u64(1)
        .u64(7)
        .u64(1)
        .u64(2)
        .u64(3)
        .u64(4)
        .u64(5)
        .record(69, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::IdIndex(ix) = &r.body else {
        panic!()
    };
    assert_eq!(ix.entries[0].tid, 3);
    assert_eq!(ix.entries2.as_ref().unwrap()[0].machine_pid, 4);

    let bytes = schedstat_cpu_counters(be().u64(5).u32(2).u16(15).u16(0)).record(85, 0);
    let r = round_trip(&bytes, Endian::Big);
    let RecordBody::SchedstatCpu(s) = &r.body else {
        panic!()
    };
    assert_eq!((s.cpu, s.version), (2, 15));
}

/// The name of a body's variant, from its Debug text: `Mmap2(Mmap2 { .. })` gives
/// "Mmap2". Body variants are named as the record types are, so this checks that a
/// decoded body is the one of its type without going through the decoder's own table.
fn variant_name(body: &RecordBody) -> String {
    let text = format!("{body:?}");
    text.split(['(', ' ', '{']).next().unwrap_or("").to_string()
}

/// Decode a little-endian record of type `t` made by the test. If it decodes, it must be
/// the body of type `t` and encode back to `bytes` (returns true); if not, the error must
/// name the record type and the start of its body, byte 8 (returns false).
fn decodes_as_its_type(t: RecordType, bytes: &[u8], events: &EventIndex) -> bool {
    let ctx = DecodeContext {
        endian: Endian::Little,
        events,
    };
    match Record::decode(bytes, &[], 0, &ctx) {
        Ok(r) => {
            assert_eq!(variant_name(&r.body), format!("{t:?}"), "{t}");
            assert_eq!(r.record_type(), t);
            assert_eq!(r.encode(Endian::Little).unwrap(), bytes, "{t}");
            true
        }
        Err(e) => {
            assert_eq!(e.offset(), Some(8), "{t}: {e}");
            let crate::Error::Format { context, .. } = &e else {
                panic!("{t}: {e}")
            };
            assert_eq!(context, &format!("record {t}"));
            false
        }
    }
}

/// An index holding one attr without sample or read fields.
fn one_plain_attr() -> EventIndex {
    let mut events = EventIndex::new();
    events.push(&crate::attr::PerfEventAttr::default(), &[]);
    events
}

#[test]
fn every_type_perf_defines_has_a_model() {
    // With an attr that has no sample or read fields, a body of zeros is valid for every
    // type: it decodes into the body of that type and encodes back to the same bytes.
    // Without any attr, exactly the types whose layout comes from the attr fail.
    let mut no_attr_fails = Vec::new();
    for t in RecordType::all_known() {
        let bytes = Rec::le().bytes(&[0; 1024]).record(t.as_u32(), 0);
        assert!(decodes_as_its_type(t, &bytes, &one_plain_attr()), "{t}");
        if !decodes_as_its_type(t, &bytes, &EventIndex::new()) {
            no_attr_fails.push(t);
        }
    }
    assert_eq!(no_attr_fails, [RecordType::Read, RecordType::Sample]);
}

#[test]
fn an_empty_body_fits_only_the_types_without_fixed_fields() {
    // A header alone (size 8): SAMPLE of an attr with no sample fields, the three types
    // with no body, and COMPRESSED (whose body is all zstd data) decode; every other type
    // fails its layout at byte 8, naming the record type.
    let fit: Vec<RecordType> = RecordType::all_known()
        .filter(|&t| decodes_as_its_type(t, &Rec::le().record(t.as_u32(), 0), &one_plain_attr()))
        .collect();
    assert_eq!(
        fit,
        [
            RecordType::Sample,
            RecordType::Switch,
            RecordType::FinishedRound,
            RecordType::Compressed,
            RecordType::FinishedInit,
        ]
    );
}

#[test]
fn a_count_too_large_for_its_field_fails_the_encoding() {
    let r = Record {
        header: RecordHeader::new(RecordType::CpuMap, 0, 0),
        body: RecordBody::CpuMap(CpuMap {
            data: CpuMapData::Cpus {
                cpus: vec![0; 70_000],
            },
        }),
        extra: Vec::new(),
        sample_id: None,
        payload: Vec::new(),
    };
    // 70,000 u16 CPUs do not fit the u16 count: an error naming the record, no panic.
    let e = r.encode(Endian::Little).unwrap_err().to_string();
    assert!(e.starts_with("encoding record CPU_MAP: "), "{e}");
}

#[test]
fn a_record_larger_than_its_size_field_fails_the_encoding() {
    // A COMM whose name makes the record 70,016 bytes: more than the u16 size holds.
    let r = Record {
        header: RecordHeader::new(RecordType::Comm, 0, 0),
        body: RecordBody::Comm(Comm {
            pid: 1,
            tid: 1,
            comm: PaddedString::new(&"a".repeat(70_000)),
        }),
        extra: Vec::new(),
        sample_id: None,
        payload: Vec::new(),
    };
    let e = r.encode(Endian::Little).unwrap_err().to_string();
    assert_eq!(
        e,
        "encoding record COMM: its 70024 bytes do not fit the header's 16-bit size field"
    );
}

#[test]
fn a_row_past_perfs_is_a_record_type() {
    // The test-only row 127, its model and its view are all that was added for it.
    let t = RecordType::from_u32(127);
    assert_eq!(t, RecordType::TestOnly);
    assert_eq!((t.as_u32(), t.name()), (127, "TEST_ONLY".to_string()));
    assert!(!t.is_metadata() && !t.is_kernel());
    assert_eq!(RecordType::all_known().last(), Some(t));
    assert_eq!(RecordType::from_u32(126), RecordType::Unknown(126));
    assert_eq!(RecordType::from_u32(128), RecordType::Unknown(128));

    let bytes = Rec::le()
        .u32(4242)
        .u32(4243)
        .u64(0x1122_3344_5566_7788)
        .bytes(b"name\0\0\0\0")
        .record(127, 0);
    let r = round_trip(&bytes, Endian::Little);
    let body = TestOnly {
        pid: 4242,
        tid: 4243,
        value: 0x1122_3344_5566_7788,
        name: PaddedString::new("name"),
    };
    assert_eq!(r.body, RecordBody::TestOnly(body));
    assert_eq!(
        serde_json::to_value(&r.body).unwrap(),
        serde_json::json!({"pid": 4242, "tid": 4243, "value": 0x1122_3344_5566_7788u64, "name": "name"})
    );
    // Its row's facts: the task its fields name, and a name to rename.
    let facts = t.facts();
    assert_eq!(
        facts.task_fields(&bytes, Endian::Little),
        Some((4242, 4243, TaskScope::Thread))
    );
    assert_eq!(
        facts.strings,
        &[StringField {
            at: 24,
            kind: StringKind::Comm
        }]
    );
    assert_eq!(facts.content, Content::Listed);
    let mut body = r.body;
    let names: Vec<(StringKind, Vec<u8>)> = body
        .strings_mut()
        .into_iter()
        .map(|(k, s)| (k, s.bytes.clone()))
        .collect();
    assert_eq!(names, vec![(StringKind::Comm, b"name\0\0\0\0".to_vec())]);
}
