//! What decides the layout of SAMPLE records and sample_id trailers: the attr of the
//! event they belong to, and the order of their fixed fields.

use crate::attr::{BranchSampleType, PerfEventAttr, ReadFormat, SampleType};

/// The parts of an attr that shape its records. Small and `Copy`, so it can be passed
/// as a binrw argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventFormat {
    /// The attr's sample_type.
    pub sample_type: SampleType,
    /// The attr's read_format.
    pub read_format: ReadFormat,
    /// The attr's branch_sample_type.
    pub branch_sample_type: BranchSampleType,
    /// The attr's sample_regs_user (one u64 per bit in REGS_USER).
    pub sample_regs_user: u64,
    /// The attr's sample_regs_intr (one u64 per bit in REGS_INTR).
    pub sample_regs_intr: u64,
    /// The attr's sample_id_all flag: non-SAMPLE records carry the trailer.
    pub sample_id_all: bool,
}

impl EventFormat {
    /// The format of records of `attr`'s event.
    pub fn from_attr(attr: &PerfEventAttr) -> Self {
        EventFormat {
            sample_type: attr.sample_type,
            read_format: attr.read_format,
            branch_sample_type: attr.branch_sample_type,
            sample_regs_user: attr.sample_regs_user,
            sample_regs_intr: attr.sample_regs_intr,
            sample_id_all: attr.sample_id_all(),
        }
    }

    /// Bytes of the sample_id trailer of non-SAMPLE kernel records (0 without
    /// sample_id_all).
    pub fn sample_id_len(&self) -> usize {
        if !self.sample_id_all {
            return 0;
        }
        // One u64 slot per field present (see SampleLayout).
        8 * TRAILER_FIELDS
            .iter()
            .filter(|&&b| self.sample_type.contains(b))
            .count()
    }

    /// perf's `evsel__calc_id_pos`: index of the id, in u64 words after the header, in a
    /// SAMPLE record.
    pub fn id_pos(&self) -> Option<usize> {
        let st = self.sample_type;
        if st.contains(SampleType::IDENTIFIER) {
            return Some(0);
        }
        if !st.contains(SampleType::ID) {
            return None;
        }
        // The fields before ID in a SAMPLE (IDENTIFIER aside, handled above).
        let before_id = &SAMPLE_PREFIX_FIELDS[1..5];
        Some(before_id.iter().filter(|&&b| st.contains(b)).count())
    }

    /// perf's `__perf_evsel__calc_is_pos`: position of the id in a trailer, counted in
    /// u64 words back from the end of the record (1 = the last word).
    pub fn is_pos(&self) -> Option<usize> {
        let st = self.sample_type;
        if st.contains(SampleType::IDENTIFIER) {
            return Some(1);
        }
        if !st.contains(SampleType::ID) {
            return None;
        }
        Some(
            1 + [SampleType::CPU, SampleType::STREAM_ID]
                .iter()
                .filter(|&&b| st.contains(b))
                .count(),
        )
    }
}

/// The fixed-size fields at the start of a SAMPLE, in order (one u64 slot each).
pub const SAMPLE_PREFIX_FIELDS: [SampleType; 9] = [
    SampleType::IDENTIFIER,
    SampleType::IP,
    SampleType::TID,
    SampleType::TIME,
    SampleType::ADDR,
    SampleType::ID,
    SampleType::STREAM_ID,
    SampleType::CPU,
    SampleType::PERIOD,
];

/// The fields of the sample_id trailer, in order (one u64 slot each).
pub const TRAILER_FIELDS: [SampleType; 6] = [
    SampleType::TID,
    SampleType::TIME,
    SampleType::ID,
    SampleType::STREAM_ID,
    SampleType::CPU,
    SampleType::IDENTIFIER,
];
