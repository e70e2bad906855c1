//! Borrowed, zero-copy views of the side-band records' fixed fields: `ForkView::tid()`,
//! `CommView::comm()`, `Mmap2View::filename()`, read straight from a record's bytes
//! (header included) without decoding its model.
//!
//! Each view is one line of [`views!`]: its fields in order with their types; the
//! offsets follow from the sizes (worked out at compile time), so a layout is written
//! once, here, and every edit, report and selector that reads a field by its offset
//! reads it through the view. A view is checked against its record once, when it is
//! made: a record of another type, or one too short for the fixed fields, is an error
//! naming the record's offset, never a panic. Each view's offsets are checked against
//! the binrw model of its record type by the tests below.

use binrw::Endian;

use super::types::RecordType;
use crate::codec::{u16_at, u32_at, u64_at};
use crate::error::{Error, Problem, Result};

/// A fixed-size field type a view can read.
pub trait Word: Sized {
    /// Bytes the field takes.
    const SIZE: usize;
    /// Read at `at` of `bytes`, which holds it (a view checks the length once).
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self;
}

impl Word for u16 {
    const SIZE: usize = 2;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u16_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

impl Word for u32 {
    const SIZE: usize = 4;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u32_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

impl Word for i32 {
    const SIZE: usize = 4;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u32::read(bytes, at, endian) as i32
    }
}

impl Word for u64 {
    const SIZE: usize = 8;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u64_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

/// What every view is: made from a record's bytes (header included), checked once.
pub trait RecordView<'a>: Sized {
    /// The record types whose layout the view reads.
    const TYPES: &'static [RecordType];
    /// Bytes of the fixed fields, the 8-byte header included: a shorter record is an
    /// error.
    const LEN: usize;

    /// The view of `bytes`, a record of one of [`Self::TYPES`] that starts at file
    /// offset `offset` (named by the error when it is not one, or too short).
    fn new(bytes: &'a [u8], endian: Endian, offset: u64) -> Result<Self>;
}

/// Check `bytes` for a view of `types` needing `len` bytes; the record's type.
fn check(
    bytes: &[u8],
    endian: Endian,
    offset: u64,
    types: &[RecordType],
    len: usize,
) -> Result<()> {
    let ty = RecordType::from_u32(u32_at(bytes, 0, endian).unwrap_or(0));
    let context = || format!("record {ty}");
    if !types.contains(&ty) {
        let names: Vec<String> = types.iter().map(|t| t.name()).collect();
        return Err(Error::format(
            offset,
            context(),
            Problem::Invalid(format!("read as {}", names.join(" or "))),
        ));
    }
    if bytes.len() < len {
        return Err(Error::format(
            offset,
            context(),
            Problem::RecordTooSmall {
                size: bytes.len() as u64,
                min: len as u64,
            },
        ));
    }
    Ok(())
}

/// The bytes of a NUL-terminated string from `at` (up to the NUL, or the end).
fn c_string(bytes: &[u8], at: usize) -> &[u8] {
    let s = bytes.get(at..).unwrap_or(&[]);
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    &s[..end]
}

/// One view per line: `Name(Offsets) for [Types] { field: type, ... ; string }`. The
/// optional string after `;` is the NUL-terminated string that fills the rest of the
/// body (a COMM's name, an MMAP's path).
macro_rules! views {
    ($(
        $(#[doc = $doc:literal])*
        $view:ident($at:ident) for [$($ty:ident),+] { $($field:ident: $fty:ty),* $(; $tail:ident)? }
    )*) => {$(
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $view<'a> {
            bytes: &'a [u8],
            endian: Endian,
        }

        #[doc = concat!("Where the fields of [`", stringify!($view), "`] sit, in bytes from the record's start (its header included).")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $at {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub $field: usize,
            )*
            $(
                #[doc = concat!("`", stringify!($tail), "`, the string to the end of the body.")]
                pub $tail: usize,
            )?
        }

        impl $view<'_> {
            /// Where each field is.
            pub const AT: $at = views!(@at $at, 8usize, [], $($field: $fty,)* ; $($tail)?);
        }

        impl<'a> RecordView<'a> for $view<'a> {
            const TYPES: &'static [RecordType] = &[$(RecordType::$ty),+];
            const LEN: usize = 8 $(+ <$fty as Word>::SIZE)*;

            fn new(bytes: &'a [u8], endian: Endian, offset: u64) -> Result<Self> {
                check(bytes, endian, offset, Self::TYPES, Self::LEN)?;
                Ok($view { bytes, endian })
            }
        }

        impl<'a> $view<'a> {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                #[inline]
                pub fn $field(&self) -> $fty {
                    <$fty as Word>::read(self.bytes, Self::AT.$field, self.endian)
                }
            )*
            $(
                #[doc = concat!("`", stringify!($tail), "`: its bytes up to the NUL.")]
                pub fn $tail(&self) -> &'a [u8] {
                    c_string(self.bytes, Self::AT.$tail)
                }
            )?
        }
    )*};
    // The offsets: each field after the one before it.
    (@at $at:ident, $pos:expr, [$($done:tt)*], $field:ident: $fty:ty, $($rest:tt)*) => {
        views!(@at $at, $pos + <$fty as Word>::SIZE, [$($done)* $field: $pos,], $($rest)*)
    };
    (@at $at:ident, $pos:expr, [$($done:tt)*], ; $($tail:ident)?) => {
        $at { $($done)* $($tail: $pos)? }
    };
}

views! {
    /// MMAP: a mapping of a process.
    MmapView(MmapAt) for [Mmap] { pid: i32, tid: i32, addr: u64, len: u64, pgoff: u64; filename }
    /// COMM: a thread's new command.
    CommView(CommAt) for [Comm] { pid: i32, tid: i32; comm }
    /// FORK and EXIT.
    ForkView(ForkAt) for [Fork, Exit] { pid: i32, ppid: i32, tid: i32, ptid: i32, time: u64 }
    /// THROTTLE and UNTHROTTLE.
    ThrottleView(ThrottleAt) for [Throttle, Unthrottle] { time: u64, id: u64, stream_id: u64 }
    /// READ: pid and tid (the values follow, laid out by the event's read_format).
    ReadRecordView(ReadRecordAt) for [Read] { pid: i32, tid: i32 }
    /// MMAP2. With misc MMAP_BUILD_ID, the 24 bytes of `maj` to `ino_generation` are the
    /// build id's size, two reserved fields and the build id instead.
    Mmap2View(Mmap2At) for [Mmap2] {
        pid: i32, tid: i32, addr: u64, len: u64, pgoff: u64,
        maj: u32, min: u32, ino: u64, ino_generation: u64, prot: u32, flags: u32; filename
    }
    /// ITRACE_START.
    ItraceStartView(ItraceStartAt) for [ItraceStart] { pid: i32, tid: i32 }
    /// LOST_SAMPLES.
    LostSamplesView(LostSamplesAt) for [LostSamples] { lost: u64 }
    /// NAMESPACES: pid and tid (the links follow).
    NamespacesView(NamespacesAt) for [Namespaces] { pid: i32, tid: i32, nr_namespaces: u64 }
    /// KSYMBOL.
    KsymbolView(KsymbolAt) for [Ksymbol] { addr: u64, len: u32, ksym_type: u16, flags: u16; name }
    /// CGROUP.
    CgroupView(CgroupAt) for [Cgroup] { id: u64; path }
    /// HEADER_FEATURE: the feature's bit (its section's bytes follow).
    FeatureRecordView(FeatureRecordAt) for [HeaderFeature] { feat_id: u64 }
    /// STAT.
    StatView(StatAt) for [Stat] { id: u64, cpu: u32, thread: u32, val: u64, ena: u64, run: u64 }
    /// EVENT_UPDATE: what is updated, and of which event (the update follows).
    EventUpdateView(EventUpdateAt) for [EventUpdate] { type_: u64, id: u64 }
}

#[cfg(any(test, feature = "test-row"))]
views! {
    /// The test-only record type (see the catalogue's last row).
    TestOnlyView(TestOnlyAt) for [TestOnly] { pid: i32, tid: i32, value: u64; name }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::*;

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
}
