//! `struct perf_event_attr` of every size, and `struct perf_file_attr`.
//!
//! The attr grew over the years (VER0 64 bytes to VER8 136 bytes); its length in a file is
//! given by its container (the header's attr_size, a HEADER_ATTR record, EVENT_DESC), not
//! always by its own `size` field. Fields past that length are absent (read as zero and
//! not written back); bytes past the fields known here are kept in `tail`.

// The attr's fields, sizes and flags mirror struct perf_event_attr and the PERF_*
// enums of include/uapi/linux/perf_event.h by name and order, and are documented there.

use binrw::{binrw, BinRead, BinResult, BinWrite, Endian};
use bitflags::bitflags;
use serde::Serialize;

use crate::header::FileSection;

/// perf_event_attr sizes by ABI version.
pub const ATTR_SIZE_VER0: usize = 64;
/// Attr size with config2 (72 bytes).
pub const ATTR_SIZE_VER1: usize = 72;
/// Attr size with branch_sample_type (80).
pub const ATTR_SIZE_VER2: usize = 80;
/// Attr size with sample_regs_user and sample_stack_user (96).
pub const ATTR_SIZE_VER3: usize = 96;
/// Attr size with sample_regs_intr (104).
pub const ATTR_SIZE_VER4: usize = 104;
/// Attr size with aux_watermark and sample_max_stack (112).
pub const ATTR_SIZE_VER5: usize = 112;
/// Attr size with aux_sample_size (120).
pub const ATTR_SIZE_VER6: usize = 120;
/// Attr size with sig_data (128).
pub const ATTR_SIZE_VER7: usize = 128;
/// Attr size with config3 (136).
pub const ATTR_SIZE_VER8: usize = 136;
/// The largest attr perf 6.1 reads.
pub const ATTR_SIZE_PERF_6_1: usize = ATTR_SIZE_VER7;

/// End offsets of the fields after VER0, in order: a field is present when the attr's
/// length reaches its end.
const FIELD_ENDS: [usize; 13] = [72, 80, 88, 92, 96, 104, 108, 110, 112, 116, 120, 128, 136];

/// How many bytes of an attr of `len` bytes the named fields cover.
fn known_len(len: usize) -> usize {
    FIELD_ENDS
        .iter()
        .copied()
        .filter(|&end| end <= len)
        .max()
        .unwrap_or(ATTR_SIZE_VER0)
}

bitflags! {
    /// `PERF_SAMPLE_*`: which fields a SAMPLE record carries.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    pub struct SampleType: u64 {
        /// Instruction pointer.
        const IP = 1 << 0;
        /// Process and thread id.
        const TID = 1 << 1;
        /// Time stamp.
        const TIME = 1 << 2;
        /// Data address.
        const ADDR = 1 << 3;
        /// Counter values (read_format).
        const READ = 1 << 4;
        /// Call chain.
        const CALLCHAIN = 1 << 5;
        /// Event id.
        const ID = 1 << 6;
        /// CPU number.
        const CPU = 1 << 7;
        /// Sample period.
        const PERIOD = 1 << 8;
        /// Group leader's id.
        const STREAM_ID = 1 << 9;
        /// Raw (tracepoint) data.
        const RAW = 1 << 10;
        /// Last branch records.
        const BRANCH_STACK = 1 << 11;
        /// User registers.
        const REGS_USER = 1 << 12;
        /// A copy of the user stack.
        const STACK_USER = 1 << 13;
        /// Cost of the sampled access (one u64).
        const WEIGHT = 1 << 14;
        /// Memory source of the access.
        const DATA_SRC = 1 << 15;
        /// Event id at a fixed place, first.
        const IDENTIFIER = 1 << 16;
        /// Transaction abort flags.
        const TRANSACTION = 1 << 17;
        /// Registers at the interrupt.
        const REGS_INTR = 1 << 18;
        /// Physical data address.
        const PHYS_ADDR = 1 << 19;
        /// AUX area snapshot.
        const AUX = 1 << 20;
        /// Cgroup id.
        const CGROUP = 1 << 21;
        /// Page size of the data address.
        const DATA_PAGE_SIZE = 1 << 22;
        /// Page size of the ip.
        const CODE_PAGE_SIZE = 1 << 23;
        /// Weight as three fields (var1, var2, var3).
        const WEIGHT_STRUCT = 1 << 24;
    }
}

bitflags! {
    /// `PERF_FORMAT_*`: the layout of READ values.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    pub struct ReadFormat: u64 {
        /// Time enabled.
        const TOTAL_TIME_ENABLED = 1 << 0;
        /// Time running.
        const TOTAL_TIME_RUNNING = 1 << 1;
        /// Event id of each value.
        const ID = 1 << 2;
        /// All the group's counters.
        const GROUP = 1 << 3;
        /// Lost samples of each counter.
        const LOST = 1 << 4;
    }
}

bitflags! {
    /// `PERF_SAMPLE_BRANCH_*`: what a branch stack records, and its layout.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    pub struct BranchSampleType: u64 {
        /// Branches in user space.
        const USER = 1 << 0;
        /// Branches in the kernel.
        const KERNEL = 1 << 1;
        /// Branches in the hypervisor.
        const HV = 1 << 2;
        /// Any branch.
        const ANY = 1 << 3;
        /// Any call.
        const ANY_CALL = 1 << 4;
        /// Any return.
        const ANY_RETURN = 1 << 5;
        /// Indirect calls.
        const IND_CALL = 1 << 6;
        /// Transaction aborts.
        const ABORT_TX = 1 << 7;
        /// Branches in a transaction.
        const IN_TX = 1 << 8;
        /// Branches outside transactions.
        const NO_TX = 1 << 9;
        /// Conditional branches.
        const COND = 1 << 10;
        /// The call stack.
        const CALL_STACK = 1 << 11;
        /// Indirect jumps.
        const IND_JUMP = 1 << 12;
        /// Direct calls.
        const CALL = 1 << 13;
        /// No flags in the entries.
        const NO_FLAGS = 1 << 14;
        /// No cycle counts in the entries.
        const NO_CYCLES = 1 << 15;
        /// Branch types saved.
        const TYPE_SAVE = 1 << 16;
        /// A u64 hw_idx follows the branch count in samples.
        const HW_INDEX = 1 << 17;
        /// Privilege levels saved.
        const PRIV_SAVE = 1 << 18;
        /// nr u64 counters follow the branch entries in samples.
        const COUNTERS = 1 << 19;
    }
}

bitflags! {
    /// The bitfield word after read_format (`disabled:1, inherit:1, ...`).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
    pub struct AttrFlags: u64 {
        /// Off by default.
        const DISABLED = 1 << 0;
        /// Children inherit it.
        const INHERIT = 1 << 1;
        /// Must always be on the PMU.
        const PINNED = 1 << 2;
        /// The only group on the PMU.
        const EXCLUSIVE = 1 << 3;
        /// Does not count user space.
        const EXCLUDE_USER = 1 << 4;
        /// Does not count the kernel.
        const EXCLUDE_KERNEL = 1 << 5;
        /// Does not count the hypervisor.
        const EXCLUDE_HV = 1 << 6;
        /// Does not count when idle.
        const EXCLUDE_IDLE = 1 << 7;
        /// Records MMAP.
        const MMAP = 1 << 8;
        /// Records COMM.
        const COMM = 1 << 9;
        /// sample_period is a frequency.
        const FREQ = 1 << 10;
        /// Per-task counts.
        const INHERIT_STAT = 1 << 11;
        /// Enabled at the next exec.
        const ENABLE_ON_EXEC = 1 << 12;
        /// Records FORK and EXIT.
        const TASK = 1 << 13;
        /// wakeup_events is a byte watermark.
        const WATERMARK = 1 << 14;
        /// Two bits: use [`PerfEventAttr::precise_ip`].
        const PRECISE_IP_LOW = 1 << 15;
        /// High bit of precise_ip.
        const PRECISE_IP_HIGH = 1 << 16;
        /// Records data mmaps too.
        const MMAP_DATA = 1 << 17;
        /// Every record carries a sample_id.
        const SAMPLE_ID_ALL = 1 << 18;
        /// Does not count the host.
        const EXCLUDE_HOST = 1 << 19;
        /// Does not count guests.
        const EXCLUDE_GUEST = 1 << 20;
        /// No kernel call chains.
        const EXCLUDE_CALLCHAIN_KERNEL = 1 << 21;
        /// No user call chains.
        const EXCLUDE_CALLCHAIN_USER = 1 << 22;
        /// Records MMAP2 instead of MMAP.
        const MMAP2 = 1 << 23;
        /// Flags COMM records of an exec.
        const COMM_EXEC = 1 << 24;
        /// Times come from clockid.
        const USE_CLOCKID = 1 << 25;
        /// Records SWITCH.
        const CONTEXT_SWITCH = 1 << 26;
        /// The ring buffer is written backward.
        const WRITE_BACKWARD = 1 << 27;
        /// Records NAMESPACES.
        const NAMESPACES = 1 << 28;
        /// Records KSYMBOL.
        const KSYMBOL = 1 << 29;
        /// Records BPF_EVENT.
        const BPF_EVENT = 1 << 30;
        /// Output goes to the AUX area.
        const AUX_OUTPUT = 1 << 31;
        /// Records CGROUP.
        const CGROUP = 1 << 32;
        /// Records TEXT_POKE.
        const TEXT_POKE = 1 << 33;
        /// MMAP2 records carry build ids.
        const BUILD_ID = 1 << 34;
        /// Only threads inherit it.
        const INHERIT_THREAD = 1 << 35;
        /// Removed at exec.
        const REMOVE_ON_EXEC = 1 << 36;
        /// Sends SIGTRAP on overflow.
        const SIGTRAP = 1 << 37;
    }
}

/// The attr flag word. A big-endian producer's compiler lays bitfields out from the most
/// significant bit, so its word is the 64-bit bit-reversal of the little-endian one
/// (perf's `swap_bitfield`: byte-swap, then reverse the bits of each byte).
#[binrw::parser(reader, endian)]
fn read_flags() -> BinResult<AttrFlags> {
    let raw = u64::read_options(reader, endian, ())?;
    Ok(AttrFlags::from_bits_retain(match endian {
        Endian::Little => raw,
        Endian::Big => raw.reverse_bits(),
    }))
}

#[binrw::writer(writer, endian)]
fn write_flags(flags: &AttrFlags) -> BinResult<()> {
    let raw = match endian {
        Endian::Little => flags.bits(),
        Endian::Big => flags.bits().reverse_bits(),
    };
    raw.write_options(writer, endian, ())
}

/// `struct perf_event_attr`, with `len` the number of bytes it occupies in its container.
#[binrw]
#[br(import(len: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PerfEventAttr {
    /// Bytes this attr occupies where it was read (and is written): normally == `size`.
    #[br(calc = len)]
    #[bw(ignore)]
    #[serde(skip)]
    pub encoded_len: usize,
    /// PERF_TYPE_* (0 hardware, 1 software, 2 tracepoint, 3 hw cache, 4 raw, 5 breakpoint,
    /// or a dynamic PMU type).
    #[serde(rename = "type")]
    pub type_: u32,
    /// The attr's own size field (may be 0 in very old files: VER0).
    pub size: u32,
    /// Event config: which event of its type (perf_event_attr.config).
    pub config: u64,
    /// sample_period, or sample_freq when [`AttrFlags::FREQ`] is set.
    pub sample_period: u64,
    #[br(map = SampleType::from_bits_retain)]
    #[bw(map = |x| x.bits())]
    /// Fields each sample carries (PERF_SAMPLE_*).
    pub sample_type: SampleType,
    #[br(map = ReadFormat::from_bits_retain)]
    #[bw(map = |x| x.bits())]
    /// What a read of the counter gives (PERF_FORMAT_*).
    pub read_format: ReadFormat,
    #[br(parse_with = read_flags)]
    #[bw(write_with = write_flags)]
    /// The attr's one-bit flags (disabled, inherit, ..., sample_id_all, ...).
    pub flags: AttrFlags,
    /// wakeup_events, or wakeup_watermark when [`AttrFlags::WATERMARK`] is set.
    pub wakeup_events: u32,
    /// Breakpoint type (HW_BREAKPOINT_*).
    pub bp_type: u32,
    /// config1 / bp_addr / kprobe_func / uprobe_path.
    pub config1: u64,
    /// config2 / bp_len / kprobe_addr / probe_offset (VER1).
    #[br(if(len >= 72, 0))]
    #[bw(if(*encoded_len >= 72))]
    pub config2: u64,
    #[br(if(len >= 80, BranchSampleType::empty()), map = BranchSampleType::from_bits_retain)]
    #[bw(if(*encoded_len >= 80), map = |x| x.bits())]
    /// Branches a branch stack records (PERF_SAMPLE_BRANCH_*).
    pub branch_sample_type: BranchSampleType,
    #[br(if(len >= 88, 0))]
    #[bw(if(*encoded_len >= 88))]
    /// User registers each sample records (a bit per register).
    pub sample_regs_user: u64,
    #[br(if(len >= 92, 0))]
    #[bw(if(*encoded_len >= 92))]
    /// Bytes of user stack each sample copies.
    pub sample_stack_user: u32,
    #[br(if(len >= 96, 0))]
    #[bw(if(*encoded_len >= 96))]
    /// Clock of sample times when use_clockid is set.
    pub clockid: i32,
    #[br(if(len >= 104, 0))]
    #[bw(if(*encoded_len >= 104))]
    /// Registers at the interrupt each sample records.
    pub sample_regs_intr: u64,
    #[br(if(len >= 108, 0))]
    #[bw(if(*encoded_len >= 108))]
    /// AUX buffer bytes before a wakeup.
    pub aux_watermark: u32,
    #[br(if(len >= 110, 0))]
    #[bw(if(*encoded_len >= 110))]
    /// Deepest callchain recorded.
    pub sample_max_stack: u16,
    #[br(if(len >= 112, 0))]
    #[bw(if(*encoded_len >= 112))]
    /// Reserved, kept as read.
    pub reserved_2: u16,
    #[br(if(len >= 116, 0))]
    #[bw(if(*encoded_len >= 116))]
    /// Bytes of AUX data each sample takes (PERF_SAMPLE_AUX).
    pub aux_sample_size: u32,
    /// `__reserved_3` before perf 6.13, then the aux_action bitfield.
    #[br(if(len >= 120, 0))]
    #[bw(if(*encoded_len >= 120))]
    pub aux_action: u32,
    #[br(if(len >= 128, 0))]
    #[bw(if(*encoded_len >= 128))]
    /// Data the kernel passes with SIGTRAP (sigtrap events).
    pub sig_data: u64,
    #[br(if(len >= 136, 0))]
    #[bw(if(*encoded_len >= 136))]
    /// Further event config (config3, VER8).
    pub config3: u64,
    /// Bytes past the fields known here (attrs from a newer kernel), kept as they were.
    #[br(parse_with = crate::bounded::bytes, args(len.saturating_sub(known_len(len))))]
    #[serde(serialize_with = "crate::mark::bytes")]
    pub tail: Vec<u8>,
}

impl Default for PerfEventAttr {
    /// An all-zero attr of perf 6.1's size (128 bytes).
    fn default() -> Self {
        PerfEventAttr {
            encoded_len: ATTR_SIZE_PERF_6_1,
            type_: 0,
            size: ATTR_SIZE_PERF_6_1 as u32,
            config: 0,
            sample_period: 0,
            sample_type: SampleType::empty(),
            read_format: ReadFormat::empty(),
            flags: AttrFlags::empty(),
            wakeup_events: 0,
            bp_type: 0,
            config1: 0,
            config2: 0,
            branch_sample_type: BranchSampleType::empty(),
            sample_regs_user: 0,
            sample_stack_user: 0,
            clockid: 0,
            sample_regs_intr: 0,
            aux_watermark: 0,
            sample_max_stack: 0,
            reserved_2: 0,
            aux_sample_size: 0,
            aux_action: 0,
            sig_data: 0,
            config3: 0,
            tail: Vec::new(),
        }
    }
}

impl PerfEventAttr {
    /// The 2-bit precise_ip field.
    pub fn precise_ip(&self) -> u8 {
        ((self.flags.bits() >> 15) & 3) as u8
    }

    /// Whether non-SAMPLE records carry the sample_id trailer.
    pub fn sample_id_all(&self) -> bool {
        self.flags.contains(AttrFlags::SAMPLE_ID_ALL)
    }

    /// Whether `sample_period` holds a frequency.
    pub fn freq(&self) -> bool {
        self.flags.contains(AttrFlags::FREQ)
    }

    /// Decode an attr of `len` bytes from `bytes` (which must hold at least `len`).
    pub fn parse(bytes: &[u8], len: usize, endian: Endian) -> BinResult<Self> {
        let mut cursor = std::io::Cursor::new(bytes);
        Self::read_options(&mut cursor, endian, (len,))
    }

    /// Change the number of bytes this attr is written as, keeping fields that still fit
    /// (used to cut a newer attr down to an older size, or to grow one).
    pub fn set_encoded_len(&mut self, len: usize) {
        self.encoded_len = len;
        self.tail.resize(len.saturating_sub(known_len(len)), 0);
    }

    /// Whether every byte past `len` is zero, i.e. the attr can be cut to `len` bytes
    /// without losing information (false when the attr does not encode at all).
    pub fn is_zero_past(&self, len: usize, endian: Endian) -> bool {
        crate::codec::encode(self, endian, ())
            .is_ok_and(|bytes| bytes.iter().skip(len).all(|&b| b == 0))
    }
}

/// `struct perf_file_attr`: an attr followed by the section that holds its ids.
#[binrw]
#[br(import(attr_len: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileAttr {
    #[br(args(attr_len))]
    /// The event attribute.
    pub attr: PerfEventAttr,
    /// Where the attr's ids are in the file (offset and size).
    pub ids: FileSection,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::encode;

    fn attr_bytes(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + 3) as u8).collect()
    }

    #[test]
    fn every_size_round_trips_both_orders() {
        for len in [64, 72, 80, 88, 90, 96, 104, 112, 120, 128, 136, 144, 150] {
            for endian in [Endian::Little, Endian::Big] {
                let bytes = attr_bytes(len);
                let attr = PerfEventAttr::parse(&bytes, len, endian).unwrap();
                assert_eq!(attr.encoded_len, len);
                assert_eq!(
                    encode(&attr, endian, ()).unwrap(),
                    bytes,
                    "len {len} {endian:?}"
                );
            }
        }
    }

    #[test]
    fn fields_land_where_perf_event_h_puts_them() {
        let mut bytes = vec![0u8; 136];
        bytes[0..4].copy_from_slice(&2u32.to_le_bytes()); // type
        bytes[4..8].copy_from_slice(&136u32.to_le_bytes()); // size
        bytes[24..32].copy_from_slice(&0x107u64.to_le_bytes()); // sample_type
        bytes[40..48].copy_from_slice(&((1u64 << 18) | (3 << 15)).to_le_bytes());
        bytes[80..88].copy_from_slice(&0xff0fffu64.to_le_bytes()); // sample_regs_user
        bytes[88..92].copy_from_slice(&8192u32.to_le_bytes()); // sample_stack_user
        bytes[128..136].copy_from_slice(&0x55u64.to_le_bytes()); // config3
        let a = PerfEventAttr::parse(&bytes, 136, Endian::Little).unwrap();
        assert_eq!(a.type_, 2);
        assert_eq!(
            a.sample_type,
            SampleType::IP | SampleType::TID | SampleType::TIME | SampleType::PERIOD
        );
        assert!(a.sample_id_all());
        assert_eq!(a.precise_ip(), 3);
        assert_eq!(a.sample_regs_user, 0xff0fff);
        assert_eq!(a.sample_stack_user, 8192);
        assert_eq!(a.config3, 0x55);
        assert!(a.tail.is_empty());
    }

    #[test]
    fn big_endian_flags_are_bit_reversed() {
        // disabled (bit 0) of a big-endian producer is the top bit of the first byte.
        let mut bytes = vec![0u8; 64];
        bytes[40] = 0x80;
        let a = PerfEventAttr::parse(&bytes, 64, Endian::Big).unwrap();
        assert_eq!(a.flags, AttrFlags::DISABLED);
        assert_eq!(encode(&a, Endian::Big, ()).unwrap(), bytes);
    }

    #[test]
    fn cutting_to_128_keeps_known_fields() {
        let bytes = attr_bytes(136);
        let mut a = PerfEventAttr::parse(&bytes, 136, Endian::Little).unwrap();
        a.set_encoded_len(128);
        let out = encode(&a, Endian::Little, ()).unwrap();
        assert_eq!(out, bytes[..128]);
    }
}
