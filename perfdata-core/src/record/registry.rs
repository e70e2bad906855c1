//! The catalogue of record types: one row per type perf defines. Each row gives the
//! variant, perf's number, the name `perf report --stats` prints, the body model (none for
//! records that are a header only), the binrw arguments the model needs from the record
//! and its event, and flags. A body may carry attributes for its [`RecordBody`] field
//! (a `#[serde(...)]` where its JSON form differs from the model's own). The rows
//! generate [`RecordType`], [`RecordBody`], the number and name tables, and both
//! directions of the body dispatch, so adding a record type is one row here plus its
//! model.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::Endian;

use super::*;
use crate::codec;
use crate::error::{Error, Problem, Result};
use crate::feature::BuildIdEntry;

/// What a body model may need to know to decode: its record's header, its event's
/// layout, the byte order and its bytes.
pub(crate) struct BodyContext<'a> {
    pub header: RecordHeader,
    pub body: &'a [u8],
    pub offset: u64,
    pub endian: Endian,
    pub format: Option<EventFormat>,
    pub context: &'a dyn Fn() -> String,
}

impl BodyContext<'_> {
    /// The event layout, which SAMPLE and READ records cannot be decoded without.
    pub fn format(&self) -> Result<EventFormat> {
        self.format.ok_or_else(|| {
            Error::format(
                self.offset,
                (self.context)(),
                Problem::Invalid("no attr describes this record's layout".into()),
            )
        })
    }
}

/// Calls a row's argument closure: naming the closure's parameter type here lets the
/// rows write `|cx| ...` without annotations.
fn args_of<A>(f: impl Fn(&BodyContext) -> Result<A>, cx: &BodyContext) -> Result<A> {
    f(cx)
}

macro_rules! record_types {
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $variant:ident = $num:literal, $name:literal, [$( $(#[$battr:meta])* $body:ty )?], [$($args:expr)?], [$($flag:ident),*];
    )*) => {
        /// `perf_event_header.type`, named as perf names the records.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        pub enum RecordType {
            $(
                #[doc = concat!("`", $name, "` (", stringify!($num), ").")]
                $(#[doc = $doc])* $(#[cfg($cfg)])? $variant,
            )*
            /// Any other number (simpleperf's own records start at 32768).
            Unknown(u32),
        }

        impl RecordType {
            /// The type's number (a match the compiler turns into a table: this runs
            /// for every record).
            #[inline]
            pub const fn as_u32(self) -> u32 {
                match self {
                    $($(#[cfg($cfg)])? RecordType::$variant => $num,)*
                    RecordType::Unknown(n) => n,
                }
            }
        }

        /// A decoded record body.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        #[serde(untagged)]
        #[non_exhaustive]
        pub enum RecordBody {
            $(
                #[doc = concat!("The body of a `", $name, "` record.")]
                $(#[doc = $doc])* $(#[cfg($cfg)])? $variant $(( $(#[$battr])* $body ))?,
            )*
            /// A body kept as bytes: unknown types, and records whose bytes do not fit
            /// their type's layout.
            Raw(#[serde(serialize_with = "crate::mark::bytes")] Vec<u8>),
        }

        /// One row of the catalogue as data.
        pub(super) struct Row {
            pub ty: RecordType,
            pub number: u32,
            pub name: &'static str,
            pub metadata: bool,
        }

        /// Every row, in number order.
        pub(super) const TABLE: &[Row] = &[$($(#[cfg($cfg)])? Row {
            ty: RecordType::$variant,
            number: $num,
            name: $name,
            metadata: record_types!(@metadata $($flag)*),
        },)*];

        /// Decode the body of a `ty` record; returns the model and how many body bytes
        /// it used.
        pub(super) fn decode_body(ty: RecordType, cx: &BodyContext) -> Result<(RecordBody, usize)> {
            Ok(match ty {
                $($(#[cfg($cfg)])? RecordType::$variant => record_types!(@decode cx, $variant, [$($body)?], [$($args)?]),)*
                RecordType::Unknown(_) => (RecordBody::Raw(cx.body.to_vec()), cx.body.len()),
            })
        }

        /// Encode a body after its header.
        pub(super) fn encode_body(body: &RecordBody, endian: Endian, out: &mut Vec<u8>) -> Result<()> {
            match body {
                $($(#[cfg($cfg)])? record_types!(@pattern $variant, v, [$($body)?]) => record_types!(@encode v, endian, out, [$($body)?]),)*
                RecordBody::Raw(bytes) => out.extend_from_slice(bytes),
            }
            Ok(())
        }
    };
    (@metadata) => { false };
    (@metadata metadata) => { true };
    (@decode $cx:ident, $variant:ident, [], []) => { (RecordBody::$variant, 0) };
    (@decode $cx:ident, $variant:ident, [$body:ty], [$($args:expr)?]) => {{
        let args = record_types!(@args $cx, $($args)?);
        let (v, used) = codec::decode_prefix_lazy::<$body>(
            $cx.body, $cx.endian, args, $cx.offset, $cx.context,
        )?;
        (RecordBody::$variant(v), used)
    }};
    (@args $cx:ident,) => { () };
    (@args $cx:ident, $args:expr) => { args_of($args, $cx)? };
    (@pattern $variant:ident, $v:ident, []) => { RecordBody::$variant };
    (@pattern $variant:ident, $v:ident, [$body:ty]) => { RecordBody::$variant($v) };
    (@encode $v:ident, $endian:ident, $out:ident, []) => { () };
    // A model's own write checks (a count that no longer fits its field after an edit)
    // fail the encoding instead of panicking. A model's default write arguments are
    // those of a record body (a BUILD_ID entry without its header).
    (@encode $v:ident, $endian:ident, $out:ident, [$body:ty]) => {
        $out.extend_from_slice(&codec::encode($v, $endian, Default::default())?)
    };
}

record_types! {
    Mmap = 1, "MMAP", [Mmap], [], [];
    Lost = 2, "LOST", [Lost], [], [];
    Comm = 3, "COMM", [Comm], [], [];
    Exit = 4, "EXIT", [ForkExit], [], [];
    Throttle = 5, "THROTTLE", [Throttle], [], [];
    Unthrottle = 6, "UNTHROTTLE", [Throttle], [], [];
    Fork = 7, "FORK", [ForkExit], [], [];
    Read = 8, "READ", [ReadRecord], [|cx| Ok((cx.format()?.read_format,))], [];
    Sample = 9, "SAMPLE", [Box<Sample>], [|cx| Ok((cx.format()?,))], [];
    Mmap2 = 10, "MMAP2", [Mmap2], [|cx| Ok((cx.header.misc & misc::MMAP_BUILD_ID != 0,))], [];
    Aux = 11, "AUX", [Aux], [], [];
    ItraceStart = 12, "ITRACE_START", [ItraceStart], [], [];
    LostSamples = 13, "LOST_SAMPLES", [LostSamples], [], [];
    /// SWITCH has no body: misc says in or out.
    Switch = 14, "SWITCH", [], [], [];
    SwitchCpuWide = 15, "SWITCH_CPU_WIDE", [SwitchCpuWide], [], [];
    Namespaces = 16, "NAMESPACES", [Namespaces], [], [];
    Ksymbol = 17, "KSYMBOL", [Ksymbol], [], [];
    BpfEvent = 18, "BPF_EVENT", [BpfEvent], [], [];
    Cgroup = 19, "CGROUP", [Cgroup], [], [];
    TextPoke = 20, "TEXT_POKE", [TextPoke], [], [];
    AuxOutputHwId = 21, "AUX_OUTPUT_HW_ID", [AuxOutputHwId], [], [];
    CallchainDeferred = 22, "CALLCHAIN_DEFERRED", [CallchainDeferred], [], [];
    HeaderAttr = 64, "ATTR", [HeaderAttr], [|cx| Ok((HeaderAttr::attr_len(cx.body, cx.endian),))], [metadata];
    HeaderEventType = 65, "EVENT_TYPE", [HeaderEventType], [], [metadata];
    HeaderTracingData = 66, "TRACING_DATA", [HeaderTracingData], [], [metadata];
    /// The same bytes as a BUILD_ID feature entry: one model, [`BuildIdEntry`], printed
    /// with perf's field names for the record.
    HeaderBuildId = 67, "BUILD_ID", [#[serde(serialize_with = "crate::feature::build_id::serialize_as_record")] BuildIdEntry], [|cx| Ok((false, Some(cx.header)))], [metadata];
    /// FINISHED_ROUND has no body.
    FinishedRound = 68, "FINISHED_ROUND", [], [], [];
    IdIndex = 69, "ID_INDEX", [IdIndex], [], [];
    AuxtraceInfo = 70, "AUXTRACE_INFO", [AuxtraceInfo], [], [];
    Auxtrace = 71, "AUXTRACE", [Auxtrace], [], [];
    AuxtraceError = 72, "AUXTRACE_ERROR", [AuxtraceError], [], [];
    ThreadMap = 73, "THREAD_MAP", [ThreadMap], [], [];
    CpuMap = 74, "CPU_MAP", [CpuMap], [], [];
    StatConfig = 75, "STAT_CONFIG", [StatConfig], [], [];
    Stat = 76, "STAT", [Stat], [], [];
    StatRound = 77, "STAT_ROUND", [StatRound], [], [];
    EventUpdate = 78, "EVENT_UPDATE", [EventUpdate], [], [];
    TimeConv = 79, "TIME_CONV", [TimeConv], [], [];
    HeaderFeature = 80, "FEATURE", [HeaderFeature], [], [metadata];
    Compressed = 81, "COMPRESSED", [Compressed], [], [];
    /// FINISHED_INIT has no body.
    FinishedInit = 82, "FINISHED_INIT", [], [], [];
    Compressed2 = 83, "COMPRESSED2", [Compressed2], [], [];
    BpfMetadata = 84, "BPF_METADATA", [Box<BpfMetadata>], [], [];
    SchedstatCpu = 85, "SCHEDSTAT_CPU", [SchedstatCpu], [], [];
    SchedstatDomain = 86, "SCHEDSTAT_DOMAIN", [Box<SchedstatDomain>], [], [];
    /// A number perf has not defined yet, in the unit tests only: what adding a record
    /// type takes (this row, its model, a test).
    #[cfg(test)]
    TestOnly = 87, "TEST_ONLY", [TestOnly], [], [];
}
