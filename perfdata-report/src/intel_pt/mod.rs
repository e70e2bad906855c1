//! Intel Processor Trace, decoded as perf 6.1 decodes it: the packets of the AUX area
//! trace ([`packet`], perf's intel-pt-pkt-decoder.c), the decoder's state machine
//! ([`decoder`], intel-pt-decoder.c) with its clock ([`timing`]), the parameters from
//! AUXTRACE_INFO ([`info`]) and where the AUX buffers a recording holds are
//! ([`read_trace`]).

mod aux_data;
pub mod decoder;
pub mod dso_data;
pub mod fast_forward;
pub mod info;
pub mod packet;
pub mod queues;
pub mod state;
mod sync;
pub mod synth;
pub mod timing;
mod walk;

use std::sync::Arc;

use perfdata_core::record::RecordBody;

use perfdata_core::{PerfReader, Result};
use state::DecoderParams;

pub use aux_data::{AuxBuffer, AuxStore, MAX_BUFFER_BYTES};

/// A recording's Intel PT trace: its AUXTRACE_INFO (if of Intel PT), the decoder's
/// parameters for its intel_pt event, and where its AUX buffers are, in file order
/// (their bytes are read as the decoder reaches them: [`Trace::queue`]).
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// The AUXTRACE_INFO words, when the recording has an Intel PT one.
    pub info: Option<info::IntelPtInfo>,
    /// The decoder's parameters (defaults without an intel_pt event).
    pub params: DecoderParams,
    /// The AUX buffers, shared with the queues ([`Trace::queue`]): a recording of
    /// millions of small buffers holds each once.
    pub buffers: Arc<Vec<AuxBuffer>>,
    /// Where their bytes are read from.
    pub store: Arc<AuxStore>,
    /// The size of the largest buffer where it is more than [`MAX_BUFFER_BYTES`] (then
    /// no buffer is kept and `info` is None); 0 otherwise.
    pub too_large: u64,
}

impl Trace {
    /// The buffers of the queue `idx` (perf queues the buffers by mmap index), each
    /// with its reference TSC, read as [`decoder::Decoder::new`] reaches them. A buffer
    /// that cannot be read ends the queue ([`AuxStore::failure`] says why).
    pub fn queue(&self, idx: u32) -> QueueBuffers {
        QueueBuffers {
            store: Arc::clone(&self.store),
            all: Arc::clone(&self.buffers),
            picks: (0..self.buffers.len())
                .filter(|&i| self.buffers[i].idx == idx)
                .collect(),
        }
    }

    /// The bytes of buffer `b`.
    pub fn data(&self, b: &AuxBuffer) -> Result<Vec<u8>> {
        self.store.read(b)
    }

    /// The queues' indexes, ascending.
    pub fn queue_indexes(&self) -> Vec<u32> {
        let mut idx: Vec<u32> = self.buffers.iter().map(|b| b.idx).collect();
        idx.sort_unstable();
        idx.dedup();
        idx
    }
}

/// One queue's buffers, read from the trace's [`AuxStore`] when the decoder asks.
pub struct QueueBuffers {
    store: Arc<AuxStore>,
    /// Every buffer of the trace (a copy per queue was 56 bytes a buffer more).
    all: Arc<Vec<AuxBuffer>>,
    /// The queue's buffers: their places in `all`, in order.
    picks: Vec<usize>,
}

impl fast_forward::Buffers for QueueBuffers {
    fn count(&self) -> usize {
        self.picks.len()
    }

    fn get(&self, i: usize) -> Option<(Vec<u8>, u64)> {
        let b = self.all.get(*self.picks.get(i)?)?;
        let data = self.store.read_for_decoder(b)?;
        Some((data, b.reference))
    }
}

/// Read where a recording's Intel PT trace is (see [`Trace`]).
pub fn read_trace(reader: PerfReader) -> Result<Trace> {
    read_trace_within(reader, MAX_BUFFER_BYTES)
}

/// [`read_trace`] decoding no buffer larger than `limit` bytes (see
/// [`Trace::too_large`]).
pub fn read_trace_within(mut reader: PerfReader, limit: u64) -> Result<Trace> {
    use perfdata_core::record::RecordType;
    let mut trace = Trace::default();
    let mut collector = aux_data::Collector::new(&reader)?;
    while let Some(item) = reader.next_record()? {
        match item.raw.record_type() {
            // Only an Intel PT trace's buffers (its AUXTRACE_INFO comes first, as perf
            // needs it to queue them).
            RecordType::Auxtrace if trace.info.is_some() => {
                let rest = collector.add(item)?;
                copy_rest(rest, &mut reader, &mut collector)?;
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
    if collector.largest > limit {
        trace.too_large = collector.largest;
        trace.info = None;
        return Ok(trace);
    }
    let (buffers, store) = collector.finish()?;
    trace.buffers = Arc::new(buffers);
    trace.store = Arc::new(store);
    if let Some(i) = &trace.info {
        if let Some(config) = i.config(reader.meta().attrs()) {
            trace.params = i.decoder_params(config);
        }
    }
    Ok(trace)
}

/// The rest of an AUXTRACE record's data (beyond what the reader held), copied when
/// `rest` says it is to be.
fn copy_rest(
    rest: bool,
    reader: &mut PerfReader,
    collector: &mut aux_data::Collector,
) -> Result<()> {
    if rest {
        while let Some(chunk) = reader.payload_chunk()? {
            collector.copy_bytes(chunk)?;
        }
    }
    Ok(())
}
