//! Recordings that stop early keep every whole record: a pipe stream cut anywhere (from
//! a file and from stdin), and a file-mode recording whose perf was killed (data size 0
//! in the header, no features), which `convert` makes into a file perf 6.1 opens.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use perfdata_tests::{fixtures_dir, perf_available, perf_stats, run_perfdata};

fn perfdata(args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, stdin)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stats_json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u16_at(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as usize
}

fn u64_at(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

/// The whole records of `bytes[start..]` by type, counted here, independently of the
/// reader: (counts, where the last whole record ends).
fn whole_records(bytes: &[u8], start: usize) -> (BTreeMap<u32, u64>, usize) {
    let mut counts = BTreeMap::new();
    let mut at = start;
    while at + 8 <= bytes.len() {
        let size = u16_at(bytes, at + 6);
        assert!(size >= 8);
        if at + size > bytes.len() {
            break;
        }
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        *counts.entry(ty).or_insert(0) += 1;
        at += size;
    }
    (counts, at)
}

/// A pipe stream cut inside a record: `stats` (of the file and of stdin) counts every
/// whole record, as perf 6.1 does, and warns where the stream was cut; `convert
/// --to-file` makes a file perf reads with every whole sample.
#[perfdata_oracle::needs(perf)]
#[test]
fn a_cut_stream_keeps_its_whole_records() {
    assert!(perf_available());
    let bytes = std::fs::read(fixtures_dir().join("pipe-cpu-clock.data")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cut in [4000, 5003, 7000, bytes.len() - 3] {
        let part = &bytes[..cut];
        let (counts, end) = whole_records(part, 16);
        assert!(end < cut, "cut {cut} falls between records");
        let samples = counts[&9];
        assert!(samples > 0, "cut {cut}");
        let path = dir.path().join(format!("cut-{cut}.data"));
        std::fs::write(&path, part).unwrap();
        let warning = format!("at byte offset {end} ({end:#x}): the input ends inside a record");
        for out in [
            perfdata(
                &["stats".as_ref(), "--json".as_ref(), path.as_os_str()],
                None,
            ),
            perfdata(
                &["stats".as_ref(), "--json".as_ref(), "-".as_ref()],
                Some(part),
            ),
        ] {
            let v = stats_json(&out);
            assert_eq!(v["records"]["SAMPLE"], samples, "cut {cut}");
            assert_eq!(v["total"], counts.values().sum::<u64>(), "cut {cut}");
            assert!(
                stderr(&out).contains(&warning),
                "cut {cut}: {}",
                stderr(&out)
            );
        }
        let file = dir.path().join(format!("file-{cut}.data"));
        let out = perfdata(
            &[
                "convert".as_ref(),
                "--to-file".as_ref(),
                "-".as_ref(),
                "-o".as_ref(),
                file.as_os_str(),
            ],
            Some(part),
        );
        assert!(out.status.success(), "cut {cut}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(&warning),
            "cut {cut}: {}",
            stderr(&out)
        );
        let from_cut = perf_stats(&path);
        assert_eq!(
            from_cut.samples,
            [("cpu-clock".to_string(), samples)],
            "cut {cut}"
        );
        let converted = perf_stats(&file);
        assert!(converted.clean, "perf rejects the conversion of cut {cut}");
        assert_eq!(converted.samples, from_cut.samples, "cut {cut}");
    }
}

/// What a killed `perf record` leaves: the header with data size 0, the feature bitmap
/// set but no features, and the data cut anywhere (here inside a record).
fn killed_recording(dir: &Path) -> (std::path::PathBuf, u64) {
    let mut bytes = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).unwrap();
    let (data, size) = (u64_at(&bytes, 40), u64_at(&bytes, 48));
    assert!(bytes[72..104].iter().any(|&b| b != 0), "features flagged");
    bytes.truncate(data + size - 5);
    bytes[48..56].copy_from_slice(&0u64.to_le_bytes());
    let (counts, end) = whole_records(&bytes, data);
    assert!(end < bytes.len());
    let path = dir.join("killed.data");
    std::fs::write(&path, &bytes).unwrap();
    (path, counts[&9])
}

/// A killed file-mode recording: `stats` reads its whole records with a warning that
/// says why and what is lost; `convert` makes a file perf 6.1 opens with all of them.
#[perfdata_oracle::needs(perf)]
#[test]
fn a_killed_recording_becomes_a_valid_file() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let (killed, samples) = killed_recording(dir.path());
    assert!(samples > 270, "{samples} of the fixture's 279 samples");
    let out = perfdata(
        &["stats".as_ref(), "--json".as_ref(), killed.as_os_str()],
        None,
    );
    let v = stats_json(&out);
    assert_eq!(v["records"]["SAMPLE"], samples);
    let warnings = stderr(&out);
    assert!(
        warnings.contains("the header's data size is 0: this recording did not finish")
            && warnings.contains("features it flagged are lost"),
        "{warnings}"
    );
    assert!(
        warnings.contains("the input ends inside a record"),
        "{warnings}"
    );

    let fixed = dir.path().join("fixed.data");
    let out = perfdata(
        &[
            "convert".as_ref(),
            killed.as_os_str(),
            "-o".as_ref(),
            fixed.as_os_str(),
        ],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("did not finish"), "{}", stderr(&out));
    let bytes = std::fs::read(&fixed).unwrap();
    let (data, size) = (u64_at(&bytes, 40), u64_at(&bytes, 48));
    let (counts, end) = whole_records(&bytes[..data + size], data);
    assert_eq!((counts[&9], end), (samples, data + size));
    let perf = perf_stats(&fixed);
    assert!(perf.clean, "perf 6.1 cannot open the converted recording");
    assert_eq!(perf.samples, [("cpu-clock".to_string(), samples)]);
    let header = perfdata_tests::perf_output(&["report", "--header-only"], &fixed);
    assert!(header.status.success());
    let text = String::from_utf8_lossy(&header.stdout);
    assert!(text.contains("# time of first sample :"), "{text}");
    assert!(
        !text.contains("# time of first sample : 0.000000"),
        "{text}"
    );
}

/// A finished file cut short (a copy stopped early, a full disk): cut inside its data
/// section, `stats` counts every whole record (walked here) with a warning that says
/// what is lost, and `convert` makes a file perf 6.1 reads with every whole sample; cut
/// inside its features, every sample is kept and only the features cut off are lost.
#[perfdata_oracle::needs(perf)]
#[test]
fn a_finished_file_cut_short_keeps_its_whole_records() {
    assert!(perf_available());
    let bytes = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).unwrap();
    let (data, size) = (u64_at(&bytes, 40), u64_at(&bytes, 48));
    let (all, _) = whole_records(&bytes[..data + size], data);
    let dir = tempfile::tempdir().unwrap();
    // Inside a record half way through the data; then inside the last feature.
    for cut in [data + size / 2 + 3, bytes.len() - 10] {
        let path = dir.path().join(format!("cut-{cut}.data"));
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let (counts, _) = whole_records(&bytes[..cut.min(data + size)], data);
        let samples = counts[&9];
        assert!(samples > 100, "cut {cut}: {samples} samples");
        let out = perfdata(
            &["stats".as_ref(), "--json".as_ref(), path.as_os_str()],
            None,
        );
        let v = stats_json(&out);
        assert_eq!(v["records"]["SAMPLE"], samples, "cut {cut}");
        let warnings = stderr(&out);
        if cut < data + size {
            let lost = data + size - cut;
            assert!(
                warnings.contains(&format!(
                    "the file ends at byte {cut}, inside its data section"
                )) && warnings.contains(&format!("the {lost} bytes of data past the end"))
                    && warnings.contains("the input ends inside a record"),
                "{warnings}"
            );
        } else {
            assert_eq!(samples, all[&9]);
            assert!(warnings.contains("the feature is lost"), "{warnings}");
        }

        let fixed = dir.path().join(format!("fixed-{cut}.data"));
        let args = [
            "convert".as_ref(),
            path.as_os_str(),
            "-o".as_ref(),
            fixed.as_os_str(),
        ];
        let out = perfdata(&args, None);
        assert!(out.status.success(), "{}", stderr(&out));
        let perf = perf_stats(&fixed);
        assert!(
            perf.clean,
            "perf 6.1 cannot open the conversion of cut {cut}"
        );
        assert_eq!(perf.samples, [("cpu-clock".to_string(), samples)]);
    }
}
