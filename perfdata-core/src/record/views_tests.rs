//! The views read what the binrw models write.

use binrw::Endian;

use super::*;

const E: Endian = Endian::Little;

fn bytes(body: RecordBody, ty: RecordType) -> Vec<u8> {
    Record::new(ty, body).encode(E).unwrap()
}

#[test]
fn views_read_what_the_models_wrote() {
    // Every field a distinct value: a view reading at the wrong offset reads another.
    let fork = ForkExit {
        pid: 11,
        ppid: 12,
        tid: 13,
        ptid: 14,
        time: 15,
    };
    let b = bytes(RecordBody::Fork(fork), RecordType::Fork);
    let v = ForkView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.pid(), v.ppid(), v.tid(), v.ptid(), v.time()),
        (11, 12, 13, 14, 15)
    );

    let comm = Comm {
        pid: 21,
        tid: 22,
        comm: PaddedString::new("worker"),
    };
    let b = bytes(RecordBody::Comm(comm), RecordType::Comm);
    let v = CommView::new(&b, E, 0).unwrap();
    assert_eq!((v.pid(), v.tid(), v.comm()), (21, 22, &b"worker"[..]));

    let mmap = Mmap {
        pid: 31,
        tid: 32,
        addr: 33,
        len: 34,
        pgoff: 35,
        filename: PaddedString::new("/bin/true"),
    };
    let b = bytes(RecordBody::Mmap(mmap), RecordType::Mmap);
    let v = MmapView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.pid(), v.tid(), v.addr(), v.len(), v.pgoff(), v.filename()),
        (31, 32, 33, 34, 35, &b"/bin/true"[..])
    );

    let mmap2 = Mmap2 {
        pid: 41,
        tid: 42,
        addr: 43,
        len: 44,
        pgoff: 45,
        id: Mmap2Id::Inode {
            maj: 46,
            min: 47,
            ino: 48,
            ino_generation: 49,
        },
        prot: 50,
        flags: 51,
        filename: PaddedString::new("/lib/libc.so.6"),
    };
    let b = bytes(RecordBody::Mmap2(mmap2), RecordType::Mmap2);
    let v = Mmap2View::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.pid(), v.tid(), v.addr(), v.len(), v.pgoff()),
        (41, 42, 43, 44, 45)
    );
    assert_eq!(
        (
            v.maj(),
            v.min(),
            v.ino(),
            v.ino_generation(),
            v.prot(),
            v.flags()
        ),
        (46, 47, 48, 49, 50, 51)
    );
    assert_eq!(v.filename(), b"/lib/libc.so.6");

    let t = Throttle {
        time: 61,
        id: 62,
        stream_id: 63,
    };
    let b = bytes(RecordBody::Unthrottle(t), RecordType::Unthrottle);
    let v = ThrottleView::new(&b, E, 0).unwrap();
    assert_eq!((v.time(), v.id(), v.stream_id()), (61, 62, 63));

    let b = bytes(
        RecordBody::ItraceStart(ItraceStart { pid: 71, tid: 72 }),
        RecordType::ItraceStart,
    );
    let v = ItraceStartView::new(&b, E, 0).unwrap();
    assert_eq!((v.pid(), v.tid()), (71, 72));

    let b = bytes(
        RecordBody::LostSamples(LostSamples { lost: 81 }),
        RecordType::LostSamples,
    );
    assert_eq!(LostSamplesView::new(&b, E, 0).unwrap().lost(), 81);

    let ns = Namespaces {
        pid: 91,
        tid: 92,
        links: vec![NamespaceLink { dev: 1, ino: 2 }; 3],
    };
    let b = bytes(RecordBody::Namespaces(ns), RecordType::Namespaces);
    let v = NamespacesView::new(&b, E, 0).unwrap();
    assert_eq!((v.pid(), v.tid(), v.nr_namespaces()), (91, 92, 3));

    let k = Ksymbol {
        addr: 101,
        len: 102,
        ksym_type: 1,
        flags: 1,
        name: PaddedString::new("bpf_prog_x"),
    };
    let b = bytes(RecordBody::Ksymbol(k), RecordType::Ksymbol);
    let v = KsymbolView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.addr(), v.len(), v.ksym_type(), v.flags(), v.name()),
        (101, 102, 1, 1, &b"bpf_prog_x"[..])
    );

    let g = Cgroup {
        id: 111,
        path: PaddedString::new("/user.slice"),
    };
    let b = bytes(RecordBody::Cgroup(g), RecordType::Cgroup);
    let v = CgroupView::new(&b, E, 0).unwrap();
    assert_eq!((v.id(), v.path()), (111, &b"/user.slice"[..]));

    let f = HeaderFeature {
        feat_id: 121,
        data: vec![1; 8],
    };
    let b = bytes(RecordBody::HeaderFeature(f), RecordType::HeaderFeature);
    assert_eq!(FeatureRecordView::new(&b, E, 0).unwrap().feat_id(), 121);

    let s = Stat {
        id: 131,
        cpu: 132,
        thread: 133,
        val: 134,
        ena: 135,
        run: 136,
    };
    let b = bytes(RecordBody::Stat(s), RecordType::Stat);
    let v = StatView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.id(), v.cpu(), v.thread(), v.val(), v.ena(), v.run()),
        (131, 132, 133, 134, 135, 136)
    );

    let u = EventUpdate {
        id: 141,
        data: EventUpdateData::Name(PaddedString::new("cycles")),
    };
    let b = bytes(RecordBody::EventUpdate(u), RecordType::EventUpdate);
    let v = EventUpdateView::new(&b, E, 0).unwrap();
    assert_eq!((v.type_(), v.id()), (2, 141));
}

#[test]
fn big_endian_views_read_big_endian() {
    let fork = ForkExit {
        pid: 1,
        ppid: 2,
        tid: 0x0102_0304,
        ptid: 4,
        time: 5,
    };
    let b = Record::new(RecordType::Exit, RecordBody::Exit(fork))
        .encode(Endian::Big)
        .unwrap();
    assert_eq!(
        ForkView::new(&b, Endian::Big, 0).unwrap().tid(),
        0x0102_0304
    );
}

#[test]
fn a_short_record_or_another_type_is_an_error_naming_its_offset() {
    let comm = Comm {
        pid: 1,
        tid: 2,
        comm: PaddedString::new("x"),
    };
    let b = bytes(RecordBody::Comm(comm), RecordType::Comm);
    let e = ForkView::new(&b, E, 4096).unwrap_err();
    assert_eq!(e.offset(), Some(4096));
    assert!(e.to_string().contains("record COMM"), "{e}");
    assert!(e.to_string().contains("read as FORK or EXIT"), "{e}");

    let fork = bytes(RecordBody::Fork(ForkExit::default()), RecordType::Fork);
    let short = &fork[..ForkView::LEN - 1];
    let e = ForkView::new(short, E, 8192).unwrap_err();
    assert_eq!(e.offset(), Some(8192));
    assert!(
        e.to_string()
            .contains("record size 31 is smaller than the 32 bytes its type needs"),
        "{e}"
    );
    // Exactly long enough is a view.
    assert!(ForkView::new(&fork[..ForkView::LEN], E, 0).is_ok());
}

#[test]
fn offsets_follow_from_the_sizes() {
    assert_eq!(
        ForkView::AT,
        ForkAt {
            pid: 8,
            ppid: 12,
            tid: 16,
            ptid: 20,
            time: 24
        }
    );
    assert_eq!(ForkView::LEN, 32);
    assert_eq!(Mmap2View::AT.filename, 72);
    assert_eq!(CommView::AT.comm, 16);
}
