//! Where the parts of a little-endian perf.data file are, worked out from its bytes as
//! perf's format lays them out (`struct perf_file_header`, `perf_event_header`), without
//! the reader. Bad-input tests use it to compute the offset, the name and the problem an
//! error must give for a file they cut, independently of the code that reports it.
//!
//! Included by `tests/tests/bad_input.rs` and, through `#[path]`, by
//! `perfdata-cli/tests/cli.rs`; each uses part of it.
#![allow(dead_code)]

use perfdata_core::feature::FeatureId;
use perfdata_core::record::RecordType;
use perfdata_core::{Error, Problem};

/// A part of a file, named as errors name it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub end: u64,
    pub name: String,
    /// A file section, which must lie inside the file (PastEnd when it does not), and
    /// where the header field (or index entry) that says where it is sits: errors name
    /// that field. The header and records are read in order and are cut short instead
    /// (Truncated).
    pub section: Option<u64>,
}

impl Region {
    fn new(start: u64, end: u64, name: impl Into<String>, section: Option<u64>) -> Self {
        Region {
            start,
            end,
            name: name.into(),
            section,
        }
    }

    /// The error a reader must give when the file ends at `cut`, inside this region.
    pub fn error_when_cut_at(&self, cut: u64) -> Error {
        match self.section {
            Some(field) => Error::format(
                field,
                format!(
                    "{} (said to be {} bytes at offset {})",
                    self.name,
                    self.end - self.start,
                    self.start
                ),
                Problem::PastEnd {
                    end: self.end,
                    limit: cut,
                },
            ),
            None => Error::format(
                self.start,
                self.name.clone(),
                Problem::Truncated {
                    needed: self.end - self.start,
                    available: cut - self.start,
                },
            ),
        }
    }
    /// Where the reader's warning must point when the file ends at `cut` inside this
    /// region, if a cut there is read rather than refused: the data section (its size
    /// field), the feature index (the data field, which says where it is) and a feature
    /// section (its index entry). The header, attrs and event types are needed to read
    /// anything, so a cut there is an error.
    pub fn lost_when_cut(&self, cut: u64) -> Option<u64> {
        let field = self.section?;
        if cut < self.start {
            return None;
        }
        match self.name.as_str() {
            "data section" => Some(DATA + 8),
            name if name.starts_with("feature") => Some(field),
            _ => None,
        }
    }
}

pub fn u16_at(b: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as u64
}

pub fn u32_at(b: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as u64
}

pub fn u64_at(b: &[u8], at: u64) -> u64 {
    let at = at as usize;
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// `perf_file_header`: attrs at 24, data at 40, event_types at 56 (each offset, size),
/// then the 256-bit feature bitmap at 72.
pub const ATTRS: u64 = 24;
pub const DATA: u64 = 40;
const EVENT_TYPES: u64 = 56;
const FEATURE_BITS: u64 = 72;

/// A file-mode file's parts in the order perf lays them out: the magic and size, the
/// whole header, the attrs (the ids sections before them are read after them, so a cut
/// there is the attrs' error), the data, event_types when present, the feature index and
/// each feature section in bit order.
pub fn file_regions(b: &[u8]) -> Vec<Region> {
    let header_size = u64_at(b, 8);
    let section = |at: u64, name: &str| {
        let start = u64_at(b, at);
        Region::new(start, start + u64_at(b, at + 8), name, Some(at))
    };
    let mut out = vec![
        Region::new(0, 16, "file header (magic and size)", None),
        Region::new(0, header_size, "file header", None),
        section(ATTRS, "attrs section"),
        section(DATA, "data section"),
    ];
    if u64_at(b, EVENT_TYPES + 8) > 0 {
        out.push(section(EVENT_TYPES, "event_types section"));
    }
    let bits: Vec<u32> = (0..256u32)
        .filter(|bit| u64_at(b, FEATURE_BITS + 8 * (bit / 64) as u64) >> (bit % 64) & 1 == 1)
        .collect();
    let index = out[3].end;
    // The index follows the data section: the header's data field says where.
    out.push(Region::new(
        index,
        index + 16 * bits.len() as u64,
        "feature index (after the data section)",
        Some(DATA),
    ));
    for (i, bit) in bits.iter().enumerate() {
        let name = format!("feature {}", FeatureId::from_bit(*bit));
        out.push(section(index + 16 * i as u64, &name));
    }
    out
}

/// A pipe-mode stream's parts: the 16-byte header, then each record's header and the
/// whole record (HEADER_TRACING_DATA's and AUXTRACE's payload after it included).
pub fn pipe_regions(b: &[u8]) -> Vec<Region> {
    let mut out = vec![Region::new(0, 16, "file header (magic and size)", None)];
    let mut at = 16;
    while at < b.len() as u64 {
        let ty = RecordType::from_u32(u32_at(b, at) as u32);
        let size = u16_at(b, at + 6);
        let payload = match ty {
            RecordType::HeaderTracingData if size <= 16 => u32_at(b, at + 8),
            RecordType::Auxtrace => u64_at(b, at + 8),
            _ => 0,
        };
        let name = format!("record {ty}");
        out.push(Region::new(at, at + 8, name.clone(), None));
        out.push(Region::new(at, at + size + payload, name, None));
        at += size + payload;
    }
    out
}

/// The region a file cut to `cut` bytes ends inside: the first that ends after the cut.
pub fn region_cut_at(regions: &[Region], cut: u64) -> &Region {
    regions
        .iter()
        .find(|r| r.end > cut)
        .unwrap_or_else(|| panic!("a cut at {cut} leaves every region whole"))
}

/// The start of the `n`th record of a file-mode file's data section.
pub fn record_offset(b: &[u8], n: usize) -> u64 {
    let mut at = u64_at(b, DATA);
    for _ in 0..n {
        at += u16_at(b, at + 6);
    }
    at
}
