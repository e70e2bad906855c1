//! Record type numbers and the 8-byte record header.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::{Serialize, Serializer};

pub use super::registry::RecordType;
use super::registry::TABLE;

/// One past the highest number in the table: the length of [`LOOKUP`].
const LOOKUP_LEN: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < TABLE.len() {
        if TABLE[i].number > max {
            max = TABLE[i].number;
        }
        i += 1;
    }
    max as usize + 1
};

/// Direct lookup from a number up to the highest one perf defines to its table row
/// (`u8::MAX` for a number with no row). Derived from the rows: a new row extends it.
const LOOKUP: [u8; LOOKUP_LEN] = {
    assert!(TABLE.len() < u8::MAX as usize, "row indices fit a u8");
    let mut out = [u8::MAX; LOOKUP_LEN];
    let mut i = 0;
    while i < TABLE.len() {
        out[TABLE[i].number as usize] = i as u8;
        i += 1;
    }
    out
};

impl RecordType {
    /// The first number perf uses for its own (user-space synthesized) records.
    pub const USER_TYPE_START: u32 = 64;

    #[inline]
    /// The record type numbered `n` (Unknown for a number no row has).
    pub fn from_u32(n: u32) -> Self {
        match LOOKUP.get(n as usize) {
            Some(&row) if row != u8::MAX => TABLE[row as usize].ty,
            _ => RecordType::Unknown(n),
        }
    }

    /// The table row of a named type.
    pub(super) fn row(known: RecordType) -> usize {
        let row = LOOKUP[known.as_u32() as usize] as usize;
        debug_assert!(TABLE[row].ty == known);
        row
    }

    /// The name `perf report --stats` prints ("MMAP2", "ATTR", "FEATURE"), or
    /// `"UNKNOWN_<n>"`.
    pub fn name(self) -> String {
        match self {
            RecordType::Unknown(n) => format!("UNKNOWN_{n}"),
            known => TABLE[Self::row(known)].name.to_string(),
        }
    }

    /// A kernel record (1..64): it carries the sample_id trailer when the attr has
    /// sample_id_all (SAMPLE carries the fields inline instead).
    pub fn is_kernel(self) -> bool {
        self.as_u32() < Self::USER_TYPE_START
    }

    /// Whether non-SAMPLE kernel records of this type end with the sample_id trailer.
    pub fn has_sample_id_trailer(self) -> bool {
        self.is_kernel() && self != RecordType::Sample
    }

    /// All the types perf defines, in number order.
    pub fn all_known() -> impl Iterator<Item = RecordType> {
        TABLE.iter().map(|r| r.ty)
    }

    /// A record whose content is metadata (HEADER_ATTR, HEADER_FEATURE, tracing data,
    /// build ids, event types): a pipe's way of carrying what a file keeps in its header,
    /// folded into header sections when a file is written.
    pub fn is_metadata(self) -> bool {
        match self {
            RecordType::Unknown(_) => false,
            known => TABLE[Self::row(known)].metadata,
        }
    }
}

impl std::fmt::Display for RecordType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for RecordType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// `struct perf_event_header`.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct RecordHeader {
    #[serde(rename = "type")]
    /// The record type (PERF_RECORD_*).
    pub type_: u32,
    /// PERF_RECORD_MISC_* bits (cpumode and record-specific flags).
    pub misc: u16,
    /// Bytes of the record including this header (payloads after it not counted).
    pub size: u16,
}

impl RecordHeader {
    /// Bytes it takes in a file.
    pub const SIZE: usize = 8;

    /// A header of type `type_`, flags `misc` and `size` bytes.
    pub fn new(type_: RecordType, misc: u16, size: u16) -> Self {
        RecordHeader {
            type_: type_.as_u32(),
            misc,
            size,
        }
    }

    /// The record type the header names.
    pub fn record_type(&self) -> RecordType {
        RecordType::from_u32(self.type_)
    }

    /// `misc & PERF_RECORD_MISC_CPUMODE_MASK`: 1 kernel, 2 user, 3 hypervisor,
    /// 4 guest kernel, 5 guest user.
    pub fn cpumode(&self) -> u16 {
        self.misc & 7
    }
}

/// `misc` bits that change a record's layout or meaning.
pub mod misc {
    /// The cpumode bits of misc.
    pub const CPUMODE_MASK: u16 = 7;
    /// cpumode: the kernel.
    pub const KERNEL: u16 = 1;
    /// cpumode: user space.
    pub const USER: u16 = 2;
    /// MMAP/MMAP2 of a data (non-executable) mapping; COMM of an exec; SWITCH out.
    pub const MMAP_DATA: u16 = 1 << 13;
    /// COMM: the name changed with an exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    /// SWITCH: the task was switched out (else in).
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// MMAP2 carries a build id instead of maj/min/ino/ino_generation.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// SWITCH out while the task was preempted (still runnable).
    pub const SWITCH_OUT_PREEMPT: u16 = 1 << 14;
    /// The sample's ip is exact (precise_ip).
    pub const EXACT_IP: u16 = 1 << 14;
    /// BUILD_ID feature entries: the size byte is valid.
    pub const BUILD_ID_SIZE: u16 = 1 << 15;

    use super::RecordType;

    /// `misc` of a record of type `ty` by perf_event.h's PERF_RECORD_MISC_* names, as
    /// `KERNEL|EXACT_IP`: the cpumode first (`CPUMODE_UNKNOWN` for 0, `CPUMODE_6` and
    /// `CPUMODE_7` for the values it does not name), then the flags the record's type
    /// gives its bits (bits 13 and 14 mean one thing per type), then any other bit as
    /// hex.
    pub fn names(misc: u16, ty: RecordType) -> String {
        const CPUMODES: [&str; 8] = [
            "CPUMODE_UNKNOWN",
            "KERNEL",
            "USER",
            "HYPERVISOR",
            "GUEST_KERNEL",
            "GUEST_USER",
            "CPUMODE_6",
            "CPUMODE_7",
        ];
        let mut out = String::from(CPUMODES[usize::from(misc & CPUMODE_MASK)]);
        let mut rest = misc & !CPUMODE_MASK;
        let switch = matches!(ty, RecordType::Switch | RecordType::SwitchCpuWide);
        let mut flag = |bit: u16, name: &str| {
            if rest & bit != 0 {
                out.push('|');
                out.push_str(name);
                rest &= !bit;
            }
        };
        flag(1 << 12, "PROC_MAP_PARSE_TIMEOUT");
        match ty {
            RecordType::Mmap | RecordType::Mmap2 => flag(1 << 13, "MMAP_DATA"),
            RecordType::Comm => flag(1 << 13, "COMM_EXEC"),
            RecordType::Fork => flag(1 << 13, "FORK_EXEC"),
            _ if switch => flag(1 << 13, "SWITCH_OUT"),
            _ => {}
        }
        match ty {
            RecordType::Sample => flag(1 << 14, "EXACT_IP"),
            RecordType::Mmap2 => flag(1 << 14, "MMAP_BUILD_ID"),
            _ if switch => flag(1 << 14, "SWITCH_OUT_PREEMPT"),
            _ => {}
        }
        flag(1 << 15, "EXT_RESERVED");
        if rest != 0 {
            out.push_str(&format!("|{rest:#x}"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values and names of linux/perf_event.h (6.1), PERF_RECORD_MISC_*.
    #[test]
    fn misc_names_as_perf_event_h() {
        use misc::names;
        assert_eq!(names(0, RecordType::Sample), "CPUMODE_UNKNOWN");
        assert_eq!(names(1 | 1 << 14, RecordType::Sample), "KERNEL|EXACT_IP");
        assert_eq!(names(2, RecordType::Sample), "USER");
        assert_eq!(names(3, RecordType::Sample), "HYPERVISOR");
        assert_eq!(names(4, RecordType::Sample), "GUEST_KERNEL");
        assert_eq!(names(5, RecordType::Sample), "GUEST_USER");
        assert_eq!(names(2 | 1 << 13, RecordType::Mmap2), "USER|MMAP_DATA");
        assert_eq!(names(2 | 1 << 14, RecordType::Mmap2), "USER|MMAP_BUILD_ID");
        assert_eq!(
            names(1 << 13, RecordType::Comm),
            "CPUMODE_UNKNOWN|COMM_EXEC"
        );
        assert_eq!(
            names(3 << 13, RecordType::SwitchCpuWide),
            "CPUMODE_UNKNOWN|SWITCH_OUT|SWITCH_OUT_PREEMPT"
        );
        assert_eq!(
            names(1 << 12 | 2, RecordType::Mmap),
            "USER|PROC_MAP_PARSE_TIMEOUT"
        );
        assert_eq!(
            names(1 << 15 | 1 << 4, RecordType::Exit),
            "CPUMODE_UNKNOWN|EXT_RESERVED|0x10"
        );
        // Bit 14 of an EXIT names nothing there.
        assert_eq!(names(1 << 14, RecordType::Exit), "CPUMODE_UNKNOWN|0x4000");
    }

    #[test]
    fn numbers_and_names_match_perf() {
        assert_eq!(RecordType::from_u32(10), RecordType::Mmap2);
        assert_eq!(RecordType::Mmap2.as_u32(), 10);
        assert_eq!(RecordType::from_u32(64).name(), "ATTR");
        assert_eq!(RecordType::from_u32(80).name(), "FEATURE");
        assert_eq!(RecordType::from_u32(83), RecordType::Compressed2);
        assert_eq!(RecordType::from_u32(86), RecordType::SchedstatDomain);
        assert_eq!(RecordType::from_u32(23), RecordType::Unknown(23));
        assert_eq!(RecordType::from_u32(32768).as_u32(), 32768);
        for t in RecordType::all_known() {
            assert_eq!(RecordType::from_u32(t.as_u32()), t);
        }
        assert!(RecordType::Mmap.has_sample_id_trailer());
        assert!(!RecordType::Sample.has_sample_id_trailer());
        assert!(!RecordType::FinishedRound.has_sample_id_trailer());
    }
}
