//! Which binaries a stripped recording still maps: a BUILD_ID entry (feature or
//! HEADER_BUILD_ID record) of a file that only stripped MMAP/MMAP2 records mapped names
//! nothing that remains, and goes with them.

use std::collections::HashSet;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::RawRecord;
use perfdata_core::record::{Mmap2View, MmapView, RecordBody, RecordType, RecordView};
use perfdata_core::{Endian, Metadata, RecordRef};

/// The file name of an MMAP or MMAP2 record, up to its NUL, read through the record's
/// view (none for a record too short for its fixed fields).
fn mapped_file<'a>(raw: &RawRecord<'a>, endian: Endian) -> Option<&'a [u8]> {
    match raw.record_type() {
        RecordType::Mmap => MmapView::new(raw.bytes, endian, raw.offset)
            .ok()
            .map(|v| v.filename()),
        RecordType::Mmap2 => Mmap2View::new(raw.bytes, endian, raw.offset)
            .ok()
            .map(|v| v.filename()),
        _ => None,
    }
}

/// File names of the MMAP/MMAP2 records kept and stripped so far.
#[derive(Default)]
pub(super) struct MappedFiles {
    kept: HashSet<Vec<u8>>,
    stripped: HashSet<Vec<u8>>,
}

impl MappedFiles {
    pub(super) fn note(&mut self, raw: &RawRecord<'_>, endian: Endian, kept: bool) {
        if let Some(name) = mapped_file(raw, endian) {
            let set = if kept {
                &mut self.kept
            } else {
                &mut self.stripped
            };
            if !set.contains(name) {
                set.insert(name.to_vec());
            }
        }
    }

    /// Whether only stripped records mapped the file `name` (NUL-padded or not).
    pub(super) fn orphan(&self, name: &[u8]) -> bool {
        let name = perfdata_core::text::c_str_bytes(name);
        self.stripped.contains(name) && !self.kept.contains(name)
    }

    /// Whether a HEADER_BUILD_ID record names a file only stripped records mapped (its
    /// model decoded: one such record per binary, in pipe streams only).
    pub(super) fn orphan_record(&self, item: &RecordRef<'_>) -> bool {
        match item.decode().map(|r| r.body) {
            Ok(RecordBody::HeaderBuildId(entry)) => self.orphan(&entry.filename.bytes),
            _ => false,
        }
    }

    /// Drop the BUILD_ID feature's entries of orphaned files.
    pub(super) fn prune(&self, meta: &mut Metadata) {
        if let Some(section) = meta.features.get_mut(&FeatureId::BuildId) {
            if let Feature::BuildId(list) = &mut section.feature {
                list.entries.retain(|e| !self.orphan(&e.filename.bytes));
            }
        }
    }
}
