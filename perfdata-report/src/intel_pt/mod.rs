//! Intel Processor Trace, decoded as perf 6.1 decodes it: the packets of the AUX area
//! trace ([`packet`], perf's intel-pt-pkt-decoder.c), the decoder's state machine
//! ([`decoder`], intel-pt-decoder.c) with its clock ([`timing`]), the parameters from
//! AUXTRACE_INFO ([`info`]) and the AUX buffers a recording holds ([`read_trace`]).

pub mod decoder;
pub mod dso_data;
pub mod info;
pub mod packet;
pub mod queues;
pub mod state;
mod sync;
pub mod synth;
pub mod timing;
mod walk;

use perfdata_core::record::{Record, RecordBody};

use perfdata_core::{PerfReader, Result};
use state::DecoderParams;

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
pub fn buffers(reader: PerfReader) -> Result<Vec<AuxBuffer>> {
    Ok(read_trace(reader)?.buffers)
}

/// A recording's Intel PT trace: its AUXTRACE_INFO (if of Intel PT), the decoder's
/// parameters for its intel_pt event, and its AUX buffers in file order.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The AUXTRACE_INFO words, when the recording has an Intel PT one.
    pub info: Option<info::IntelPtInfo>,
    /// The decoder's parameters (defaults without an intel_pt event).
    pub params: DecoderParams,
    /// The AUX buffers.
    pub buffers: Vec<AuxBuffer>,
    /// The bytes of Intel PT trace the recording holds where they are more than
    /// [`MAX_TRACE_BYTES`] (then no buffer is kept and `info` is None); 0 otherwise.
    pub too_large: u64,
}

/// The most bytes of Intel PT trace [`read_trace`] keeps. perf queues every AUX buffer
/// before it decodes; perfdata holds them in memory to do the same, so a larger trace is
/// left undecoded (its recorded samples are still listed) rather than memory growing
/// with the file.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

impl Trace {
    /// The buffers of the queue `idx` (perf queues the buffers by mmap index), each
    /// with its reference TSC, for [`decoder::Decoder::new`].
    pub fn queue(&self, idx: u32) -> Vec<(&[u8], u64)> {
        self.buffers
            .iter()
            .filter(|b| b.idx == idx)
            .map(|b| (&b.data[..], b.reference))
            .collect()
    }

    /// The queues' indexes, ascending.
    pub fn queue_indexes(&self) -> Vec<u32> {
        let mut idx: Vec<u32> = self.buffers.iter().map(|b| b.idx).collect();
        idx.sort_unstable();
        idx.dedup();
        idx
    }
}

/// Read a recording's Intel PT trace (see [`Trace`]).
pub fn read_trace(reader: PerfReader) -> Result<Trace> {
    read_trace_within(reader, MAX_TRACE_BYTES)
}

/// [`read_trace`] keeping at most `limit` bytes of trace (see [`Trace::too_large`]).
pub fn read_trace_within(mut reader: PerfReader, limit: u64) -> Result<Trace> {
    use perfdata_core::record::RecordType;
    let mut trace = Trace::default();
    let mut held = 0u64;
    while let Some(item) = reader.next_record()? {
        match item.raw.record_type() {
            // Only an Intel PT trace's buffers (its AUXTRACE_INFO comes first, as perf
            // needs it to queue them), and at most MAX_TRACE_BYTES of them.
            RecordType::Auxtrace if trace.info.is_some() => {
                held += item.raw.payload.len() as u64;
                if held > limit {
                    trace.buffers = Vec::new();
                    continue;
                }
                let offset = item.raw.offset;
                if let Some(b) = AuxBuffer::from_record(&item.decode()?, offset) {
                    trace.buffers.push(b);
                }
            }
            RecordType::AuxtraceInfo => {
                let record = item.decode()?;
                if let RecordBody::AuxtraceInfo(i) = &record.body {
                    if i.type_ != info::AUXTRACE_TYPE {
                        // Another kind of trace (an ETM's): nothing to read on.
                        return Ok(trace);
                    }
                    trace.info = info::IntelPtInfo::from_priv(&i.priv_);
                }
            }
            _ => {}
        }
    }
    if held > limit {
        trace.too_large = held;
        trace.info = None;
    }
    if let Some(i) = &trace.info {
        if let Some(config) = i.config(reader.meta().attrs()) {
            trace.params = i.decoder_params(config);
        }
    }
    Ok(trace)
}
