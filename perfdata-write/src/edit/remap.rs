//! [`Remap`]: replace build ids and file-name prefixes wherever a recording names its
//! binaries: the BUILD_ID feature, HEADER_BUILD_ID records, MMAP and MMAP2 records
//! (`perfdata buildid remap`). The usual case is a profile taken in a container and read
//! on the host, or a build tree that moved. Records that change are re-encoded with
//! their sizes recomputed; the others are written as they were.

use perfdata_core::c_str_lossy;
use perfdata_core::feature::{BuildIdEntry, Feature, FeatureId};
use perfdata_core::record::{misc, Mmap2Id, PaddedString, Record, RecordBody, RecordType};
use perfdata_core::{Metadata, PerfData, RecordRef};

use super::{Action, RecordEdit};
use crate::error::{Result, WriteError};

fn bad(what: &str, text: &str, why: impl std::fmt::Display) -> WriteError {
    WriteError::unsupported(None, format!("{what} {text:?}: {why}"))
}

/// A build id in hex, 1 to 20 bytes.
pub fn parse_build_id(text: &str) -> Result<Vec<u8>> {
    let text = text.trim();
    if text.is_empty() || !text.len().is_multiple_of(2) || text.len() > 40 {
        return Err(bad("build id", text, "expected 2 to 40 hex digits"));
    }
    (0..text.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&text[i..i + 2], 16).map_err(|_| bad("build id", text, "not hex"))
        })
        .collect()
}

/// `OLD=NEW` (the `--map` and `--path` arguments).
fn split_pair<'a>(text: &'a str, what: &str) -> Result<(&'a str, &'a str)> {
    text.split_once('=')
        .filter(|(a, _)| !a.is_empty())
        .ok_or_else(|| bad(what, text, "expected OLD=NEW"))
}

/// A `--map OLD=NEW` build id pair.
pub fn parse_id_pair(text: &str) -> Result<(Vec<u8>, Vec<u8>)> {
    let (old, new) = split_pair(text, "build id map")?;
    Ok((parse_build_id(old)?, parse_build_id(new)?))
}

/// A `--path OLD_PREFIX=NEW_PREFIX` pair.
pub fn parse_path_pair(text: &str) -> Result<(String, String)> {
    let (old, new) = split_pair(text, "path map")?;
    Ok((old.to_string(), new.to_string()))
}

/// A map file: one `OLD NEW` pair of hex build ids a line; blank lines and `#` comments
/// are skipped.
pub fn parse_map_file(text: &str) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [old, new] = words[..] else {
            return Err(WriteError::unsupported(
                None,
                format!("map file line {}: expected OLD NEW, got {line:?}", n + 1),
            ));
        };
        let at =
            |e: WriteError| WriteError::unsupported(None, format!("map file line {}: {e}", n + 1));
        out.push((
            parse_build_id(old).map_err(at)?,
            parse_build_id(new).map_err(at)?,
        ));
    }
    Ok(out)
}

/// Build ids and path prefixes to replace.
#[derive(Debug, Clone, Default)]
pub struct Remap {
    /// (old, new) build ids.
    pub ids: Vec<(Vec<u8>, Vec<u8>)>,
    /// (old, new) paths.
    pub paths: Vec<(String, String)>,
    /// Records and feature entries rewritten.
    pub changed: u64,
}

impl Remap {
    /// An edit that replaces the build ids and paths of `ids` and `paths`.
    pub fn new(ids: Vec<(Vec<u8>, Vec<u8>)>, paths: Vec<(String, String)>) -> Self {
        Remap {
            ids,
            paths,
            changed: 0,
        }
    }

    fn new_id(&self, id: &[u8]) -> Option<&[u8]> {
        self.ids
            .iter()
            .find(|(old, _)| old == id)
            .map(|(_, new)| new.as_slice())
    }

    /// The file name with its first matching prefix replaced.
    fn new_path(&self, name: &[u8]) -> Option<String> {
        let name = c_str_lossy(name);
        self.paths
            .iter()
            .find(|(old, _)| name.starts_with(old.as_str()))
            .map(|(old, new)| format!("{new}{}", &name[old.len()..]))
    }

    /// A BUILD_ID entry (feature or HEADER_BUILD_ID record layout) rewritten.
    fn entry(&self, e: &BuildIdEntry) -> Option<BuildIdEntry> {
        let id = self.new_id(e.build_id());
        let path = self.new_path(&e.filename.bytes);
        if id.is_none() && path.is_none() {
            return None;
        }
        let mut out = e.clone();
        if let Some(id) = id {
            set_id(&mut out.build_id_padded, &mut out.size, id);
            out.header.misc |= misc::BUILD_ID_SIZE;
        }
        if let Some(path) = path {
            // perf pads the name to 64 bytes past its NUL.
            let mut name = path.into_bytes();
            name.resize((name.len() + 1).div_ceil(64) * 64, 0);
            out.filename = PaddedString { bytes: name };
        }
        Some(out)
    }
}

fn set_id(bytes: &mut [u8; 20], size: &mut u8, id: &[u8]) {
    *bytes = [0; 20];
    bytes[..id.len()].copy_from_slice(id);
    *size = id.len() as u8;
}

impl Remap {
    /// Rewrite one record in place (MMAP, MMAP2, HEADER_BUILD_ID); whether it changed.
    fn edit_record(&self, record: &mut Record) -> bool {
        let changed = match &mut record.body {
            RecordBody::Mmap(m) => self.new_path(&m.filename.bytes).map(|p| {
                m.filename = PaddedString::new(&p);
            }),
            RecordBody::Mmap2(m) => {
                let mut any = self.new_path(&m.filename.bytes).map(|p| {
                    m.filename = PaddedString::new(&p);
                });
                if let Mmap2Id::BuildId {
                    build_id_size,
                    build_id,
                    ..
                } = &mut m.id
                {
                    let used = &build_id[..(*build_id_size as usize).min(20)];
                    if let Some(new) = self.new_id(used).map(<[u8]>::to_vec) {
                        set_id(build_id, build_id_size, &new);
                        any = Some(());
                    }
                }
                any
            }
            // The record's body is a BUILD_ID entry: rewritten as the feature's are, the
            // record's header taking the entry's misc.
            RecordBody::HeaderBuildId(entry) => self.entry(entry).map(|new| {
                record.header.misc = new.header.misc;
                *entry = new;
            }),
            _ => None,
        };
        changed.is_some()
    }

    /// The same remap on an owned tree: its MMAP, MMAP2 and HEADER_BUILD_ID records and
    /// its BUILD_ID feature; write it with [`crate::TreeSource`]. A tree holding
    /// compressed records is refused (the maps inside them would stay as they were):
    /// read it with `ReadOptions::Contents`.
    pub fn apply(&mut self, tree: &mut PerfData) -> Result<()> {
        if let Some(e) = tree.records.iter().find(|e| {
            matches!(
                e.record.record_type(),
                RecordType::Compressed | RecordType::Compressed2
            )
        }) {
            return Err(WriteError::unsupported(
                Some(e.offset),
                "the tree holds compressed records, whose maps a remap cannot reach: \
                 read it with ReadOptions::Contents",
            ));
        }
        for e in &mut tree.records {
            if self.edit_record(&mut e.record) {
                self.changed += 1;
            }
        }
        self.edit_meta(&mut tree.meta)
    }
}

impl RecordEdit for Remap {
    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        let ty = item.raw.record_type();
        if !matches!(
            ty,
            RecordType::Mmap | RecordType::Mmap2 | RecordType::HeaderBuildId
        ) {
            return Ok(Action::Keep);
        }
        let mut record = item.decode()?;
        if !self.edit_record(&mut record) {
            return Ok(Action::Keep);
        }
        self.changed += 1;
        Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        if let Some(section) = meta.features.get_mut(&FeatureId::BuildId) {
            if let Feature::BuildId(list) = &mut section.feature {
                for e in &mut list.entries {
                    if let Some(new) = self.entry(e) {
                        *e = new;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(parse_build_id("00ff10").unwrap(), vec![0, 255, 16]);
        for bad in ["", "0", "zz", &"00".repeat(21)] {
            assert!(parse_build_id(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_id_pair("aa=bbcc").unwrap(),
            (vec![0xaa], vec![0xbb, 0xcc])
        );
        assert!(parse_id_pair("aa").is_err() && parse_id_pair("=aa").is_err());
        let m = parse_map_file("# comment\n\naa bb\n  cc dd  \n").unwrap();
        assert_eq!(m, vec![(vec![0xaa], vec![0xbb]), (vec![0xcc], vec![0xdd])]);
        let e = parse_map_file("aa bb\naa\n").unwrap_err().to_string();
        assert!(e.contains("line 2"), "{e}");
        assert!(parse_path_pair("/a=/b").is_ok() && parse_path_pair("/a").is_err());
    }

    #[test]
    fn paths_replace_their_first_matching_prefix() {
        let r = Remap::new(
            Vec::new(),
            vec![
                ("/usr/lib".into(), "/host/lib".into()),
                ("/usr".into(), "/x".into()),
            ],
        );
        assert_eq!(
            r.new_path(b"/usr/lib/libc.so\0\0\0").as_deref(),
            Some("/host/lib/libc.so")
        );
        assert_eq!(
            r.new_path(b"/usr/bin/dash\0").as_deref(),
            Some("/x/bin/dash")
        );
        assert_eq!(r.new_path(b"/tmp/a\0"), None);
    }
}
