//! Errors name where the bad field is (and may add what it pointed at), never the bogus
//! value it held: a section past the end is reported at its offset/size field.

use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{fixtures_dir, run_perfdata};

/// `perfdata stats` of `fixtures/file-cpu-clock.data` with `patch` applied: its error.
fn stats_error(dir: &Path, patch: impl FnOnce(&mut Vec<u8>)) -> String {
    let mut bytes = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).unwrap();
    patch(&mut bytes);
    let path = dir.join("bad.data");
    std::fs::write(&path, &bytes).unwrap();
    let out = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[OsStr::new("stats"), path.as_os_str()],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

const BOGUS: u64 = 0x8000000000044;

/// Where the feature index entry of feature `bit` is (one entry per set bit, in bit
/// order, after the data section).
fn feature_entry(bytes: &[u8], bit: u32) -> usize {
    let bitmap = u64_at(bytes, 72);
    assert!(bitmap & (1 << bit) != 0, "the fixture has feature {bit}");
    let index = (u64_at(bytes, 40) + u64_at(bytes, 48)) as usize;
    index + 16 * (bitmap & ((1 << bit) - 1)).count_ones() as usize
}

/// `perfdata convert ARGS IN -o OUT` on `bytes` written to `dir`: its error.
fn convert_error(dir: &Path, bytes: &[u8], args: &[&str]) -> String {
    let path = dir.join("bad.data");
    std::fs::write(&path, bytes).unwrap();
    let out_path = dir.join("out.data");
    let mut all: Vec<&OsStr> = vec![OsStr::new("convert")];
    all.extend(args.iter().map(OsStr::new));
    all.extend([path.as_os_str(), OsStr::new("-o"), out_path.as_os_str()]);
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out_path.exists());
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A feature index entry whose offset points far past the end: the feature is lost and
/// the rest read, with a warning that names the entry (in the index after the data
/// section), and the value it held after it.
#[test]
fn a_feature_past_the_end_is_reported_at_its_index_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).unwrap();
    // The index follows the data section; BUILD_ID (bit 2) is the first feature of this
    // fixture (bit 1, TRACING_DATA, is not set).
    assert_eq!(bytes[72] & 0b110, 0b100, "BUILD_ID is the first feature");
    let entry = (u64_at(&bytes, 40) + u64_at(&bytes, 48)) as usize;
    bytes[entry..entry + 8].copy_from_slice(&BOGUS.to_le_bytes());
    let path = dir.path().join("bad.data");
    std::fs::write(&path, &bytes).unwrap();
    let out = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[OsStr::new("stats"), path.as_os_str()],
        None,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("SAMPLE events:"));
    let want =
        format!("warning: at byte offset {entry} ({entry:#x}): feature BUILD_ID (said to be");
    assert!(err.contains(&want), "{err}");
    assert!(err.contains(&format!("at offset {BOGUS})")), "{err}");
    assert!(err.contains("the feature is lost"), "{err}");
    assert!(!err.contains(&format!("byte offset {BOGUS}")), "{err}");
}

/// The header's data section running past the end: reported at the data field (40).
#[test]
fn a_header_section_past_the_end_is_reported_at_its_field() {
    let dir = tempfile::tempdir().unwrap();
    let err = stats_error(dir.path(), |b| {
        b[40..48].copy_from_slice(&BOGUS.to_le_bytes());
    });
    assert!(
        err.contains("at byte offset 40 (0x28), data section (said to be"),
        "{err}"
    );
    assert!(!err.contains(&format!("byte offset {BOGUS}")), "{err}");
}

/// A known feature that does not decode (CACHE with an entry count past its bytes) is
/// called corrupt, not unknown, when a byte-order change cannot swap it, and the error
/// names where its bytes are.
#[test]
fn a_corrupt_known_feature_is_named_corrupt_with_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures_dir().join("file-cpu-clock.data")).unwrap();
    let cache = u64_at(&bytes, feature_entry(&bytes, 20)) as usize;
    // {u32 version; u32 cnt; ...}: a count no section could hold.
    bytes[cache + 4..cache + 8].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    let err = convert_error(dir.path(), &bytes, &["--endian", "big"]);
    let want = format!(
        "at input byte offset {cache} ({cache:#x}), feature CACHE is corrupt (it does not \
         decode as its layout), so it cannot be byte-swapped"
    );
    assert!(err.contains(&want), "{err}");
}

/// A record that does not fit the output's compression buffer (an input whose
/// COMPRESSED feature says 1 byte) is named by its input offset: the compressed record
/// it came out of.
#[test]
fn a_record_the_compressor_cannot_take_is_named_by_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(fixtures_dir().join("file-compressed.data")).unwrap();
    // COMPRESSED (bit 27): {u32 version, type, level, ratio, mmap_len}
    let mmap_len = u64_at(&bytes, feature_entry(&bytes, 27)) as usize + 16;
    bytes[mmap_len..mmap_len + 4].copy_from_slice(&1u32.to_le_bytes());
    // The first COMPRESSED record of the data section.
    let mut first = u64_at(&bytes, 40) as usize;
    while bytes[first..first + 4] != 81u32.to_le_bytes() {
        first += u16::from_le_bytes(bytes[first + 6..first + 8].try_into().unwrap()) as usize;
    }
    let err = convert_error(dir.path(), &bytes, &["--compress-format", "compressed2"]);
    let want = format!("at input byte offset {first} ({first:#x}), a ");
    assert!(
        err.contains(&want) && err.contains("larger than the 1-byte decompression buffer"),
        "{err}"
    );
}

/// Flip bytes all over the small fixtures and corpus files: every error that names an offset names one
/// inside the input (where the bad field is), never a value read from it.
#[test]
fn mutated_inputs_name_offsets_inside_the_input() {
    use perfdata_core::{PerfReader, ReadOptions};
    let (mut mutants, mut checked) = (0, 0);
    let mut past_end = Vec::new();
    for path in perfdata_tests::all_inputs() {
        if !path.is_file() || std::fs::metadata(&path).unwrap().len() > 100_000 {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let step = (bytes.len() / 200).max(1);
        for (i, pos) in (0..bytes.len()).step_by(step).enumerate() {
            let mut m = bytes.clone();
            m[pos] ^= [0xff, 0x80, 0x01, 0x7f][i % 4];
            mutants += 1;
            // Every error met: opening, framing, and decoding each record; and every
            // warning (a section cut off is read with one).
            let mut errors: Vec<(Option<u64>, String)> = Vec::new();
            match PerfReader::from_vec(m, ReadOptions::default()) {
                Err(e) => errors.push((e.offset(), e.to_string())),
                Ok(mut r) => {
                    loop {
                        match r.next_record() {
                            Ok(Some(item)) => errors
                                .extend(item.decode().err().map(|e| (e.offset(), e.to_string()))),
                            Ok(None) => break,
                            Err(e) => {
                                errors.push((e.offset(), e.to_string()));
                                break;
                            }
                        }
                    }
                    let warnings = r.meta().warnings.iter();
                    errors.extend(warnings.map(|w| (w.offset, w.to_string())));
                }
            }
            for (offset, e) in errors {
                let Some(offset) = offset else { continue };
                checked += 1;
                // An empty feature section at the very end is named where it starts:
                // the end of the file.
                let empty_at_end = offset == bytes.len() as u64 && e.contains("only 0 remain");
                if offset >= bytes.len() as u64 && !empty_at_end {
                    past_end.push(format!("{} byte {pos}: {e}", path.display()));
                }
            }
        }
    }
    println!("{mutants} mutants, {checked} errors and warnings with offsets");
    assert!(checked > 100, "only {checked} errors with offsets");
    assert!(
        past_end.is_empty(),
        "{} of {checked} errors name offsets past the end:\n{}",
        past_end.len(),
        past_end.join("\n")
    );
}
