//! Intel Processor Trace, decoded as perf 6.1 decodes it: the packets of the AUX area
//! trace ([`packet`], perf's intel-pt-pkt-decoder.c) and the AUX buffers a recording
//! holds ([`buffers`]).

pub mod packet;

use perfdata_core::record::{Record, RecordBody};
use perfdata_core::{PerfReader, Result};

/// One AUXTRACE record's data: perf's `struct auxtrace_buffer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuxBuffer {
    /// Offset of the AUXTRACE record in the file (or stream).
    pub file_offset: u64,
    /// Offset of the data in the AUX area (perf's `buffer->offset`).
    pub offset: u64,
    /// perf's `reference`: for Intel PT, the TSC when the data was copied.
    pub reference: u64,
    /// Index of the mmap it came from.
    pub idx: u32,
    /// Thread of the data (-1 for CPU-wide).
    pub tid: i32,
    /// CPU of the data (-1 for per-thread).
    pub cpu: i32,
    /// The trace bytes.
    pub data: Vec<u8>,
}

impl AuxBuffer {
    /// The buffer of an AUXTRACE record, `None` for other records.
    pub fn from_record(record: &Record, file_offset: u64) -> Option<AuxBuffer> {
        let RecordBody::Auxtrace(a) = &record.body else {
            return None;
        };
        Some(AuxBuffer {
            file_offset,
            offset: a.offset,
            reference: a.reference,
            idx: a.idx,
            tid: a.tid,
            cpu: a.cpu as i32,
            data: record.payload.clone(),
        })
    }
}

/// The AUX buffers of a recording, in file order.
pub fn buffers(mut reader: PerfReader) -> Result<Vec<AuxBuffer>> {
    let mut out = Vec::new();
    while let Some(item) = reader.next_record()? {
        if item.raw.record_type() != perfdata_core::record::RecordType::Auxtrace {
            continue;
        }
        let offset = item.raw.offset;
        if let Some(b) = AuxBuffer::from_record(&item.decode()?, offset) {
            out.push(b);
        }
    }
    Ok(out)
}
