//! Bodies of the records the kernel writes (types 1 to 22, SAMPLE aside: see sample.rs).
//!
//! A body is what lies between the 8-byte header and the sample_id trailer. Each model is
//! parsed from exactly that slice, so a trailing string field takes the rest of it
//! (NUL padding included) and any bytes past a fixed layout are kept by the caller.

// The fields mirror perf's C structs (include/uapi/linux/perf_event.h,
// tools/perf/util/header.c, event.h) by name and order, and are documented there;
// what perf does not name or perfdata adds is documented here.

use binrw::binrw;
use serde::Serialize;

use super::sample::ReadData;
use super::views::layouts;
use crate::attr::ReadFormat;
use crate::bounded;

/// A NUL-terminated string padded to 8 bytes, as the kernel writes file names and comms.
/// All bytes are kept (the padding is not always zero), so it is written back as read.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PaddedString {
    #[br(parse_with = bounded::rest)]
    /// The string and its padding, every byte as read.
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

// The side-band layouts: each one item giving its model, its view and its facts (see
// super::views).
layouts! {
    #[binrw]
    /// MMAP (1).
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
    pub struct Mmap {
        /// Process id (pid).
        pub pid: i32,
        /// Thread id.
        pub tid: i32,
        /// Start address of the mapping.
        pub addr: u64 = address,
        /// Length of the mapping.
        pub len: u64 = address,
        /// File offset of the mapping.
        pub pgoff: u64 = address,
    } text {
        /// Path of the mapped file (NUL-padded).
        pub filename: PaddedString = Path,
    }
    /// MMAP: a mapping of a process.
    view MmapView(MmapAt) for [Mmap], facts(task(Process pid tid));

    #[binrw]
    /// COMM (3).
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
    pub struct Comm {
        /// Process id (pid).
        pub pid: i32,
        /// Thread id.
        pub tid: i32,
    } text {
        /// The new command name (NUL-padded).
        pub comm: PaddedString = Comm,
    }
    /// COMM: a thread's new command.
    view CommView(CommAt) for [Comm], facts(task(Thread pid tid));

    #[binrw]
    /// FORK (7) and EXIT (4).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct ForkExit {
        /// Process id (pid).
        pub pid: i32,
        /// Parent process id.
        pub ppid: i32,
        /// Thread id.
        pub tid: i32,
        /// Parent thread id.
        pub ptid: i32,
        /// Time of the fork or exit (ns).
        pub time: u64,
    }
    /// FORK and EXIT.
    view ForkView(ForkAt) for [Fork, Exit], facts(task(Thread pid tid));

    #[binrw]
    /// THROTTLE (5) and UNTHROTTLE (6).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct Throttle {
        /// Time of the (un)throttling (ns).
        pub time: u64,
        /// Id of the event throttled.
        pub id: u64,
        /// Id of the event group leader's stream (PERF_SAMPLE_STREAM_ID).
        pub stream_id: u64,
    }
    /// THROTTLE and UNTHROTTLE.
    view ThrottleView(ThrottleAt) for [Throttle, Unthrottle], facts();

    #[binrw]
    /// READ (8): a counter read at exit of an inherited task.
    #[br(import(rf: ReadFormat))]
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct ReadRecord {
        /// Process id (pid).
        pub pid: i32,
        /// Thread id.
        pub tid: i32,
    } rest(numbers) {
        #[br(args(rf))]
        /// The counter values, as read_format lays them out.
        pub values: ReadData,
    }
    /// READ: pid and tid (the values follow, laid out by the event's read_format).
    view ReadRecordView(ReadRecordAt) for [Read], facts(task(Thread pid tid));

    #[binrw]
    /// MMAP2 (10).
    #[br(import(build_id: bool))]
    #[derive(Debug, Clone, PartialEq, Eq, Serialize)]
    pub struct Mmap2 {
        /// Process id (pid).
        pub pid: i32,
        /// Thread id.
        pub tid: i32,
        /// Start address of the mapping.
        pub addr: u64 = address,
        /// Length of the mapping.
        pub len: u64 = address,
        /// File offset of the mapping.
        pub pgoff: u64 = address,
        #[br(args(build_id))]
        #[serde(flatten)]
        /// Device and inode, or the build id.
        pub id: Mmap2Id { maj: u32, min: u32, ino: u64, ino_generation: u64 },
        /// Memory protection (PROT_*).
        pub prot: u32,
        /// Mapping flags (MAP_*).
        pub flags: u32,
    } text {
        /// Path of the mapped file (NUL-padded).
        pub filename: PaddedString = Path,
    }
    /// MMAP2. With misc MMAP_BUILD_ID, the 24 bytes of `maj` to `ino_generation` are the
    /// build id's size, two reserved fields and the build id instead.
    view Mmap2View(Mmap2At) for [Mmap2], facts(task(Process pid tid));

    #[binrw]
    /// ITRACE_START (12).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct ItraceStart {
        /// Process id of the traced task.
        pub pid: i32,
        /// Thread id of the traced task.
        pub tid: i32,
    }
    /// ITRACE_START.
    view ItraceStartView(ItraceStartAt) for [ItraceStart], facts(task(Thread pid tid));

    #[binrw]
    /// LOST_SAMPLES (13).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct LostSamples {
        /// Samples lost.
        pub lost: u64,
    }
    /// LOST_SAMPLES.
    view LostSamplesView(LostSamplesAt) for [LostSamples], facts();

    #[binrw]
    /// NAMESPACES (16).
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
    pub struct Namespaces {
        /// Process id.
        pub pid: i32,
        /// Thread id.
        pub tid: i32,
        #[br(temp)]
        #[bw(calc = links.len() as u64)]
        nr_namespaces: u64,
    } rest(numbers) {
        #[br(parse_with = bounded::vec, args(nr_namespaces as usize, 16))]
        /// One link per namespace type (PID, UTS, ..., cgroup), in the kernel's order.
        pub links: Vec<NamespaceLink>,
    }
    /// NAMESPACES: pid and tid (the links follow).
    view NamespacesView(NamespacesAt) for [Namespaces], facts(task(Thread pid tid));

    #[binrw]
    /// KSYMBOL (17): a kernel symbol (BPF program, ...) registered or unregistered.
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
    pub struct Ksymbol {
        /// Start address of the symbol.
        pub addr: u64 = address,
        /// Length of the symbol in bytes.
        pub len: u32,
        /// PERF_RECORD_KSYMBOL_TYPE_* (1 BPF program, 2 out-of-line code).
        pub ksym_type: u16,
        /// PERF_RECORD_KSYMBOL_FLAGS_* (1: unregistered).
        pub flags: u16,
    } text {
        /// The symbol's name.
        pub name: PaddedString = Symbol,
    }
    /// KSYMBOL.
    view KsymbolView(KsymbolAt) for [Ksymbol], facts();

    #[binrw]
    /// CGROUP (19).
    #[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
    pub struct Cgroup {
        /// The cgroup's id.
        pub id: u64,
    } text {
        /// The cgroup's path.
        pub path: PaddedString = Cgroup,
    }
    /// CGROUP.
    view CgroupView(CgroupAt) for [Cgroup], facts(task(trailer));

    #[binrw]
    /// LOST (2): `lost` records of the event `id` were dropped.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct Lost {
        /// Id of the event whose records were lost.
        pub id: u64,
        /// Records lost.
        pub lost: u64,
    }
    /// LOST.
    view LostView(LostAt) for [Lost], facts();

    #[binrw]
    /// SWITCH_CPU_WIDE (15): the task switched to (out) or from (in).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
    pub struct SwitchCpuWide {
        /// Process id of the task switched to (out) or from (in). The record is about
        /// the trailer's task; this names the other one, which the facts do not.
        pub next_prev_pid: i32,
        /// Thread id of the task switched to (out) or from (in).
        pub next_prev_tid: i32,
    }
    /// SWITCH_CPU_WIDE.
    view SwitchCpuWideView(SwitchCpuWideAt) for [SwitchCpuWide], facts(task(trailer));
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
    /// Device and inode of the mapped file.
    Inode {
        /// Major device number of the mapped file.
        maj: u32,
        /// Minor device number.
        min: u32,
        /// Inode number of the mapped file.
        ino: u64,
        /// Inode generation.
        ino_generation: u64,
    },
    #[br(pre_assert(build_id))]
    /// The mapped file's build id (misc MMAP_BUILD_ID).
    BuildId {
        /// Bytes of the build id that are used (20 for SHA-1).
        build_id_size: u8,
        /// Reserved, kept as read.
        reserved1: u8,
        /// Reserved, kept as read.
        reserved2: u16,
        #[serde(serialize_with = "crate::mark::bytes")]
        /// The build id, zero-padded to 20 bytes.
        build_id: [u8; 20],
    },
}

/// AUX (11): new data in the AUX area.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Aux {
    /// Offset in the AUX buffer of the new data.
    pub aux_offset: u64,
    /// Size of the new data.
    pub aux_size: u64,
    /// PERF_AUX_FLAG_* (truncated, overwrite, partial, collision).
    pub flags: u64,
}

/// One namespace of NAMESPACES: device and inode.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct NamespaceLink {
    /// Device number of the namespace file.
    pub dev: u64,
    /// Inode number of the namespace.
    pub ino: u64,
}

/// BPF_EVENT (18).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BpfEvent {
    #[serde(rename = "type")]
    /// PERF_BPF_EVENT_* (1 program load, 2 unload).
    pub type_: u16,
    /// Flags, zero so far.
    pub flags: u16,
    /// The BPF program's id.
    pub id: u32,
    #[serde(serialize_with = "crate::mark::bytes")]
    /// The program's tag (a hash of its instructions).
    pub tag: [u8; 8],
}

/// TEXT_POKE (20): kernel text changed; the padding to 8 after `bytes` is kept as extra.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct TextPoke {
    #[serde(serialize_with = "crate::mark::address")]
    /// Address of the change.
    pub addr: u64,
    /// Bytes before the change.
    pub old_len: u16,
    /// Bytes after it.
    pub new_len: u16,
    /// old_len bytes of old text, then new_len bytes of new text.
    #[br(parse_with = bounded::bytes, args(old_len as usize + new_len as usize))]
    #[serde(serialize_with = "crate::mark::bytes")]
    pub bytes: Vec<u8>,
}

/// AUX_OUTPUT_HW_ID (21).
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct AuxOutputHwId {
    /// The hardware id of the AUX output.
    pub hw_id: u64,
}

/// CALLCHAIN_DEFERRED (22, kernel 6.17): the user part of a callchain, delivered later.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CallchainDeferred {
    /// Cookie matching the sample that deferred its user callchain.
    pub cookie: u64,
    #[br(temp)]
    #[bw(calc = ips.len() as u64)]
    nr: u64,
    #[br(parse_with = bounded::vec, args(nr as usize, 8))]
    #[serde(serialize_with = "crate::mark::address")]
    /// The deferred user callchain, innermost first.
    pub ips: Vec<u64>,
}
