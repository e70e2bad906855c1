//! BPF_METADATA and the SCHEDSTAT records.

use super::*;

#[test]
fn bpf_metadata_entries_and_unused_room() {
    // Room for 2 entries, 1 used, then an 8-byte zeroed sample_id area.
    let bytes = Rec::le()
        .str("perf_sample_filter", 512)
        .u64(1)
        .str("version", 64)
        .str("\"1.0\"", 256)
        .bytes(&[0; 320 + 8])
        .record(84, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::BpfMetadata(m) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(crate::text::c_str_lossy(&m.prog_name), "perf_sample_filter");
    assert_eq!(m.entries.len(), 1);
    assert_eq!(crate::text::c_str_lossy(&m.entries[0].key), "version");
    assert_eq!(crate::text::c_str_lossy(&m.entries[0].value), "\"1.0\"");
    assert_eq!(r.extra.len(), 328);
}

pub(super) fn schedstat_cpu_counters(r: Rec) -> Rec {
    r.u32(1)
        .u32(0)
        .u32(300)
        .u32(100)
        .u32(250)
        .u32(200)
        .u64(123_456_789)
        .u64(2_345)
        .u64(77)
}

#[test]
fn schedstat_cpu_known_and_unknown_versions() {
    let bytes =
        schedstat_cpu_counters(Rec::le().u64(4_294_000_000).u32(3).u16(16).u16(0)).record(85, 0);
    assert_eq!(bytes.len(), 72);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatCpu(s) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!((s.timestamp, s.cpu, s.version), (4_294_000_000, 3, 16));
    let SchedstatCpuData::Known(c) = &s.counters else {
        panic!("{:?}", s.counters)
    };
    assert_eq!(
        (c.sched_count, c.sched_goidle, c.ttwu_local),
        (300, 100, 200)
    );
    assert_eq!(
        (c.rq_cpu_time, c.run_delay, c.pcount),
        (123_456_789, 2_345, 77)
    );

    let bytes = Rec::le()
        .u64(1)
        .u32(0)
        .u16(99)
        .u16(0)
        .u64(5)
        .u64(6)
        .record(85, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatCpu(s) = &r.body else {
        panic!()
    };
    assert!(matches!(&s.counters, SchedstatCpuData::Unknown(b) if b.len() == 16));
}

fn load_balance(r: Rec, base: u32, n: u32) -> Rec {
    (0..n).fold(r, |r, i| r.u32(base + i))
}

#[test]
fn schedstat_domain_versions() {
    // Version 15 counters (36 u32) in a record sized for version 17 (208 bytes).
    let head = Rec::le().u64(77).u32(1).u16(15).u16(2);
    let mut r = load_balance(head, 100, 8); // idle
    r = load_balance(r, 200, 8); // busy
    r = load_balance(r, 300, 8); // newidle
    r = load_balance(r, 400, 12);
    let bytes = r.bytes(&[0; 40]).record(86, 0);
    assert_eq!(bytes.len(), 208);
    let rec = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatDomain(d) = &rec.body else {
        panic!("{:?}", rec.body)
    };
    assert_eq!((d.timestamp, d.cpu, d.version, d.domain), (77, 1, 15, 2));
    let SchedstatDomainData::V15 {
        idle,
        busy,
        newidle,
        other,
    } = &d.counters
    else {
        panic!("{:?}", d.counters)
    };
    assert_eq!((idle.count, idle.nobusyg), (100, 107));
    assert_eq!((busy.count, newidle.imbalance), (200, 303));
    assert_eq!((other.alb_count, other.ttwu_move_balance), (400, 411));
    assert_eq!(rec.extra.len(), 40);

    // Version 16: busy first.
    let mut r = load_balance(Rec::le().u64(1).u32(0).u16(16).u16(0), 200, 8);
    r = load_balance(r, 100, 8);
    r = load_balance(r, 300, 8);
    let bytes = load_balance(r, 400, 12).record(86, 0);
    let rec = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatDomain(d) = &rec.body else {
        panic!()
    };
    let SchedstatDomainData::V16 { busy, idle, .. } = &d.counters else {
        panic!("{:?}", d.counters)
    };
    assert_eq!((busy.count, idle.count), (200, 100));

    // Version 17: eleven load_balance() counters per state.
    let mut r = load_balance(Rec::le().u64(1).u32(0).u16(17).u16(0), 200, 11);
    r = load_balance(r, 100, 11);
    r = load_balance(r, 300, 11);
    let bytes = load_balance(r, 400, 12).u32(0).record(86, 0);
    assert_eq!(bytes.len(), 208);
    let rec = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatDomain(d) = &rec.body else {
        panic!()
    };
    let SchedstatDomainData::V17 {
        busy,
        idle,
        newidle,
        other,
    } = &d.counters
    else {
        panic!("{:?}", d.counters)
    };
    assert_eq!((busy.imbalance_misfit, busy.nobusyg), (206, 210));
    assert_eq!((idle.count, newidle.hot_gained), (100, 308));
    assert_eq!(other.ttwu_wake_remote, 409);
    assert_eq!(rec.extra, vec![0; 4]);

    // Unknown version: every byte after the fixed fields kept.
    let bytes = Rec::le().u64(1).u32(0).u16(18).u16(0).u64(3).record(86, 0);
    let rec = round_trip(&bytes, Endian::Little);
    let RecordBody::SchedstatDomain(d) = &rec.body else {
        panic!()
    };
    assert!(matches!(&d.counters, SchedstatDomainData::Unknown(b) if b.len() == 8));
}
