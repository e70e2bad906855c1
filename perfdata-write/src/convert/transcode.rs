//! A record in another byte order: decoded through its model and encoded again, the
//! memory images inside samples swapped as the other machine would hold them.

use binrw::Endian;
use perfdata_core::record::{DecodeContext, Record};
use perfdata_core::Metadata;

use super::{features, Converter};
use crate::error::{Result, WriteError};

impl Converter {
    /// Re-encode a record in the output byte order (a copy when the order is the same).
    /// `None` when the record is written as it is (the common, copy-free case).
    pub(super) fn transcode(
        &self,
        raw: &perfdata_core::raw::RawRecord<'_>,
        meta: &Metadata,
    ) -> Result<Option<Vec<u8>>> {
        if self.in_endian == self.out_endian {
            return Ok(None);
        }
        // A payload too large to hold (AUXTRACE's trace, HEADER_TRACING_DATA's blob) is
        // bytes kept in their order, as perf reads them: only the record is swapped, and
        // the payload streams after it as it is.
        let ctx = DecodeContext {
            endian: self.in_endian,
            events: &meta.events,
        };
        let mut record = Record::decode(raw.bytes, raw.payload, raw.offset, &ctx)?;
        match &mut record.body {
            perfdata_core::record::RecordBody::Sample(sample) => swap_memory_images(sample),
            perfdata_core::record::RecordBody::HeaderFeature(hf) => {
                // The payload is a feature section: swap it through its model.
                hf.data = features::transcode_section(hf, meta, raw.offset, self.out_endian)?;
            }
            _ => {}
        }
        if let perfdata_core::record::RecordBody::Raw(_) = record.body {
            return Err(WriteError::unsupported(
                Some(raw.offset),
                format!(
                    "record {} has no known layout, so its fields cannot be byte-swapped",
                    raw.record_type()
                ),
            ));
        }
        Ok(Some(record.encode(self.out_endian)?))
    }
}

/// The user stack and AUX snapshot of a sample are memory images: a big-endian machine's
/// stack holds big-endian words. perf reads a foreign-endian sample by swapping all of it
/// as u64 words and then undoing that only for RAW data, so to show perf the same memory
/// after a byte-order change, these images are swapped word by word as well.
fn swap_memory_images(sample: &mut perfdata_core::record::Sample) {
    fn swap_words(bytes: &mut [u8]) {
        for word in bytes.chunks_exact_mut(8) {
            word.reverse();
        }
    }
    if let Some(stack) = &mut sample.stack_user {
        swap_words(&mut stack.data);
    }
    if let Some(aux) = &mut sample.aux {
        swap_words(&mut aux.data);
    }
}

/// Split an encoded record into its `header.size` bytes and the payload after them.
pub(super) fn split_payload(bytes: &[u8], endian: Endian) -> (&[u8], &[u8]) {
    let size = perfdata_core::codec::u16_at(bytes, 6, endian).unwrap_or(0) as usize;
    if size >= 8 && size <= bytes.len() {
        bytes.split_at(size)
    } else {
        (bytes, &[])
    }
}
