//! Finding a record's event, id, time, pid, tid and cpu from fixed offsets, without
//! decoding it: what filters and mergers need per record.
//!
//! In a SAMPLE these fields sit in the fixed-size prefix (IDENTIFIER, IP, TID, TIME,
//! ADDR, ID, STREAM_ID, CPU); in other kernel records they are in the sample_id trailer,
//! counted back from the end.

use binrw::Endian;

use super::RawRecord;
use crate::attr::SampleType;
use crate::codec::{u32_at, u64_at};
use crate::record::{EventIndex, RecordType, SAMPLE_PREFIX_FIELDS, TRAILER_FIELDS};

/// What was found. Fields the record does not carry are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Located {
    /// Index of the event (attr) the record belongs to.
    pub event: Option<usize>,
    pub id: Option<u64>,
    pub time: Option<u64>,
    pub pid: Option<i32>,
    pub tid: Option<i32>,
    pub cpu: Option<u32>,
}

/// Locate the fields of `record`.
pub fn locate(record: &RawRecord<'_>, events: &EventIndex, endian: Endian) -> Located {
    let bytes = record.bytes;
    let ty = record.record_type();
    let is_sample = ty == RecordType::Sample;
    if !is_sample && !ty.has_sample_id_trailer() {
        return Located::default();
    }
    let Some(event) = events.event_of(bytes, is_sample, endian) else {
        return Located::default();
    };
    let Some(f) = events.format(event) else {
        return Located::default();
    };
    let st = f.sample_type;
    let mut out = Located {
        event: Some(event),
        ..Default::default()
    };
    let start = if is_sample {
        8
    } else {
        let len = f.sample_id_len();
        if !f.sample_id_all || bytes.len() < 8 + len {
            return out;
        }
        bytes.len() - len
    };
    let order: &[SampleType] = if is_sample {
        &SAMPLE_PREFIX_FIELDS
    } else {
        &TRAILER_FIELDS
    };
    let mut pos = start;
    for &bit in order.iter().filter(|&&b| st.contains(b)) {
        let word = u64_at(bytes, pos, endian);
        let half = |at| u32_at(bytes, at, endian);
        match bit {
            SampleType::TID => {
                out.pid = half(pos).map(|v| v as i32);
                out.tid = half(pos + 4).map(|v| v as i32);
            }
            SampleType::TIME => out.time = word,
            // IDENTIFIER is the id; ID stands in for it where there is none.
            SampleType::IDENTIFIER => out.id = word,
            SampleType::ID => out.id = out.id.or(word),
            SampleType::CPU => out.cpu = half(pos),
            _ => {}
        }
        pos += 8;
    }
    out
}
