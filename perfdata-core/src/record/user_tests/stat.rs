//! THREAD_MAP, CPU_MAP, the `perf stat record` records, EVENT_UPDATE and TIME_CONV.

use super::*;

#[test]
fn thread_map_entries() {
    let bytes = Rec::le()
        .u64(2)
        .u64(4242)
        .str("perfdata-spin", 16)
        .u64(u64::MAX)
        .str("", 16)
        .record(73, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::ThreadMap(t) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(t.entries.len(), 2);
    assert_eq!(t.entries[0].pid, 4242);
    assert_eq!(
        crate::text::c_str_lossy(&t.entries[0].comm),
        "perfdata-spin"
    );
    assert_eq!(t.entries[1].pid as i64, -1);
}

#[test]
fn cpu_map_encodings() {
    // CPUS: u16 type, u16 nr, u16 cpus, then padding to 8 in extra.
    let bytes = Rec::le().u16(0).u16(2).u16(0).u16(1).u32(0).record(74, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(m.data, CpuMapData::Cpus { cpus: vec![0, 1] });
    assert_eq!(m.data.cpus(), vec![0, 1]);
    assert_eq!(r.extra, vec![0; 4]);

    // "any cpu" (-1) as the single entry.
    let bytes = Rec::le().u16(0).u16(1).u16(0xffff).u16(0).record(74, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!()
    };
    assert_eq!(m.data.cpus(), vec![-1]);

    // MASK, long_size 4 (32-bit producers): u32 words right after long_size.
    let bytes = Rec::le()
        .u16(1)
        .u16(1)
        .u16(4)
        .u32(0b1010_0001)
        .bytes(&[0; 6])
        .record(74, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!()
    };
    assert_eq!(m.data, CpuMapData::Mask32 { mask: vec![0xa1] });
    assert_eq!(m.data.cpus(), vec![0, 5, 7]);

    // MASK, long_size 8: 4 pad bytes, so the u64 words start at offset 10 of the
    // (packed) data.
    let bytes = Rec::le()
        .u16(1)
        .u16(2)
        .u16(8)
        .bytes(&[0; 4])
        .u64(1 << 63 | 1)
        .u64(1 << 1)
        .bytes(&[0; 6])
        .record(74, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!()
    };
    let CpuMapData::Mask64 { pad, mask } = &m.data else {
        panic!("{:?}", m.data)
    };
    assert_eq!((*pad, mask.clone()), ([0; 4], vec![1 << 63 | 1, 2]));
    assert_eq!(m.data.cpus(), vec![0, 63, 65]);
    assert_eq!(m.data.type_code(), 1);

    // RANGE_CPUS (perf 6.1+): any_cpu, pad, start, end.
    let bytes = Rec::le().u16(2).u8(1).u8(0).u16(2).u16(5).record(74, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::CpuMap(m) = &r.body else {
        panic!()
    };
    assert_eq!(
        m.data,
        CpuMapData::Range {
            any_cpu: 1,
            pad: 0,
            start_cpu: 2,
            end_cpu: 5
        }
    );
    assert_eq!(m.data.cpus(), vec![-1, 2, 3, 4, 5]);

    // An encoding perf does not define, or a mask word size it does not write, does not
    // fit: the record is kept raw by decode_or_raw.
    decode_err(&Rec::le().u16(7).u16(0).u32(0).record(74, 0));
    let bad = Rec::le().u16(1).u16(1).u16(2).u16(0).record(74, 0);
    decode_err(&bad);
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian: Endian::Little,
        events: &events,
    };
    let (raw, err) = Record::decode_or_raw(&bad, &[], 0, &ctx);
    assert!(err.is_some() && matches!(raw.body, RecordBody::Raw(_)));
    assert_eq!(raw.encode(Endian::Little).unwrap(), bad);
}

#[test]
fn stat_records() {
    let bytes = Rec::le()
        .u64(3)
        .u64(0)
        .u64(1)
        .u64(1)
        .u64(1000)
        .u64(2)
        .u64(1)
        .record(75, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::StatConfig(c) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(
        c.entries,
        vec![
            StatConfigEntry { tag: 0, val: 1 },
            StatConfigEntry { tag: 1, val: 1000 },
            StatConfigEntry { tag: 2, val: 1 }
        ]
    );

    let bytes = Rec::le()
        .u64(932)
        .u32(u32::MAX)
        .u32(0)
        .u64(10038228)
        .u64(10038230)
        .u64(10038229)
        .record(76, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::Stat(s) = &r.body else {
        panic!()
    };
    assert_eq!((s.id, s.cpu, s.thread), (932, u32::MAX, 0));
    assert_eq!((s.val, s.ena, s.run), (10038228, 10038230, 10038229));

    let bytes = Rec::le().u64(1).u64(10444237).record(77, 0);
    let r = round_trip(&bytes, Endian::Little);
    assert_eq!(
        r.body,
        RecordBody::StatRound(StatRound {
            type_: 1,
            time: 10444237
        })
    );
}

#[test]
fn event_update_kinds() {
    let unit = Rec::le().u64(0).u64(55).str("msec", 8).record(78, 0);
    let r = round_trip(&unit, Endian::Little);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(u.id, 55);
    let EventUpdateData::Unit(s) = &u.data else {
        panic!("{:?}", u.data)
    };
    assert_eq!(s.as_str_lossy(), "msec");

    // perf 6.1 sizes a SCALE update like the largest member: 16 zero bytes of extra.
    let scale = Rec::le()
        .u64(1)
        .u64(55)
        .u64(1e-6f64.to_bits())
        .bytes(&[0; 16])
        .record(78, 0);
    let r = round_trip(&scale, Endian::Little);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!()
    };
    let EventUpdateData::Scale(v) = u.data else {
        panic!("{:?}", u.data)
    };
    assert_eq!(v.get(), 1e-6);
    assert_eq!(r.extra.len(), 16);

    let name = Rec::le().u64(2).u64(55).str("cpu-clock", 32).record(78, 0);
    let r = round_trip(&name, Endian::Little);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!()
    };
    let EventUpdateData::Name(s) = &u.data else {
        panic!("{:?}", u.data)
    };
    assert_eq!(
        (s.as_str_lossy().as_str(), s.bytes.len()),
        ("cpu-clock", 32)
    );

    let cpus = Rec::le()
        .u64(3)
        .u64(55)
        .u16(2)
        .u8(0)
        .u8(0)
        .u16(0)
        .u16(15)
        .record(78, 0);
    let r = round_trip(&cpus, Endian::Little);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!()
    };
    let EventUpdateData::Cpus(m) = &u.data else {
        panic!("{:?}", u.data)
    };
    assert_eq!(m.cpus(), (0..=15).collect::<Vec<_>>());

    let other = Rec::le().u64(9).u64(55).u64(0xabcdef).record(78, 0);
    let r = round_trip(&other, Endian::Little);
    let RecordBody::EventUpdate(u) = &r.body else {
        panic!()
    };
    assert_eq!(u.data.type_code(), 9);
    assert!(matches!(&u.data, EventUpdateData::Unknown { data, .. } if data.len() == 8));
}

#[test]
fn time_conv_short_and_long_forms() {
    let short = Rec::le().u64(31).u64(633060125).u64(7).record(79, 0);
    let r = round_trip(&short, Endian::Little);
    let RecordBody::TimeConv(t) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!((t.time_shift, t.time_mult, t.time_zero), (31, 633060125, 7));
    assert_eq!(t.cycles, None);

    let long = Rec::le()
        .u64(21)
        .u64(25165824)
        .u64(9)
        .u64(430823097799)
        .u64((1 << 56) - 1)
        .u8(1)
        .u8(1)
        .bytes(&[0; 6])
        .record(79, 0);
    assert_eq!(long.len(), 56);
    let r = round_trip(&long, Endian::Little);
    let RecordBody::TimeConv(t) = &r.body else {
        panic!()
    };
    let c = t.cycles.unwrap();
    assert_eq!((c.time_cycles, c.time_mask), (430823097799, (1 << 56) - 1));
    assert_eq!((c.cap_user_time_zero, c.cap_user_time_short), (1, 1));
    assert!(r.extra.is_empty());
}
