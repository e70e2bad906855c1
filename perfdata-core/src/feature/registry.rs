//! The catalogue of header features: one row per feature bit perf defines. Each row gives
//! the variant, perf's bit and name, the payload model (none for the flag features whose
//! presence is the information), the binrw arguments the model needs, and `bytes` for a
//! payload kept as its bytes. The rows generate [`FeatureId`], [`Feature`], the bit and
//! name table, [`Feature::id`] and both directions of the payload dispatch, so adding a
//! feature is one row here plus its model.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::Endian;
use serde::Serialize;

use super::*;
use crate::codec;
use crate::error::Result;

/// What a feature model may need to decode: its bytes, the rest of the header, where it
/// is.
pub(super) struct PayloadContext<'a> {
    pub bytes: &'a [u8],
    pub ctx: &'a FeatureContext,
    pub offset: u64,
    pub context: &'a str,
}

/// Calls a row's argument closure: naming the parameter type here lets rows write
/// `|cx| ...`.
fn args_of<A>(f: impl Fn(&FeatureContext) -> A, cx: &FeatureContext) -> A {
    f(cx)
}

/// One row of the catalogue as data.
pub(super) struct Row {
    pub id: FeatureId,
    pub bit: u32,
    pub name: &'static str,
}

macro_rules! features {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $bit:literal, $name:literal,
            [$( $(#[$fattr:meta])* $body:ty )?], [$($args:expr)?], [$($kind:ident)?];
    )*) => {
        /// A header feature bit, named as perf's `HEADER_*` constants.
        ///
        /// Not `#[non_exhaustive]`: the workspace is one project, and its views match
        /// every feature, so that a feature added here fails their build until each
        /// says how it prints (rather than falling silently to a wildcard).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        pub enum FeatureId {
            $(
                #[doc = concat!("`HEADER_", $name, "` (bit ", stringify!($bit), ").")]
                $(#[doc = $doc])* $variant,
            )*
            /// Any other bit (0, past the last perf defines, simpleperf's from 128).
            Unknown(u32),
        }

        /// A decoded feature payload.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
        #[serde(tag = "kind", content = "value", rename_all = "snake_case")]
        pub enum Feature {
            $(
                #[doc = concat!("The `HEADER_", $name, "` section.")]
                $(#[doc = $doc])* $variant $(( $(#[$fattr])* $body ))?,
            )*
            /// A feature kept as its bytes: unknown bits, and known ones whose bytes did
            /// not fit their layout.
            Raw(#[serde(serialize_with = "crate::mark::bytes")] Vec<u8>),
        }

        /// Every row, in bit order.
        pub(super) const KNOWN: &[Row] = &[$(Row { id: FeatureId::$variant, bit: $bit, name: $name },)*];

        impl Feature {
            /// The feature this payload is the model of; `None` for [`Feature::Raw`],
            /// which holds the bytes of any feature, known or not.
            pub fn id(&self) -> Option<FeatureId> {
                Some(match self {
                    $(features!(@any $variant, [$($body)?]) => FeatureId::$variant,)*
                    Feature::Raw(_) => return None,
                })
            }
        }

        /// Decode the payload of feature `id`; the model and how many bytes it used.
        pub(super) fn decode_payload(id: FeatureId, cx: &PayloadContext) -> Result<(Feature, usize)> {
            Ok(match id {
                $(FeatureId::$variant => features!(@decode cx, $variant, [$($body)?], [$($args)?], [$($kind)?]),)*
                FeatureId::Unknown(_) => (Feature::Raw(cx.bytes.to_vec()), cx.bytes.len()),
            })
        }

        /// Encode a payload.
        pub(super) fn encode_payload(feature: &Feature, endian: Endian) -> crate::error::Result<Vec<u8>> {
            Ok(match feature {
                $(features!(@pattern $variant, v, [$($body)?]) => features!(@encode v, endian, [$($body)?], [$($kind)?]),)*
                Feature::Raw(bytes) => bytes.clone(),
            })
        }
    };
    (@any $variant:ident, []) => { Feature::$variant };
    (@any $variant:ident, [$body:ty]) => { Feature::$variant(_) };
    (@pattern $variant:ident, $v:ident, []) => { Feature::$variant };
    (@pattern $variant:ident, $v:ident, [$body:ty]) => { Feature::$variant($v) };
    (@decode $cx:ident, $variant:ident, [], [], []) => { (Feature::$variant, 0) };
    (@decode $cx:ident, $variant:ident, [$body:ty], [], [bytes]) => {
        (Feature::$variant($cx.bytes.to_vec()), $cx.bytes.len())
    };
    (@decode $cx:ident, $variant:ident, [$body:ty], [$($args:expr)?], []) => {{
        let args = features!(@args $cx, $($args)?);
        let (v, used) = codec::decode_prefix::<$body>(
            $cx.bytes, $cx.ctx.endian, args, $cx.offset, $cx.context,
        )?;
        (Feature::$variant(v), used)
    }};
    (@args $cx:ident,) => { () };
    (@args $cx:ident, $args:expr) => { args_of($args, $cx.ctx) };
    (@encode $v:ident, $endian:ident, [], []) => { Vec::new() };
    (@encode $v:ident, $endian:ident, [$body:ty], [bytes]) => { $v.clone() };
    (@encode $v:ident, $endian:ident, [$body:ty], []) => { codec::encode($v, $endian, ())? };
}

features! {
    /// The tracing blob (ftrace event formats, kallsyms, printk formats...), kept as
    /// bytes; serialised as its length.
    TracingData = 1, "TRACING_DATA", [#[serde(serialize_with = "serialize_len")] Vec<u8>], [], [bytes];
    BuildId = 2, "BUILD_ID", [BuildIdList], [], [];
    Hostname = 3, "HOSTNAME", [PerfString], [], [];
    OsRelease = 4, "OSRELEASE", [PerfString], [], [];
    Version = 5, "VERSION", [PerfString], [], [];
    Arch = 6, "ARCH", [PerfString], [], [];
    NrCpus = 7, "NRCPUS", [NrCpus], [], [];
    CpuDesc = 8, "CPUDESC", [PerfString], [], [];
    CpuId = 9, "CPUID", [PerfString], [], [];
    /// Total memory in kB.
    TotalMem = 10, "TOTAL_MEM", [u64], [], [];
    Cmdline = 11, "CMDLINE", [StringList], [], [];
    EventDesc = 12, "EVENT_DESC", [EventDesc], [], [];
    CpuTopology = 13, "CPU_TOPOLOGY", [CpuTopology], [|cx| (cx.nr_cpus_avail,)], [];
    NumaTopology = 14, "NUMA_TOPOLOGY", [NumaTopology], [], [];
    /// Empty: the flag says the samples have branch stacks.
    BranchStack = 15, "BRANCH_STACK", [], [], [];
    PmuMappings = 16, "PMU_MAPPINGS", [PmuMappings], [], [];
    GroupDesc = 17, "GROUP_DESC", [GroupDesc], [], [];
    AuxTrace = 18, "AUXTRACE", [AuxTrace], [], [];
    /// Empty: the data comes from `perf stat record`.
    Stat = 19, "STAT", [], [], [];
    Cache = 20, "CACHE", [Cache], [], [];
    SampleTime = 21, "SAMPLE_TIME", [SampleTime], [], [];
    MemTopology = 22, "MEM_TOPOLOGY", [MemTopology], [], [];
    /// Clock resolution in ns.
    ClockId = 23, "CLOCKID", [u64], [], [];
    /// The directory format version.
    DirFormat = 24, "DIR_FORMAT", [u64], [], [];
    BpfProgInfo = 25, "BPF_PROG_INFO", [BpfProgInfo], [], [];
    BpfBtf = 26, "BPF_BTF", [BpfBtf], [], [];
    Compressed = 27, "COMPRESSED", [Compressed], [], [];
    CpuPmuCaps = 28, "CPU_PMU_CAPS", [CpuPmuCaps], [], [];
    ClockData = 29, "CLOCK_DATA", [ClockData], [], [];
    HybridTopology = 30, "HYBRID_TOPOLOGY", [HybridTopology], [], [];
    PmuCaps = 31, "PMU_CAPS", [PmuCaps], [], [];
    CpuDomainInfo = 32, "CPU_DOMAIN_INFO", [CpuDomainInfo], [], [];
}

/// A blob too large to be useful as text (TRACING_DATA) is serialised as its length.
fn serialize_len<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(bytes.len() as u64)
}
