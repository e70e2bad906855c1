//! PMU_MAPPINGS, CPU_PMU_CAPS and PMU_CAPS: the PMUs of the machine and what they can do.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

use super::PerfString;

/// PMU_MAPPINGS: `u32 nr, nr x {u32 type, string name}`: the `perf_event_attr.type` number
/// of each PMU.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct PmuMappings {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(pmus.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    /// PMU type numbers and names.
    pub pmus: Vec<PmuMapping>,
}

/// One PMU and its type number.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PmuMapping {
    #[serde(rename = "type")]
    /// The PMU's type number (attr.type).
    pub type_: u32,
    /// The PMU's name.
    pub name: PerfString,
}

impl PmuMappings {
    /// A PMU_MAPPINGS feature of these PMUs.
    pub fn new(pmus: Vec<PmuMapping>) -> Self {
        PmuMappings { pmus }
    }
}

/// A capability: name and value, both strings ("branches", "32").
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PmuCap {
    /// Capability name.
    pub name: PerfString,
    /// Capability value, as text.
    pub value: PerfString,
}

/// `u32 nr, nr x {string name, string value}`: the caps of one PMU.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct PmuCapList {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(caps.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    /// The capabilities.
    pub caps: Vec<PmuCap>,
}

impl PmuCapList {
    /// A capability list of these entries.
    pub fn new(caps: Vec<PmuCap>) -> Self {
        PmuCapList { caps }
    }
}

/// CPU_PMU_CAPS: the caps of the core PMU ("cpu").
pub type CpuPmuCaps = PmuCapList;

/// PMU_CAPS: `u32 nr_pmu, nr_pmu x {u32 nr_caps, caps, string pmu_name}` (the name comes
/// after the caps).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct PmuCaps {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(pmus.len()))]
    nr_pmu: u32,
    #[br(parse_with = bounded::vec, args(nr_pmu as usize, 8))]
    /// One entry per PMU with capabilities.
    pub pmus: Vec<PmuCapsEntry>,
}

/// The caps of one PMU.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct PmuCapsEntry {
    /// Its capabilities.
    pub caps: PmuCapList,
    /// The PMU's name.
    pub pmu_name: PerfString,
}

impl PmuCaps {
    /// A PMU_CAPS feature of these PMUs.
    pub fn new(pmus: Vec<PmuCapsEntry>) -> Self {
        PmuCaps { pmus }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    #[test]
    fn pmu_mappings() {
        let mut b = Bytes::le();
        b.u32(3)
            .u32(4)
            .str("cpu")
            .u32(1)
            .str("software")
            .u32(11)
            .str("msr");
        let m: PmuMappings = round_trip(&b.take(), Endian::Little, ());
        let got: Vec<(u32, String)> = m
            .pmus
            .iter()
            .map(|p| (p.type_, p.name.as_str_lossy()))
            .collect();
        assert_eq!(
            got,
            vec![
                (4, "cpu".into()),
                (1, "software".into()),
                (11, "msr".into())
            ]
        );
        same_in_big_endian(&m, ());
    }

    #[test]
    fn cpu_pmu_caps() {
        let mut b = Bytes::le();
        b.u32(2)
            .str("branches")
            .str("32")
            .str("pmu_name")
            .str("skylake");
        let c: CpuPmuCaps = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(c.caps[0].name.as_str_lossy(), "branches");
        assert_eq!(c.caps[0].value.as_str_lossy(), "32");
        assert_eq!(c.caps[1].value.as_str_lossy(), "skylake");
        same_in_big_endian(&c, ());
    }

    #[test]
    fn pmu_caps_name_after_caps() {
        let mut b = Bytes::le();
        b.u32(2);
        b.u32(1).str("branches").str("32").str("cpu_core");
        b.u32(0).str("cpu_atom");
        let c: PmuCaps = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(c.pmus.len(), 2);
        assert_eq!(c.pmus[0].pmu_name.as_str_lossy(), "cpu_core");
        assert_eq!(c.pmus[0].caps.caps[0].value.as_str_lossy(), "32");
        assert!(c.pmus[1].caps.caps.is_empty());
        same_in_big_endian(&c, ());

        let empty: PmuCaps = round_trip(&0u32.to_le_bytes(), Endian::Little, ());
        assert!(empty.pmus.is_empty());
    }
}
