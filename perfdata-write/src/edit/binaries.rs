//! Which binaries a stripped recording still maps: a BUILD_ID entry (feature or
//! HEADER_BUILD_ID record) of a file that only stripped MMAP/MMAP2 records mapped names
//! nothing that remains, and goes with them.

use std::collections::HashSet;

use perfdata_core::feature::{Feature, FeatureId};
use perfdata_core::raw::RawRecord;
use perfdata_core::record::RecordType;
use perfdata_core::Metadata;

/// The file name of an MMAP or MMAP2 record, up to its NUL.
fn mapped_file<'a>(raw: &RawRecord<'a>) -> Option<&'a [u8]> {
    let at = match raw.record_type() {
        RecordType::Mmap => 40,
        RecordType::Mmap2 => 72,
        _ => return None,
    };
    let name = raw.bytes.get(at..)?;
    Some(&name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())])
}

/// File names of the MMAP/MMAP2 records kept and stripped so far.
#[derive(Default)]
pub(super) struct MappedFiles {
    kept: HashSet<Vec<u8>>,
    stripped: HashSet<Vec<u8>>,
}

impl MappedFiles {
    pub(super) fn note(&mut self, raw: &RawRecord<'_>, kept: bool) {
        if let Some(name) = mapped_file(raw) {
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
        let name = &name[..name.iter().position(|&b| b == 0).unwrap_or(name.len())];
        self.stripped.contains(name) && !self.kept.contains(name)
    }

    /// A HEADER_BUILD_ID record's file name (after pid, build id, size, reserved).
    pub(super) fn orphan_record(&self, bytes: &[u8]) -> bool {
        bytes.get(36..).is_some_and(|name| self.orphan(name))
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
