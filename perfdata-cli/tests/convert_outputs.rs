//! Conversions whose outputs carry what their records need: the writers never emit what
//! their own reader or perf 6.1 rejects. Inputs are fixtures patched in a temp dir.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use perfdata_tests::{fixtures_dir, perf_available, perf_stats, run_perfdata};

fn perfdata(args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, stdin)
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn convert(args: &[&str], input: &Path, output: &Path) -> String {
    let mut all: Vec<&OsStr> = vec!["convert".as_ref()];
    all.extend(args.iter().map(OsStr::new));
    all.extend([input.as_os_str(), "-o".as_ref(), output.as_os_str()]);
    ok(&perfdata(&all, None))
}

fn stats_json(p: &Path) -> serde_json::Value {
    let out = perfdata(&["stats".as_ref(), "--json".as_ref(), p.as_os_str()], None);
    ok(&out);
    serde_json::from_slice(&out.stdout).unwrap()
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// `fixtures/NAME` with `patch` applied, written to `dir`.
fn patched(dir: &Path, name: &str, patch: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(fixtures_dir().join(name)).unwrap();
    patch(&mut bytes);
    let p = dir.join(format!("patched-{name}"));
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Defect 2: a file attr whose own size field disagrees with the header's attr_size
/// (the reader warns and goes by attr_size) becomes a HEADER_ATTR whose size field is
/// the 128 bytes it holds, which perfdata and perf read back.
#[perfdata_oracle::needs(perf)]
#[test]
fn to_pipe_writes_attr_sizes_that_fit_their_bytes() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    for said in [136u32, 256] {
        let input = patched(dir.path(), "file-cpu-clock.data", |b| {
            let attrs = u64_at(b, 24) as usize;
            assert_eq!(u32_at(b, attrs + 4), 128);
            b[attrs + 4..attrs + 8].copy_from_slice(&said.to_le_bytes());
        });
        let out = dir.path().join("pipe.data");
        let warnings = convert(&["--to-pipe"], &input, &out);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..8], b"PERFILE2");
        assert_eq!(u32_at(&bytes, 16), 64, "the first record is HEADER_ATTR");
        assert_eq!(u32_at(&bytes, 16 + 8 + 4), 128, "its attr size field");
        let v = stats_json(&out);
        assert_eq!(v["records"]["SAMPLE"], 279, "{v}");
        assert_eq!(v["events"][0]["name"], "cpu-clock");
        let perf = perf_stats(&out);
        assert!(perf.clean, "perf rejects the stream (attr size {said})");
        assert_eq!(perf.samples, [("cpu-clock".to_string(), 279)]);
        assert!(
            warnings.contains(&format!(
                "attr 0 said its size is {said} but holds 128 bytes"
            )),
            "{warnings}"
        );
    }
}

/// `perf script -i path`: its lines, after checking that perf read the whole input.
fn perf_script_lines(path: &Path) -> Vec<String> {
    let out = perfdata_tests::perf_output(&["script"], path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "perf script {}: {stderr}",
        path.display()
    );
    for complaint in ["Couldn't", "failed to process", "error", "Error"] {
        assert!(
            !stderr.contains(complaint),
            "perf script {}: {stderr}",
            path.display()
        );
    }
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    assert!(
        !lines.is_empty(),
        "perf script {} printed nothing",
        path.display()
    );
    lines
}

/// The feature ids of a little-endian pipe stream's HEADER_FEATURE records, in order.
fn header_feature_ids(bytes: &[u8]) -> Vec<u64> {
    let mut ids = Vec::new();
    let mut at = 16;
    while at + 8 <= bytes.len() {
        let size = u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
        if u32_at(bytes, at) == 80 {
            ids.push(u64_at(bytes, at + 8));
        }
        at += size.max(8);
    }
    ids
}

/// Defect 4: compressing a stream announces the compression in a COMPRESSED
/// HEADER_FEATURE before the end-of-features marker, so perf 6.1 decompresses it;
/// decompressing one drops it. From a path and from stdin.
#[perfdata_oracle::needs(perf)]
#[test]
fn compressing_a_stream_carries_the_compressed_feature() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("pipe-cpu-clock.data");
    let from_path = dir.path().join("z.data");
    convert(&["--compress"], &input, &from_path);
    let from_stdin = dir.path().join("z-stdin.data");
    let bytes = std::fs::read(&input).unwrap();
    ok(&perfdata(
        &[
            "convert".as_ref(),
            "--compress".as_ref(),
            "-".as_ref(),
            "-o".as_ref(),
            from_stdin.as_os_str(),
        ],
        Some(&bytes),
    ));
    let input_ids = header_feature_ids(&bytes);
    assert!(
        !input_ids.contains(&27) && input_ids.last() == Some(&32),
        "{input_ids:?}"
    );
    for out in [&from_path, &from_stdin] {
        let written = std::fs::read(out).unwrap();
        let ids = header_feature_ids(&written);
        assert_eq!(ids.iter().filter(|&&id| id == 27).count(), 1, "{ids:?}");
        assert_eq!(&ids[ids.len() - 2..], [27, 32], "{ids:?}");
        let v = stats_json(out);
        assert!(v["records"]["COMPRESSED"].as_u64().unwrap() >= 1, "{v}");
        assert_eq!(v["records"]["SAMPLE"], 130);
        assert_eq!(perf_script_lines(out), perf_script_lines(&input));
    }

    let compressed = fixtures_dir().join("pipe-compressed.data");
    let expanded = dir.path().join("expanded.data");
    convert(&["--decompress"], &compressed, &expanded);
    let ids = header_feature_ids(&std::fs::read(&expanded).unwrap());
    assert!(!ids.contains(&27) && ids.last() == Some(&32), "{ids:?}");
    assert_eq!(perf_script_lines(&expanded), perf_script_lines(&compressed));
}

/// "time of first sample" and "time of last sample" as `perf report --header-only`
/// prints them.
fn perf_sample_times(path: &Path) -> (String, String) {
    let out = perfdata_tests::perf_output(&["report", "--header-only"], path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name:?} in {text}"))
    };
    (
        field("# time of first sample :"),
        field("# time of last sample :"),
    )
}

/// Defect 9: a stream's SAMPLE_TIME (zero as perf 6.1 sends it, or wrong) is recomputed
/// from the samples when the stream becomes a file: perf shows the first and last
/// sample times `perf script` prints, and `perf report --time 10%/1` works.
#[perfdata_oracle::needs(perf)]
#[test]
fn pipe_to_file_recomputes_sample_time() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let zero = fixtures_dir().join("pipe-cpu-clock.data");
    let wrong = patched(dir.path(), "pipe-cpu-clock.data", |b| {
        let mut at = 16;
        loop {
            let size = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
            if u32_at(b, at) == 80 && u64_at(b, at + 8) == 21 {
                assert_eq!(u64_at(b, at + 16), 0, "perf 6.1 sends a zero SAMPLE_TIME");
                b[at + 16..at + 24].copy_from_slice(&5u64.to_le_bytes());
                b[at + 24..at + 32].copy_from_slice(&7u64.to_le_bytes());
                break;
            }
            at += size;
        }
    });
    // The oracle: the times of the first and last samples as perf script prints them.
    let script = perfdata_tests::perf_output(&["script", "-F", "time"], &zero);
    assert!(
        script.status.success(),
        "{}",
        String::from_utf8_lossy(&script.stderr)
    );
    let times: Vec<String> = String::from_utf8_lossy(&script.stdout)
        .lines()
        .map(|t| t.trim().trim_end_matches(':').to_string())
        .collect();
    assert_eq!(times.len(), 130);
    let expected = (times[0].clone(), times[129].clone());
    for (input, warns) in [(&zero, false), (&wrong, true)] {
        let out = dir.path().join("file.data");
        let warnings = convert(&["--to-file"], input, &out);
        assert_eq!(
            warnings.contains("feature SAMPLE_TIME said first 5, last 7, which leaves out samples"),
            warns,
            "{warnings}"
        );
        assert_eq!(perf_sample_times(&out), expected);
        let report = perfdata_tests::perf_output(&["report", "--stdio", "--time", "10%/1"], &out);
        let stderr = String::from_utf8_lossy(&report.stderr);
        assert!(report.status.success(), "{stderr}");
        assert!(!stderr.contains("no first/last sample time"), "{stderr}");
        let stdout = String::from_utf8_lossy(&report.stdout);
        assert!(stdout.contains("time slices: 10%/1"), "{stdout}");
    }
}

/// Offsets of the COMPRESSED (81) records of a little-endian file or stream, walked here.
fn compressed_records(bytes: &[u8]) -> Vec<usize> {
    let (mut at, end) = if &bytes[..8] == b"PERFILE2" && u64_at(bytes, 8) == 104 {
        let data = u64_at(bytes, 40) as usize;
        (data, data + u64_at(bytes, 48) as usize)
    } else {
        (16, bytes.len())
    };
    let mut found = Vec::new();
    while at + 8 <= end {
        if u32_at(bytes, at) == 81 {
            found.push(at);
        }
        at += u16::from_le_bytes(bytes[at + 6..at + 8].try_into().unwrap()) as usize;
    }
    found
}

/// Defect 5: compressed records copied as they are were never checked, so a damaged
/// zstd payload went through with exit 0. Now every conversion that meets one fails
/// naming its offset and leaves no output, from a file and from stdin alike, whether
/// it copies the compressed records or expands them. Issue #24, defect 10: with
/// `--keep-damaged`, a COMPRESSED record of zeros was copied from a file (exit 0, an
/// output perf and `perfdata check` reject) and refused from stdin; the option, which
/// could only write such files, is gone.
#[test]
fn damaged_compressed_records_are_not_passed_through() {
    let dir = tempfile::tempdir().unwrap();
    let flip = |b: &mut Vec<u8>, at: usize| {
        // Past the 8-byte header: the zstd frame header after its magic.
        for byte in &mut b[at + 14..at + 17] {
            *byte ^= 0xff;
        }
    };
    let zero = |b: &mut Vec<u8>, at: usize| {
        let size = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
        b[at + 8..at + size].fill(0);
    };
    type Damage<'a> = &'a dyn Fn(&mut Vec<u8>, usize);
    let damages: [(&str, Damage); 2] = [("flipped", &flip), ("zeros", &zero)];
    for name in ["file-compressed.data", "pipe-compressed.data"] {
        for (how, damage) in damages {
            let mut first = 0;
            let damaged = patched(dir.path(), name, |b| {
                first = compressed_records(b)[0];
                damage(b, first);
            });
            let bytes = std::fs::read(&damaged).unwrap();
            let out = dir.path().join("out.data");
            let offset = format!("at byte offset {first} ({first:#x}), record COMPRESSED");
            let mut messages = Vec::new();
            for args in [&[][..], &["--to-file"], &["--to-pipe"], &["--decompress"]] {
                for from_stdin in [false, true] {
                    let input = if from_stdin {
                        "-".as_ref()
                    } else {
                        damaged.as_os_str()
                    };
                    let mut all: Vec<&OsStr> = vec!["convert".as_ref()];
                    all.extend(args.iter().map(OsStr::new));
                    all.extend([input, "-o".as_ref(), out.as_os_str()]);
                    let result = perfdata(&all, from_stdin.then_some(&bytes[..]));
                    let stderr = String::from_utf8_lossy(&result.stderr).into_owned();
                    let what = format!("{name} {how} {args:?} stdin {from_stdin}: {stderr}");
                    assert_eq!(result.status.code(), Some(1), "{what}");
                    assert!(stderr.contains(&offset), "{what}");
                    assert!(stderr.contains("zstd decompression failed"), "{what}");
                    assert!(!out.exists(), "{what}");
                    messages.push(stderr);
                }
            }
            // One message whichever way the records went.
            messages.dedup();
            assert_eq!(messages.len(), 1, "{name} {how}: {messages:?}");
            let kept = perfdata(
                &[
                    "convert".as_ref(),
                    "--keep-damaged".as_ref(),
                    damaged.as_os_str(),
                    "-o".as_ref(),
                    out.as_os_str(),
                ],
                None,
            );
            assert_ne!(kept.status.code(), Some(0), "{name} {how}");
            assert!(!out.exists(), "{name} {how}");
        }
    }
}

/// A stream whose HEADER_ATTRs differ in size (each says its own) becomes a file, which
/// has one attr size: the smaller attrs grow to the largest, the new fields zero, as
/// perf holds every attr at its newest size. It was an error naming no offset.
#[perfdata_oracle::needs(perf)]
#[test]
fn attrs_of_different_sizes_grow_to_one_size_in_a_file() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let input = patched(dir.path(), "pipe-cpu-clock.data", |b| {
        let size = u16::from_le_bytes(b[22..24].try_into().unwrap()) as usize;
        assert_eq!((u32_at(b, 16), u32_at(b, 16 + 8 + 4)), (64, 128));
        // A second HEADER_ATTR: the first 64 bytes of the attr (VER0), one id.
        let mut rec = Vec::new();
        rec.extend_from_slice(&64u32.to_le_bytes());
        rec.extend_from_slice(&0u16.to_le_bytes());
        rec.extend_from_slice(&(8u16 + 64 + 8).to_le_bytes());
        rec.extend_from_slice(&b[24..24 + 64]);
        rec[8 + 4..8 + 8].copy_from_slice(&64u32.to_le_bytes());
        rec.extend_from_slice(&999_999u64.to_le_bytes());
        let at = 16 + size;
        b.splice(at..at, rec);
    });
    let out = dir.path().join("file.data");
    convert(&["--to-file"], &input, &out);
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(u64_at(&bytes, 16), 144, "attr_size");
    let attrs = u64_at(&bytes, 24) as usize;
    assert_eq!(u64_at(&bytes, 32), 2 * 144, "two attrs");
    for i in 0..2 {
        assert_eq!(
            u32_at(&bytes, attrs + i * 144 + 4),
            128,
            "attr {i} size field"
        );
    }
    let v = stats_json(&out);
    assert_eq!(v["events"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(v["records"]["SAMPLE"], 130);
    let perf = perf_stats(&out);
    assert!(perf.clean, "perf rejects the file");
    assert_eq!(perf.records.get("SAMPLE"), Some(&130));
}
