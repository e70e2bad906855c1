//! The catalogue of record types: one row per type perf defines. Each row gives the
//! variant, perf's number, the name `perf report --stats` prints, the body model (none for
//! records that are a header only), the binrw arguments the model needs from the record
//! and its event, flags, and its facts (which fields name a task, carry strings or hold
//! addresses: see [`Facts`]). A side-band body written with `layouts!` (see
//! [`super::views`]) says `layout`: its model, view and facts are that one description.
//! A body may carry attributes for its [`RecordBody`] field (a `#[serde(...)]` where its
//! JSON form differs from the model's own). The rows generate [`RecordType`],
//! [`RecordBody`], the number and name tables, and both directions of the body
//! dispatch, so adding a record type is one row here plus its layout or model.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::Endian;

use super::facts::{Content, Facts, StringKind, TaskFacts};
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

/// A row's facts (see [`Facts`]) for bodies without a layout: `numbers` (no task,
/// numbers only), `trailer` (the task its sample_id names, numbers only) or `other`
/// (more than numbers: edits handle it by name). A body written with `layouts!` says
/// `layout`: its facts are its layout's (see [`super::views`]).
macro_rules! facts {
    (numbers) => {
        Facts {
            task: TaskFacts::None,
            strings: &[],
            addresses: &[],
            content: Content::Listed,
        }
    };
    (trailer) => {
        Facts {
            task: TaskFacts::Trailer,
            strings: &[],
            addresses: &[],
            content: Content::Listed,
        }
    };
    (other) => {
        Facts::OTHER
    };
    (@of [$body:ty] layout) => {
        <$body>::FACTS
    };
    (@of [$body:ty] $facts:ident) => {{
        assert!(
            !<$body>::HAS_LAYOUT,
            "a body written with layouts! takes its facts from its layout: its row says `layout`"
        );
        facts!($facts)
    }};
    (@of [] $facts:ident) => {
        facts!($facts)
    };
    (@strings $v:ident, layout) => {
        $v.strings_mut()
    };
    (@strings $v:ident, $facts:ident) => {
        Vec::new()
    };
}

/// What a body without a layout says of itself: `layouts!` gives its models an inherent
/// `HAS_LAYOUT` (true), which takes precedence over this, so a row that names facts of
/// its own for a body with a layout fails to compile.
trait NoLayout {
    const HAS_LAYOUT: bool = false;
}

impl<T: ?Sized> NoLayout for T {}

macro_rules! record_types {
    ($(
        $(#[doc = $doc:literal])*
        $(#[cfg($cfg:meta)])?
        $variant:ident = $num:literal, $name:literal, [$( $(#[$battr:meta])* $body:ty )?], [$($args:expr)?], [$($flag:ident),*], {$facts:ident};
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
            pub facts: Facts,
        }

        /// Every row, in number order.
        pub(super) const TABLE: &[Row] = &[$($(#[cfg($cfg)])? Row {
            ty: RecordType::$variant,
            number: $num,
            name: $name,
            metadata: record_types!(@metadata $($flag)*),
            facts: facts!(@of [$($body)?] $facts),
        },)*];

        /// The string fields of a body, as the rows list them.
        #[allow(unused_variables)]
        fn strings_mut(body: &mut RecordBody) -> Vec<(StringKind, &mut PaddedString)> {
            match body {
                $($(#[cfg($cfg)])? record_types!(@pattern $variant, v, [$($body)?]) => facts!(@strings v, $facts),)*
                RecordBody::Raw(_) => Vec::new(),
            }
        }

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
    Mmap = 1, "MMAP", [Mmap], [], [], {layout};
    Lost = 2, "LOST", [Lost], [], [], {layout};
    Comm = 3, "COMM", [Comm], [], [], {layout};
    Exit = 4, "EXIT", [ForkExit], [], [], {layout};
    Throttle = 5, "THROTTLE", [Throttle], [], [], {layout};
    Unthrottle = 6, "UNTHROTTLE", [Throttle], [], [], {layout};
    Fork = 7, "FORK", [ForkExit], [], [], {layout};
    Read = 8, "READ", [ReadRecord], [|cx| Ok((cx.format()?.read_format,))], [], {layout};
    Sample = 9, "SAMPLE", [Box<Sample>], [|cx| Ok((cx.format()?,))], [], {other};
    Mmap2 = 10, "MMAP2", [Mmap2], [|cx| Ok((cx.header.misc & misc::MMAP_BUILD_ID != 0,))], [], {layout};
    Aux = 11, "AUX", [Aux], [], [], {trailer};
    ItraceStart = 12, "ITRACE_START", [ItraceStart], [], [], {layout};
    LostSamples = 13, "LOST_SAMPLES", [LostSamples], [], [], {layout};
    /// SWITCH has no body: misc says in or out.
    Switch = 14, "SWITCH", [], [], [], {trailer};
    SwitchCpuWide = 15, "SWITCH_CPU_WIDE", [SwitchCpuWide], [], [], {layout};
    Namespaces = 16, "NAMESPACES", [Namespaces], [], [], {layout};
    Ksymbol = 17, "KSYMBOL", [Ksymbol], [], [], {layout};
    BpfEvent = 18, "BPF_EVENT", [BpfEvent], [], [], {numbers};
    Cgroup = 19, "CGROUP", [Cgroup], [], [], {layout};
    TextPoke = 20, "TEXT_POKE", [TextPoke], [], [], {other};
    AuxOutputHwId = 21, "AUX_OUTPUT_HW_ID", [AuxOutputHwId], [], [], {trailer};
    CallchainDeferred = 22, "CALLCHAIN_DEFERRED", [CallchainDeferred], [], [], {other};
    HeaderAttr = 64, "ATTR", [HeaderAttr], [|cx| Ok((HeaderAttr::attr_len(cx.body, cx.endian),))], [metadata], {other};
    HeaderEventType = 65, "EVENT_TYPE", [HeaderEventType], [], [metadata], {other};
    HeaderTracingData = 66, "TRACING_DATA", [HeaderTracingData], [], [metadata], {other};
    /// The same bytes as a BUILD_ID feature entry: one model, [`BuildIdEntry`], printed
    /// with perf's field names for the record.
    HeaderBuildId = 67, "BUILD_ID", [#[serde(serialize_with = "crate::feature::build_id::serialize_as_record")] BuildIdEntry], [|cx| Ok((false, Some(cx.header)))], [metadata], {other};
    /// FINISHED_ROUND has no body.
    FinishedRound = 68, "FINISHED_ROUND", [], [], [], {numbers};
    IdIndex = 69, "ID_INDEX", [IdIndex], [], [], {numbers};
    AuxtraceInfo = 70, "AUXTRACE_INFO", [AuxtraceInfo], [], [], {other};
    Auxtrace = 71, "AUXTRACE", [Auxtrace], [], [], {other};
    AuxtraceError = 72, "AUXTRACE_ERROR", [AuxtraceError], [], [], {other};
    ThreadMap = 73, "THREAD_MAP", [ThreadMap], [], [], {other};
    CpuMap = 74, "CPU_MAP", [CpuMap], [], [], {other};
    StatConfig = 75, "STAT_CONFIG", [StatConfig], [], [], {numbers};
    Stat = 76, "STAT", [Stat], [], [], {layout};
    StatRound = 77, "STAT_ROUND", [StatRound], [], [], {numbers};
    EventUpdate = 78, "EVENT_UPDATE", [EventUpdate], [], [], {layout};
    TimeConv = 79, "TIME_CONV", [TimeConv], [], [], {other};
    HeaderFeature = 80, "FEATURE", [HeaderFeature], [], [metadata], {layout};
    Compressed = 81, "COMPRESSED", [Compressed], [], [], {other};
    /// FINISHED_INIT has no body.
    FinishedInit = 82, "FINISHED_INIT", [], [], [], {numbers};
    Compressed2 = 83, "COMPRESSED2", [Compressed2], [], [], {other};
    BpfMetadata = 84, "BPF_METADATA", [Box<BpfMetadata>], [], [], {other};
    SchedstatCpu = 85, "SCHEDSTAT_CPU", [SchedstatCpu], [], [], {other};
    SchedstatDomain = 86, "SCHEDSTAT_DOMAIN", [Box<SchedstatDomain>], [], [], {other};
    /// A number perf has not defined yet, in tests only (this crate's, and with the
    /// `test-row` feature other crates'): what adding a record type takes (this row,
    /// its layout, a test). It carries a name, which anonymize renames from its
    /// layout's facts alone.
    #[cfg(any(test, feature = "test-row"))]
    TestOnly = 127, "TEST_ONLY", [TestOnly], [], [], {layout};
}

impl RecordType {
    /// The facts its catalogue row states (see [`Facts`]); [`Facts::OTHER`] for an
    /// unknown number.
    pub fn facts(self) -> &'static Facts {
        match self {
            RecordType::Unknown(_) => &Facts::OTHER,
            known => &TABLE[RecordType::row(known)].facts,
        }
    }
}

impl RecordBody {
    /// The body's string fields, as its row lists them, each with what it names: what
    /// an edit that renames rewrites (an empty list for a body without strings).
    pub fn strings_mut(&mut self) -> Vec<(StringKind, &mut PaddedString)> {
        strings_mut(self)
    }
}
