//! Hand-built records of perf's own types (65 to 86): decoded field values, then the
//! encoding checked against the input bytes.

use binrw::Endian;

use super::*;

/// Builds a record's bytes in either byte order.
struct Rec {
    endian: Endian,
    body: Vec<u8>,
}

impl Rec {
    fn new(endian: Endian) -> Self {
        Rec {
            endian,
            body: Vec::new(),
        }
    }
    fn le() -> Self {
        Self::new(Endian::Little)
    }
    fn u8(mut self, v: u8) -> Self {
        self.body.push(v);
        self
    }
    fn u16(mut self, v: u16) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.body.extend_from_slice(&match self.endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        });
        self
    }
    fn bytes(mut self, b: &[u8]) -> Self {
        self.body.extend_from_slice(b);
        self
    }
    /// `s` NUL-padded to exactly `len` bytes.
    fn str(self, s: &str, len: usize) -> Self {
        let mut b = s.as_bytes().to_vec();
        b.resize(len, 0);
        self.bytes(&b)
    }
    /// The whole record: header (type, misc, size) then the body.
    fn record(self, ty: u32, misc: u16) -> Vec<u8> {
        let size = (8 + self.body.len()) as u16;
        let mut out = Rec::new(self.endian).u32(ty).u16(misc).u16(size).body;
        out.extend_from_slice(&self.body);
        out
    }
}

/// Decode `bytes`, check it encodes back to them, and return the record.
fn round_trip(bytes: &[u8], endian: Endian) -> Record {
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian,
        events: &events,
    };
    let r = Record::decode(bytes, &[], 0, &ctx).unwrap();
    assert_eq!(r.encode(endian).unwrap(), bytes, "{:?}", r.body);
    r
}

fn decode_err(bytes: &[u8]) -> crate::Error {
    let events = EventIndex::new();
    let ctx = DecodeContext {
        endian: Endian::Little,
        events: &events,
    };
    Record::decode(bytes, &[], 64, &ctx).unwrap_err()
}

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

fn auxtrace_error_head(r: Rec, fmt: u32) -> Rec {
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

fn schedstat_cpu_counters(r: Rec) -> Rec {
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
