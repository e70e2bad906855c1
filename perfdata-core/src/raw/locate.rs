//! Finding a record's event, id, time, pid, tid and cpu from fixed offsets, without
//! decoding it: what filters and mergers need per record.
//!
//! In a SAMPLE these fields sit in the fixed-size prefix (IDENTIFIER, IP, TID, TIME,
//! ADDR, ID, STREAM_ID, CPU); in other kernel records they are in the sample_id trailer,
//! counted back from the end. Where, the event's [`SampleLayout`](crate::record::SampleLayout)
//! says.

use binrw::Endian;

use super::RawRecord;
use crate::codec::{u32_at, u64_at};
use crate::record::{EventIndex, FieldOffsets, RecordType};

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
///
/// Always inlined: its caller stores the fields where they are kept, one by one. A
/// call returns them through memory, and the caller's copy of the whole value right
/// after waits for each of the callee's stores to land (a quarter of `strip`'s time).
#[inline(always)]
pub fn locate(record: &RawRecord<'_>, events: &EventIndex, endian: Endian) -> Located {
    let bytes = record.bytes;
    // By number, not through RecordType: this runs for every record a filter sees.
    let ty = record.header.type_;
    let is_sample = ty == SAMPLE;
    // perf's own records (64 and up) carry no sample_id; the kernel's others end with it.
    if !is_sample && ty >= RecordType::USER_TYPE_START {
        return Located::default();
    }
    let Some(event) = events.event_of(bytes, is_sample, endian) else {
        return Located::default();
    };
    let Some(layout) = events.layout(event) else {
        return Located::default();
    };
    let (base, at) = if is_sample {
        (0, layout.sample())
    } else {
        let trailer = layout.trailer();
        if !layout.format().sample_id_all || bytes.len() < 8 + trailer.len {
            return Located {
                event: Some(event),
                ..Default::default()
            };
        }
        (bytes.len() - trailer.len, trailer)
    };
    if bytes.len() >= base + at.end {
        // Every field is there (the common case): one test of the byte order for all.
        return match endian {
            Endian::Little => read_fields::<true>(bytes, base, at, event),
            Endian::Big => read_fields::<false>(bytes, base, at, event),
        };
    }
    // A record too short for its event's layout: the fields that are there.
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

/// SAMPLE's type number.
const SAMPLE: u32 = RecordType::Sample.as_u32();

/// The fields of a record known to hold them all (`bytes.len() >= base + at.end`), in
/// little (`LE`) or big endian.
#[inline(always)]
fn read_fields<const LE: bool>(
    bytes: &[u8],
    base: usize,
    at: &FieldOffsets,
    event: usize,
) -> Located {
    let (pid, tid) = match at.tid {
        Some(o) => (
            Some(read_u32::<LE>(bytes, base + o) as i32),
            Some(read_u32::<LE>(bytes, base + o + 4) as i32),
        ),
        None => (None, None),
    };
    Located {
        event: Some(event),
        id: at.id.map(|o| read_u64::<LE>(bytes, base + o)),
        time: at.time.map(|o| read_u64::<LE>(bytes, base + o)),
        pid,
        tid,
        cpu: at.cpu.map(|o| read_u32::<LE>(bytes, base + o)),
    }
}

#[inline(always)]
fn read_u64<const LE: bool>(bytes: &[u8], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&bytes[at..at + 8]);
    if LE {
        u64::from_le_bytes(b)
    } else {
        u64::from_be_bytes(b)
    }
}

#[inline(always)]
fn read_u32<const LE: bool>(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    if LE {
        u32::from_le_bytes(b)
    } else {
        u32::from_be_bytes(b)
    }
}
