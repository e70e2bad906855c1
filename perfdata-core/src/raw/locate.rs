//! Finding a record's event, id, time, pid, tid and cpu from fixed offsets, without
//! decoding it: what filters and mergers need per record.
//!
//! In a SAMPLE these fields sit in the fixed-size prefix (IDENTIFIER, IP, TID, TIME,
//! ADDR, ID, STREAM_ID, CPU); in other kernel records they are in the sample_id trailer,
//! counted back from the end.

use binrw::Endian;

use super::RawRecord;
use crate::codec::{u32_at, u64_at};
use crate::record::{EventIndex, RecordType};

/// What was found. Fields the record does not carry are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Located {
    /// Index of the event (attr) the record belongs to.
    pub event: Option<usize>,
    /// The sample id (IDENTIFIER or ID), when the record has one.
    pub id: Option<u64>,
    /// Time (ns), when the record has one.
    pub time: Option<u64>,
    /// Process id, when the record has one.
    pub pid: Option<i32>,
    /// Thread id, when the record has one.
    pub tid: Option<i32>,
    /// CPU, when the record has one.
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
    let (Some(f), Some((sample, trailer))) = (events.format(event), events.offsets(event)) else {
        return Located::default();
    };
    let (base, at) = if is_sample {
        (0, sample)
    } else {
        if !f.sample_id_all || bytes.len() < 8 + trailer.len {
            return Located {
                event: Some(event),
                ..Default::default()
            };
        }
        (bytes.len() - trailer.len, trailer)
    };
    let word = |o: Option<usize>| o.and_then(|o| u64_at(bytes, base + o, endian));
    let half =
        |o: Option<usize>, plus: usize| o.and_then(|o| u32_at(bytes, base + o + plus, endian));
    Located {
        event: Some(event),
        id: word(at.id),
        time: word(at.time),
        pid: half(at.tid, 0).map(|v| v as i32),
        tid: half(at.tid, 4).map(|v| v as i32),
        cpu: half(at.cpu, 0),
    }
}
