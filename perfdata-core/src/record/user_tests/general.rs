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

#[test]
fn every_type_perf_defines_has_a_model() {
    // A record of every known type with a body of zeros either decodes typed or fails
    // its layout; none comes back as Raw from a successful decode.
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian: Endian::Little,
        events: &events,
    };
    for t in RecordType::all_known() {
        let mut bytes = Rec::le().bytes(&[0; 1024]).record(t.as_u32(), 0);
        if matches!(t, RecordType::HeaderTracingData | RecordType::Auxtrace) {
            bytes.truncate(64);
            bytes[6..8].copy_from_slice(&64u16.to_le_bytes());
        }
        if let Ok(r) = Record::decode(&bytes, &[], 0, &ctx) {
            assert!(!matches!(r.body, RecordBody::Raw(_)), "{t} decoded as Raw");
        }
    }
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
    assert!(r.encode(Endian::Little).is_err());
}
