//! A stream rewritten as a stream keeps its HEADER_FEATURE records, except the one the
//! conversion changes: COMPRESSED, which must say how the output's records are
//! compressed (perf 6.1 cannot decompress a stream without it). Compressing adds it,
//! before the end-of-features marker (or the first data record of a stream that has
//! none); compressing or decompressing drops the input's.

use perfdata_core::feature::FeatureId;
use perfdata_core::record::{HeaderFeature, Record, RecordBody, RecordType};
use perfdata_core::Metadata;

use super::{features, Compression, Plan};
use crate::error::Result;

/// What happens to the input's HEADER_FEATURE records on the way to the output.
pub(super) struct StreamFeatures {
    /// The COMPRESSED HEADER_FEATURE record still to write, encoded.
    pending: Option<Vec<u8>>,
    /// Whether the input's COMPRESSED feature is dropped.
    drop_input_compressed: bool,
}

/// Where a record stands among a stream's metadata records.
pub(super) enum Place {
    /// HEADER_FEATURE with this feature id.
    Feature(u64),
    /// HEADER_ATTR, or another record that may come before the features end.
    Attr,
    /// Anything else: the features have ended.
    Data,
}

impl StreamFeatures {
    pub(super) fn new(meta: &Metadata, plan: &Plan) -> Result<Self> {
        let (opts, out_endian) = (plan.options(), plan.endian());
        let pending = match features::pipe_compressed_section(meta, plan) {
            Some(section) => {
                let body = HeaderFeature {
                    feat_id: section.id.bit() as u64,
                    data: section.encode(out_endian)?,
                };
                let record =
                    Record::new(RecordType::HeaderFeature, RecordBody::HeaderFeature(body));
                Some(record.encode(out_endian)?)
            }
            None => None,
        };
        Ok(StreamFeatures {
            pending,
            drop_input_compressed: opts.compression != Compression::Keep,
        })
    }

    /// For a record at `place`: the record to write before it, if any, and whether the
    /// record itself is written.
    pub(super) fn before(&mut self, place: Place) -> (Option<Vec<u8>>, bool) {
        let compressed = FeatureId::Compressed.bit() as u64;
        let end_marker = FeatureId::PERF_6_1_LAST as u64;
        match place {
            Place::Feature(id) if id == compressed => (None, !self.drop_input_compressed),
            Place::Feature(id) if id == end_marker => (self.pending.take(), true),
            Place::Feature(_) | Place::Attr => (None, true),
            Place::Data => (self.pending.take(), true),
        }
    }
}
