//! Typed records: every record type decoded into a binrw model and encoded back to the
//! same bytes.
//!
//! A record is `header | body | extra | sample_id trailer`, plus for HEADER_TRACING_DATA
//! and AUXTRACE a payload after `header.size`. The body is the type's layout; `extra` is
//! whatever lies between the end of that layout and the trailer (normally nothing);
//! the trailer is present on kernel records (not SAMPLE) when the attr has
//! sample_id_all. Encoding writes the same parts in the same order and recomputes
//! `header.size`, so an unmodified record encodes to the bytes it was decoded from.

mod format;
mod kernel;
mod sample;
mod schedstat;
mod stat;
mod types;
mod user;
#[cfg(test)]
mod user_tests;

use binrw::Endian;
use serde::Serialize;

use crate::codec;
use crate::error::{Error, Problem, Result};

pub use format::{EventFormat, EventIndex, FieldOffsets, SAMPLE_PREFIX_FIELDS, TRAILER_FIELDS};
pub use kernel::*;
pub use sample::*;
pub use schedstat::*;
pub use stat::*;
pub use types::{misc, RecordHeader, RecordType};
pub use user::*;

/// What decoding a record needs besides its bytes.
#[derive(Debug, Clone, Copy)]
pub struct DecodeContext<'a> {
    pub endian: Endian,
    /// The events (attrs) of the recording, to find each record's layout.
    pub events: &'a EventIndex,
}

/// A decoded record body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum RecordBody {
    Mmap(Mmap),
    Lost(Lost),
    Comm(Comm),
    Exit(ForkExit),
    Throttle(Throttle),
    Unthrottle(Throttle),
    Fork(ForkExit),
    Read(ReadRecord),
    Sample(Box<Sample>),
    Mmap2(Mmap2),
    Aux(Aux),
    ItraceStart(ItraceStart),
    LostSamples(LostSamples),
    /// SWITCH has no body: misc says in or out.
    Switch,
    SwitchCpuWide(SwitchCpuWide),
    Namespaces(Namespaces),
    Ksymbol(Ksymbol),
    BpfEvent(BpfEvent),
    Cgroup(Cgroup),
    TextPoke(TextPoke),
    AuxOutputHwId(AuxOutputHwId),
    CallchainDeferred(CallchainDeferred),
    HeaderAttr(HeaderAttr),
    HeaderEventType(HeaderEventType),
    HeaderTracingData(HeaderTracingData),
    HeaderBuildId(HeaderBuildId),
    /// FINISHED_ROUND has no body.
    FinishedRound,
    IdIndex(IdIndex),
    AuxtraceInfo(AuxtraceInfo),
    Auxtrace(Auxtrace),
    AuxtraceError(AuxtraceError),
    ThreadMap(ThreadMap),
    CpuMap(CpuMap),
    StatConfig(StatConfig),
    Stat(Stat),
    StatRound(StatRound),
    EventUpdate(EventUpdate),
    TimeConv(TimeConv),
    HeaderFeature(HeaderFeature),
    Compressed(Compressed),
    /// FINISHED_INIT has no body.
    FinishedInit,
    Compressed2(Compressed2),
    BpfMetadata(Box<BpfMetadata>),
    SchedstatCpu(SchedstatCpu),
    SchedstatDomain(Box<SchedstatDomain>),
    /// A body kept as bytes: unknown types, and records whose bytes do not fit their
    /// type's layout.
    Raw(#[serde(serialize_with = "crate::text::serialize_hex")] Vec<u8>),
}

/// A decoded record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    pub header: RecordHeader,
    pub body: RecordBody,
    /// Bytes between the body's layout and the trailer.
    #[serde(
        skip_serializing_if = "Vec::is_empty",
        serialize_with = "crate::text::serialize_hex"
    )]
    pub extra: Vec<u8>,
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

        let (body_model, used) =
            decode_body(ty, header, body, body_offset, &context, endian, format)?;
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
        let start = out.len();
        out.extend_from_slice(&[0u8; RecordHeader::SIZE]);
        encode_body(&self.body, endian, out)?;
        out.extend_from_slice(&self.extra);
        if let Some(sid) = &self.sample_id {
            out.extend_from_slice(&codec::encode(sid, endian, ()));
        }
        let size = out.len() - start;
        let size16 = u16::try_from(size).map_err(|_| {
            Error::format(
                0,
                format!("encoding record {}", self.record_type()),
                Problem::TooLarge {
                    what: "record size",
                    value: size as u64,
                    limit: u16::MAX as u64,
                },
            )
        })?;
        let header = RecordHeader {
            size: size16,
            ..self.header
        };
        out[start..start + RecordHeader::SIZE].copy_from_slice(&codec::encode(&header, endian, ()));
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

/// Decode the body of a `ty` record; returns the model and how many body bytes it used.
fn decode_body(
    ty: RecordType,
    header: RecordHeader,
    body: &[u8],
    offset: u64,
    context: &dyn Fn() -> String,
    endian: Endian,
    format: Option<EventFormat>,
) -> Result<(RecordBody, usize)> {
    macro_rules! typed {
        ($variant:expr, $ty:ty) => {
            typed!($variant, $ty, ())
        };
        ($variant:expr, $ty:ty, $args:expr) => {{
            let (v, used) = codec::decode_prefix_lazy::<$ty>(body, endian, $args, offset, context)?;
            ($variant(v), used)
        }};
    }
    let need_format = || {
        format.ok_or_else(|| {
            Error::format(
                offset,
                context(),
                Problem::Invalid("no attr describes this record's layout".into()),
            )
        })
    };
    Ok(match ty {
        RecordType::Mmap => typed!(RecordBody::Mmap, Mmap),
        RecordType::Lost => typed!(RecordBody::Lost, Lost),
        RecordType::Comm => typed!(RecordBody::Comm, Comm),
        RecordType::Exit => typed!(RecordBody::Exit, ForkExit),
        RecordType::Throttle => typed!(RecordBody::Throttle, Throttle),
        RecordType::Unthrottle => typed!(RecordBody::Unthrottle, Throttle),
        RecordType::Fork => typed!(RecordBody::Fork, ForkExit),
        RecordType::Read => {
            typed!(RecordBody::Read, ReadRecord, (need_format()?.read_format,))
        }
        RecordType::Sample => {
            let f = need_format()?;
            let (v, used) =
                codec::decode_prefix_lazy::<Sample>(body, endian, (f,), offset, context)?;
            (RecordBody::Sample(Box::new(v)), used)
        }
        RecordType::Mmap2 => typed!(
            RecordBody::Mmap2,
            Mmap2,
            (header.misc & misc::MMAP_BUILD_ID != 0,)
        ),
        RecordType::Aux => typed!(RecordBody::Aux, Aux),
        RecordType::ItraceStart => typed!(RecordBody::ItraceStart, ItraceStart),
        RecordType::LostSamples => typed!(RecordBody::LostSamples, LostSamples),
        RecordType::Switch => (RecordBody::Switch, 0),
        RecordType::SwitchCpuWide => typed!(RecordBody::SwitchCpuWide, SwitchCpuWide),
        RecordType::Namespaces => typed!(RecordBody::Namespaces, Namespaces),
        RecordType::Ksymbol => typed!(RecordBody::Ksymbol, Ksymbol),
        RecordType::BpfEvent => typed!(RecordBody::BpfEvent, BpfEvent),
        RecordType::Cgroup => typed!(RecordBody::Cgroup, Cgroup),
        RecordType::TextPoke => typed!(RecordBody::TextPoke, TextPoke),
        RecordType::AuxOutputHwId => typed!(RecordBody::AuxOutputHwId, AuxOutputHwId),
        RecordType::CallchainDeferred => {
            typed!(RecordBody::CallchainDeferred, CallchainDeferred)
        }
        RecordType::HeaderAttr => {
            let attr_len = HeaderAttr::attr_len(body, endian);
            typed!(RecordBody::HeaderAttr, HeaderAttr, (attr_len,))
        }
        RecordType::HeaderEventType => typed!(RecordBody::HeaderEventType, HeaderEventType),
        RecordType::HeaderTracingData => {
            typed!(RecordBody::HeaderTracingData, HeaderTracingData)
        }
        RecordType::HeaderBuildId => typed!(RecordBody::HeaderBuildId, HeaderBuildId),
        RecordType::FinishedRound => (RecordBody::FinishedRound, 0),
        RecordType::IdIndex => typed!(RecordBody::IdIndex, IdIndex),
        RecordType::AuxtraceInfo => typed!(RecordBody::AuxtraceInfo, AuxtraceInfo),
        RecordType::Auxtrace => typed!(RecordBody::Auxtrace, Auxtrace),
        RecordType::AuxtraceError => typed!(RecordBody::AuxtraceError, AuxtraceError),
        RecordType::ThreadMap => typed!(RecordBody::ThreadMap, ThreadMap),
        RecordType::CpuMap => typed!(RecordBody::CpuMap, CpuMap),
        RecordType::StatConfig => typed!(RecordBody::StatConfig, StatConfig),
        RecordType::Stat => typed!(RecordBody::Stat, Stat),
        RecordType::StatRound => typed!(RecordBody::StatRound, StatRound),
        RecordType::EventUpdate => typed!(RecordBody::EventUpdate, EventUpdate),
        RecordType::TimeConv => typed!(RecordBody::TimeConv, TimeConv),
        RecordType::HeaderFeature => typed!(RecordBody::HeaderFeature, HeaderFeature),
        RecordType::Compressed => typed!(RecordBody::Compressed, Compressed),
        RecordType::FinishedInit => (RecordBody::FinishedInit, 0),
        RecordType::Compressed2 => typed!(RecordBody::Compressed2, Compressed2),
        RecordType::BpfMetadata => {
            let (v, used) =
                codec::decode_prefix_lazy::<BpfMetadata>(body, endian, (), offset, context)?;
            (RecordBody::BpfMetadata(Box::new(v)), used)
        }
        RecordType::SchedstatCpu => typed!(RecordBody::SchedstatCpu, SchedstatCpu),
        RecordType::SchedstatDomain => {
            let (v, used) =
                codec::decode_prefix_lazy::<SchedstatDomain>(body, endian, (), offset, context)?;
            (RecordBody::SchedstatDomain(Box::new(v)), used)
        }
        RecordType::Unknown(_) => (RecordBody::Raw(body.to_vec()), body.len()),
    })
}

fn encode_body(body: &RecordBody, endian: Endian, out: &mut Vec<u8>) -> Result<()> {
    // A model's own write checks (a count that no longer fits its field after an edit)
    // fail the encoding instead of panicking.
    macro_rules! put {
        ($v:expr) => {
            out.extend_from_slice(&codec::try_encode($v, endian, ()).map_err(|e| {
                Error::format(0, "encoding a record body", Problem::Invalid(e.to_string()))
            })?)
        };
    }
    match body {
        RecordBody::Mmap(v) => put!(v),
        RecordBody::Lost(v) => put!(v),
        RecordBody::Comm(v) => put!(v),
        RecordBody::Exit(v) | RecordBody::Fork(v) => put!(v),
        RecordBody::Throttle(v) | RecordBody::Unthrottle(v) => put!(v),
        RecordBody::Read(v) => put!(v),
        RecordBody::Sample(v) => put!(v.as_ref()),
        RecordBody::Mmap2(v) => put!(v),
        RecordBody::Aux(v) => put!(v),
        RecordBody::ItraceStart(v) => put!(v),
        RecordBody::LostSamples(v) => put!(v),
        RecordBody::Switch | RecordBody::FinishedRound | RecordBody::FinishedInit => {}
        RecordBody::SwitchCpuWide(v) => put!(v),
        RecordBody::Namespaces(v) => put!(v),
        RecordBody::Ksymbol(v) => put!(v),
        RecordBody::BpfEvent(v) => put!(v),
        RecordBody::Cgroup(v) => put!(v),
        RecordBody::TextPoke(v) => put!(v),
        RecordBody::AuxOutputHwId(v) => put!(v),
        RecordBody::CallchainDeferred(v) => put!(v),
        RecordBody::HeaderAttr(v) => put!(v),
        RecordBody::HeaderEventType(v) => put!(v),
        RecordBody::HeaderTracingData(v) => put!(v),
        RecordBody::HeaderBuildId(v) => put!(v),
        RecordBody::IdIndex(v) => put!(v),
        RecordBody::AuxtraceInfo(v) => put!(v),
        RecordBody::Auxtrace(v) => put!(v),
        RecordBody::AuxtraceError(v) => put!(v),
        RecordBody::ThreadMap(v) => put!(v),
        RecordBody::CpuMap(v) => put!(v),
        RecordBody::StatConfig(v) => put!(v),
        RecordBody::Stat(v) => put!(v),
        RecordBody::StatRound(v) => put!(v),
        RecordBody::EventUpdate(v) => put!(v),
        RecordBody::TimeConv(v) => put!(v),
        RecordBody::HeaderFeature(v) => put!(v),
        RecordBody::Compressed(v) => put!(v),
        RecordBody::Compressed2(v) => put!(v),
        RecordBody::BpfMetadata(v) => put!(v.as_ref()),
        RecordBody::SchedstatCpu(v) => put!(v),
        RecordBody::SchedstatDomain(v) => put!(v.as_ref()),
        RecordBody::Raw(bytes) => out.extend_from_slice(bytes),
    }
    Ok(())
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
