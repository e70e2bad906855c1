//! NUMA_TOPOLOGY, MEM_TOPOLOGY and CACHE: the memory side of the machine.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use crate::bounded;

use super::PerfString;

/// NUMA_TOPOLOGY: `u32 nr, nr x {u32 node, u64 mem_total, u64 mem_free, string cpus}`
/// (packed: the u64s follow the u32 without padding).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(transparent)]
pub struct NumaTopology {
    #[br(temp)]
    #[bw(try_calc = u32::try_from(nodes.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 24))]
    /// The NUMA nodes.
    pub nodes: Vec<NumaNode>,
}

/// One NUMA node.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct NumaNode {
    /// The node number.
    pub node: u32,
    /// kB.
    pub mem_total: u64,
    /// kB.
    pub mem_free: u64,
    /// The node's CPU list ("0-7").
    pub cpus: PerfString,
}

impl NumaTopology {
    /// A NUMA_TOPOLOGY feature of these nodes.
    pub fn new(nodes: Vec<NumaNode>) -> Self {
        NumaTopology { nodes }
    }
}

/// MEM_TOPOLOGY: `u64 version (1), u64 block_size, u64 nr, nr x node`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MemTopology {
    /// perf knows version 1 only; another version has a layout nobody has defined yet.
    #[br(assert(version == 1, "MEM_TOPOLOGY version {} is not 1", version))]
    pub version: u64,
    /// Bytes per memory block (the unit of the node bitmaps).
    pub block_size: u64,
    #[br(temp)]
    #[bw(calc = nodes.len() as u64)]
    nr: u64,
    #[br(parse_with = bounded::vec, args(usize::try_from(nr).unwrap_or(usize::MAX), 24))]
    /// The memory nodes.
    pub nodes: Vec<MemoryNode>,
}

/// One memory node: `u64 node, u64 size, bitmap {u64 nbits, u64 words[ceil(nbits/64)]}`.
#[binrw]
#[bw(assert(
    words.len() as u64 == nbits.div_ceil(64),
    "memory node bitmap of {} bits needs {} words, has {}",
    nbits,
    nbits.div_ceil(64),
    words.len()
))]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MemoryNode {
    /// The node number.
    pub node: u64,
    /// Bytes.
    pub size: u64,
    /// Bits of the bitmap (one per memory block); not derivable from `words`, which round
    /// it up to 64, so it is kept and checked against them on write.
    pub nbits: u64,
    /// Bit i set: memory block i belongs to this node.
    #[br(parse_with = bounded::vec, args(usize::try_from(nbits.div_ceil(64)).unwrap_or(usize::MAX), 8))]
    pub words: Vec<u64>,
}

impl MemoryNode {
    /// Whether memory block `block` belongs to the node.
    pub fn has_block(&self, block: u64) -> bool {
        block < self.nbits
            && self
                .words
                .get((block / 64) as usize)
                .is_some_and(|w| w & (1 << (block % 64)) != 0)
    }
}

/// CACHE: `u32 version (1), u32 nr, nr x level`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Cache {
    /// perf knows version 1 only.
    #[br(assert(version == 1, "CACHE version {} is not 1", version))]
    pub version: u32,
    #[br(temp)]
    #[bw(try_calc = u32::try_from(levels.len()))]
    nr: u32,
    #[br(parse_with = bounded::vec, args(nr as usize, 28))]
    /// One entry per cache.
    pub levels: Vec<CacheLevel>,
}

/// One cache, as sysfs describes it.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CacheLevel {
    /// The cache level (1, 2, 3).
    pub level: u32,
    /// Line size in bytes.
    pub line_size: u32,
    /// Number of sets.
    pub sets: u32,
    /// Ways of associativity.
    pub ways: u32,
    /// "Data", "Instruction", "Unified".
    #[serde(rename = "type")]
    pub type_: PerfString,
    /// "32K".
    pub size: PerfString,
    /// The CPUs sharing it ("0,8").
    pub map: PerfString,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::testutil::{round_trip, same_in_big_endian, Bytes};
    use binrw::Endian;

    #[test]
    fn numa_topology_two_nodes() {
        let mut b = Bytes::le();
        b.u32(2);
        b.u32(0).u64(16_000_000).u64(9_000_000).str("0-7");
        b.u32(1).u64(8_000_000).u64(1_000).str_padded("8-15", 8);
        let n: NumaTopology = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(n.nodes.len(), 2);
        assert_eq!(n.nodes[0].mem_total, 16_000_000);
        assert_eq!(n.nodes[0].cpus.as_str_lossy(), "0-7");
        assert_eq!((n.nodes[1].node, n.nodes[1].mem_free), (1, 1_000));
        assert_eq!(n.nodes[1].cpus.bytes.len(), 8);
        same_in_big_endian(&n, ());
    }

    #[test]
    fn mem_topology_bitmaps() {
        let mut b = Bytes::le();
        b.u64(1).u64(0x800_0000).u64(2);
        b.u64(0).u64(0x4000_0000).u64(8).u64(0xff);
        b.u64(1).u64(0x1000_0000).u64(70).u64(0).u64(0x3f);
        let m: MemTopology = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(m.block_size, 0x800_0000);
        assert_eq!(m.nodes[0].words, vec![0xff]);
        assert!(m.nodes[0].has_block(7) && !m.nodes[0].has_block(8));
        assert_eq!(m.nodes[1].nbits, 70);
        assert!(m.nodes[1].has_block(69) && !m.nodes[1].has_block(63));
        same_in_big_endian(&m, ());

        let mut bad = m.clone();
        bad.nodes[1].nbits = 200;
        assert!(crate::codec::encode(&bad, Endian::Little, ()).is_err());
    }

    #[test]
    fn mem_topology_other_version_is_refused() {
        let mut b = Bytes::le();
        b.u64(2).u64(0).u64(0);
        assert!(crate::codec::decode::<MemTopology>(&b.v, Endian::Little, (), 0, "t").is_err());
    }

    #[test]
    fn cache_levels() {
        let mut b = Bytes::le();
        b.u32(1).u32(2);
        b.u32(1)
            .u32(64)
            .u32(64)
            .u32(8)
            .str("Data")
            .str("32K")
            .str("0,8");
        b.u32(3)
            .u32(64)
            .u32(16384)
            .u32(16)
            .str("Unified")
            .str("16384K")
            .str("0-15");
        let c: Cache = round_trip(&b.take(), Endian::Little, ());
        assert_eq!(c.levels.len(), 2);
        assert_eq!((c.levels[0].level, c.levels[0].ways), (1, 8));
        assert_eq!(c.levels[0].type_.as_str_lossy(), "Data");
        assert_eq!(c.levels[1].size.as_str_lossy(), "16384K");
        assert_eq!(c.levels[1].map.as_str_lossy(), "0-15");
        same_in_big_endian(&c, ());
    }
}
