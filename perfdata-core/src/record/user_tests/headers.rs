//! HEADER_EVENT_TYPE, HEADER_BUILD_ID, ID_INDEX and the AUXTRACE records.

use super::*;

#[test]
fn header_event_type_keeps_the_cut_name() {
    // perf cuts the 64-byte name to strlen rounded up to 8.
    let bytes = Rec::le().u64(0x10).str("cycles", 8).record(65, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::HeaderEventType(e) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(e.event_id, 0x10);
    assert_eq!(e.name.as_str_lossy(), "cycles");
    assert_eq!(r.header.size, 24);
    // A name of exactly 16 bytes has no NUL at all.
    let bytes = Rec::le().u64(1).str("sched:sched_wake", 16).record(65, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::HeaderEventType(e) = &r.body else {
        panic!()
    };
    assert_eq!(e.name.as_str_lossy(), "sched:sched_wake");
}

#[test]
fn header_build_id_fields() {
    let id: Vec<u8> = (1..=20).collect();
    let bytes = Rec::le()
        .u32(-1i32 as u32)
        .bytes(&id)
        .u8(20)
        .u8(0)
        .u16(0)
        .str("/usr/lib/libc.so.6", 64)
        .record(67, misc::BUILD_ID_SIZE | misc::USER);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::HeaderBuildId(b) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(b.pid, -1);
    assert_eq!(b.size, 20);
    assert_eq!(b.build_id_bytes(r.header.misc), &id[..]);
    assert_eq!(b.filename.as_str_lossy(), "/usr/lib/libc.so.6");
    assert_eq!(b.filename.bytes.len(), 64);
    assert_eq!(r.header.cpumode(), misc::USER);

    // perf inject -b of perf 6.1: size byte 0 and no BUILD_ID_SIZE: 20 bytes assumed.
    let bytes = Rec::le()
        .u32(7)
        .bytes(&id)
        .u32(0)
        .str("[kernel.kallsyms]", 24)
        .record(67, misc::KERNEL);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::HeaderBuildId(b) = &r.body else {
        panic!()
    };
    assert_eq!(b.build_id_bytes(r.header.misc).len(), 20);
    assert_eq!(b.filename.as_str_lossy(), "[kernel.kallsyms]");
}

#[test]
fn id_index_with_and_without_the_second_array() {
    let entries = |r: Rec| {
        r.u64(100)
            .u64(0)
            .u64(0)
            .u64(4242)
            .u64(101)
            .u64(1)
            .u64(1)
            .u64(4242)
    };
    let bytes = entries(Rec::le().u64(2)).record(69, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::IdIndex(ix) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!(ix.entries.len(), 2);
    assert_eq!(
        ix.entries[1],
        IdIndexEntry {
            id: 101,
            idx: 1,
            cpu: 1,
            tid: 4242
        }
    );
    assert_eq!(ix.entries2, None);
    assert!(r.extra.is_empty());

    // perf 5.18+ with guest machines: nr more {machine_pid, vcpu} entries.
    let bytes = entries(Rec::le().u64(2))
        .u64(3000)
        .u64(0)
        .u64(3000)
        .u64(1)
        .record(69, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::IdIndex(ix) = &r.body else {
        panic!()
    };
    let e2 = ix.entries2.as_ref().unwrap();
    assert_eq!(
        e2[1],
        IdIndexEntry2 {
            machine_pid: 3000,
            vcpu: 1
        }
    );

    // Room for less than nr second entries: they are not there, the bytes are extra.
    let bytes = entries(Rec::le().u64(2)).u64(3000).u64(0).record(69, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::IdIndex(ix) = &r.body else {
        panic!()
    };
    assert_eq!(ix.entries2, None);
    assert_eq!(r.extra.len(), 16);

    // nr larger than the record holds is an error, not an allocation.
    let e = decode_err(&Rec::le().u64(1 << 40).record(69, 0));
    assert!(e.to_string().contains("ID_INDEX"), "{e}");
}

#[test]
fn auxtrace_info_private_words() {
    let bytes = Rec::le()
        .u32(1)
        .u32(0)
        .u64(6)
        .u64(31)
        .u64(0xdead)
        .record(70, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::AuxtraceInfo(i) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!((i.type_, i.reserved), (1, 0));
    assert_eq!(i.priv_, vec![6, 31, 0xdead]);
}

pub(super) fn auxtrace_error_head(r: Rec, fmt: u32) -> Rec {
    r.u32(1)
        .u32(2)
        .u32(3)
        .u32(400)
        .u32(401)
        .u32(fmt)
        .u64(0xffff_8000_1234_5678)
}

#[test]
fn auxtrace_error_versions() {
    // fmt 0 (perf before 5.1): no time, the message right after ip, cut to 8.
    let bytes = auxtrace_error_head(Rec::le(), 0)
        .str("overflow", 16)
        .record(72, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::AuxtraceError(e) = &r.body else {
        panic!("{:?}", r.body)
    };
    assert_eq!((e.type_, e.code, e.cpu, e.pid, e.tid), (1, 2, 3, 400, 401));
    assert_eq!(e.ip, 0xffff_8000_1234_5678);
    assert_eq!(e.time, None);
    assert_eq!(e.message(), "overflow");
    assert_eq!(e.msg.len(), 16);
    assert_eq!((e.machine_pid, e.vcpu), (None, None));

    // fmt 1: time, then the cut message.
    let bytes = auxtrace_error_head(Rec::le(), 1)
        .u64(123456789)
        .str("lost trace data", 16)
        .record(72, 0);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::AuxtraceError(e) = &r.body else {
        panic!()
    };
    assert_eq!(e.time, Some(123456789));
    assert_eq!(e.message(), "lost trace data");

    // fmt 2: the whole 64-byte message, then machine_pid and vcpu.
    let bytes = auxtrace_error_head(Rec::le(), 2)
        .u64(5)
        .str("guest error", 64)
        .u32(777)
        .u32(2)
        .record(72, 0);
    assert_eq!(bytes.len(), 120);
    let r = round_trip(&bytes, Endian::Little);
    let RecordBody::AuxtraceError(e) = &r.body else {
        panic!()
    };
    assert_eq!(e.msg.len(), 64);
    assert_eq!(e.message(), "guest error");
    assert_eq!((e.machine_pid, e.vcpu), (Some(777), Some(2)));
    assert!(r.extra.is_empty());

    // fmt 2 too short for its fixed message is an error.
    decode_err(
        &auxtrace_error_head(Rec::le(), 2)
            .u64(5)
            .str("x", 8)
            .record(72, 0),
    );
}
