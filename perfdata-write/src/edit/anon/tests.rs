//! Anonymize on intact recordings: every name gets its pseudonym, and the rest of what
//! could carry one is rewritten as the allow list says.

use std::io::Cursor;
use std::path::PathBuf;

use perfdata_core::feature::{Feature, FeatureId, FeatureSection};
use perfdata_core::record::RecordBody;
use perfdata_core::tracing::saved_cmdlines;
use perfdata_core::{PerfReader, ReadOptions};

use super::*;
use crate::convert::testing as convert;
use crate::convert::testing::{open, run};
use crate::convert::{Compression, ConvertOptions};
use crate::edit::pseudonym::DEFAULT_KEEP_PATHS;

pub(super) fn fixture(name: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

pub(super) fn names() -> Pseudonyms {
    let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
    Pseudonyms::new("s1", keep, Vec::new()).unwrap()
}

/// `input` anonymised with salt "s1" in its own container: the output's bytes and
/// what the edit counted, or the error.
pub(super) fn anonymize_bytes(
    input: Vec<u8>,
    anon: Anonymize,
) -> crate::error::Result<(Vec<u8>, AnonymizeCounts)> {
    let counts = anon.counts();
    let reader = PerfReader::from_vec(input, ReadOptions::Contents)?;
    let opts = ConvertOptions::default();
    let target = opts.target_for(reader.meta().container);
    let (out, _) = run(
        reader,
        target,
        Cursor::new(Vec::new()),
        &opts,
        vec![Box::new(anon)],
    )?;
    let c = counts.borrow().clone();
    Ok((out.into_inner(), c))
}

/// The recording in `bytes` with its compressed records expanded.
pub(super) fn expanded(bytes: &[u8]) -> Vec<u8> {
    let reader = PerfReader::from_vec(bytes.to_vec(), ReadOptions::Contents).unwrap();
    let opts = ConvertOptions {
        compression: Compression::Decompress,
        ..Default::default()
    };
    let target = opts.target_for(reader.meta().container);
    let (out, _) = convert::to_target(reader, target, Cursor::new(Vec::new()), &opts).unwrap();
    out.into_inner()
}

/// Whether `bytes` hold `word` (ASCII case ignored).
pub(super) fn holds(bytes: &[u8], word: &str) -> bool {
    let lower: Vec<u8> = bytes.iter().map(u8::to_ascii_lowercase).collect();
    lower.windows(word.len()).any(|w| w == word.as_bytes())
}

/// `name` anonymised with salt "s1", read back, with what the edit counted.
fn anonymized(name: &str, keep_raw: bool) -> (PerfReader, AnonymizeCounts) {
    let anon = Anonymize::new(names(), keep_raw);
    let (out, c) = anonymize_bytes(std::fs::read(fixture(name)).unwrap(), anon).unwrap();
    (PerfReader::from_vec(out, ReadOptions::Contents).unwrap(), c)
}

/// Every record of `r`, decoded.
pub(super) fn bodies(r: &mut PerfReader) -> Vec<RecordBody> {
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
    // Nothing in it is damaged: nothing left out.
    assert_eq!(counts.dropped_records.len(), 0, "{:?}", counts.warnings());
    assert_eq!(counts.dropped_features.len(), 0, "{:?}", counts.warnings());
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
pub(super) fn raws(r: &mut PerfReader) -> Vec<Vec<u8>> {
    bodies(r)
        .into_iter()
        .filter_map(|b| match b {
            RecordBody::Sample(s) => s.raw.map(|raw| raw.data),
            _ => None,
        })
        .collect()
}

#[test]
fn features_not_understood_are_dropped_and_kept_ones_lose_their_tail() {
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
    let arch = meta.features.get_mut(&FeatureId::Arch).unwrap();
    arch.trailing = vec![0; 8]; // padding: kept
    for keep_raw in [false, true] {
        let mut meta = meta.clone();
        let anon = Anonymize::new(names(), keep_raw);
        anon.features(&mut meta).unwrap();
        assert!(!meta.features.contains_key(&FeatureId::Hostname));
        assert!(!meta.features.contains_key(&simpleperf));
        assert!(meta.features[&FeatureId::Cmdline].trailing.is_empty());
        assert_eq!(meta.features[&FeatureId::Arch].trailing, vec![0; 8]);
        let c = anon.counts().borrow().clone();
        let dropped: Vec<FeatureId> = c.dropped_features.iter().map(|(id, _)| *id).collect();
        assert_eq!(dropped, vec![FeatureId::Hostname, simpleperf]);
        assert!(c.features.contains(&FeatureId::Cmdline));
        let w = c.warnings();
        assert!(w.iter().any(|l| l.contains("feature FEATURE_129")), "{w:?}");
        assert!(
            w.iter()
                .any(|l| l.contains("past the layout of feature CMDLINE")),
            "{w:?}"
        );
    }
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
        assert_eq!(a[..8], b[..8], "common fields kept");
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

#[test]
fn user_callchain_entries_outside_every_mapping_are_zeroed() {
    // The frame-pointer walk of anon-secret.data read "anondir/" (of the path
    // /tmp/zqxanondir/... at the top of the stack) as a return address, twice.
    let text = u64::from_le_bytes(*b"anondir/");
    let chains = |r: &mut PerfReader| -> Vec<Vec<u64>> {
        bodies(r)
            .into_iter()
            .filter_map(|b| match b {
                RecordBody::Sample(s) => s.callchain.map(|c| c.ips),
                _ => None,
            })
            .collect()
    };
    let before = chains(&mut open(fixture("anon-secret.data")).unwrap());
    assert_eq!(before.iter().flatten().filter(|&&ip| ip == text).count(), 2);
    let (mut r, counts) = anonymized("anon-secret.data", false);
    let after = chains(&mut r);
    assert_eq!(before.len(), after.len());
    let mut zeroed = 0;
    for (b, a) in before.iter().zip(&after) {
        assert_eq!(a.len(), b.len());
        for (x, y) in b.iter().zip(a) {
            if x != y {
                // Only user entries go, and only to 0.
                assert_eq!(*y, 0);
                assert!(*x < 0xffff_0000_0000_0000, "{x:#x}");
                zeroed += 1;
            }
        }
    }
    assert!(!after.iter().flatten().any(|&ip| ip == text));
    // The two "anondir/" and 4 more that lie in no mapping (python's analysis of the
    // fixture: 1068 user entries, 1062 of them in an executable mapping announced
    // before the sample).
    assert_eq!(zeroed, 6);
    assert_eq!(counts.zeroed.get(sample::STRAY), Some(&6));
}

#[test]
fn thread_map_comms_are_renamed() {
    let comm = |r: &mut PerfReader| -> Vec<[u8; 16]> {
        bodies(r)
            .into_iter()
            .filter_map(|b| match b {
                RecordBody::ThreadMap(t) => {
                    Some(t.entries.iter().map(|e| e.comm).collect::<Vec<_>>())
                }
                _ => None,
            })
            .flatten()
            .collect()
    };
    let before = comm(&mut open(fixture("anon/secret-stat.data")).unwrap());
    assert_eq!(before.len(), 1);
    assert!(before[0].starts_with(b"zqxsecretnap\0"));
    let (mut r, counts) = anonymized("anon/secret-stat.data", false);
    let want = names().comm(b"zqxsecretnap").unwrap();
    let mut expected = [0u8; 16];
    expected[..want.len()].copy_from_slice(want.as_bytes());
    assert_eq!(comm(&mut r), vec![expected]);
    assert_eq!(counts.renamed_records, 1);
}

#[test]
fn bpf_program_names_are_renamed_in_ksymbol_and_bpf_prog_info() {
    let word = names().word(b"zqxbpfsecret");
    let (mut r, counts) = anonymized("anon/secret-bpf.data", false);
    let ksyms: Vec<String> = bodies(&mut r)
        .into_iter()
        .filter_map(|b| match b {
            RecordBody::Ksymbol(k) => Some(k.name.as_str_lossy()),
            _ => None,
        })
        .collect();
    assert_eq!(ksyms.len(), 1);
    let (prefix, name) = ksyms[0].rsplit_once('_').unwrap();
    assert_eq!(name, word);
    assert!(
        prefix.starts_with("bpf_prog_") && prefix.len() == 25,
        "{prefix}"
    );
    let Some(Feature::BpfProgInfo(info)) = r.meta().feature(FeatureId::BpfProgInfo) else {
        panic!("BPF_PROG_INFO");
    };
    let p = &info.programs[0];
    assert_eq!(&p.info[64..64 + word.len()], word.as_bytes());
    assert!(p.info[64 + word.len()..80].iter().all(|&b| b == 0));
    // The jited code (its constants) is zeroed; the arrays of numbers are not.
    let what = "bytes of BPF programs' instructions (BPF_PROG_INFO)";
    assert!(
        counts.zeroed.get(what).is_some_and(|&n| n > 0),
        "{counts:?}"
    );
    assert!(counts.renamed_records >= 1);
}

#[test]
fn intact_recordings_with_secrets_keep_none() {
    for name in [
        "anon-secret.data",
        "anon/secret-bpf.data",
        "anon/secret-dwarf.data",
        "anon/secret-pipe-z.data",
        "anon/secret-stat.data",
        "anon/secret-tp.data",
    ] {
        let input = std::fs::read(fixture(name)).unwrap();
        assert!(holds(&input, "zqx"), "{name}");
        let (out, c) = anonymize_bytes(input, Anonymize::new(names(), false)).unwrap();
        assert!(
            !holds(&out, "zqx") && !holds(&expanded(&out), "zqx"),
            "{name}"
        );
        // Left out: the nothing that perf wrote.
        assert!(c.dropped_records.is_empty(), "{name}: {:?}", c.warnings());
        assert!(c.dropped_features.is_empty(), "{name}: {:?}", c.warnings());
    }
}

/// A record type the catalogue gains, whose layout says it names a thread and carries a
/// comm (the test-only row 127 and its one `layouts!` item, with perfdata-core's
/// `test-row` feature), is renamed by anonymize from the facts that layout gives its
/// row: this allow list has no code for it.
#[test]
fn a_new_rows_name_is_renamed_from_its_facts_alone() {
    use perfdata_core::attr::{PerfEventAttr, SampleType};
    use perfdata_core::record::{PaddedString, Record, RecordType, TestOnly};

    let attr = PerfEventAttr {
        sample_type: SampleType::IP | SampleType::TID,
        ..Default::default()
    };
    let mut w = crate::PipeWriter::new(Vec::new(), binrw::Endian::Little).unwrap();
    w.write_attr(&attr, &[1]).unwrap();
    let body = TestOnly {
        pid: 7,
        tid: 8,
        value: 9,
        name: PaddedString::new("zqxsecretworker"),
    };
    let record = Record::new(RecordType::TestOnly, RecordBody::TestOnly(body));
    w.write_record(&record.encode(binrw::Endian::Little).unwrap(), &[])
        .unwrap();
    let input = w.finish().unwrap();
    assert!(holds(&input, "zqxsecretworker"));

    // Strict: nothing in it is left out as not understood.
    let anon = Anonymize::new(names(), false).strict(true);
    let (out, c) = anonymize_bytes(input, anon).unwrap();
    assert!(!holds(&out, "zqx"));
    assert_eq!(c.renamed_records, 1);
    let mut r = PerfReader::from_vec(out, ReadOptions::Contents).unwrap();
    let written = bodies(&mut r)
        .into_iter()
        .find_map(|b| match b {
            RecordBody::TestOnly(t) => Some(t),
            _ => None,
        })
        .expect("the record is written");
    assert_eq!((written.pid, written.tid, written.value), (7, 8, 9));
    let pseudonym = names().comm(b"zqxsecretworker").unwrap();
    assert_eq!(written.name, PaddedString::new(&pseudonym));
}
