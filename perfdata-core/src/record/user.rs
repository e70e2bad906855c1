//! Bodies of the records perf itself writes (types 64 and up): metadata in pipe mode,
//! compression containers, AUX area tracing, `perf stat record`, and so on.

use binrw::binrw;
use serde::Serialize;

use crate::attr::PerfEventAttr;
use crate::bounded;

/// HEADER_ATTR (64): an attr of `attr.size` bytes, then its ids to the end of the record.
#[binrw]
#[br(import(attr_len: usize))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderAttr {
    #[br(args(attr_len))]
    pub attr: PerfEventAttr,
    #[br(parse_with = bounded::words_to_end)]
    pub ids: Vec<u64>,
}

/// HEADER_TRACING_DATA (66). perf writes `{u32 size; u32 pad}` and puts the `size` bytes
/// of tracing data after the record; simpleperf puts them inside the record, after
/// `size`. `rest` holds what follows `size` inside the record either way.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderTracingData {
    pub size: u32,
    #[br(parse_with = bounded::rest)]
    #[serde(skip)]
    pub rest: Vec<u8>,
}

impl HeaderTracingData {
    /// The record size perf writes (12 before perf 4.10); anything larger carries the data
    /// inside.
    pub const PERF_RECORD_SIZE: u16 = 16;
}

/// AUXTRACE (71): `size` bytes of AUX area trace data follow the record.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Auxtrace {
    pub size: u64,
    pub offset: u64,
    pub reference: u64,
    pub idx: u32,
    pub tid: i32,
    pub cpu: u32,
    pub reserved: u32,
}

/// HEADER_FEATURE (80): a feature section sent inline in pipe mode.
///
/// The payload is the same bytes as the file-mode section; decode it with
/// [`crate::feature::FeatureSection::decode`].
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HeaderFeature {
    pub feat_id: u64,
    #[br(parse_with = bounded::rest)]
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub data: Vec<u8>,
}

/// COMPRESSED (81): a piece of one continuous zstd stream. Its size is not 8-aligned.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compressed {
    #[br(parse_with = bounded::rest)]
    #[serde(skip)]
    pub data: Vec<u8>,
}

/// COMPRESSED2 (83, perf 6.16): `data_size` bytes of zstd, then zero padding to 8 (the
/// padding stays in the record's extra bytes).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Compressed2 {
    #[br(temp)]
    #[bw(calc = data.len() as u64)]
    data_size: u64,
    #[br(parse_with = bounded::bytes, args(data_size as usize))]
    #[serde(skip)]
    pub data: Vec<u8>,
}
