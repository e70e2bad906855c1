//! Every header feature of every real file decodes into its typed model (never raw for the
//! bits perf defines) and encodes back to exactly the bytes read. Each model is also
//! written big-endian and read back (the corpus is all little-endian, so this is what
//! checks that no model hard-codes a byte order), and serialised to JSON.
//!
//! Inputs: the files in `$PERFDATA_CORPUS` (skipped with a message when unset) and the
//! repository's `fixtures/*.data` and `fixtures/*/data`. File mode walks the feature index;
//! pipe mode the HEADER_FEATURE records. The walking code is deliberately minimal: a reader
//! API will replace it.

use std::path::{Path, PathBuf};

use perfdata_core::codec::{u32_at, u64_at};
use perfdata_core::feature::{Feature, FeatureContext, FeatureId, FeatureSection};
use perfdata_core::header::{probe, read_file_header, Container};
use perfdata_core::raw::SliceRecords;
use perfdata_core::record::RecordType;
use perfdata_core::Endian;

/// What checking one file found.
#[derive(Default)]
struct Report {
    checked: Vec<String>,
    failures: Vec<String>,
    notes: Vec<String>,
}

impl Report {
    /// Decode one section, check it is typed and re-encodes to the same bytes.
    fn section(&mut self, bit: u32, bytes: &[u8], ctx: &FeatureContext, offset: u64) {
        let id = FeatureId::from_bit(bit);
        let section = match FeatureSection::decode(id, bytes, ctx, offset) {
            Ok(s) => s,
            Err(e) => {
                self.failures.push(format!("{id}: {e}"));
                return;
            }
        };
        if matches!(id, FeatureId::Unknown(_)) {
            self.notes
                .push(format!("{id} kept raw ({} bytes)", bytes.len()));
        } else if matches!(section.feature, Feature::Raw(_)) {
            self.failures.push(format!("{id}: decoded as Raw"));
        }
        match section.try_encode(ctx.endian) {
            Ok(out) if out == bytes => {}
            Ok(out) => self.failures.push(format!(
                "{id}: re-encoded {} bytes differ from the {} read (first difference at {})",
                out.len(),
                bytes.len(),
                out.iter()
                    .zip(bytes)
                    .position(|(a, b)| a != b)
                    .unwrap_or(out.len().min(bytes.len()))
            )),
            Err(e) => self.failures.push(format!("{id}: encode failed: {e}")),
        }
        let be_ctx = FeatureContext {
            endian: Endian::Big,
            ..*ctx
        };
        match section
            .try_encode(Endian::Big)
            .map(|be| FeatureSection::decode(id, &be, &be_ctx, 0))
        {
            Ok(Ok(back)) if back == section => {}
            Ok(Ok(_)) => self
                .failures
                .push(format!("{id}: big-endian copy decodes differently")),
            Ok(Err(e)) => self.failures.push(format!("{id}: big-endian copy: {e}")),
            Err(e) => self
                .failures
                .push(format!("{id}: big-endian encode failed: {e}")),
        }
        if let Err(e) = serde_json::to_string(&section) {
            self.failures.push(format!("{id}: JSON: {e}"));
        }
        if !section.trailing.is_empty() {
            self.notes
                .push(format!("{id}: {} trailing bytes", section.trailing.len()));
        }
        self.checked.push(id.name());
    }
}

/// NRCPUS's nr_cpus_avail, for CPU_TOPOLOGY.
fn nr_cpus_avail(bytes: &[u8], endian: Endian) -> Option<u32> {
    u32_at(bytes, 0, endian)
}

fn check_file_mode(bytes: &[u8], report: &mut Report) {
    let (probe, header) = match read_file_header(bytes) {
        Ok(h) => h,
        Err(e) => return report.failures.push(format!("file header: {e}")),
    };
    let endian = probe.endian;
    let index = header.feature_index_offset() as usize;
    let bits: Vec<u32> = header.feature_bits(endian).iter().collect();
    let mut sections = Vec::new();
    for (k, bit) in bits.iter().enumerate() {
        let at = index + 16 * k;
        let (Some(off), Some(size)) = (u64_at(bytes, at, endian), u64_at(bytes, at + 8, endian))
        else {
            return report
                .failures
                .push(format!("feature index entry {k} at {at} is past the end"));
        };
        match bytes.get(off as usize..off.saturating_add(size) as usize) {
            Some(s) => sections.push((*bit, off, s)),
            None => report
                .failures
                .push(format!("feature {bit} at {off}+{size} is past the end")),
        }
    }
    let mut ctx = FeatureContext::new(endian);
    if let Some((_, _, s)) = sections
        .iter()
        .find(|(b, _, _)| *b == FeatureId::NrCpus.bit())
    {
        ctx.nr_cpus_avail = nr_cpus_avail(s, endian);
    }
    for (bit, off, s) in sections {
        report.section(bit, s, &ctx, off);
    }
}

fn check_pipe_mode(bytes: &[u8], endian: Endian, report: &mut Report) {
    let mut ctx = FeatureContext::new(endian);
    for rec in SliceRecords::new(&bytes[16..], 16, endian, 0) {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                report.notes.push(format!("record walk stopped: {e}"));
                break;
            }
        };
        if rec.record_type() != RecordType::HeaderFeature {
            continue;
        }
        let Some(feat_id) = u64_at(rec.bytes, 8, endian) else {
            report
                .failures
                .push(format!("HEADER_FEATURE at {} has no feat_id", rec.offset));
            continue;
        };
        let section = &rec.bytes[16..];
        if feat_id == u64::from(FeatureId::PERF_6_1_LAST) && section.is_empty() {
            continue; // perf 6.1's end marker, not a CPU_DOMAIN_INFO
        }
        let bit = u32::try_from(feat_id).unwrap_or(u32::MAX);
        if bit == FeatureId::NrCpus.bit() {
            ctx.nr_cpus_avail = nr_cpus_avail(section, endian);
        }
        report.section(bit, section, &ctx, rec.offset + 16);
    }
}

fn check(path: &Path) -> Report {
    let mut report = Report::default();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            report.failures.push(format!("cannot read: {e}"));
            return report;
        }
    };
    match probe(&bytes) {
        Ok(p) if p.container == Container::Pipe => check_pipe_mode(&bytes, p.endian, &mut report),
        Ok(_) => check_file_mode(&bytes, &mut report),
        Err(e) => report.failures.push(format!("probe: {e}")),
    }
    report
}

fn inputs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    match std::env::var_os("PERFDATA_CORPUS") {
        Some(dir) => {
            let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
                .expect("PERFDATA_CORPUS is a readable directory")
                .map(|e| e.expect("directory entry").path())
                .filter(|p| p.is_file() && p.extension() != Some("md".as_ref()))
                .collect();
            files.sort();
            out.extend(files);
        }
        None => println!("PERFDATA_CORPUS is not set: skipping the corpus, checking fixtures only"),
    }
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&fixtures).expect("the fixtures directory") {
        let path = entry.expect("directory entry").path();
        if path.extension().is_some_and(|e| e == "data") {
            if path.is_file() {
                files.push(path);
            } else if path.join("data").is_file() {
                files.push(path.join("data"));
            }
        }
    }
    files.sort();
    out.extend(files);
    out
}

#[test]
fn every_feature_section_is_typed_and_round_trips() {
    let mut failures = Vec::new();
    let mut sections = 0;
    for path in inputs() {
        let report = check(&path);
        sections += report.checked.len();
        println!("{}: checked {}", path.display(), report.checked.join(" "));
        for note in &report.notes {
            println!("    note: {note}");
        }
        for f in report.failures {
            println!("    FAIL: {f}");
            failures.push(format!("{}: {f}", path.display()));
        }
    }
    println!("{sections} feature sections checked");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
