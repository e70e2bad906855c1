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
use crate::record::{EventIndex, RecordType};

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
    let has = |b: SampleType| st.contains(b);
    let word = |pos: usize| u64_at(bytes, pos, endian);

    if is_sample {
        let mut pos = 8;
        if has(SampleType::IDENTIFIER) {
            out.id = word(pos);
            pos += 8;
        }
        if has(SampleType::IP) {
            pos += 8;
        }
        if has(SampleType::TID) {
            out.pid = u32_at(bytes, pos, endian).map(|v| v as i32);
            out.tid = u32_at(bytes, pos + 4, endian).map(|v| v as i32);
            pos += 8;
        }
        if has(SampleType::TIME) {
            out.time = word(pos);
            pos += 8;
        }
        if has(SampleType::ADDR) {
            pos += 8;
        }
        if has(SampleType::ID) {
            out.id = out.id.or(word(pos));
            pos += 8;
        }
        if has(SampleType::STREAM_ID) {
            pos += 8;
        }
        if has(SampleType::CPU) {
            out.cpu = u32_at(bytes, pos, endian);
        }
    } else {
        if !f.sample_id_all {
            return out;
        }
        let len = f.sample_id_len();
        if bytes.len() < 8 + len {
            return out;
        }
        let mut pos = bytes.len() - len;
        if has(SampleType::TID) {
            out.pid = u32_at(bytes, pos, endian).map(|v| v as i32);
            out.tid = u32_at(bytes, pos + 4, endian).map(|v| v as i32);
            pos += 8;
        }
        if has(SampleType::TIME) {
            out.time = word(pos);
            pos += 8;
        }
        if has(SampleType::ID) {
            out.id = word(pos);
            pos += 8;
        }
        if has(SampleType::STREAM_ID) {
            pos += 8;
        }
        if has(SampleType::CPU) {
            out.cpu = u32_at(bytes, pos, endian);
            pos += 8;
        }
        if has(SampleType::IDENTIFIER) {
            out.id = word(pos);
        }
    }
    out
}
