//! PERF_RECORD_SAMPLE, decoded field by field from the attr's sample_type, and the
//! sample_id trailer that other kernel records carry with sample_id_all.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use super::format::EventFormat;
use crate::attr::{BranchSampleType, ReadFormat, SampleType};
use crate::bounded;

/// `{u32 pid, tid}` as one u64 slot.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct PidTid {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
}

/// `{u32 cpu, res}` as one u64 slot.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct CpuRes {
    /// The CPU.
    pub cpu: u32,
    /// Reserved, kept as read.
    pub res: u32,
}

/// The sample_id trailer: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER (present bits only).
#[binrw]
#[br(import(st: SampleType))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SampleId {
    #[br(if(st.contains(SampleType::TID)))]
    /// PERF_SAMPLE_TID: process and thread id.
    pub tid: Option<PidTid>,
    #[br(if(st.contains(SampleType::TIME)))]
    /// PERF_SAMPLE_TIME: time (ns).
    pub time: Option<u64>,
    #[br(if(st.contains(SampleType::ID)))]
    /// PERF_SAMPLE_ID: event id.
    pub id: Option<u64>,
    #[br(if(st.contains(SampleType::STREAM_ID)))]
    /// PERF_SAMPLE_STREAM_ID: the group leader's id.
    pub stream_id: Option<u64>,
    #[br(if(st.contains(SampleType::CPU)))]
    /// PERF_SAMPLE_CPU: CPU and a reserved word.
    pub cpu: Option<CpuRes>,
    #[br(if(st.contains(SampleType::IDENTIFIER)))]
    /// PERF_SAMPLE_IDENTIFIER: event id.
    pub identifier: Option<u64>,
}

/// One counter of a group read: value, then id and lost when read_format asks.
#[binrw]
#[br(import(rf: ReadFormat))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ReadValue {
    /// The counter's value.
    pub value: u64,
    #[br(if(rf.contains(ReadFormat::ID)))]
    /// Its event id (read_format ID).
    pub id: Option<u64>,
    #[br(if(rf.contains(ReadFormat::LOST)))]
    /// Its lost count (read_format LOST).
    pub lost: Option<u64>,
}

/// `struct read_format`, in its single-counter or group form (in JSON without a variant
/// name: a group has `values`, a single counter `value`).
#[binrw]
#[br(import(rf: ReadFormat))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ReadData {
    #[br(pre_assert(!rf.contains(ReadFormat::GROUP)))]
    /// One counter (read_format without GROUP).
    Single {
        /// The counter's value.
        value: u64,
        #[br(if(rf.contains(ReadFormat::TOTAL_TIME_ENABLED)))]
        /// Time the counter was enabled (ns; read_format TOTAL_TIME_ENABLED).
        time_enabled: Option<u64>,
        #[br(if(rf.contains(ReadFormat::TOTAL_TIME_RUNNING)))]
        /// Time it was running (ns; read_format TOTAL_TIME_RUNNING).
        time_running: Option<u64>,
        #[br(if(rf.contains(ReadFormat::ID)))]
        /// Its event id (read_format ID).
        id: Option<u64>,
        #[br(if(rf.contains(ReadFormat::LOST)))]
        /// Its lost count (read_format LOST).
        lost: Option<u64>,
    },
    #[br(pre_assert(rf.contains(ReadFormat::GROUP)))]
    /// A group's counters (read_format GROUP).
    Group {
        #[br(temp)]
        #[bw(calc = values.len() as u64)]
        nr: u64,
        #[br(if(rf.contains(ReadFormat::TOTAL_TIME_ENABLED)))]
        /// Time the group was enabled (ns; read_format TOTAL_TIME_ENABLED).
        time_enabled: Option<u64>,
        #[br(if(rf.contains(ReadFormat::TOTAL_TIME_RUNNING)))]
        /// Time it was running (ns; read_format TOTAL_TIME_RUNNING).
        time_running: Option<u64>,
        #[br(parse_with = bounded::vec_with, args(nr as usize, 8, (rf,)))]
        /// One value per group member, the leader first.
        values: Vec<ReadValue>,
    },
}

/// `{u64 nr; u64 ips[nr]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Callchain {
    #[br(temp)]
    #[bw(calc = ips.len() as u64)]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    #[serde(serialize_with = "crate::mark::address")]
    /// Instruction pointers, innermost first, with PERF_CONTEXT_* markers.
    pub ips: Vec<u64>,
}

impl Callchain {
    /// A call chain of these instruction pointers.
    pub fn new(ips: Vec<u64>) -> Self {
        Callchain { ips }
    }
}

/// `{u32 size; char data[size]}`; the kernel pads so that size + 4 is a multiple of 8, and
/// the padding is part of `data`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct RawData {
    #[br(temp)]
    #[bw(calc = data.len() as u32)]
    size: u32,
    #[br(parse_with = bounded::bytes, args(size as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The tracepoint (or raw PMU) data, as the kernel wrote it (padding included).
    pub data: Vec<u8>,
}

impl RawData {
    /// Raw data of these bytes.
    pub fn new(data: Vec<u8>) -> Self {
        RawData { data }
    }
}

/// `struct perf_branch_entry`: from, to, and the flags word (mispred, predicted, in_tx,
/// abort, cycles:16, type:4, spec:2, new_type:4, priv:3, reserved:31). `flags` holds the
/// little-endian layout whatever the container's byte order.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BranchEntry {
    #[serde(serialize_with = "crate::mark::address")]
    /// Branch source address.
    pub from: u64,
    #[serde(serialize_with = "crate::mark::address")]
    /// Branch target address.
    pub to: u64,
    #[br(parse_with = read_branch_flags)]
    #[bw(write_with = write_branch_flags)]
    /// Prediction, transaction, cycles and type bits.
    pub flags: u64,
}

/// The fields of the branch flags word, (bit position, width) in the little-endian layout.
const BRANCH_FLAG_FIELDS: [(u32, u32); 10] = [
    (0, 1),
    (1, 1),
    (2, 1),
    (3, 1),
    (4, 16),
    (20, 4),
    (24, 2),
    (26, 4),
    (30, 3),
    (33, 31),
];

/// A big-endian producer's compiler allocates bitfields from the most significant bit, so
/// each field of the flags word sits at `64 - pos - width` there, its bits in order (perf's
/// `evsel__bitfield_swap_branch_flags`; not the attr flags' whole-word bit reversal, which
/// only holds for one-bit fields).
fn branch_flags_to_big(little: u64) -> u64 {
    BRANCH_FLAG_FIELDS.iter().fold(0, |acc, &(pos, width)| {
        let mask = u64::MAX >> (64 - width);
        acc | ((little >> pos) & mask) << (64 - pos - width)
    })
}

pub(crate) fn branch_flags_from_big(big: u64) -> u64 {
    BRANCH_FLAG_FIELDS.iter().fold(0, |acc, &(pos, width)| {
        let mask = u64::MAX >> (64 - width);
        acc | ((big >> (64 - pos - width)) & mask) << pos
    })
}

#[binrw::parser(reader, endian)]
fn read_branch_flags() -> binrw::BinResult<u64> {
    let raw = <u64 as binrw::BinRead>::read_options(reader, endian, ())?;
    Ok(match endian {
        binrw::Endian::Little => raw,
        binrw::Endian::Big => branch_flags_from_big(raw),
    })
}

#[binrw::writer(writer, endian)]
fn write_branch_flags(flags: &u64) -> binrw::BinResult<()> {
    let raw = match endian {
        binrw::Endian::Little => *flags,
        binrw::Endian::Big => branch_flags_to_big(*flags),
    };
    binrw::BinWrite::write_options(&raw, writer, endian, ())
}

/// The branch stack: nr, hw_idx (with HW_INDEX), entries, counters (with COUNTERS).
#[binrw]
#[br(import(bst: BranchSampleType))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct BranchStack {
    #[br(temp)]
    #[bw(calc = entries.len() as u64)]
    nr: u64,
    #[br(if(bst.contains(BranchSampleType::HW_INDEX)))]
    /// Hardware index of the most recent branch (BRANCH_HW_INDEX).
    pub hw_idx: Option<u64>,
    #[br(parse_with = bounded::vec, args(nr as usize, 24))]
    /// The branches, most recent first.
    pub entries: Vec<BranchEntry>,
    /// One u64 per entry with COUNTERS, else empty.
    #[br(parse_with = bounded::vec, args(if bst.contains(BranchSampleType::COUNTERS) { nr as usize } else { 0 }, 8))]
    pub counters: Vec<u64>,
}

/// REGS_USER / REGS_INTR: the ABI, then one u64 per bit of the attr's register mask
/// (none when abi is 0, PERF_SAMPLE_REGS_ABI_NONE).
#[binrw]
#[br(import(nr_regs: u32))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Regs {
    /// PERF_SAMPLE_REGS_ABI_* (0: none recorded).
    pub abi: u64,
    #[br(parse_with = bounded::vec, args(if abi != 0 { nr_regs as usize } else { 0 }, 8))]
    #[serde(serialize_with = "crate::mark::address")]
    /// The registers sample_regs_* selects, lowest bit first.
    pub regs: Vec<u64>,
}

/// STACK_USER: `{u64 size; char data[size]; u64 dyn_size if size != 0}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct StackUser {
    #[br(temp)]
    #[bw(calc = data.len() as u64)]
    size: u64,
    #[br(parse_with = bounded::bytes, args(size as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The user stack copy, from the stack pointer up.
    pub data: Vec<u8>,
    #[br(if(size != 0))]
    /// Bytes of the copy that are valid.
    pub dyn_size: Option<u64>,
}

/// AUX: `{u64 size; char data[size]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuxSample {
    #[br(temp)]
    #[bw(calc = data.len() as u64)]
    size: u64,
    #[br(parse_with = bounded::bytes, args(size as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The AUX area snapshot.
    pub data: Vec<u8>,
}

/// PERF_RECORD_SAMPLE. Each field is present exactly when its PERF_SAMPLE_* bit is set in
/// the attr the sample belongs to; the order is the kernel's.
#[binrw]
#[br(import(f: EventFormat))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Sample {
    #[br(if(f.sample_type.contains(SampleType::IDENTIFIER)))]
    /// PERF_SAMPLE_IDENTIFIER: the event id.
    pub identifier: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::IP)))]
    #[serde(serialize_with = "crate::mark::address")]
    /// PERF_SAMPLE_IP: instruction pointer.
    pub ip: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::TID)))]
    /// PERF_SAMPLE_TID: process and thread id.
    pub tid: Option<PidTid>,
    #[br(if(f.sample_type.contains(SampleType::TIME)))]
    /// PERF_SAMPLE_TIME: time (ns).
    pub time: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::ADDR)))]
    #[serde(serialize_with = "crate::mark::address")]
    /// PERF_SAMPLE_ADDR: data address.
    pub addr: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::ID)))]
    /// PERF_SAMPLE_ID: event id.
    pub id: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::STREAM_ID)))]
    /// PERF_SAMPLE_STREAM_ID: the group leader's id.
    pub stream_id: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::CPU)))]
    /// PERF_SAMPLE_CPU: CPU and a reserved word.
    pub cpu: Option<CpuRes>,
    #[br(if(f.sample_type.contains(SampleType::PERIOD)))]
    /// PERF_SAMPLE_PERIOD: the sample period.
    pub period: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::READ)), args(f.read_format))]
    /// PERF_SAMPLE_READ: counter values.
    pub read: Option<ReadData>,
    #[br(if(f.sample_type.contains(SampleType::CALLCHAIN)))]
    /// PERF_SAMPLE_CALLCHAIN: the call chain.
    pub callchain: Option<Callchain>,
    #[br(if(f.sample_type.contains(SampleType::RAW)))]
    /// PERF_SAMPLE_RAW: tracepoint or raw PMU data.
    pub raw: Option<RawData>,
    #[br(if(f.sample_type.contains(SampleType::BRANCH_STACK)), args(f.branch_sample_type))]
    /// PERF_SAMPLE_BRANCH_STACK: the last branch records.
    pub branch_stack: Option<BranchStack>,
    #[br(if(f.sample_type.contains(SampleType::REGS_USER)), args(f.sample_regs_user.count_ones()))]
    /// PERF_SAMPLE_REGS_USER: user registers.
    pub regs_user: Option<Regs>,
    #[br(if(f.sample_type.contains(SampleType::STACK_USER)))]
    /// PERF_SAMPLE_STACK_USER: a copy of the user stack.
    pub stack_user: Option<StackUser>,
    /// WEIGHT, or WEIGHT_STRUCT read as the same u64 (perf's union perf_sample_weight is
    /// declared per byte order so that its `full` u64 is the same on both).
    #[br(if(f.sample_type.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT)))]
    pub weight: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::DATA_SRC)))]
    /// PERF_SAMPLE_DATA_SRC: memory hierarchy source of the access.
    pub data_src: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::TRANSACTION)))]
    /// PERF_SAMPLE_TRANSACTION: transactional memory abort flags.
    pub transaction: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::REGS_INTR)), args(f.sample_regs_intr.count_ones()))]
    /// PERF_SAMPLE_REGS_INTR: registers at the interrupt.
    pub regs_intr: Option<Regs>,
    #[br(if(f.sample_type.contains(SampleType::PHYS_ADDR)))]
    #[serde(serialize_with = "crate::mark::address")]
    /// PERF_SAMPLE_PHYS_ADDR: physical data address.
    pub phys_addr: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::CGROUP)))]
    /// PERF_SAMPLE_CGROUP: cgroup id.
    pub cgroup: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::DATA_PAGE_SIZE)))]
    /// PERF_SAMPLE_DATA_PAGE_SIZE: page size of the data address.
    pub data_page_size: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::CODE_PAGE_SIZE)))]
    /// PERF_SAMPLE_CODE_PAGE_SIZE: page size of the ip.
    pub code_page_size: Option<u64>,
    #[br(if(f.sample_type.contains(SampleType::AUX)))]
    /// PERF_SAMPLE_AUX: an AUX area snapshot.
    pub aux: Option<AuxSample>,
}

impl Sample {
    /// WEIGHT_STRUCT's parts: (var1_dw, var2_w, var3_w) = (weight, ins_lat, p_stage_cyc
    /// on Intel).
    pub fn weight_struct(&self) -> Option<(u32, u16, u16)> {
        self.weight
            .map(|w| (w as u32, (w >> 32) as u16, (w >> 48) as u16))
    }

    /// The id this sample names (IDENTIFIER, else ID).
    pub fn sample_id(&self) -> Option<u64> {
        self.identifier.or(self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{decode, encode};
    use binrw::Endian;

    fn words(ws: &[u64]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn group_read_with_lost_and_callchain() {
        let f = EventFormat {
            sample_type: SampleType::IP
                | SampleType::TID
                | SampleType::READ
                | SampleType::CALLCHAIN,
            read_format: ReadFormat::GROUP | ReadFormat::ID | ReadFormat::LOST,
            ..Default::default()
        };
        let bytes = words(&[
            0x401000,
            (7u64 << 32) | 5, // pid 5, tid 7
            2,                // nr
            100,
            11,
            0, // value, id, lost
            200,
            12,
            1,
            3, // callchain nr
            0xffffffffffffff80,
            0x401000,
            0x401234,
        ]);
        let s: Sample = decode(&bytes, Endian::Little, (f,), 0, "SAMPLE").unwrap();
        assert_eq!(s.ip, Some(0x401000));
        assert_eq!(s.tid, Some(PidTid { pid: 5, tid: 7 }));
        match &s.read {
            Some(ReadData::Group { values, .. }) => {
                assert_eq!(values.len(), 2);
                assert_eq!(values[1].value, 200);
                assert_eq!(values[1].id, Some(12));
                assert_eq!(values[1].lost, Some(1));
            }
            other => panic!("expected a group read, got {other:?}"),
        }
        assert_eq!(s.callchain.as_ref().unwrap().ips.len(), 3);
        assert_eq!(encode(&s, Endian::Little, ()).unwrap(), bytes);
    }

    #[test]
    fn regs_abi_none_has_no_values_and_stack_dyn_size() {
        let f = EventFormat {
            sample_type: SampleType::REGS_USER | SampleType::STACK_USER,
            sample_regs_user: 0b1011,
            ..Default::default()
        };
        let mut bytes = words(&[0, 16]);
        bytes.extend_from_slice(&[0xaa; 16]);
        bytes.extend_from_slice(&words(&[12]));
        let s: Sample = decode(&bytes, Endian::Little, (f,), 0, "SAMPLE").unwrap();
        assert!(s.regs_user.as_ref().unwrap().regs.is_empty());
        assert_eq!(s.stack_user.as_ref().unwrap().dyn_size, Some(12));
        assert_eq!(encode(&s, Endian::Little, ()).unwrap(), bytes);

        let bytes = words(&[2, 1, 2, 3, 0]);
        let s: Sample = decode(&bytes, Endian::Little, (f,), 0, "SAMPLE").unwrap();
        assert_eq!(s.regs_user.as_ref().unwrap().regs, vec![1, 2, 3]);
        assert_eq!(s.stack_user.as_ref().unwrap().dyn_size, None);
        assert_eq!(encode(&s, Endian::Little, ()).unwrap(), bytes);
    }

    #[test]
    fn branch_stack_with_hw_index_and_counters() {
        let f = EventFormat {
            sample_type: SampleType::BRANCH_STACK,
            branch_sample_type: BranchSampleType::HW_INDEX | BranchSampleType::COUNTERS,
            ..Default::default()
        };
        let bytes = words(&[2, 9, 1, 2, 3, 4, 5, 6, 70, 80]);
        let s: Sample = decode(&bytes, Endian::Little, (f,), 0, "SAMPLE").unwrap();
        let bs = s.branch_stack.as_ref().unwrap();
        assert_eq!(bs.hw_idx, Some(9));
        assert_eq!(
            bs.entries[1],
            BranchEntry {
                from: 4,
                to: 5,
                flags: 6
            }
        );
        assert_eq!(bs.counters, vec![70, 80]);
        assert_eq!(encode(&s, Endian::Little, ()).unwrap(), bytes);
    }

    #[test]
    fn huge_callchain_nr_is_an_error() {
        let f = EventFormat {
            sample_type: SampleType::CALLCHAIN,
            ..Default::default()
        };
        let bytes = words(&[u64::MAX, 1]);
        assert!(decode::<Sample>(&bytes, Endian::Little, (f,), 0, "SAMPLE").is_err());
    }

    #[test]
    fn big_endian_branch_flags_keep_each_field_in_order() {
        // mispred=1, cycles=0x1234, type=5: on a big-endian producer mispred is the top
        // bit, cycles bits 44..59 (not bit-reversed), type bits 40..43.
        let little = 1 | (0x1234 << 4) | (5 << 20);
        let big = super::branch_flags_to_big(little);
        assert_eq!(big, 1 << 63 | 0x1234 << 44 | 5 << 40);
        assert_eq!(super::branch_flags_from_big(big), little);
        for v in [0, u64::MAX, 0x8000_0000_0000_0001, 0xdead_beef_1234_5678] {
            assert_eq!(
                super::branch_flags_from_big(super::branch_flags_to_big(v)),
                v
            );
        }
    }
}
