//! AUXTRACE: the file offsets of the AUXTRACE records, so that a reader can find the trace
//! data without walking the records. A writer that moves those records must rewrite it.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use std::io::SeekFrom;

use binrw::{binrw, BinResult, Endian};
use serde::Serialize;

use crate::bounded;

/// How the index is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuxTraceLayout {
    /// perf: `u64 nr`, then the entries.
    #[default]
    Perf,
    /// simpleperf: the entries with no count (its `WriteAuxTraceFeature`), as many as the
    /// section holds.
    Uncounted,
}

/// perf's layout if the first u64 is a count whose entries fit the section (the test of
/// perf's `auxtrace_index__process`); otherwise simpleperf's when the size is a whole
/// number of entries. The two cannot be confused on a well-formed section: perf's is
/// 8 bytes past a multiple of 16, simpleperf's a multiple of 16.
#[binrw::parser(reader, endian)]
fn detect_layout() -> BinResult<AuxTraceLayout> {
    let left = bounded::remaining(reader)?;
    if left >= 8 {
        let pos = reader.stream_position()?;
        let mut b = [0u8; 8];
        reader.read_exact(&mut b)?;
        reader.seek(SeekFrom::Start(pos))?;
        let nr = match endian {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        };
        if nr
            .checked_mul(16)
            .and_then(|n| n.checked_add(8))
            .is_some_and(|n| n <= left)
        {
            return Ok(AuxTraceLayout::Perf);
        }
    }
    Ok(if left % 16 == 0 {
        AuxTraceLayout::Uncounted
    } else {
        AuxTraceLayout::Perf
    })
}

#[binrw::parser(reader, endian)]
fn parse_entries(layout: AuxTraceLayout, nr: u64) -> BinResult<Vec<AuxTraceEntry>> {
    match layout {
        AuxTraceLayout::Perf => {
            let nr = usize::try_from(nr).unwrap_or(usize::MAX);
            bounded::vec(reader, endian, (nr, 16))
        }
        AuxTraceLayout::Uncounted => bounded::while_fits(reader, endian, (16, ())),
    }
}

/// AUXTRACE: `u64 nr, nr x {u64 file_offset, u64 size}` (perf), or the entries alone
/// (simpleperf).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct AuxTrace {
    #[br(parse_with = detect_layout)]
    #[bw(ignore)]
    /// How the entries were laid out (version).
    pub layout: AuxTraceLayout,
    #[br(temp, if(layout == AuxTraceLayout::Perf, 0))]
    #[bw(if(*layout == AuxTraceLayout::Perf), calc = entries.len() as u64)]
    nr: u64,
    #[br(parse_with = parse_entries, args(layout, nr))]
    /// Where each AUXTRACE record is: file offset and size.
    pub entries: Vec<AuxTraceEntry>,
}

/// Where one AUXTRACE record is.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct AuxTraceEntry {
    /// File offset of the AUXTRACE record.
    pub file_offset: u64,
    /// Its size: header.size of the record (48), not counting the trace after it.
    pub size: u64,
}

impl AuxTrace {
    /// An index in perf's layout.
    pub fn new(entries: Vec<AuxTraceEntry>) -> Self {
        AuxTrace {
            layout: AuxTraceLayout::Perf,
            entries,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};

    #[test]
    fn perf_layout() {
        let mut b = Bytes::le();
        b.u64(2).u64(0x29c0).u64(48).u64(0x7788).u64(48);
        let a: AuxTrace = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(a.layout, AuxTraceLayout::Perf);
        assert_eq!(
            a.entries,
            vec![
                AuxTraceEntry {
                    file_offset: 0x29c0,
                    size: 48
                },
                AuxTraceEntry {
                    file_offset: 0x7788,
                    size: 48
                }
            ]
        );
        same_in_big_endian(&a, ());
        let empty: AuxTrace = round_trip(&0u64.to_le_bytes(), Endian::Little, ());
        assert_eq!(
            (empty.layout, empty.entries.len()),
            (AuxTraceLayout::Perf, 0)
        );
    }

    #[test]
    fn simpleperf_layout_has_no_count() {
        let mut b = Bytes::le();
        b.u64(0x26a8).u64(48);
        let a: AuxTrace = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(a.layout, AuxTraceLayout::Uncounted);
        assert_eq!(
            a.entries,
            vec![AuxTraceEntry {
                file_offset: 0x26a8,
                size: 48
            }]
        );
        same_in_big_endian(&a, ());
    }

    #[test]
    fn count_past_the_section_is_an_error() {
        let mut b = Bytes::le();
        b.u64(5).u64(1).u64(2);
        assert!(crate::codec::decode::<AuxTrace>(&b.v, Endian::Little, (), 0, "t").is_err());
    }
}
