//! BUILD_ID: the build ids of the binaries the samples hit, as a run of
//! `struct perf_record_header_build_id` entries. [`BuildIdEntry`] is also the body of a
//! HEADER_BUILD_ID record (67): the same bytes, one model.
//!
//! ```text
//! { perf_event_header header; i32 pid; u8 build_id[20]; u8 size; u8 reserved[3];
//!   char filename[header.size - 36]; }
//! ```
//!
//! `header.size` covers the whole entry, filename padding included (perf pads the name to
//! 64, simpleperf and older perf differently), so the filename bytes are kept as read.
//! Files from before perf 2.6.35 have no `pid` (the old ABI, see [`BuildIdList::old_abi`]).

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use std::io::SeekFrom;

use binrw::{binrw, BinResult};
use serde::Serialize;

use crate::bounded;
use crate::record::{misc, PaddedString, RecordHeader};

/// Bytes of an entry before the filename: header, pid, build id, size, reserved.
pub const BUILD_ID_ENTRY_FIXED: usize = 36;
/// The same for the old ABI, which has no pid.
pub const BUILD_ID_ENTRY_FIXED_OLD_ABI: usize = 32;

/// perf's `HOST_KERNEL_ID` and `DEFAULT_GUEST_KERNEL_ID`: the pid perf assumes for an
/// old-ABI entry (host, or a guest cpumode).
const HOST_KERNEL_ID: i32 = -1;
const DEFAULT_GUEST_KERNEL_ID: i32 = 0;
const MISC_GUEST_KERNEL: u16 = 4;
const MISC_GUEST_USER: u16 = 5;

/// What the first filename reads as when an old-ABI section is read with the new layout:
/// "[kernel.kallsyms]" (always the first entry) with the 4 bytes the pid takes chopped off.
/// perf's `perf_header__read_build_ids` checks exactly this.
const OLD_ABI_MARK: &[u8] = b"nel.kallsyms]";

fn fixed_len(old_abi: bool) -> usize {
    if old_abi {
        BUILD_ID_ENTRY_FIXED_OLD_ABI
    } else {
        BUILD_ID_ENTRY_FIXED
    }
}

/// The pid perf fills in for an entry that has none (old ABI).
fn implied_pid(misc: u16) -> i32 {
    if misc == MISC_GUEST_KERNEL || misc == MISC_GUEST_USER {
        DEFAULT_GUEST_KERNEL_ID
    } else {
        HOST_KERNEL_ID
    }
}

/// The header written for an entry: its size always follows the filename, never stale.
fn entry_header(h: &RecordHeader, old_abi: bool, filename_len: usize) -> BinResult<RecordHeader> {
    let size =
        u16::try_from(fixed_len(old_abi) + filename_len).map_err(|_| binrw::Error::AssertFail {
            pos: 0,
            message: format!("build id entry of {filename_len} filename bytes exceeds 65535"),
        })?;
    Ok(RecordHeader { size, ..*h })
}

/// The header of an entry: read from the bytes in a feature section, the record's own
/// header for the body of a HEADER_BUILD_ID record.
#[binrw::parser(reader, endian)]
fn read_entry_header(in_record: Option<RecordHeader>) -> BinResult<RecordHeader> {
    use binrw::BinRead;
    match in_record {
        Some(header) => Ok(header),
        None => RecordHeader::read_options(reader, endian, ()),
    }
}

/// The filename: `len` bytes, kept as read.
#[binrw::parser(reader, endian)]
fn read_filename(len: usize) -> BinResult<PaddedString> {
    Ok(PaddedString {
        bytes: bounded::bytes(reader, endian, (len,))?,
    })
}

/// One build id entry of the BUILD_ID feature, and the body of a HEADER_BUILD_ID record.
///
/// Read arguments: whether the section is in the old ABI, and the record's header when
/// the entry is a record's body (the header is then not in the bytes). Write arguments:
/// the old ABI, and whether to write the header (a feature entry) or leave it to the
/// record (a record body: the default). In a record the record's header is the one
/// written; [`BuildIdEntry::header`] is a copy of it as read.
#[binrw]
#[br(import(old_abi: bool, in_record: Option<RecordHeader>))]
#[bw(import(old_abi: bool, with_header: bool))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BuildIdEntry {
    /// type (0 from perf, which leaves it unset in the feature section; 67,
    /// HEADER_BUILD_ID, from simpleperf), misc (cpumode and [`misc::BUILD_ID_SIZE`]) and
    /// size. The size is recomputed from the filename on write.
    #[br(parse_with = read_entry_header, args(in_record))]
    #[br(assert(
        header.size as usize >= fixed_len(old_abi),
        "build id entry size {} is below the {} bytes of its fixed part",
        header.size,
        fixed_len(old_abi)
    ))]
    #[bw(if(with_header))]
    #[bw(try_map = |h: &RecordHeader| entry_header(h, old_abi, filename.bytes.len()))]
    pub header: RecordHeader,
    /// The process the binary was mapped in (-1 for the host kernel). Old-ABI entries have
    /// none: this holds the value perf assumes and is not written.
    #[br(if(!old_abi, implied_pid(header.misc)))]
    #[bw(if(!old_abi))]
    pub pid: i32,
    /// The build id, zero-padded to 20 bytes; see [`BuildIdEntry::build_id`].
    #[serde(rename = "build_id_bytes", serialize_with = "crate::mark::bytes")]
    pub build_id_padded: [u8; 20],
    /// Bytes of `build_id_padded` that are the id, valid when misc has BUILD_ID_SIZE.
    pub size: u8,
    #[serde(skip)]
    /// Reserved bytes after the build id, kept as read.
    pub reserved: [u8; 3],
    /// The filename, NUL-terminated and padded: every byte up to `header.size`.
    #[br(parse_with = read_filename, args(header.size as usize - fixed_len(old_abi)))]
    pub filename: PaddedString,
}

impl BuildIdEntry {
    /// An entry as perf 6.1 writes it: type 0, `misc` the cpumode plus BUILD_ID_SIZE, the
    /// filename NUL-padded to a multiple of 64.
    pub fn new(cpumode: u16, pid: i32, build_id: &[u8], filename: &str) -> Self {
        let mut build_id_padded = [0u8; 20];
        let n = build_id.len().min(20);
        build_id_padded[..n].copy_from_slice(&build_id[..n]);
        let mut name = filename.as_bytes().to_vec();
        name.resize((filename.len() + 1).div_ceil(64) * 64, 0);
        BuildIdEntry {
            header: RecordHeader {
                type_: 0,
                misc: misc::BUILD_ID_SIZE | (cpumode & misc::CPUMODE_MASK),
                size: (BUILD_ID_ENTRY_FIXED + name.len()) as u16,
            },
            pid,
            build_id_padded,
            size: n as u8,
            reserved: [0; 3],
            filename: PaddedString { bytes: name },
        }
    }

    /// The build id: `size` bytes when misc has BUILD_ID_SIZE, else all 20 (a SHA-1, as
    /// perf assumed before build ids of other sizes existed).
    pub fn build_id(&self) -> &[u8] {
        self.build_id_bytes(self.header.misc)
    }

    /// The build id as a record whose header has `misc` states it (a remapped record's
    /// misc may have gained BUILD_ID_SIZE): `size` bytes when misc has BUILD_ID_SIZE,
    /// else all 20.
    pub fn build_id_bytes(&self, misc: u16) -> &[u8] {
        if misc & misc::BUILD_ID_SIZE != 0 {
            &self.build_id_padded[..(self.size as usize).min(20)]
        } else {
            &self.build_id_padded
        }
    }

    /// `misc & 7`: 1 kernel, 2 user, 3 hypervisor, 4 guest kernel, 5 guest user.
    pub fn cpumode(&self) -> u16 {
        self.header.cpumode()
    }

    /// The filename before its first NUL.
    pub fn filename_str(&self) -> String {
        self.filename.as_str_lossy()
    }
}

/// The JSON form of a HEADER_BUILD_ID record's body (`perfdata dump --json`): perf's
/// field names for the record (`pid`, `build_id`, `size`, `reserved1`, `reserved2`,
/// `filename`), the header being the record's own. `reserved2` is read little-endian:
/// the entry does not keep its byte order, and perf writes it zero.
pub(crate) fn serialize_as_record<S: serde::Serializer>(
    e: &BuildIdEntry,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("HeaderBuildId", 6)?;
    st.serialize_field("pid", &e.pid)?;
    st.serialize_field("build_id", &Bytes(&e.build_id_padded))?;
    st.serialize_field("size", &e.size)?;
    st.serialize_field("reserved1", &e.reserved[0])?;
    let reserved2 = u16::from_le_bytes([e.reserved[1], e.reserved[2]]);
    st.serialize_field("reserved2", &reserved2)?;
    st.serialize_field("filename", &e.filename)?;
    st.end()
}

/// Bytes serialised as bytes ([`crate::mark::bytes`]).
struct Bytes<'a>(&'a [u8]);

impl serde::Serialize for Bytes<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// Whether a BUILD_ID section is in the old ABI: perf's test on the first filename.
#[binrw::parser(reader)]
fn detect_old_abi() -> BinResult<bool> {
    let pos = reader.stream_position()?;
    let mut probe = [0u8; BUILD_ID_ENTRY_FIXED + OLD_ABI_MARK.len()];
    let old = match reader.read_exact(&mut probe) {
        Ok(()) => &probe[BUILD_ID_ENTRY_FIXED..] == OLD_ABI_MARK,
        Err(_) => false,
    };
    reader.seek(SeekFrom::Start(pos))?;
    Ok(old)
}

/// The BUILD_ID section: entries back to back up to its end.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BuildIdList {
    /// Entries without pid, as perf before 2.6.35 wrote them. perf recognises them by the
    /// first filename reading "nel.kallsyms]" in the new layout; kept so that writing gives
    /// the same layout back.
    #[br(parse_with = detect_old_abi)]
    #[bw(ignore)]
    pub old_abi: bool,
    #[br(parse_with = bounded::while_fits, args(1, (old_abi, None)))]
    #[bw(args(*old_abi, true))]
    /// One entry per DSO with samples.
    pub entries: Vec<BuildIdEntry>,
}

impl BuildIdList {
    /// A BUILD_ID feature of these entries.
    pub fn new(entries: Vec<BuildIdEntry>) -> Self {
        BuildIdList {
            old_abi: false,
            entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    /// An entry of type 0 (perf) or 67 (simpleperf, chosen by a misc without BUILD_ID_SIZE).
    fn entry(b: &mut Bytes, misc: u16, pid: i32, id: &[u8], size: u8, name: &str, pad: usize) {
        let type_ = if misc & misc::BUILD_ID_SIZE != 0 {
            0
        } else {
            67
        };
        b.u32(type_)
            .u16(misc)
            .u16((36 + pad) as u16)
            .u32(pid as u32);
        let mut idb = id.to_vec();
        idb.resize(20, 0);
        b.raw(&idb).u8(size).raw(&[0, 0, 0]);
        let mut n = name.as_bytes().to_vec();
        n.resize(pad, 0);
        b.raw(&n);
    }

    #[test]
    fn perf_6_1_entries_with_size_byte() {
        let mut b = Bytes::le();
        let id: Vec<u8> = (1..=20).collect();
        entry(&mut b, 0x8001, -1, &id, 20, "[kernel.kallsyms]", 64);
        entry(
            &mut b,
            0x8002,
            1234,
            &[0xab; 8],
            8,
            "/usr/lib/libc.so.6",
            64,
        );
        let bytes = b.take();
        let list: BuildIdList = round_trip(&bytes, Endian::Little, ());
        assert!(!list.old_abi);
        assert_eq!(list.entries.len(), 2);
        let k = &list.entries[0];
        assert_eq!((k.header.type_, k.header.size), (0, 100));
        assert_eq!((k.pid, k.cpumode()), (-1, 1));
        assert_eq!(k.build_id(), &id[..]);
        assert_eq!(k.filename_str(), "[kernel.kallsyms]");
        let u = &list.entries[1];
        assert_eq!((u.pid, u.cpumode()), (1234, 2));
        assert_eq!(u.build_id(), &[0xab; 8]);
        assert_eq!(u.filename_str(), "/usr/lib/libc.so.6");
        same_in_big_endian(&list, ());
    }

    #[test]
    fn without_size_flag_the_id_is_20_bytes() {
        // simpleperf: misc 2 without BUILD_ID_SIZE, the size byte 0, filename padded to 8.
        let mut b = Bytes::le();
        entry(&mut b, 2, -1, &[7; 20], 0, "/system/lib64/libm.so", 24);
        let bytes = b.take();
        let list: BuildIdList = round_trip(&bytes, Endian::Little, ());
        assert_eq!(list.entries[0].header.type_, 67);
        assert_eq!(list.entries[0].build_id(), &[7; 20]);
        assert_eq!(list.entries[0].header.size, 60);
    }

    #[test]
    fn old_abi_without_pid_is_detected_and_kept() {
        let mut b = Bytes::le();
        for (misc, name) in [(1u16, "[kernel.kallsyms]"), (4, "[guest.kernel]")] {
            b.u32(67).u16(misc).u16(32 + 24);
            b.raw(&[0x11; 20]).raw(&[0; 4]);
            let mut n = name.as_bytes().to_vec();
            n.resize(24, 0);
            b.raw(&n);
        }
        let bytes = b.take();
        let list: BuildIdList = round_trip(&bytes, Endian::Little, ());
        assert!(list.old_abi);
        assert_eq!(list.entries[0].filename_str(), "[kernel.kallsyms]");
        assert_eq!(list.entries[0].pid, HOST_KERNEL_ID);
        assert_eq!(list.entries[1].pid, DEFAULT_GUEST_KERNEL_ID);
        assert_eq!(list.entries[1].build_id(), &[0x11; 20]);
        same_in_big_endian(&list, ());
    }

    #[test]
    fn size_follows_the_filename_on_write() {
        let mut e = BuildIdEntry::new(2, 42, &[1, 2, 3], "/bin/true");
        e.header.size = 7; // stale: ignored on write
        let list = BuildIdList::new(vec![e]);
        let bytes = crate::codec::encode(&list, Endian::Little, ()).unwrap();
        assert_eq!(bytes.len(), 100);
        let back: BuildIdList = round_trip(&bytes, Endian::Little, ());
        assert_eq!(back.entries[0].header.size, 100);
        assert_eq!(back.entries[0].build_id(), &[1, 2, 3]);
        assert_eq!(back.entries[0].header.misc, 0x8002);
        assert_eq!(back.entries[0].header.type_, 0);
    }

    #[test]
    fn a_header_build_id_record_is_a_feature_entry() {
        use crate::record::{DecodeContext, EventIndex, Record, RecordBody};
        // simpleperf's feature entries are HEADER_BUILD_ID records, type 67 and all.
        let mut b = Bytes::le();
        entry(
            &mut b,
            misc::USER,
            4242,
            &[0x5a; 20],
            0,
            "/usr/bin/true",
            28,
        );
        let bytes = b.take();
        let list: BuildIdList = round_trip(&bytes, Endian::Little, ());
        let events = EventIndex::new();
        let ctx = DecodeContext {
            endian: Endian::Little,
            events: &events,
        };
        let record = Record::decode(&bytes, &[], 0, &ctx).unwrap();
        let RecordBody::HeaderBuildId(body) = &record.body else {
            panic!("{:?}", record.body)
        };
        assert_eq!(body, &list.entries[0]);
        assert_eq!(
            (body.pid, body.filename_str()),
            (4242, "/usr/bin/true".into())
        );
        assert_eq!(record.encode(Endian::Little).unwrap(), bytes);
        // Dumped as a record, with perf's names for the record's fields.
        let json = serde_json::to_value(&record.body).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "pid": 4242, "build_id": vec![0x5a; 20], "size": 0, "reserved1": 0,
                "reserved2": 0, "filename": "/usr/bin/true",
            })
        );
    }

    #[test]
    fn entry_smaller_than_its_fixed_part_is_an_error() {
        let mut b = Bytes::le();
        b.u32(67).u16(2).u16(20).raw(&[0; 32]);
        let r = crate::codec::decode::<BuildIdList>(&b.v, Endian::Little, (), 0, "t");
        assert!(r.is_err());
    }
}
