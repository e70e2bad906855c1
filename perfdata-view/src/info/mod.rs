//! perf's header view: the header and every feature, as `perf report --header-only -I`
//! of perf 6.1 prints them, line for line ([`write_text`]), and the same as JSON
//! ([`write_json`]). `perfdata info` prints these.
//!
//! Where perf's output depends on where it runs, perfdata prints what the file says:
//! "captured on" is the file's mtime formatted as C's `ctime` **in UTC** (perf uses the
//! local zone; run it with `TZ=UTC` to compare), and the CLOCK_DATA reference time is in
//! UTC too. For `-` the mtime is that of whatever stdin is (a redirected file's, or the
//! pipe's creation time, as perf's `fstat` sees it).
//!
//! Beyond perf 6.1, which prints nothing for them or cannot read the file at all:
//! - CPU_DOMAIN_INFO (perf 6.17) is printed as newer perf prints it;
//! - attrs from newer kernels also show `config3` when it is set;
//! - BPF_PROG_INFO and BPF_BTF of a big-endian recording are printed (perf 6.1 refuses
//!   to interpret them from the other byte order and prints nothing);
//! - a known feature whose bytes do not fit its layout prints what perf prints for a
//!   feature it failed to read (its empty defaults, e.g. "# pmu mappings: not available").
//!   perf then also stops reading the features after it; perfdata does not.
//! - perf 6.1 refuses a whole EVENT_DESC when an attr has bits it does not know (reserved
//!   bits, newer sample_type/read_format/branch bits) and prints "# event desc: not
//!   available or unable to read"; perfdata prints the events.
//!
//! - a file-mode file on stdin is read (perf refuses it);
//! - in pipe mode perf stops at the end-of-features marker and at a feature it cannot
//!   read; perfdata prints every HEADER_FEATURE of the stream that decodes.
//!
//! Feature bits perf does not know (simpleperf's, bits past 32) print nothing, as in perf.
//!
//! [`write_json`] (`perfdata info --json`) prints one object:
//! - `container`: "file", "pipe" or "directory";
//! - `endian`: "little" or "big";
//! - `captured_on`: the file's mtime in RFC 3339, UTC ("2026-11-22T05:42:42Z"), or null;
//! - `header`: `version` (perf's header version: 0 for "PERFFILE", 1 for "PERFILE2"),
//!   `size` (header bytes: 104, 72 or 16 for pipe mode), and for file mode `attr_size`,
//!   `attrs`, `data`, `event_types` (each `{offset, size}`) and `feat_offset`; these are
//!   null in pipe mode;
//! - `events`: one object per attr (the attrs section, or HEADER_ATTR records), with
//!   `name`, `ids` and `attr` (the perf_event_attr fields by their C names; the flag
//!   words `sample_type`, `read_format`, `flags`, `branch_sample_type` as their flag
//!   names joined by " | ");
//! - `features`: keyed by perf's feature name in lowercase ("hostname", "cpu_topology",
//!   "feature_130" for an unknown bit), each the decoded model of the section:
//!   strings as strings, TRACING_DATA as its length, BRANCH_STACK and STAT as `true`, a
//!   section that did not decode as `{"raw": "<hex>"}`;
//! - `missing_features`: the names of perf's features (bits 1 to 32) the file lacks;
//! - `warnings`: what the reader found odd but read past.

mod attr;
mod bpf;
mod json;
mod short;
mod time;
mod topology;

pub use json::{to_value as to_json, write as write_json};

use std::io::{self, Write};
use std::path::Path;

use perfdata_core::feature::{Feature, FeatureId, FeatureSection};
use perfdata_core::header::Magic;
use perfdata_core::{ContainerKind, Metadata};

/// perf 6.1's HEADER_LAST_FEATURE: it knows bits 1 to 31 and prints "missing features"
/// for those only.
const PERF_6_1_FEATURES: u32 = 31;

/// "Captured on": the mtime perf's `fstat` would see, in seconds since the epoch: of the
/// file, of a directory's `data`, of stdin for `-`.
pub fn captured_on(path: &Path) -> Option<i64> {
    let target = if path.as_os_str() == "-" {
        Path::new("/dev/stdin").to_path_buf()
    } else if path.is_dir() {
        path.join("data")
    } else {
        path.to_path_buf()
    };
    let modified = std::fs::metadata(target).ok()?.modified().ok()?;
    Some(match modified.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
    })
}

/// perf's header version: PERF_HEADER_VERSION_1 (0) for "PERFFILE", _2 (1) otherwise.
fn header_version(meta: &Metadata) -> u32 {
    match meta.magic {
        Magic::V1 => 0,
        Magic::V2 => 1,
    }
}

/// What the print functions need besides the section itself.
pub(crate) struct Ctx<'a> {
    pub meta: &'a Metadata,
    pub pipe: bool,
}

/// perf's `perf_session__fprintf_info` with `-I`, plus, in pipe mode, what its
/// HEADER_FEATURE handler prints as each feature arrives.
pub fn write_text(
    out: &mut impl Write,
    meta: &Metadata,
    captured_on: Option<i64>,
) -> io::Result<()> {
    let pipe = meta.container == ContainerKind::Pipe;
    writeln!(out, "# ========")?;
    match captured_on {
        Some(t) => writeln!(out, "# captured on    : {}", time::ctime(t))?,
        None => writeln!(out, "# captured on    : (unknown)")?,
    }
    writeln!(out, "# header version : {}", header_version(meta))?;
    // perf keeps zeros for a pipe: it never reads a file header there.
    let (data_offset, data_size) = match (&meta.header, pipe) {
        (Some(h), false) => (h.data.offset, h.data.size),
        _ => (0, 0),
    };
    writeln!(out, "# data offset    : {data_offset}")?;
    writeln!(out, "# data size      : {data_size}")?;
    writeln!(
        out,
        "# feat offset    : {}",
        data_offset.wrapping_add(data_size)
    )?;
    let ctx = Ctx { meta, pipe };
    if pipe {
        // The header part ends before any record is read; the features follow as their
        // records arrive, with no closing line and no "missing features".
        writeln!(out, "# ========")?;
        writeln!(out, "#")?;
        for section in meta.features.values() {
            write_feature(out, &ctx, section)?;
        }
        return Ok(());
    }
    // File mode: the set bits in bit order (meta.features is in that order).
    for section in meta.features.values() {
        write_feature(out, &ctx, section)?;
    }
    write!(out, "# missing features: ")?;
    let bits = meta
        .header
        .as_ref()
        .map(|h| h.feature_bits(meta.endian))
        .unwrap_or_default();
    for bit in 1..=PERF_6_1_FEATURES {
        if !bits.is_set(bit) {
            write!(out, "{} ", FeatureId::from_bit(bit).name())?;
        }
    }
    writeln!(out)?;
    writeln!(out, "# ========")?;
    writeln!(out, "#")?;
    Ok(())
}

/// One feature, as perf's `print_*` function for it prints it.
fn write_feature(out: &mut impl Write, ctx: &Ctx, section: &FeatureSection) -> io::Result<()> {
    let id = section.id;
    match &section.feature {
        Feature::Raw(_) => match id {
            // A pipe-mode feature perf fails to read stops perf there: nothing printed.
            FeatureId::Unknown(_) => Ok(()),
            _ if ctx.pipe => Ok(()),
            known => short::write_unreadable(out, known),
        },
        // perf 6.1 has no print function for these two.
        Feature::TracingData(_) | Feature::BuildId(_) => Ok(()),
        Feature::EventDesc(d) => attr::write_event_desc(out, d),
        Feature::GroupDesc(g) => attr::write_group_desc(out, ctx, g),
        Feature::CpuTopology(t) => {
            let len = section
                .encode(ctx.meta.endian)
                .map_or(usize::MAX, |b| b.len());
            topology::write_cpu_topology(out, t, len)
        }
        Feature::NumaTopology(n) => topology::write_numa_topology(out, n),
        Feature::Cache(c) => topology::write_cache(out, c),
        Feature::MemTopology(m) => topology::write_mem_topology(out, m),
        Feature::HybridTopology(h) => topology::write_hybrid_topology(out, h),
        Feature::BpfProgInfo(p) => bpf::write_prog_info(out, ctx, p),
        Feature::BpfBtf(b) => bpf::write_btf(out, b),
        // Listed: each known feature is printed on purpose.
        Feature::Hostname(_)
        | Feature::OsRelease(_)
        | Feature::Version(_)
        | Feature::Arch(_)
        | Feature::NrCpus(_)
        | Feature::CpuDesc(_)
        | Feature::CpuId(_)
        | Feature::TotalMem(_)
        | Feature::Cmdline(_)
        | Feature::BranchStack
        | Feature::PmuMappings(_)
        | Feature::AuxTrace(_)
        | Feature::Stat
        | Feature::SampleTime(_)
        | Feature::ClockId(_)
        | Feature::DirFormat(_)
        | Feature::Compressed(_)
        | Feature::CpuPmuCaps(_)
        | Feature::ClockData(_)
        | Feature::PmuCaps(_)
        | Feature::CpuDomainInfo(_) => short::write_feature(out, &section.feature),
    }
}

/// C's `snprintf` into a buffer of `size` bytes: at most `size - 1` bytes survive.
pub(crate) fn truncate(mut s: String, size: usize) -> String {
    if s.len() >= size {
        let mut end = size - 1;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}
