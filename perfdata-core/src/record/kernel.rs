//! Bodies of the records the kernel writes (types 1 to 22, SAMPLE aside: see sample.rs).
//!
//! A body is what lies between the 8-byte header and the sample_id trailer. Each model is
//! parsed from exactly that slice, so a trailing string field takes the rest of it
//! (NUL padding included) and any bytes past a fixed layout are kept by the caller.

use binrw::binrw;
use serde::Serialize;

use super::sample::ReadData;
use crate::attr::ReadFormat;
use crate::bounded;

/// A NUL-terminated string padded to 8 bytes, as the kernel writes file names and comms.
/// All bytes are kept (the padding is not always zero), so it is written back as read.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaddedString {
    #[br(parse_with = bounded::rest)]
    pub bytes: Vec<u8>,
}

impl PaddedString {
    /// NUL-terminate `s` and pad with zeros to a multiple of 8, as the kernel does.
    pub fn new(s: &str) -> Self {
        let mut bytes = s.as_bytes().to_vec();
        bytes.resize((s.len() + 1).div_ceil(8) * 8, 0);
        PaddedString { bytes }
    }
}

crate::text::c_string_text!(PaddedString);

/// MMAP (1).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Mmap {
    pub pid: i32,
    pub tid: i32,
    #[serde(serialize_with = "crate::json::addr")]
    pub addr: u64,
    #[serde(serialize_with = "crate::json::addr")]
    pub len: u64,
    #[serde(serialize_with = "crate::json::addr")]
    pub pgoff: u64,
    pub filename: PaddedString,
}

/// LOST (2): `lost` records of the event `id` were dropped.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Lost {
    pub id: u64,
    pub lost: u64,
}

/// COMM (3).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Comm {
    pub pid: i32,
    pub tid: i32,
    pub comm: PaddedString,
}

/// FORK (7) and EXIT (4).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ForkExit {
    pub pid: i32,
    pub ppid: i32,
    pub tid: i32,
    pub ptid: i32,
    pub time: u64,
}

/// THROTTLE (5) and UNTHROTTLE (6).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Throttle {
    pub time: u64,
    pub id: u64,
    pub stream_id: u64,
}

/// READ (8): a counter read at exit of an inherited task.
#[binrw]
#[br(import(rf: ReadFormat))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReadRecord {
    pub pid: i32,
    pub tid: i32,
    #[br(args(rf))]
    pub values: ReadData,
}

/// The 24 bytes of MMAP2 after pgoff: device and inode, or (misc MMAP_BUILD_ID) a build id.
#[binrw]
#[br(import(build_id: bool))]
///
/// In JSON its fields sit beside MMAP2's own (`maj`, `min`, `ino`, ... or `build_id`),
/// as perf script prints them, with no variant name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Mmap2Id {
    #[br(pre_assert(!build_id))]
    Inode {
        maj: u32,
        min: u32,
        ino: u64,
        ino_generation: u64,
    },
    #[br(pre_assert(build_id))]
    BuildId {
        build_id_size: u8,
        reserved1: u8,
        reserved2: u16,
        #[serde(serialize_with = "crate::text::serialize_hex")]
        build_id: [u8; 20],
    },
}

/// MMAP2 (10).
#[binrw]
#[br(import(build_id: bool))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mmap2 {
    pub pid: i32,
    pub tid: i32,
    #[serde(serialize_with = "crate::json::addr")]
    pub addr: u64,
    #[serde(serialize_with = "crate::json::addr")]
    pub len: u64,
    #[serde(serialize_with = "crate::json::addr")]
    pub pgoff: u64,
    #[br(args(build_id))]
    #[serde(flatten)]
    pub id: Mmap2Id,
    pub prot: u32,
    pub flags: u32,
    pub filename: PaddedString,
}

/// AUX (11): new data in the AUX area.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Aux {
    pub aux_offset: u64,
    pub aux_size: u64,
    pub flags: u64,
}

/// ITRACE_START (12).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct ItraceStart {
    pub pid: i32,
    pub tid: i32,
}

/// LOST_SAMPLES (13).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct LostSamples {
    pub lost: u64,
}

/// SWITCH_CPU_WIDE (15): the task switched to (out) or from (in).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct SwitchCpuWide {
    pub next_prev_pid: i32,
    pub next_prev_tid: i32,
}

/// One namespace of NAMESPACES: device and inode.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NamespaceLink {
    pub dev: u64,
    pub ino: u64,
}

/// NAMESPACES (16).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Namespaces {
    pub pid: i32,
    pub tid: i32,
    #[br(temp)]
    #[bw(calc = links.len() as u64)]
    nr_namespaces: u64,
    #[br(parse_with = bounded::vec, args(nr_namespaces as usize, 16))]
    pub links: Vec<NamespaceLink>,
}

/// KSYMBOL (17): a kernel symbol (BPF program, ...) registered or unregistered.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Ksymbol {
    #[serde(serialize_with = "crate::json::addr")]
    pub addr: u64,
    pub len: u32,
    pub ksym_type: u16,
    pub flags: u16,
    pub name: PaddedString,
}

/// BPF_EVENT (18).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BpfEvent {
    #[serde(rename = "type")]
    pub type_: u16,
    pub flags: u16,
    pub id: u32,
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub tag: [u8; 8],
}

/// CGROUP (19).
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct Cgroup {
    pub id: u64,
    pub path: PaddedString,
}

/// TEXT_POKE (20): kernel text changed; the padding to 8 after `bytes` is kept as extra.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TextPoke {
    #[serde(serialize_with = "crate::json::addr")]
    pub addr: u64,
    pub old_len: u16,
    pub new_len: u16,
    /// old_len bytes of old text, then new_len bytes of new text.
    #[br(parse_with = bounded::bytes, args(old_len as usize + new_len as usize))]
    #[serde(serialize_with = "crate::text::serialize_hex")]
    pub bytes: Vec<u8>,
}

/// AUX_OUTPUT_HW_ID (21).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct AuxOutputHwId {
    pub hw_id: u64,
}

/// CALLCHAIN_DEFERRED (22, kernel 6.17): the user part of a callchain, delivered later.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CallchainDeferred {
    pub cookie: u64,
    #[br(temp)]
    #[bw(calc = ips.len() as u64)]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    #[serde(serialize_with = "crate::json::addr")]
    pub ips: Vec<u64>,
}
