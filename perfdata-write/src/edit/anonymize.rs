//! [`Anonymize`]: replace the names a recording holds with stable pseudonyms (see
//! [`Pseudonyms`]) so that it can be shared (`perfdata anonymize`).
//!
//! Names replaced: comms (COMM and THREAD_MAP records, the tracing data's
//! saved_cmdlines), file paths outside the kept prefixes (MMAP, MMAP2, HEADER_BUILD_ID
//! records and BUILD_ID entries alike, so that perf still finds each binary's build id),
//! cgroup paths (CGROUP records), the HOSTNAME and every CMDLINE argument. Samples,
//! addresses, build ids and event names stay, so the profile keeps its shape.
//!
//! RAW tracepoint payloads are rebuilt from their event format (see `anon_raw`):
//! numbers kept, string arguments (`sched_switch`'s comms, `sched_process_exec`'s
//! filename) renamed, byte buffers zeroed; a payload whose format the tracing data does
//! not give is zeroed past the common fields. Bytes whose meaning this cannot check are
//! zeroed (their sizes kept, so every record keeps its layout): user stacks
//! (STACK_USER), user and interrupt registers (REGS_USER, REGS_INTR, which can hold
//! pointers into and values from the program's memory), AUX samples and AUXTRACE trace
//! data. Features whose layout is unknown (simpleperf's, from bit 128: file tables with
//! paths and symbols, meta-info with build properties) or whose bytes did not fit it are
//! dropped. With `keep_raw` all
//! of these, RAW payloads included, are kept as they are.

use std::cell::RefCell;
use std::rc::Rc;

use perfdata_core::feature::{BuildIdEntry, Feature, FeatureId, PerfString};
use perfdata_core::record::{PaddedString, RecordBody, RecordType, Sample};
use perfdata_core::tracing::saved_cmdlines;
use perfdata_core::{Metadata, RecordRef};

use super::anon_raw::RawFormats;
use super::pseudonym::Pseudonyms;
use super::{Action, RecordEdit};
use crate::error::Result;

/// Bytes of a RAW tracepoint payload kept: the common fields (common_type, flags,
/// preempt_count, common_pid), which say which tracepoint and which task.
const RAW_COMMON: usize = 8;

/// What [`Anonymize`] did, for a summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnonymizeCounts {
    /// Records whose names were replaced.
    pub renamed_records: u64,
    /// Features rewritten (HOSTNAME, CMDLINE, BUILD_ID, TRACING_DATA).
    pub features: Vec<FeatureId>,
    /// Samples whose RAW payload was rebuilt from its tracepoint's format: numbers
    /// kept, strings renamed, the rest zeroed.
    pub raw_rebuilt: u64,
    /// Samples whose RAW payload was zeroed past the common fields (no format for it).
    pub raw_zeroed: u64,
    /// Samples whose user stack was zeroed.
    pub stack_zeroed: u64,
    /// Samples whose user or interrupt registers were zeroed.
    pub regs_zeroed: u64,
    /// Samples whose AUX data was zeroed.
    pub aux_zeroed: u64,
    /// AUXTRACE records whose trace data was zeroed, and its bytes.
    pub auxtrace_zeroed: u64,
    /// The bytes of AUXTRACE trace data zeroed.
    pub auxtrace_bytes: u64,
    /// Features dropped because they were held as raw bytes: their layout is unknown
    /// (simpleperf's file, meta-info and debug-unwind sections hold paths, symbols and
    /// build properties) or their bytes did not fit it.
    pub dropped_features: Vec<FeatureId>,
}

/// The anonymise edit. See the module documentation.
pub struct Anonymize {
    names: Pseudonyms,
    keep_raw: bool,
    raw: RawFormats,
    counts: Rc<RefCell<AnonymizeCounts>>,
}

/// Replace a string field by what `new` makes of it, padded as the kernel pads it;
/// `None` when `new` keeps it.
fn set(field: &mut PaddedString, new: impl FnOnce(&[u8]) -> Option<String>) -> Option<()> {
    new(&field.bytes).map(|n| *field = PaddedString::new(&n))
}

/// A record's encoded bytes as the record and the payload that follows it (AUXTRACE's
/// trace, the tracing data), from where `raw` came from.
fn split_record(
    raw: &perfdata_core::raw::RawRecord<'_>,
    mut bytes: Vec<u8>,
    endian: binrw::Endian,
) -> Action {
    let size = perfdata_core::raw::header_of(&bytes, endian).size as usize;
    let payload = bytes.split_off(size.min(bytes.len()));
    let mut rec = Action::record_like(raw, bytes);
    rec.payload = payload;
    Action::Replace(vec![rec])
}

/// Pad a file name as perf pads it in build id entries: 64 bytes past its NUL.
fn build_id_name(path: String) -> PaddedString {
    let mut name = path.into_bytes();
    name.resize((name.len() + 1).div_ceil(64) * 64, 0);
    PaddedString { bytes: name }
}

impl Anonymize {
    /// With `keep_raw`, the bytes this cannot vouch for are kept (see the module docs).
    pub fn new(names: Pseudonyms, keep_raw: bool) -> Self {
        Anonymize {
            names,
            keep_raw,
            raw: RawFormats::default(),
            counts: Rc::default(),
        }
    }

    /// What the edit did so far; readable after the run.
    pub fn counts(&self) -> Rc<RefCell<AnonymizeCounts>> {
        self.counts.clone()
    }

    /// A BUILD_ID entry with its file name replaced; whether it changed.
    fn entry(&self, e: &mut BuildIdEntry) -> bool {
        match self.names.path(&e.filename.bytes) {
            Some(p) => {
                e.filename = build_id_name(p);
                true
            }
            None => false,
        }
    }

    /// The tracing data with its saved_cmdlines' comms replaced; `None` when nothing
    /// changes (or the blob has no saved_cmdlines).
    fn tracing_blob(&self, blob: &[u8]) -> Option<Vec<u8>> {
        let s = saved_cmdlines(blob)?;
        let text = String::from_utf8_lossy(&blob[s.text.clone()]);
        let mut lines = String::new();
        for line in text.lines() {
            match line.split_once(' ') {
                Some((pid, comm)) => {
                    let comm = self
                        .names
                        .comm(comm.as_bytes())
                        .unwrap_or_else(|| comm.to_string());
                    lines.push_str(&format!("{pid} {comm}\n"));
                }
                None if line.is_empty() => {}
                None => lines.push_str(&format!("{}\n", self.names.word(line.as_bytes()))),
            }
        }
        let mut out = blob[..s.size_at].to_vec();
        let size = lines.len() as u64;
        out.extend_from_slice(&if s.big {
            size.to_be_bytes()
        } else {
            size.to_le_bytes()
        });
        out.extend_from_slice(lines.as_bytes());
        out.extend_from_slice(&blob[s.text.end..]);
        Some(out)
    }

    /// A feature with its names replaced; whether it changed.
    fn feature(&self, f: &mut Feature) -> bool {
        match f {
            Feature::Hostname(s) => {
                *s = PerfString::new(&self.names.word(&s.bytes));
                true
            }
            Feature::Cmdline(list) => {
                for s in &mut list.strings {
                    *s = PerfString::new(&self.names.word(&s.bytes));
                }
                true
            }
            Feature::BuildId(list) => {
                let mut any = false;
                for e in &mut list.entries {
                    any |= self.entry(e);
                }
                any
            }
            Feature::TracingData(blob) => match self.tracing_blob(blob) {
                Some(new) => {
                    *blob = new;
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// Edit every feature the metadata has that names something (the bytes a renamed
    /// one had past its layout go too), and drop, unless `keep_raw`, those held as raw
    /// bytes: of unknown layout, or whose bytes did not fit theirs (a HOSTNAME that did
    /// not decode cannot be renamed).
    fn features(&self, meta: &mut Metadata) {
        if !self.keep_raw {
            let raw: Vec<FeatureId> = meta
                .features
                .iter()
                .filter(|(_, s)| matches!(s.feature, Feature::Raw(_)))
                .map(|(id, _)| *id)
                .collect();
            for id in &raw {
                meta.features.shift_remove(id);
            }
            self.note_dropped(raw);
        }
        let mut done = Vec::new();
        for id in NAMING_FEATURES {
            if let Some(section) = meta.features.get_mut(&id) {
                if self.feature(&mut section.feature) {
                    section.trailing.clear();
                    done.push(id);
                }
            }
        }
        self.note_features(done);
    }

    fn note_features(&self, ids: Vec<FeatureId>) {
        let mut c = self.counts.borrow_mut();
        for id in ids {
            if !c.features.contains(&id) {
                c.features.push(id);
            }
        }
    }

    fn note_dropped(&self, ids: Vec<FeatureId>) {
        let mut c = self.counts.borrow_mut();
        for id in ids {
            if !c.dropped_features.contains(&id) {
                c.dropped_features.push(id);
            }
        }
    }

    /// Zero what a sample holds that cannot be vouched for; whether anything changed.
    fn sample(&self, event: usize, s: &mut Sample) -> bool {
        let mut c = self.counts.borrow_mut();
        let mut any = false;
        if let Some(raw) = &mut s.raw {
            if let Some(data) = self.raw.rebuild(event, &raw.data, &self.names) {
                raw.data = data;
                c.raw_rebuilt += 1;
                any = true;
            } else if raw.data.len() > RAW_COMMON {
                raw.data[RAW_COMMON..].fill(0);
                c.raw_zeroed += 1;
                any = true;
            }
        }
        if let Some(stack) = &mut s.stack_user {
            if !stack.data.is_empty() {
                stack.data.fill(0);
                c.stack_zeroed += 1;
                any = true;
            }
        }
        let mut regs = false;
        for r in [&mut s.regs_user, &mut s.regs_intr].into_iter().flatten() {
            if !r.regs.is_empty() {
                r.regs.fill(0);
                regs = true;
            }
        }
        c.regs_zeroed += u64::from(regs);
        if let Some(aux) = &mut s.aux {
            if !aux.data.is_empty() {
                aux.data.fill(0);
                c.aux_zeroed += 1;
                any = true;
            }
        }
        any | regs
    }

    /// The record with its names replaced or unvouched bytes zeroed, if any changed.
    fn rewrite(&self, item: &RecordRef<'_>) -> Result<Option<Vec<u8>>> {
        let mut record = item.decode()?;
        let renamed = match &mut record.body {
            RecordBody::Comm(c) => set(&mut c.comm, |b| self.names.comm(b)),
            RecordBody::Mmap(m) => set(&mut m.filename, |b| self.names.path(b)),
            RecordBody::Mmap2(m) => set(&mut m.filename, |b| self.names.path(b)),
            RecordBody::Cgroup(g) => set(&mut g.path, |b| self.names.cgroup(b)),
            // The record's body is a BUILD_ID entry, renamed as the feature's are.
            RecordBody::HeaderBuildId(h) => self.entry(h).then_some(()),
            RecordBody::ThreadMap(t) => {
                let mut any = None;
                for e in &mut t.entries {
                    if let Some(p) = self.names.comm(&e.comm) {
                        e.comm = [0; 16];
                        e.comm[..p.len()].copy_from_slice(p.as_bytes());
                        any = Some(());
                    }
                }
                any
            }
            RecordBody::Auxtrace(_) if !self.keep_raw && !record.payload.is_empty() => {
                let mut c = self.counts.borrow_mut();
                c.auxtrace_zeroed += 1;
                c.auxtrace_bytes += record.payload.len() as u64;
                record.payload.fill(0);
                Some(())
            }
            RecordBody::HeaderTracingData(t) => {
                let Some(blob) = self.tracing_blob(&record.payload) else {
                    return Ok(None);
                };
                // perf pads the data to 8 bytes and says so in `size`.
                let aligned = blob.len().div_ceil(8) * 8;
                t.size = u32::try_from(aligned).unwrap_or(u32::MAX);
                record.payload = blob;
                record.payload.resize(aligned, 0);
                self.note_features(vec![FeatureId::TracingData]);
                Some(())
            }
            _ => None,
        };
        if renamed.is_none() {
            return Ok(None);
        }
        self.counts.borrow_mut().renamed_records += 1;
        Ok(Some(record.encode(item.meta.endian)?))
    }
}

/// The features that name hosts, commands, files or tasks.
const NAMING_FEATURES: [FeatureId; 4] = [
    FeatureId::Hostname,
    FeatureId::Cmdline,
    FeatureId::BuildId,
    FeatureId::TracingData,
];

impl RecordEdit for Anonymize {
    fn start(&mut self, meta: &Metadata) -> Result<()> {
        self.raw = RawFormats::new(meta);
        Ok(())
    }

    fn record(&mut self, item: &RecordRef<'_>) -> Result<Action> {
        let ty = item.raw.record_type();
        match ty {
            RecordType::HeaderFeature => {
                let bit = perfdata_core::u64_at(item.raw.bytes, 8, item.meta.endian);
                let id = bit
                    .and_then(|b| u32::try_from(b).ok())
                    .map(FeatureId::from_bit);
                if let Some(id @ FeatureId::Unknown(_)) = id {
                    if !self.keep_raw {
                        self.note_dropped(vec![id]);
                        return Ok(Action::Drop);
                    }
                }
                for id in NAMING_FEATURES {
                    let action = super::edit_feature_record(item, id, |f| self.feature(f))?;
                    if action != Action::Keep {
                        self.note_features(vec![id]);
                        return Ok(action);
                    }
                }
                Ok(Action::Keep)
            }
            RecordType::Sample if !self.keep_raw => {
                let Some(event) = item.locate().event else {
                    return Ok(Action::Keep);
                };
                let st = item.meta.attrs[event].attr.sample_type;
                use perfdata_core::attr::SampleType as S;
                if !st.intersects(S::RAW | S::STACK_USER | S::REGS_USER | S::REGS_INTR | S::AUX) {
                    return Ok(Action::Keep);
                }
                let mut record = item.decode()?;
                let RecordBody::Sample(s) = &mut record.body else {
                    return Ok(Action::Keep);
                };
                if !self.sample(event, s) {
                    return Ok(Action::Keep);
                }
                Ok(Action::replace(&item.raw, record.encode(item.meta.endian)?))
            }
            RecordType::Comm
            | RecordType::Mmap
            | RecordType::Mmap2
            | RecordType::Cgroup
            | RecordType::HeaderBuildId
            | RecordType::ThreadMap
            | RecordType::Auxtrace
            | RecordType::HeaderTracingData => Ok(match self.rewrite(item)? {
                Some(bytes) => split_record(&item.raw, bytes, item.meta.endian),
                None => Action::Keep,
            }),
            _ => Ok(Action::Keep),
        }
    }

    fn edit_meta(&self, meta: &mut Metadata) -> Result<()> {
        self.features(meta);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use perfdata_core::{PerfReader, ReadOptions};

    use super::*;
    use crate::convert::{ConvertOptions, Target};
    use crate::edit::pseudonym::DEFAULT_KEEP_PATHS;
    use crate::edit::{open, run};

    fn fixture(name: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures")
            .join(name)
    }

    /// `name` anonymised with salt "s1", read back, with what the edit counted.
    fn anonymized(name: &str, keep_raw: bool) -> (PerfReader, AnonymizeCounts) {
        let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
        let anon = Anonymize::new(Pseudonyms::new("s1", keep, Vec::new()).unwrap(), keep_raw);
        let counts = anon.counts();
        let reader = open(fixture(name)).unwrap();
        let opts = ConvertOptions::default();
        let out = Cursor::new(Vec::new());
        let (out, _) = run(reader, Target::File, out, &opts, vec![Box::new(anon)]).unwrap();
        let r = PerfReader::from_vec(out.into_inner(), ReadOptions::Contents).unwrap();
        let c = counts.borrow().clone();
        (r, c)
    }

    /// Every record of `r`, decoded.
    fn bodies(r: &mut PerfReader) -> Vec<RecordBody> {
        let mut out = Vec::new();
        while let Some(item) = r.next_record().unwrap() {
            out.push(item.decode().unwrap().body);
        }
        out
    }

    #[test]
    fn names_get_their_pseudonyms_everywhere() {
        let (mut r, counts) = anonymized("anon-secret.data", false);
        // The first hex digits of `printf 's1\0NAME' | sha1sum`.
        match r.meta().feature(FeatureId::Hostname) {
            Some(Feature::Hostname(h)) => assert_eq!(h.as_str_lossy(), "9e22bc62fbc3"),
            other => panic!("HOSTNAME {other:?}"),
        }
        let worker = "/anon/e7b4e2f2cf1e3562"; // /tmp/zqxanondir/zqxsecretworker
        let Some(Feature::BuildId(ids)) = r.meta().feature(FeatureId::BuildId).cloned() else {
            panic!("BUILD_ID");
        };
        let id_names: Vec<String> = ids.entries.iter().map(|e| e.filename_str()).collect();
        assert!(id_names.iter().any(|n| n == worker), "{id_names:?}");
        assert!(id_names.iter().any(|n| n == "[kernel.kallsyms]"));
        let (mut comms, mut maps) = (Vec::new(), Vec::new());
        for body in bodies(&mut r) {
            match body {
                RecordBody::Comm(c) => comms.push(c.comm.as_str_lossy()),
                RecordBody::Mmap2(m) => maps.push(m.filename.as_str_lossy()),
                _ => {}
            }
        }
        assert!(comms.contains(&"ae28c9a94ae0".to_string()), "{comms:?}");
        assert!(comms.contains(&"e20deb7692d2".to_string()), "{comms:?}");
        assert!(comms.iter().all(|c| c.len() == 12), "{comms:?}");
        assert!(maps.contains(&worker.to_string()), "{maps:?}");
        assert!(maps.iter().any(|m| m.starts_with("/usr/lib/")), "kept");
        assert!(maps
            .iter()
            .all(|m| m.starts_with("/anon/") || m.starts_with("/usr/lib/") || m.starts_with('[')));
        // 4 COMM and the 3 MMAP2 of binaries outside /usr/lib (dash and
        // the two workers); the CGROUP record's path is "/", which is kept.
        assert_eq!(counts.renamed_records, 7);
        assert_eq!(
            counts.raw_zeroed + counts.stack_zeroed + counts.regs_zeroed,
            0
        );
    }

    #[test]
    fn saved_cmdlines_are_renamed() {
        // perf 6.1 here leaves saved_cmdlines empty: fill the fixture's with two tasks.
        let input = PerfReader::open(fixture("file-tracepoint.data")).unwrap();
        let blob = perfdata_core::tracing::tracing_blob(input.meta()).unwrap();
        let s = saved_cmdlines(blob).unwrap();
        assert!(s.text.is_empty() && s.text.end == blob.len());
        let mut filled = blob[..s.size_at].to_vec();
        let lines = b"42 zqxsecret\n7 sh\n";
        filled.extend_from_slice(&(lines.len() as u64).to_le_bytes());
        filled.extend_from_slice(lines);
        let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
        let names = Pseudonyms::new("s1", keep, vec!["sh".into()]).unwrap();
        let out = Anonymize::new(names, false).tracing_blob(&filled).unwrap();
        // `printf 's1\0zqxsecret' | sha1sum`
        let want = b"42 20e6959e8e96\n7 sh\n";
        assert_eq!(
            &out[s.size_at..s.size_at + 8],
            &(want.len() as u64).to_le_bytes()
        );
        assert_eq!(&out[s.size_at + 8..], want);
        assert_eq!(out[..s.size_at], filled[..s.size_at]);
    }

    /// The RAW payloads of `r`'s samples, in order.
    fn raws(r: &mut PerfReader) -> Vec<Vec<u8>> {
        bodies(r)
            .into_iter()
            .filter_map(|b| match b {
                RecordBody::Sample(s) => s.raw.map(|raw| raw.data),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn features_held_raw_are_dropped_and_renamed_ones_lose_their_tail() {
        use perfdata_core::feature::FeatureSection;
        let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
        let names = Pseudonyms::new("s1", keep, Vec::new()).unwrap();
        let mut meta = open(fixture("anon-secret.data")).unwrap().meta().clone();
        let host = b"zqxsecrethost\0\0\0".to_vec();
        let raw = |id, bytes: &[u8]| FeatureSection {
            id,
            feature: Feature::Raw(bytes.to_vec()),
            trailing: Vec::new(),
        };
        meta.features
            .insert(FeatureId::Hostname, raw(FeatureId::Hostname, &host));
        let simpleperf = FeatureId::Unknown(129);
        meta.features
            .insert(simpleperf, raw(simpleperf, b"/data/local/tmp/app"));
        let cmdline = meta.features.get_mut(&FeatureId::Cmdline).unwrap();
        cmdline.trailing = b"zqxoldtail".to_vec();
        let mut kept = meta.clone();
        let anon = Anonymize::new(names.clone(), false);
        anon.features(&mut meta);
        assert!(!meta.features.contains_key(&FeatureId::Hostname));
        assert!(!meta.features.contains_key(&simpleperf));
        assert!(meta.features[&FeatureId::Cmdline].trailing.is_empty());
        let c = anon.counts().borrow().clone();
        assert_eq!(c.dropped_features, vec![FeatureId::Hostname, simpleperf]);
        assert_eq!(c.features, vec![FeatureId::Cmdline, FeatureId::BuildId]);
        // --keep-raw keeps what it cannot rename.
        Anonymize::new(names, true).features(&mut kept);
        assert_eq!(
            kept.features[&FeatureId::Hostname].feature,
            Feature::Raw(host)
        );
        assert!(kept.features.contains_key(&simpleperf));
    }

    #[test]
    fn tracepoint_payloads_are_rebuilt() {
        let before = raws(&mut open(fixture("file-tracepoint.data")).unwrap());
        let (mut r, counts) = anonymized("file-tracepoint.data", false);
        let after = raws(&mut r);
        assert_eq!(counts.raw_rebuilt as usize, before.len());
        assert_eq!((counts.raw_zeroed, before.len()), (0, 10));
        let mut changed = 0;
        for (b, a) in before.iter().zip(&after) {
            assert_eq!(a.len(), b.len());
            assert_eq!(a[..RAW_COMMON], b[..RAW_COMMON], "common fields kept");
            changed += usize::from(a != b);
        }
        // sched_switch and sched_process_exec hold names; sys_enter_write only numbers,
        // but the 4 bytes after its __syscall_nr, which no field describes, held stale
        // kernel data and are zeroed.
        assert_eq!(changed, 10);
        let (mut r, kept) = anonymized("file-tracepoint.data", true);
        assert_eq!(raws(&mut r), before);
        assert_eq!(kept.raw_rebuilt + kept.raw_zeroed, 0);
        assert_eq!(kept.renamed_records, counts.renamed_records);
    }

    #[test]
    fn user_stacks_and_registers_are_zeroed() {
        let (mut r, counts) = anonymized("file-callgraph-dwarf.data", false);
        let mut n = 0;
        for body in bodies(&mut r) {
            if let RecordBody::Sample(s) = body {
                let stack = s.stack_user.unwrap();
                assert!(!stack.data.is_empty() && stack.data.iter().all(|&b| b == 0));
                assert!(s.regs_user.unwrap().regs.iter().all(|&v| v == 0));
                n += 1;
            }
        }
        assert_eq!((counts.stack_zeroed, counts.regs_zeroed), (n, n));
        assert!(n > 0);
    }
}
