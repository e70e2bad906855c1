//! A `perf record -z` that was killed: its header says the data section is empty and
//! its features were never written (perf writes them last), so its compressed records
//! have no COMPRESSED feature to go with them. `convert` compresses the records again
//! and describes them; perf 6.1 then shows every sample.

use std::ffi::OsStr;

use perfdata_tests::{fixtures_dir, perf_stats, run_perfdata};

fn u64_at(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_killed_compressed_recording_becomes_a_valid_file() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("file-compressed.data");
    let mut bytes = std::fs::read(&input).unwrap();
    // What the killed perf leaves: the data, data.size 0, no features after it.
    let (data, size) = (u64_at(&bytes, 40), u64_at(&bytes, 48));
    bytes.truncate(data + size);
    bytes[48..56].copy_from_slice(&0u64.to_le_bytes());
    let killed = dir.path().join("killed.data");
    std::fs::write(&killed, &bytes).unwrap();
    let fixed = dir.path().join("fixed.data");
    let args = [
        OsStr::new("convert"),
        killed.as_os_str(),
        OsStr::new("-o"),
        fixed.as_os_str(),
    ];
    let res = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "{stderr}");
    assert!(stderr.contains("did not finish"), "{stderr}");
    let (before, after) = (perf_stats(&input), perf_stats(&fixed));
    assert!(before.clean && after.clean, "{after:?}");
    assert!(after.records["COMPRESSED"] > 0, "{after:?}");
    assert!(!before.samples.is_empty() && before.samples[0].1 > 0);
    assert_eq!(after.samples, before.samples);
}
