//! Typed records: every record type decoded into a binrw model and encoded back to the
//! same bytes.
//!
//! A record is `header | body | extra | sample_id trailer`, plus for HEADER_TRACING_DATA
//! and AUXTRACE a payload after `header.size`. The body is the type's layout; `extra` is
//! whatever lies between the end of that layout and the trailer (normally nothing);
//! the trailer is present on kernel records (not SAMPLE) when the attr has
//! sample_id_all. Encoding writes the same parts in the same order and recomputes
//! `header.size`, so an unmodified record encodes to the bytes it was decoded from.

mod facts;
mod format;
mod index;
mod kernel;
mod layout;
mod registry;
mod sample;
mod sample_view;
mod schedstat;
mod stat;
mod types;
mod user;
#[cfg(test)]
mod user_tests;
mod views;
#[cfg(test)]
mod views_tests;

use binrw::Endian;
use serde::Serialize;

use crate::codec;
use crate::error::{Error, Problem, Result};

pub use facts::{Content, Facts, StringField, StringKind, TaskFacts, TaskScope};
pub use format::{EventFormat, SAMPLE_PREFIX_FIELDS, TRAILER_FIELDS};
pub use index::EventIndex;
pub use kernel::*;
pub use layout::{FieldOffsets, SampleLayout, Slots};
pub use registry::RecordBody;
pub use sample::*;
pub use sample_view::{BranchStackView, ReadView, RegsView, SampleView, StackUserView, U64s};
pub use schedstat::*;
pub use stat::*;
pub use types::{misc, RecordHeader, RecordType};
pub use user::*;
pub use views::{RecordView, Word};

/// What decoding a record needs besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct DecodeContext<'a> {
    /// Byte order of the recording.
    pub endian: Endian,
    /// The events (attrs) of the recording, to find each record's layout.
    pub events: &'a EventIndex,
}

/// A decoded record.
///
/// ```
/// use perfdata_core::record::{RecordBody, RecordType};
///
/// let mut reader = perfdata_core::PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// let endian = reader.meta().endian;
/// while let Some(item) = reader.next_record()? {
///     if item.raw.record_type() == RecordType::Mmap2 {
///         let record = item.decode()?;
///         assert!(matches!(record.body, RecordBody::Mmap2(_)));
///         // Encoding gives the bytes back.
///         assert_eq!(record.encode(endian)?, item.raw.bytes);
///     }
/// }
/// # Ok::<(), perfdata_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// The record's header.
    pub header: RecordHeader,
    /// The body, decoded by the record's type.
    pub body: RecordBody,
    /// Bytes between the body's layout and the trailer.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::mark::bytes"
    )]
    pub extra: Vec<u8>,
    /// The sample_id trailer (non-SAMPLE kernel records with sample_id_all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_id: Option<SampleId>,
    /// Bytes after `header.size` (HEADER_TRACING_DATA, AUXTRACE).
    #[serde(skip)]
    pub payload: Vec<u8>,
}

impl Record {
    /// A record of type `ty` with `body` and nothing else (misc 0, no trailer, no
    /// payload); its size is computed when it is encoded.
    pub fn new(ty: RecordType, body: RecordBody) -> Self {
        Record {
            header: RecordHeader::new(ty, 0, 0),
            body,
            extra: Vec::new(),
            sample_id: None,
            payload: Vec::new(),
        }
    }

    /// The record's type.
    pub fn record_type(&self) -> RecordType {
        self.header.record_type()
    }

    /// Decode `bytes` (header included, `header.size` long) and its `payload`; `offset`
    /// is where the record starts, for error messages.
    pub fn decode(bytes: &[u8], payload: &[u8], offset: u64, ctx: &DecodeContext) -> Result<Self> {
        let endian = ctx.endian;
        let header: RecordHeader = codec::decode(bytes, endian, (), offset, "record header")?;
        let ty = header.record_type();
        let context = || format!("record {ty}");
        if bytes.len() < RecordHeader::SIZE {
            return Err(Error::format(
                offset,
                context(),
                Problem::RecordTooSmall {
                    size: bytes.len() as u64,
                    min: RecordHeader::SIZE as u64,
                },
            ));
        }

        // Which event's layout applies, and how long its trailer is.
        let is_sample = ty == RecordType::Sample;
        let format = ctx
            .events
            .event_of(bytes, is_sample, endian)
            .and_then(|i| ctx.events.format(i).copied());
        let trailer_len = match (ty.has_sample_id_trailer(), format) {
            (true, Some(f)) => f.sample_id_len(),
            _ => 0,
        };
        if bytes.len() < RecordHeader::SIZE + trailer_len {
            return Err(Error::format(
                offset,
                context(),
                Problem::RecordTooSmall {
                    size: bytes.len() as u64,
                    min: (RecordHeader::SIZE + trailer_len) as u64,
                },
            ));
        }
        let body_end = bytes.len() - trailer_len;
        let body = &bytes[RecordHeader::SIZE..body_end];
        let body_offset = offset + RecordHeader::SIZE as u64;

        let (body_model, used) = registry::decode_body(
            ty,
            &registry::BodyContext {
                header,
                body,
                offset: body_offset,
                endian,
                format,
                context: &context,
            },
        )?;
        let sample_id = match (trailer_len, format) {
            (n, Some(f)) if n > 0 => Some(
                codec::decode_prefix_lazy::<SampleId>(
                    &bytes[body_end..],
                    endian,
                    (f.sample_type,),
                    offset + body_end as u64,
                    &context,
                )?
                .0,
            ),
            _ => None,
        };
        Ok(Record {
            header,
            body: body_model,
            extra: body[used..].to_vec(),
            sample_id,
            payload: payload.to_vec(),
        })
    }

    /// Decode, or keep the record as raw bytes when they do not fit its type's layout;
    /// the error comes back beside the record so the caller can warn with it.
    pub fn decode_or_raw(
        bytes: &[u8],
        payload: &[u8],
        offset: u64,
        ctx: &DecodeContext,
    ) -> (Self, Option<Error>) {
        match Self::decode(bytes, payload, offset, ctx) {
            Ok(r) => (r, None),
            Err(e) => (Self::raw(bytes, payload, ctx.endian), Some(e)),
        }
    }

    /// A record kept whole as bytes.
    pub fn raw(bytes: &[u8], payload: &[u8], endian: Endian) -> Self {
        let header = codec::decode(bytes, endian, (), 0, "record header").unwrap_or(RecordHeader {
            type_: 0,
            misc: 0,
            size: 0,
        });
        Record {
            header,
            body: RecordBody::Raw(bytes.get(RecordHeader::SIZE..).unwrap_or(&[]).to_vec()),
            extra: Vec::new(),
            sample_id: None,
            payload: payload.to_vec(),
        }
    }

    /// Encode into `out`: header (with the size recomputed), body, extra, trailer, then
    /// the payload.
    pub fn encode_into(&self, endian: Endian, out: &mut Vec<u8>) -> Result<()> {
        let what = || format!("record {}", self.record_type());
        // The model's errors name the record, not the model's Rust type.
        let named = |e: Error| match e {
            Error::Encode { reason, .. } => Error::Encode {
                what: what(),
                reason,
            },
            other => other,
        };
        let start = out.len();
        out.extend_from_slice(&[0u8; RecordHeader::SIZE]);
        registry::encode_body(&self.body, endian, out).map_err(named)?;
        out.extend_from_slice(&self.extra);
        if let Some(sid) = &self.sample_id {
            out.extend_from_slice(&codec::encode(sid, endian, ()).map_err(named)?);
        }
        let size = out.len() - start;
        let size16 = u16::try_from(size).map_err(|_| Error::Encode {
            what: what(),
            reason: format!("its {size} bytes do not fit the header's 16-bit size field"),
        })?;
        let header = RecordHeader {
            size: size16,
            ..self.header
        };
        out[start..start + RecordHeader::SIZE]
            .copy_from_slice(&codec::encode(&header, endian, ()).map_err(named)?);
        out.extend_from_slice(&self.payload);
        Ok(())
    }

    /// Encode into a new buffer.
    pub fn encode(&self, endian: Endian) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(self.header.size as usize + self.payload.len());
        self.encode_into(endian, &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::{AttrFlags, PerfEventAttr, SampleType};

    fn index(st: SampleType) -> EventIndex {
        let mut attr = PerfEventAttr {
            sample_type: st,
            ..Default::default()
        };
        attr.flags |= AttrFlags::SAMPLE_ID_ALL;
        let mut idx = EventIndex::new();
        idx.push(&attr, &[1]);
        idx
    }

    #[test]
    fn comm_with_trailer_round_trips() {
        let idx = index(SampleType::TID | SampleType::TIME);
        let ctx = DecodeContext {
            endian: Endian::Little,
            events: &idx,
        };
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&3u32.to_le_bytes());
        bytes.extend_from_slice(&(misc::COMM_EXEC).to_le_bytes());
        bytes.extend_from_slice(&40u16.to_le_bytes());
        bytes.extend_from_slice(&100i32.to_le_bytes());
        bytes.extend_from_slice(&101i32.to_le_bytes());
        bytes.extend_from_slice(b"sleep\0\0\0");
        bytes.extend_from_slice(&100i32.to_le_bytes());
        bytes.extend_from_slice(&101i32.to_le_bytes());
        bytes.extend_from_slice(&123456789u64.to_le_bytes());
        let r = Record::decode(&bytes, &[], 0, &ctx).unwrap();
        match &r.body {
            RecordBody::Comm(c) => {
                assert_eq!(c.comm.as_str_lossy(), "sleep");
                assert_eq!((c.pid, c.tid), (100, 101));
            }
            other => panic!("expected COMM, got {other:?}"),
        }
        assert_eq!(r.sample_id.unwrap().time, Some(123456789));
        assert_eq!(r.encode(Endian::Little).unwrap(), bytes);
    }

    #[test]
    fn record_shorter_than_its_trailer_is_an_error_naming_it() {
        let idx = index(SampleType::TID | SampleType::TIME);
        let ctx = DecodeContext {
            endian: Endian::Little,
            events: &idx,
        };
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&4u32.to_le_bytes());
        bytes.extend_from_slice(&0u16.to_le_bytes());
        bytes.extend_from_slice(&16u16.to_le_bytes());
        bytes.extend_from_slice(&[0; 8]);
        let e = Record::decode(&bytes, &[], 4096, &ctx).unwrap_err();
        assert_eq!(e.offset(), Some(4096));
        assert!(e.to_string().contains("record EXIT"), "{e}");
        let (raw, err) = Record::decode_or_raw(&bytes, &[], 4096, &ctx);
        assert!(err.is_some());
        assert_eq!(raw.encode(Endian::Little).unwrap(), bytes);
    }
}
