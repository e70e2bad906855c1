//! What `layouts!` generates: a view that reads what its model writes, offsets that
//! follow from the sizes, a size check, and facts whose offsets are the view's. Each
//! layout is one description, so these test the macro's output, not two copies against
//! each other; MMAP2's device-and-inode words are the exception (see
//! `mmap2_id_words_are_the_models_24_bytes`).

use binrw::Endian;

use super::*;

const E: Endian = Endian::Little;

fn bytes(body: RecordBody, ty: RecordType) -> Vec<u8> {
    Record::new(ty, body).encode(E).unwrap()
}

#[test]
fn a_view_reads_what_its_model_wrote() {
    // Every field a distinct value: a view reading at the wrong offset reads another.
    let fork = ForkExit {
        pid: 11,
        ppid: 12,
        tid: 13,
        ptid: 14,
        time: 15,
    };
    let b = bytes(RecordBody::Fork(fork), RecordType::Fork);
    assert_eq!(b.len(), ForkView::LEN);
    let v = ForkView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.pid(), v.ppid(), v.tid(), v.ptid(), v.time()),
        (11, 12, 13, 14, 15)
    );

    // A text field: the string up to its NUL, its padding left out.
    let k = Ksymbol {
        addr: 101,
        len: 102,
        ksym_type: 1,
        flags: 3,
        name: PaddedString::new("bpf_prog_x"),
    };
    let b = bytes(RecordBody::Ksymbol(k), RecordType::Ksymbol);
    let v = KsymbolView::new(&b, E, 0).unwrap();
    assert_eq!(
        (v.addr(), v.len(), v.ksym_type(), v.flags(), v.name()),
        (101, 102, 1, 3, &b"bpf_prog_x"[..])
    );

    // A count the model computes when it writes (binrw `calc`) is a field of the view.
    let ns = Namespaces {
        pid: 91,
        tid: 92,
        links: vec![NamespaceLink { dev: 1, ino: 2 }; 3],
    };
    let b = bytes(RecordBody::Namespaces(ns), RecordType::Namespaces);
    let v = NamespacesView::new(&b, E, 0).unwrap();
    assert_eq!((v.pid(), v.tid(), v.nr_namespaces()), (91, 92, 3));
    let u = EventUpdate {
        id: 141,
        data: EventUpdateData::Name(PaddedString::new("cycles")),
    };
    let b = bytes(RecordBody::EventUpdate(u), RecordType::EventUpdate);
    let v = EventUpdateView::new(&b, E, 0).unwrap();
    assert_eq!((v.type_(), v.id()), (2, 141));
}

#[test]
fn mmap2_id_words_are_the_models_24_bytes() {
    // MMAP2's `id` is an enum chosen by misc (device and inode, or a build id), which a
    // fixed view cannot follow: the description lists the words the view reads in its
    // place by hand, so this test ties those words to the model's bytes.
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
    assert_eq!(Mmap2View::AT.filename, 72);
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
    assert_eq!(CommView::AT.comm, 16);
    assert_eq!(CommView::LEN, 16);
    // u16 fields: KSYMBOL's type and flags.
    assert_eq!((KsymbolView::AT.ksym_type, KsymbolView::AT.flags), (20, 22));
    assert_eq!(KsymbolView::AT.name, 24);
}

#[test]
fn facts_take_the_views_offsets() {
    let facts = RecordType::Mmap.facts();
    assert_eq!(
        facts.task,
        TaskFacts::Fields {
            pid: 8,
            tid: 12,
            scope: TaskScope::Process
        }
    );
    assert_eq!(
        facts.strings,
        &[StringField {
            at: 40,
            kind: StringKind::Path
        }]
    );
    assert_eq!(facts.addresses, &[16, 24, 32]);
    assert_eq!(facts.content, Content::Listed);

    let facts = RecordType::Mmap2.facts();
    assert_eq!(facts.strings[0].at, 72);
    assert_eq!(facts.addresses, &[16, 24, 32]);

    assert_eq!(RecordType::Cgroup.facts().task, TaskFacts::Trailer);
    assert_eq!(
        RecordType::Cgroup.facts().strings,
        &[StringField {
            at: 16,
            kind: StringKind::Cgroup
        }]
    );
    assert_eq!(RecordType::Ksymbol.facts().task, TaskFacts::None);
    assert_eq!(RecordType::Ksymbol.facts().addresses, &[8]);
    assert_eq!(
        RecordType::Stat.facts(),
        &Facts {
            task: TaskFacts::None,
            strings: &[],
            addresses: &[],
            content: Content::Listed
        }
    );
    assert_eq!(RecordType::EventUpdate.facts(), &Facts::OTHER);
    assert_eq!(RecordType::HeaderFeature.facts(), &Facts::OTHER);

    // FORK's pid and tid, read through the facts from the bytes its model wrote.
    let fork = ForkExit {
        pid: 5,
        tid: 6,
        ..ForkExit::default()
    };
    let b = bytes(RecordBody::Fork(fork), RecordType::Fork);
    assert_eq!(
        RecordType::Fork.facts().task_fields(&b, E),
        Some((5, 6, TaskScope::Thread))
    );
}

#[test]
fn a_layouts_strings_are_its_bodys_strings() {
    let mut body = RecordBody::Mmap(Mmap {
        filename: PaddedString::new("/bin/true"),
        ..Mmap::default()
    });
    let names: Vec<(StringKind, Vec<u8>)> = body
        .strings_mut()
        .into_iter()
        .map(|(k, s)| (k, s.bytes.clone()))
        .collect();
    assert_eq!(
        names,
        vec![(StringKind::Path, b"/bin/true\0\0\0\0\0\0\0".to_vec())]
    );
    assert!(RecordBody::Fork(ForkExit::default())
        .strings_mut()
        .is_empty());
}

// Two layouts alike but for what their rest claims to hold (only their facts are read).
#[allow(dead_code)]
mod rest_claims {
    use binrw::binrw;

    use super::super::views::layouts;

    layouts! {
        #[binrw]
        /// Task fields, then numbers.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct RestNumbers {
            /// Process id.
            pub pid: u32,
            /// Thread id.
            pub tid: u32,
        } rest(numbers) {
            /// Counts.
            pub counts: u64,
        }
        /// View.
        view RestNumbersView(RestNumbersAt) for [Namespaces], facts(task(Thread pid tid));

        #[binrw]
        /// Task fields, then something an edit must handle by name.
        #[derive(Debug, Clone, PartialEq, Eq, Default)]
        pub struct RestOther {
            /// Process id.
            pub pid: u32,
            /// Thread id.
            pub tid: u32,
        } rest(other) {
            /// Names, say.
            pub blob: u64,
        }
        /// View.
        view RestOtherView(RestOtherAt) for [Namespaces], facts(task(Thread pid tid));
    }

    #[test]
    fn a_rest_that_is_not_numbers_makes_the_record_other() {
        assert_eq!(RestOther::FACTS, super::Facts::OTHER);
        assert_ne!(RestNumbers::FACTS, super::Facts::OTHER);
        assert_eq!(
            RestNumbers::FACTS.task,
            super::TaskFacts::Fields {
                pid: 8,
                tid: 12,
                scope: super::TaskScope::Thread
            }
        );
    }
}

/// A row whose task is the one its sample_id trailer names must be a type that has the
/// trailer (the kernel's records but SAMPLE): perf's own records (ID_INDEX, STAT_ROUND,
/// ...) carry none, and a selector would read their last words as a pid and tid. The
/// hand-written rows of records that are numbers only say so, as perf's structs have
/// them (perf_record_bpf_event: type, flags, id, tag; id_index entries: id, idx, cpu,
/// tid; stat_config entries: tag, val; stat_round: type, time): about no task (a BPF
/// program is the kernel's, as KSYMBOL's symbol is), no string, no address.
#[test]
fn a_trailer_task_is_a_kernel_records_and_numbers_rows_are_numbers() {
    for ty in RecordType::all_known() {
        if ty.facts().task == TaskFacts::Trailer {
            assert!(ty.has_sample_id_trailer(), "{ty} has no sample_id trailer");
        }
    }
    let numbers = Facts {
        task: TaskFacts::None,
        strings: &[],
        addresses: &[],
        content: Content::Listed,
    };
    for ty in [
        RecordType::BpfEvent,
        RecordType::FinishedRound,
        RecordType::IdIndex,
        RecordType::StatConfig,
        RecordType::StatRound,
        RecordType::FinishedInit,
    ] {
        assert_eq!(ty.facts(), &numbers, "{ty}");
    }
}
