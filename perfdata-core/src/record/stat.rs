//! The records `perf stat record` writes (and `perf record` writes at start-up too):
//! THREAD_MAP, CPU_MAP, STAT_CONFIG, STAT, STAT_ROUND and EVENT_UPDATE.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::{Serialize, Serializer};

use super::kernel::PaddedString;
use super::views::layouts;
use crate::bounded;

/// One thread of THREAD_MAP.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ThreadMapEntry {
    /// A pid (or -1 as u64 for "any thread").
    pub pid: u64,
    #[serde(serialize_with = "crate::mark::c_string")]
    /// Its command (16 bytes, NUL-padded).
    pub comm: [u8; 16],
}

/// THREAD_MAP (73): the threads the events were opened on.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ThreadMap {
    #[br(temp)]
    #[bw(try_calc = u64::try_from(entries.len()))]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 24))]
    /// One entry per thread: pid and comm.
    pub entries: Vec<ThreadMapEntry>,
}

/// `struct perf_record_cpu_map_data`: a `u16 type`, then one of the encodings. perf
/// declares it `__packed`, so everything after the type is 2 bytes off alignment (a
/// 64-bit mask sits at offset 10 of the data). The record is padded to 8; the padding
/// is kept in the record's extra bytes.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "encoding", rename_all = "snake_case")]
pub enum CpuMapData {
    /// PERF_CPU_MAP__CPUS (0): `u16 nr; u16 cpu[nr]`. A cpu of 65535 is -1 ("any").
    #[brw(magic = 0u16)]
    Cpus {
        #[br(temp)]
        #[bw(try_calc = u16::try_from(cpus.len()))]
        nr: u16,
        #[br(parse_with = bounded::vec, args(nr as usize, 2))]
        /// The CPU numbers.
        cpus: Vec<u16>,
    },
    /// PERF_CPU_MAP__MASK (1) with `long_size` 4: `u16 nr; u16 long_size; u32 mask[nr]`.
    #[brw(magic = 1u16)]
    Mask32 {
        #[br(temp)]
        #[bw(try_calc = u16::try_from(mask.len()))]
        nr: u16,
        #[br(temp, assert(long_size == 4))]
        #[bw(calc = 4u16)]
        long_size: u16,
        #[br(parse_with = bounded::vec, args(nr as usize, 4))]
        /// The mask words, 32 bits each, CPU 0 in bit 0 of the first.
        mask: Vec<u32>,
    },
    /// PERF_CPU_MAP__MASK (1) with `long_size` 8: `u16 nr; u16 long_size; char pad[4];
    /// u64 mask[nr]`.
    #[brw(magic = 1u16)]
    Mask64 {
        #[br(temp)]
        #[bw(try_calc = u16::try_from(mask.len()))]
        nr: u16,
        #[br(temp, assert(long_size == 8))]
        #[bw(calc = 8u16)]
        long_size: u16,
        #[serde(skip)]
        /// Padding, kept as read.
        pad: [u8; 4],
        #[br(parse_with = bounded::vec, args(nr as usize, 8))]
        /// The mask words, 64 bits each, CPU 0 in bit 0 of the first.
        mask: Vec<u64>,
    },
    /// PERF_CPU_MAP__RANGE_CPUS (2, perf 6.1+): cpus `start_cpu..=end_cpu`, plus -1
    /// when `any_cpu` is set.
    #[brw(magic = 2u16)]
    Range {
        /// Whether the map also holds the "any CPU" entry (-1).
        any_cpu: u8,
        #[serde(skip)]
        /// Padding, kept as read.
        pad: u8,
        /// First CPU of the range.
        start_cpu: u16,
        /// Last CPU of the range.
        end_cpu: u16,
    },
}

impl CpuMapData {
    /// The encoding number perf writes in `type`.
    pub fn type_code(&self) -> u16 {
        match self {
            CpuMapData::Cpus { .. } => 0,
            CpuMapData::Mask32 { .. } | CpuMapData::Mask64 { .. } => 1,
            CpuMapData::Range { .. } => 2,
        }
    }

    /// The cpus of the map, -1 standing for "any cpu".
    pub fn cpus(&self) -> Vec<i32> {
        fn bits(words: impl Iterator<Item = u64>, width: usize) -> Vec<i32> {
            let mut out = Vec::new();
            for (w, word) in words.enumerate() {
                for b in 0..width {
                    if word >> b & 1 != 0 {
                        out.push((w * width + b) as i32);
                    }
                }
            }
            out
        }
        match self {
            CpuMapData::Cpus { cpus } => cpus.iter().map(|&c| c as i16 as i32).collect(),
            CpuMapData::Mask32 { mask } => bits(mask.iter().map(|&m| m as u64), 32),
            CpuMapData::Mask64 { mask, .. } => bits(mask.iter().copied(), 64),
            CpuMapData::Range {
                any_cpu,
                start_cpu,
                end_cpu,
                ..
            } => {
                let mut out: Vec<i32> = Vec::new();
                if *any_cpu != 0 {
                    out.push(-1);
                }
                out.extend(*start_cpu as i32..=*end_cpu as i32);
                out
            }
        }
    }
}

/// CPU_MAP (74): the cpus the events were opened on.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuMap {
    /// The map, in the layout its type says.
    pub data: CpuMapData,
}

/// One `{tag, val}` of STAT_CONFIG (tag 0 aggr_mode, 1 interval, 2 scale).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StatConfigEntry {
    /// PERF_STAT_CONFIG_TERM__* (aggregation mode, interval, scale).
    pub tag: u64,
    /// The term's value.
    pub val: u64,
}

/// STAT_CONFIG (75): the `perf stat` settings.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct StatConfig {
    #[br(temp)]
    #[bw(try_calc = u64::try_from(entries.len()))]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 16))]
    /// The configuration terms.
    pub entries: Vec<StatConfigEntry>,
}

/// STAT_ROUND (77): the end of one interval (type 0) or of the run (type 1, FINAL).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StatRound {
    #[serde(rename = "type")]
    /// PERF_STAT_ROUND_TYPE__* (0 interval, 1 final).
    pub type_: u64,
    /// Time of the round (ns).
    pub time: u64,
}

/// A double kept as its bits, so that the model stays `Eq` and writes back exactly.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct F64Bits(pub u64);

impl F64Bits {
    /// The value as an f64.
    pub fn get(self) -> f64 {
        f64::from_bits(self.0)
    }
}

impl From<f64> for F64Bits {
    fn from(v: f64) -> Self {
        F64Bits(v.to_bits())
    }
}

impl Serialize for F64Bits {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.get())
    }
}

/// What an EVENT_UPDATE carries, keyed by its `type`.
#[binrw]
#[br(import(ty: u64))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EventUpdateData {
    /// PERF_EVENT_UPDATE__UNIT (0): the unit string, NUL-padded to 8.
    #[br(pre_assert(ty == 0))]
    Unit(PaddedString),
    /// PERF_EVENT_UPDATE__SCALE (1): a double.
    #[br(pre_assert(ty == 1))]
    Scale(F64Bits),
    /// PERF_EVENT_UPDATE__NAME (2): the event name, NUL-padded to 8.
    #[br(pre_assert(ty == 2))]
    Name(PaddedString),
    /// PERF_EVENT_UPDATE__CPUS (3): a cpu map.
    #[br(pre_assert(ty == 3))]
    Cpus(CpuMapData),
    /// A type perf does not define: its bytes.
    #[br(pre_assert(ty > 3))]
    Unknown {
        #[br(calc = ty)]
        #[bw(ignore)]
        #[serde(rename = "type")]
        /// The update's type number.
        type_: u64,
        #[br(parse_with = bounded::rest)]
        #[serde(serialize_with = "crate::mark::bytes")]
        /// Its bytes, as stored.
        data: Vec<u8>,
    },
}

impl EventUpdateData {
    /// The `type` perf writes for this data.
    pub fn type_code(&self) -> u64 {
        match self {
            EventUpdateData::Unit(_) => 0,
            EventUpdateData::Scale(_) => 1,
            EventUpdateData::Name(_) => 2,
            EventUpdateData::Cpus(_) => 3,
            EventUpdateData::Unknown { type_, .. } => *type_,
        }
    }
}

layouts! {
    #[binrw]
    /// STAT (76): one counter reading of event `id` on (cpu, thread) index.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct Stat {
        /// Id of the counter's event.
        pub id: u64,
        /// CPU index of the count.
        pub cpu: u32,
        /// Thread index of the count.
        pub thread: u32,
        /// The count.
        pub val: u64,
        /// Time the counter was enabled (ns).
        pub ena: u64,
        /// Time it was running (ns).
        pub run: u64,
    }
    /// STAT.
    view StatView(StatAt) for [Stat], facts();

    #[binrw]
    /// EVENT_UPDATE (78): a property (unit, scale, name, cpus) of the event with sample id
    /// `id`.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct EventUpdate {
        #[br(temp)]
        #[bw(calc = data.type_code())]
        type_: u64,
        /// Id of the event updated.
        pub id: u64,
    } rest(other) {
        #[br(args(type_))]
        /// What is updated (unit, scale, name or CPUs).
        pub data: EventUpdateData,
    }
    /// EVENT_UPDATE: what is updated, and of which event (the update follows).
    view EventUpdateView(EventUpdateAt) for [EventUpdate], facts(other);
}
