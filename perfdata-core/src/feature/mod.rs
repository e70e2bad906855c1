//! Header features: the sections indexed after the data section in file mode, and the
//! payloads of HEADER_FEATURE records in pipe mode (the same bytes).
//!
//! Every feature perf defines (bits 1 to 32) is decoded into a typed model; any other bit
//! (newer perf, simpleperf's own bits from 128) is kept as raw bytes. A section longer
//! than its layout keeps the extra bytes in [`FeatureSection::trailing`], and a section
//! whose bytes do not fit its layout is kept whole as [`Feature::Raw`] with a warning, so
//! encoding always gives back the bytes that were read.

mod auxtrace;
mod bpf;
pub(crate) mod build_id;
mod event_desc;
mod memory;
mod pmu;
mod registry;
mod sched;
mod simple;
mod string;
#[cfg(test)]
mod testutil;
mod topology;

use binrw::Endian;
use serde::Serialize;

use crate::error::{Error, Result};

pub use auxtrace::{AuxTrace, AuxTraceEntry, AuxTraceLayout};
pub use bpf::{
    prog_info, BpfBtf, BpfProgInfo, BpfProgram, Btf, BtfTypes, ProgInfoView, BPIL_FUNC_INFO,
    BPIL_JITED_FUNC_LENS, BPIL_JITED_KSYMS, BPIL_PROG_TAGS,
};
pub use build_id::{BuildIdEntry, BuildIdList, BUILD_ID_ENTRY_FIXED, BUILD_ID_ENTRY_FIXED_OLD_ABI};
pub use event_desc::{EventDesc, EventDescEntry, Group, GroupDesc};
pub use memory::{Cache, CacheLevel, MemTopology, MemoryNode, NumaNode, NumaTopology};
pub use pmu::{CpuPmuCaps, PmuCap, PmuCapList, PmuCaps, PmuCapsEntry, PmuMapping, PmuMappings};
pub use sched::{CpuDomainInfo, CpuDomains, SchedDomain, SCHEDSTAT_VERSION_NAMED_DOMAINS};
pub use simple::{ClockData, Compressed, NrCpus, SampleTime};
pub use string::{PerfString, StringList};
pub use topology::{CpuCoreSocket, CpuDies, CpuTopology, HybridNode, HybridTopology};

use registry::KNOWN;
pub use registry::{Feature, FeatureId};

impl FeatureId {
    /// The BUILD_ID feature's bit.
    pub const BUILD_ID: u32 = 2;
    /// The HOSTNAME feature's bit.
    pub const HOSTNAME: u32 = 3;
    /// perf 6.1's HEADER_LAST_FEATURE, which it also sends as the pipe-mode end marker.
    pub const PERF_6_1_LAST: u32 = 32;

    /// The feature's bit in the header bitmap (and its id in HEADER_FEATURE records).
    pub fn bit(self) -> u32 {
        match self {
            FeatureId::Unknown(bit) => bit,
            known => Self::row(known).bit,
        }
    }

    /// The feature for a bit number.
    pub fn from_bit(bit: u32) -> Self {
        KNOWN
            .iter()
            .find(|r| r.bit == bit)
            .map_or(FeatureId::Unknown(bit), |r| r.id)
    }

    /// perf's name for the feature ("HOSTNAME"), or `"FEATURE_<bit>"`.
    pub fn name(self) -> String {
        match self {
            FeatureId::Unknown(bit) => format!("FEATURE_{bit}"),
            known => Self::row(known).name.to_string(),
        }
    }

    /// All the features perf defines, in bit order.
    pub fn all_known() -> impl Iterator<Item = FeatureId> {
        KNOWN.iter().map(|r| r.id)
    }

    fn row(known: FeatureId) -> &'static registry::Row {
        KNOWN
            .iter()
            .find(|r| r.id == known)
            .expect("every named variant is a row")
    }
}

impl std::fmt::Display for FeatureId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// What a feature decoder may need to know from elsewhere in the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeatureContext {
    /// Byte order of the recording.
    pub endian: Endian,
    /// From NRCPUS: how many per-CPU entries CPU_TOPOLOGY holds.
    pub nr_cpus_avail: Option<u32>,
}

impl FeatureContext {
    /// A context for a recording of this byte order, NRCPUS not known.
    pub fn new(endian: Endian) -> Self {
        FeatureContext {
            endian,
            nr_cpus_avail: None,
        }
    }
}

/// A feature section: the decoded payload plus any bytes past its layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FeatureSection {
    /// Which feature.
    pub id: FeatureId,
    /// Its decoded payload.
    pub feature: Feature,
    /// Bytes after the payload's layout, kept to be written back.
    #[serde(serialize_with = "crate::mark::bytes")]
    pub trailing: Vec<u8>,
}

impl FeatureSection {
    /// A section holding exactly `feature`, nothing after it.
    pub fn new(id: FeatureId, feature: Feature) -> Self {
        FeatureSection {
            id,
            feature,
            trailing: Vec::new(),
        }
    }

    /// Decode the section bytes of feature `id`; `offset` is where they are in the file.
    ///
    /// A known feature whose bytes do not fit its layout is an error here; use
    /// [`FeatureSection::decode_or_raw`] to keep such a section as bytes instead.
    pub fn decode(id: FeatureId, bytes: &[u8], ctx: &FeatureContext, offset: u64) -> Result<Self> {
        let context = format!("feature {id}");
        let (feature, used) = registry::decode_payload(
            id,
            &registry::PayloadContext {
                bytes,
                ctx,
                offset,
                context: &context,
            },
        )?;
        Ok(FeatureSection {
            id,
            feature,
            trailing: bytes[used..].to_vec(),
        })
    }

    /// Decode, or keep the bytes raw when they do not fit the layout; the error is
    /// returned beside the section so the caller can warn about it.
    pub fn decode_or_raw(
        id: FeatureId,
        bytes: &[u8],
        ctx: &FeatureContext,
        offset: u64,
    ) -> (Self, Option<Error>) {
        match Self::decode(id, bytes, ctx, offset) {
            Ok(section) => (section, None),
            Err(err) => (
                FeatureSection {
                    id,
                    feature: Feature::Raw(bytes.to_vec()),
                    trailing: Vec::new(),
                },
                Some(err),
            ),
        }
    }

    /// Encode the section: the payload's layout followed by the trailing bytes; an
    /// error says which of the model's own write checks failed (a count that disagrees
    /// with its list after an edit, say).
    pub fn encode(&self, endian: Endian) -> Result<Vec<u8>> {
        let mut out = registry::encode_payload(&self.feature, endian).map_err(|e| match e {
            Error::Encode { reason, .. } => Error::Encode {
                what: format!("feature {}", self.id),
                reason,
            },
            other => other,
        })?;
        out.extend_from_slice(&self.trailing);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_and_names_match_perf() {
        assert_eq!(FeatureId::TracingData.bit(), 1);
        assert_eq!(FeatureId::BuildId.bit(), FeatureId::BUILD_ID);
        assert_eq!(FeatureId::Hostname.bit(), FeatureId::HOSTNAME);
        assert_eq!(FeatureId::Compressed.bit(), 27);
        assert_eq!(FeatureId::PmuCaps.bit(), 31);
        assert_eq!(FeatureId::CpuDomainInfo.bit(), 32);
        assert_eq!(FeatureId::from_bit(21), FeatureId::SampleTime);
        assert_eq!(FeatureId::from_bit(130), FeatureId::Unknown(130));
        assert_eq!(FeatureId::from_bit(130).name(), "FEATURE_130");
        assert_eq!(FeatureId::MemTopology.name(), "MEM_TOPOLOGY");
        for id in FeatureId::all_known() {
            assert_eq!(FeatureId::from_bit(id.bit()), id);
        }
    }

    #[test]
    fn section_longer_than_layout_keeps_trailing_bytes() {
        let ctx = FeatureContext::new(Endian::Little);
        let mut bytes = 5u64.to_le_bytes().to_vec();
        bytes.extend_from_slice(&[1, 2, 3]);
        let s = FeatureSection::decode(FeatureId::ClockId, &bytes, &ctx, 0).unwrap();
        assert_eq!(s.feature, Feature::ClockId(5));
        assert_eq!(s.trailing, vec![1, 2, 3]);
        assert_eq!(s.encode(Endian::Little).unwrap(), bytes);
    }

    #[test]
    fn section_too_short_is_kept_raw_with_an_error() {
        let ctx = FeatureContext::new(Endian::Little);
        let (s, err) = FeatureSection::decode_or_raw(FeatureId::TotalMem, &[1, 2], &ctx, 500);
        assert_eq!(s.feature, Feature::Raw(vec![1, 2]));
        let err = err.expect("an error for a 2-byte TOTAL_MEM");
        assert!(err.to_string().contains("feature TOTAL_MEM"), "{err}");
        assert_eq!(s.encode(Endian::Little).unwrap(), vec![1, 2]);
    }

    #[test]
    fn tracing_data_is_kept_whole_and_serialised_as_its_length() {
        let ctx = FeatureContext::new(Endian::Little);
        let blob = b"\x17\x08\x44tracing0.5\0".to_vec();
        let s = FeatureSection::decode(FeatureId::TracingData, &blob, &ctx, 0).unwrap();
        assert_eq!(s.feature, Feature::TracingData(blob.clone()));
        assert!(s.trailing.is_empty());
        assert_eq!(s.encode(Endian::Big).unwrap(), blob);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(
            json["feature"],
            serde_json::json!({"kind": "tracing_data", "value": 14})
        );
    }

    #[test]
    fn serde_form_has_strings_as_text_and_ids_as_bytes() {
        let list = BuildIdList::new(vec![BuildIdEntry::new(1, -1, &[0xab, 0xcd], "[vdso]")]);
        let bytes = crate::codec::encode(&list, Endian::Little, ()).unwrap();
        let ctx = FeatureContext::new(Endian::Little);
        let s = FeatureSection::decode(FeatureId::BuildId, &bytes, &ctx, 0).unwrap();
        let json = serde_json::to_value(&s.feature).unwrap();
        let e = &json["value"]["entries"][0];
        assert_eq!(e["filename"], "[vdso]");
        let mut id = vec![0xab, 0xcd];
        id.resize(20, 0);
        assert_eq!(e["build_id_bytes"], serde_json::json!(id));
        assert_eq!((e["pid"].as_i64(), e["size"].as_u64()), (Some(-1), Some(2)));
    }

    #[test]
    fn cpu_topology_takes_its_cpu_count_from_the_context() {
        // cores ["0-1"], threads ["0", "1"], then 2 x {core, socket} (16 bytes), which
        // without the dies would also fit 2 CPUs only if the context says so.
        let mut b = Vec::new();
        let string = |b: &mut Vec<u8>, s: &str| {
            b.extend_from_slice(&8u32.to_le_bytes());
            let mut v = s.as_bytes().to_vec();
            v.resize(8, 0);
            b.extend_from_slice(&v);
        };
        b.extend_from_slice(&1u32.to_le_bytes());
        string(&mut b, "0-1");
        b.extend_from_slice(&2u32.to_le_bytes());
        string(&mut b, "0");
        string(&mut b, "1");
        for w in [0u32, 0, 1, 0] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        let mut ctx = FeatureContext::new(Endian::Little);
        ctx.nr_cpus_avail = Some(1);
        let s = FeatureSection::decode(FeatureId::CpuTopology, &b, &ctx, 0).unwrap();
        let Feature::CpuTopology(t) = &s.feature else {
            panic!("not a CPU_TOPOLOGY: {:?}", s.feature)
        };
        // One CPU's pair; the second pair does not parse as dies and stays trailing.
        assert_eq!(t.cpus.as_ref().map(Vec::len), Some(1));
        assert!(t.dies.is_none());
        assert_eq!(s.trailing.len(), 8);
        assert_eq!(s.encode(Endian::Little).unwrap(), b);

        ctx.nr_cpus_avail = Some(2);
        let s = FeatureSection::decode(FeatureId::CpuTopology, &b, &ctx, 0).unwrap();
        let Feature::CpuTopology(t) = &s.feature else {
            panic!("not a CPU_TOPOLOGY")
        };
        assert_eq!(t.cpus.as_ref().unwrap()[1].core_id, 1);
        assert!(s.trailing.is_empty());
    }

    #[test]
    fn every_known_feature_decodes_into_its_own_model() {
        // A minimal valid payload of every known feature: zero counts (with the versions
        // CACHE and MEM_TOPOLOGY require), empty strings; BUILD_ID is empty (a zero entry
        // header would be an entry of size 0).
        let ctx = FeatureContext::new(Endian::Little);
        for id in FeatureId::all_known() {
            let bytes: Vec<u8> = match id {
                FeatureId::Cache => [1u32, 0].iter().flat_map(|w| w.to_le_bytes()).collect(),
                FeatureId::MemTopology => {
                    [1u64, 0, 0].iter().flat_map(|w| w.to_le_bytes()).collect()
                }
                FeatureId::BuildId => Vec::new(),
                _ => vec![0; 40],
            };
            let s =
                FeatureSection::decode(id, &bytes, &ctx, 0).unwrap_or_else(|e| panic!("{id}: {e}"));
            assert_eq!(s.feature.id(), Some(id));
            // Independently of `id()`: the payload variants are named as the ids are.
            let text = format!("{:?}", s.feature);
            let variant = text.split(['(', ' ', '{']).next().unwrap();
            assert_eq!(variant, format!("{id:?}"));
            assert_eq!(s.encode(Endian::Little).unwrap(), bytes, "{id}");
        }
        let s = FeatureSection::decode(FeatureId::Unknown(129), &[1, 2], &ctx, 0).unwrap();
        assert_eq!(s.feature, Feature::Raw(vec![1, 2]));
        assert_eq!(s.feature.id(), None);
    }
}
