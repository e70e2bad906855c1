//! Bodies of the records perf itself writes (types 64 and up): metadata in pipe mode,
//! compression containers, AUX area tracing, `perf stat record`, and so on.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use super::kernel::PaddedString;
use super::views::layouts;
use crate::attr::PerfEventAttr;
use crate::bounded;
use crate::header::EventType;

/// HEADER_ATTR (64): an attr of `attr.size` bytes, then its ids to the end of the record.
#[binrw]
#[br(import(attr_len: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderAttr {
    #[br(args(attr_len))]
    /// The event attribute.
    pub attr: PerfEventAttr,
    #[br(parse_with = bounded::words_to_end)]
    /// The ids the kernel gave the event (one per CPU or thread).
    pub ids: Vec<u64>,
}

impl HeaderAttr {
    /// How long the attr in a HEADER_ATTR body is: its own size field (perf sizes the
    /// ids after it from that), 64 bytes (VER0) when the field is 0.
    pub fn attr_len(body: &[u8], endian: binrw::Endian) -> usize {
        match crate::codec::u32_at(body, 4, endian).unwrap_or(0) {
            0 => crate::attr::ATTR_SIZE_VER0,
            n => n as usize,
        }
    }
}

/// HEADER_TRACING_DATA (66). perf writes `{u32 size; u32 pad}` (perf 4.x and older:
/// `{u32 size}`, a 12-byte record) and puts the `size` bytes of tracing data after the
/// record; simpleperf puts them inside the record, after `size`. `rest` holds what
/// follows `size` inside the record either way.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderTracingData {
    /// Bytes of tracing data that follow the record.
    pub size: u32,
    #[br(parse_with = bounded::rest)]
    #[serde(skip)]
    /// Bytes of the record after the size field, kept as read.
    pub rest: Vec<u8>,
}

impl HeaderTracingData {
    /// The record size perf writes (12 before perf 4.10); anything larger carries the data
    /// inside.
    pub const PERF_RECORD_SIZE: u16 = 16;
    /// The record size of perf before the pad word (4.x); the data follows it too.
    pub const OLD_PERF_RECORD_SIZE: u16 = 12;

    /// simpleperf's tracing data, inside the record after `size`; `None` for perf's
    /// records, whose data follows them.
    pub fn inline_data(&self) -> Option<&[u8]> {
        (self.rest.len() > 4).then(|| &self.rest[..(self.size as usize).min(self.rest.len())])
    }
}

/// AUXTRACE (71): `size` bytes of AUX area trace data follow the record.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Auxtrace {
    /// Bytes of AUX data that follow the record.
    pub size: u64,
    /// Offset of the data in the AUX buffer.
    pub offset: u64,
    /// A reference perf sets (a timestamp, for Intel PT).
    pub reference: u64,
    /// Index of the mmap the data came from.
    pub idx: u32,
    /// Thread the data belongs to (-1 for CPU-wide).
    pub tid: i32,
    /// CPU the data belongs to (-1 for per-thread).
    pub cpu: u32,
    /// Reserved, zero (kept as read).
    pub reserved: u32,
}

layouts! {
    #[binrw]
    /// HEADER_FEATURE (80): a feature section sent inline in pipe mode.
    ///
    /// The payload is the same bytes as the file-mode section; decode it with
    /// [`crate::feature::FeatureSection::decode`].
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct HeaderFeature {
        /// The feature's bit (HEADER_*).
        pub feat_id: u64,
    } rest(other) {
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::mark::bytes")]
        /// The feature section's bytes.
        pub data: Vec<u8>,
    }
    /// HEADER_FEATURE: the feature's bit (its section's bytes follow).
    view FeatureRecordView(FeatureRecordAt) for [HeaderFeature], facts(other);
}

/// COMPRESSED (81): a piece of one continuous zstd stream. Its size is not 8-aligned.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compressed {
    #[br(parse_with = bounded::rest)]
    #[serde(skip)]
    /// The zstd frame bytes (to the end of the record).
    pub data: Vec<u8>,
}

/// COMPRESSED2 (83, perf 6.16): `data_size` bytes of zstd, then zero padding to 8 (the
/// padding stays in the record's extra bytes).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compressed2 {
    #[br(temp)]
    #[bw(calc = data.len() as u64)]
    data_size: u64,
    #[br(parse_with = bounded::bytes, args(data_size as usize))]
    #[serde(skip)]
    /// The zstd bytes (data_size of them used; the rest padding).
    pub data: Vec<u8>,
}

/// HEADER_EVENT_TYPE (65, perf 3.x, deprecated): a tracepoint event's id and name.
///
/// perf writes `{u64 event_id; char name[64]}` but cuts the name to its length rounded
/// up to 8 (so a name of 8, 16, ... bytes has no NUL): `name` takes the rest of the
/// record, padding included.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct HeaderEventType {
    /// The event's config.
    pub event_id: u64,
    /// The event's name (64 bytes, NUL-padded).
    pub name: PaddedString,
}

impl HeaderEventType {
    /// `MAX_EVENT_NAME`: the longest name perf writes.
    pub const MAX_NAME: usize = 64;

    /// The event_types entry this record carries (its name zero-filled to 64 bytes).
    pub fn to_event_type(&self) -> EventType {
        let mut name = [0u8; Self::MAX_NAME];
        let n = self.name.bytes.len().min(Self::MAX_NAME);
        name[..n].copy_from_slice(&self.name.bytes[..n]);
        EventType {
            event_id: self.event_id,
            name,
        }
    }

    /// The record perf writes for an event_types entry: the name cut to its length
    /// rounded up to 8.
    pub fn from_event_type(et: &EventType) -> Self {
        let name = crate::text::c_str_bytes(&et.name);
        let mut bytes = name.to_vec();
        bytes.resize(name.len().div_ceil(8) * 8, 0);
        HeaderEventType {
            event_id: et.event_id,
            name: PaddedString { bytes },
        }
    }
}

/// One entry of ID_INDEX: where the event with sample id `id` was opened.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct IdIndexEntry {
    /// The event id.
    pub id: u64,
    /// Index of the mmap (ring buffer) the id's records go to.
    pub idx: u64,
    /// CPU the id's counter is on (-1: any).
    pub cpu: u64,
    /// Thread the id's counter follows (-1: any).
    pub tid: u64,
}

/// The second array of ID_INDEX (perf 5.18+, for guest machines), one per entry.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct IdIndexEntry2 {
    /// Process id of the guest machine (0: the host).
    pub machine_pid: u64,
    /// The guest's virtual CPU.
    pub vcpu: u64,
}

/// ID_INDEX (69): `u64 nr`, nr entries, then (when the record is long enough for them)
/// nr `{machine_pid, vcpu}` entries.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct IdIndex {
    #[br(temp)]
    #[bw(try_calc = u64::try_from(entries.len()))]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 32))]
    /// One entry per id.
    pub entries: Vec<IdIndexEntry>,
    /// Present when the record size leaves room for nr more 16-byte entries.
    #[br(parse_with = bounded::optional_vec, args(nr as usize, 16))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entries2: Option<Vec<IdIndexEntry2>>,
}

impl IdIndex {
    /// Keep the entries (and their second-array entries) of the ids `keep` accepts;
    /// whether any went.
    pub fn retain_ids(&mut self, mut keep: impl FnMut(u64) -> bool) -> bool {
        let flags: Vec<bool> = self.entries.iter().map(|e| keep(e.id)).collect();
        if flags.iter().all(|&k| k) {
            return false;
        }
        let mut it = flags.iter();
        self.entries
            .retain(|_| *it.next().expect("one flag per entry"));
        if let Some(second) = &mut self.entries2 {
            let mut it = flags.iter();
            second.retain(|_| *it.next().unwrap_or(&true));
        }
        true
    }
}

/// AUXTRACE_INFO (70): what decodes the AUX area trace (type 1 Intel PT, 2 Intel BTS,
/// 3 CoreSight ETM, 4 Arm SPE, 5 S390 CPUMSF, ...) and its parameters.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuxtraceInfo {
    #[serde(rename = "type")]
    /// PERF_AUXTRACE_* (the trace's kind: Intel PT, BTS, CoreSight, ...).
    pub type_: u32,
    /// Reserved, kept as read.
    pub reserved: u32,
    /// The decoder's private u64 words, to the end of the record.
    #[br(parse_with = bounded::words_to_end)]
    #[serde(rename = "priv")]
    pub priv_: Vec<u64>,
}

/// AUXTRACE_ERROR (72): an error found while decoding AUX area trace.
///
/// Its layout depends on `fmt`: 0 (perf before 5.1) has no `time` and the message
/// follows `ip`; 1 adds `time`; 2 (perf 5.18+, guest errors) makes the message a fixed
/// 64 bytes followed by `machine_pid` and `vcpu`. With fmt 0 and 1 perf cuts the message
/// to its length plus the NUL, rounded up to 8, so `msg` takes the rest of the record.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuxtraceError {
    #[serde(rename = "type")]
    /// PERF_AUXTRACE_ERROR_* (1 instruction trace, 2 error type).
    pub type_: u32,
    /// Decoder error code.
    pub code: u32,
    /// CPU of the error.
    pub cpu: u32,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Message format (0: no time, 1: with time, 2: with machine_pid and vcpu).
    pub fmt: u32,
    #[serde(serialize_with = "crate::mark::address")]
    /// Instruction pointer of the error.
    pub ip: u64,
    #[br(if(fmt >= 1))]
    /// Time of the error (fmt >= 1).
    pub time: Option<u64>,
    #[br(parse_with = bounded::bytes_or_rest, args(if fmt >= 2 { Some(Self::MSG_LEN) } else { None }))]
    #[serde(serialize_with = "crate::mark::c_string")]
    /// The message (64 bytes, NUL-padded).
    pub msg: Vec<u8>,
    #[br(if(fmt >= 2))]
    /// Guest machine pid (fmt 2).
    pub machine_pid: Option<i32>,
    #[br(if(fmt >= 2))]
    /// Guest virtual CPU (fmt 2).
    pub vcpu: Option<i32>,
}

impl AuxtraceError {
    /// `MAX_AUXTRACE_ERROR_MSG`.
    pub const MSG_LEN: usize = 64;

    /// The message text (before its NUL).
    pub fn message(&self) -> String {
        crate::text::c_str_lossy(&self.msg)
    }
}

/// The TIME_CONV fields perf 5.11 added (and the record size tells whether present).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TimeConvCycles {
    /// The TSC value at time_zero (cap_user_time_short).
    pub time_cycles: u64,
    /// Mask of the TSC bits counted.
    pub time_mask: u64,
    /// Whether time_zero is valid.
    pub cap_user_time_zero: u8,
    /// Whether the counter is short (time_cycles and time_mask apply).
    pub cap_user_time_short: u8,
    #[serde(serialize_with = "crate::mark::bytes")]
    /// Padding, kept as read.
    pub reserved: [u8; 6],
}

/// TIME_CONV (79): how to convert TSC values (of AUX trace) to perf time.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TimeConv {
    /// Shift of the TSC to nanoseconds conversion.
    pub time_shift: u64,
    /// Multiplier of the TSC to nanoseconds conversion.
    pub time_mult: u64,
    /// Time in nanoseconds at TSC zero.
    pub time_zero: u64,
    /// Present in records of perf 5.11 and later (a 56-byte record instead of 32).
    #[br(parse_with = bounded::optional, args(TimeConvCycles::SIZE))]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycles: Option<TimeConvCycles>,
}

impl TimeConvCycles {
    /// Bytes it takes in a file.
    pub const SIZE: u64 = 24;
}

/// One `{key, value}` of BPF_METADATA, both NUL-padded fixed-size strings.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BpfMetadataEntry {
    #[serde(serialize_with = "crate::mark::c_string")]
    /// The variable's name.
    pub key: [u8; 64],
    #[serde(serialize_with = "crate::mark::c_string")]
    /// Its value, as text.
    pub value: [u8; 256],
}

/// BPF_METADATA (84, perf 6.16): the `bpf_metadata_*` variables of a BPF program.
///
/// perf sizes the record for every variable of the program's data section but fills
/// only `nr_entries`, and appends a zeroed sample_id area: the unused room is kept in
/// the record's extra bytes.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BpfMetadata {
    /// `char prog_name[BPF_PROG_NAME_LEN]` (KSYM_NAME_LEN, 512).
    #[serde(serialize_with = "crate::mark::c_string")]
    pub prog_name: [u8; 512],
    #[br(temp)]
    #[bw(try_calc = u64::try_from(entries.len()))]
    nr_entries: u64,
    #[br(parse_with = bounded::vec, args(nr_entries as usize, 320))]
    /// The metadata variables.
    pub entries: Vec<BpfMetadataEntry>,
}

/// The test-only record type 127 (see the registry's last row): what adding a record
/// type takes is its layout here and its row there.
#[cfg(any(test, feature = "test-row"))]
mod test_only {
    use binrw::binrw;
    use serde::Serialize;

    use super::super::views::layouts;
    use super::PaddedString;

    layouts! {
        #[binrw]
        /// The model of the test-only record type 127 (see the registry's last row).
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        pub struct TestOnly {
            /// Process id.
            pub pid: i32,
            /// Thread id.
            pub tid: i32,
            /// A value.
            pub value: u64,
        } text {
            /// A name (NUL-padded).
            pub name: PaddedString = Comm,
        }
        /// The test-only record type (see the catalogue's last row).
        view TestOnlyView(TestOnlyAt) for [TestOnly], facts(task(Thread pid tid));
    }
}
#[cfg(any(test, feature = "test-row"))]
pub use test_only::*;
