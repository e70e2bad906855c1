//! Compressed records that expand to what a reader must not follow (issue #24, defects 4
//! and 10). A zstd frame declares the window its decoder keeps; a 9 KB pipe stream
//! whose frame declares `zstd --long=27`'s 128 MiB took every command past 150 MiB.
//! Frames over 8 MiB (perf record -z's largest up to level 19) are refused, naming the
//! window and the compressed record's offset, before anything is reserved; perfdata's
//! own compressor stays within what it reads. A record cut short at the end of its
//! decompressed stream is named with its type and the bytes it needs. Peak RSS on the
//! bombs (and on 3 GiB AUXTRACE bombs) is measured by `bench/bombs.sh`.

use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use perfdata_tests::fixtures_dir;
use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};
use zstd::zstd_safe::CParameter;

fn u16_at(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap()) as usize
}

/// The records of a little-endian pipe stream or file data section from `at`: (type,
/// offset, bytes), walked here, independently of the reader.
fn records(bytes: &[u8], mut at: usize, end: usize) -> Vec<(u32, usize, &[u8])> {
    let mut out = Vec::new();
    while at + 8 <= end {
        let size = u16_at(bytes, at + 6);
        assert!(size >= 8, "record size {size} at {at}");
        let ty = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        out.push((ty, at, &bytes[at..at + size]));
        at += size;
    }
    out
}

/// pipe-compressed.data (perf record -z -o -) up to its first COMPRESSED record: the
/// header, HEADER_ATTR and HEADER_FEATURE records (COMPRESSED among them), and the
/// first records; and that record's offset.
fn pipe_prefix() -> (Vec<u8>, usize) {
    let bytes = std::fs::read(fixtures_dir().join("pipe-compressed.data")).unwrap();
    let (_, at, _) = records(&bytes, 16, bytes.len())
        .into_iter()
        .find(|r| r.0 == 81)
        .expect("a COMPRESSED record");
    (bytes[..at].to_vec(), at)
}

/// A zstd frame of unknown size (as perf's stream, continued record after record) with
/// a window of 2^`window_log` bytes, of an AUXTRACE record claiming `claimed` payload
/// bytes and then `len` zero bytes; with long-distance matching at 2^27 (`zstd
/// --long=27`).
fn aux_frame(window_log: u32, claimed: u64, len: u64) -> Vec<u8> {
    let mut enc = Encoder::new(1).unwrap();
    enc.set_parameter(CParameter::WindowLog(window_log))
        .unwrap();
    if window_log == 27 {
        enc.set_parameter(CParameter::EnableLongDistanceMatching(true))
            .unwrap();
    }
    let mut aux = vec![0u8; 48];
    aux[..4].copy_from_slice(&71u32.to_le_bytes());
    aux[6..8].copy_from_slice(&48u16.to_le_bytes());
    aux[8..16].copy_from_slice(&claimed.to_le_bytes());
    let mut z = Vec::new();
    let mut out = vec![0u8; 1 << 20];
    let mut push = |enc: &mut Encoder, data: &[u8], z: &mut Vec<u8>| {
        let mut input = InBuffer::around(data);
        while input.pos() < data.len() {
            let mut o = OutBuffer::around(&mut out[..]);
            enc.run(&mut input, &mut o).unwrap();
            z.extend_from_slice(o.as_slice());
        }
    };
    push(&mut enc, &aux, &mut z);
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..len >> 20 {
        push(&mut enc, &zeros, &mut z);
    }
    loop {
        let mut o = OutBuffer::around(&mut out[..]);
        let left = enc.finish(&mut o, true).unwrap();
        z.extend_from_slice(o.as_slice());
        if left == 0 {
            return z;
        }
    }
}

/// The pipe prefix, then COMPRESSED records holding `frame` (60,000 bytes each), then
/// FINISHED_ROUND; and the first COMPRESSED record's offset.
fn compressed_stream(frame: &[u8]) -> (Vec<u8>, usize) {
    let (mut bytes, at) = pipe_prefix();
    for piece in frame.chunks(60_000) {
        bytes.extend_from_slice(&81u32.to_le_bytes());
        bytes.extend_from_slice(&0u16.to_le_bytes());
        bytes.extend_from_slice(&(8 + piece.len() as u16).to_le_bytes());
        bytes.extend_from_slice(piece);
    }
    bytes.extend_from_slice(&[68, 0, 0, 0, 0, 0, 8, 0]);
    (bytes, at)
}

/// The window bomb: a 144 MiB AUXTRACE in a frame declaring a 128 MiB window.
fn window_bomb() -> (Vec<u8>, usize) {
    compressed_stream(&aux_frame(27, 144 << 20, 144 << 20))
}

/// The window each zstd frame that starts a COMPRESSED record declares (RFC 8878
/// 3.1.1.1), in a little-endian file or pipe stream.
fn frame_windows(bytes: &[u8]) -> Vec<u64> {
    let pipe = u64::from_le_bytes(bytes[8..16].try_into().unwrap()) == 16;
    let (at, end) = match pipe {
        true => (16, bytes.len()),
        false => {
            let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
            (u64_at(40) as usize, (u64_at(40) + u64_at(48)) as usize)
        }
    };
    records(bytes, at, end)
        .into_iter()
        .filter(|r| r.0 == 81 && r.2[8..12] == [0x28, 0xb5, 0x2f, 0xfd])
        .map(|(_, _, r)| {
            let (fhd, wd) = (r[12], r[13]);
            if fhd & 0x20 == 0 {
                let base = 1u64 << (10 + (wd >> 3));
                return base + base / 8 * u64::from(wd & 7);
            }
            // Single segment: the window is the content size, after the dictionary id.
            let at = 13 + [0, 1, 2, 4][usize::from(fhd & 3)];
            let le = |n: usize| {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&r[at..at + n]);
                u64::from_le_bytes(b)
            };
            match fhd >> 6 {
                0 => le(1),
                1 => le(2) + 256,
                2 => le(4),
                _ => le(8),
            }
        })
        .collect()
}

fn run(args: &[&OsStr], stdin: Option<&Path>, env: Option<(&str, &str)>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
    c.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        Some(p) => c.stdin(std::fs::File::open(p).unwrap()),
        None => c.stdin(Stdio::null()),
    };
    if let Some((k, v)) = env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_frame_with_a_128_mib_window_is_refused_by_name_by_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.data");
    let (bytes, at) = window_bomb();
    assert!(bytes.len() < 64 << 10, "{} bytes", bytes.len());
    assert_eq!(frame_windows(&bytes), [128 << 20]);
    std::fs::File::create(&bomb)
        .unwrap()
        .write_all(&bytes)
        .unwrap();
    let out = dir.path().join("out");
    let o = out.as_os_str();
    let s = OsStr::new;
    let commands: [&[&OsStr]; 12] = [
        &[s("stats")],
        &[s("check")],
        &[s("dump")],
        &[s("dump"), s("--json")],
        &[s("report")],
        &[s("export"), s("--format"), s("folded"), s("-o"), o],
        &[s("convert"), s("-o"), o],
        &[s("convert"), s("--decompress"), s("--to-file"), s("-o"), o],
        &[s("strip"), s("--drop"), s("MMAP"), s("-o"), o],
        &[s("anonymize"), s("-o"), o],
        &[s("buildid"), s("list")],
        &[
            s("buildid"),
            s("remap"),
            s("--path"),
            s("/=/x/"),
            s("-o"),
            o,
        ],
    ];
    let want = format!(
        "at byte offset {at} ({at:#x}), record COMPRESSED: unsupported: its zstd frame \
         needs a 128 MiB window, over the 8 MiB limit"
    );
    let mut failed = Vec::new();
    for command in commands {
        for from_stdin in [false, true] {
            let input = if from_stdin { s("-") } else { bomb.as_os_str() };
            let args = [command, &[input]].concat();
            let run = run(&args, from_stdin.then_some(&*bomb), None);
            // check lists the problem on stdout; the others fail with it on stderr.
            let said = String::from_utf8_lossy(&run.stdout) + String::from_utf8_lossy(&run.stderr);
            if run.status.code() != Some(1) || !said.contains(&want) || out.exists() {
                eprintln!("{args:?}: {:?}\n{said}", run.status);
                failed.push(args);
            }
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}

/// The bomb is a valid stream: with the limit raised to its window it reads whole.
#[test]
fn the_environment_raises_the_limit_to_read_such_a_frame() {
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.data");
    std::fs::write(&bomb, window_bomb().0).unwrap();
    let args = [OsStr::new("stats"), OsStr::new("--json"), bomb.as_os_str()];
    let out = run(&args, None, Some(("PERFDATA_ZSTD_WINDOW_LOG_MAX", "27")));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["records"]["AUXTRACE"], 1, "{v}");
}

/// A writer never emits what its own reader rejects: compressing at levels 20 to 22
/// (zstd's 32, 64 and 128 MiB windows) writes windows within the reader's 8 MiB, in
/// synth's one continued frame and in convert's frame per batch.
#[test]
fn perfdata_compresses_within_the_window_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("file-callgraph-dwarf.data");
    for level in ["--compress=20", "--compress=22"] {
        let synth = dir.path().join("synth.data");
        let converted = dir.path().join("converted.data");
        let s = OsStr::new;
        let made = run(
            &[
                s("synth"),
                s("--samples"),
                s("3000"),
                s(level),
                s("-o"),
                synth.as_os_str(),
            ],
            None,
            None,
        );
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        let conv = [
            s("convert"),
            s(level),
            input.as_os_str(),
            s("-o"),
            converted.as_os_str(),
        ];
        let made = run(&conv, None, None);
        assert!(
            made.status.success(),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        for file in [&synth, &converted] {
            let windows = frame_windows(&std::fs::read(file).unwrap());
            assert!(!windows.is_empty(), "{level} {file:?}");
            assert!(
                windows.iter().all(|w| *w <= 8 << 20),
                "{level} {file:?}: {windows:?}"
            );
            let checked = run(&[s("check"), file.as_os_str()], None, None);
            assert!(
                checked.status.success(),
                "{}",
                String::from_utf8_lossy(&checked.stdout)
            );
        }
    }
}

/// A 64 MiB AUXTRACE inside one COMPRESSED record (8 KB of zstd) is read by every
/// command; one whose size claims 8 bytes more than its decompressed stream holds is
/// refused with what is wrong: that AUXTRACE record needs 67108920 bytes and has
/// 67108912 (before issue #24: "truncated: needs 8 bytes but only 67108912 remain",
/// and from convert a complaint about the FINISHED_ROUND after it).
#[test]
fn a_64_mib_auxtrace_in_one_compressed_record_is_read_or_named_when_cut() {
    const LEN: u64 = 64 << 20;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let o = out.as_os_str();
    let s = OsStr::new;
    let commands: [&[&OsStr]; 6] = [
        &[s("stats")],
        &[s("check")],
        &[s("dump"), s("--json")],
        &[s("convert"), s("-o"), o],
        &[s("convert"), s("--decompress"), s("--to-file"), s("-o"), o],
        &[s("strip"), s("--drop"), s("MMAP"), s("-o"), o],
    ];
    for claimed in [LEN, LEN + 8] {
        let input = dir.path().join("in.data");
        let (bytes, at) = compressed_stream(&aux_frame(19, claimed, LEN));
        let compressed = records(&bytes, 16, bytes.len())
            .iter()
            .filter(|r| r.0 == 81)
            .count();
        assert_eq!(compressed, 1);
        std::fs::write(&input, &bytes).unwrap();
        let want = format!(
            "at byte offset {at} ({at:#x}), the AUXTRACE record at byte 0 of the \
             decompressed stream"
        );
        let cut = "truncated: needs 67108920 bytes but only 67108912 remain";
        for command in commands {
            for from_stdin in [false, true] {
                let _ = std::fs::remove_file(&out);
                let i = if from_stdin {
                    s("-")
                } else {
                    input.as_os_str()
                };
                let args = [command, &[i]].concat();
                let run = run(&args, from_stdin.then_some(&*input), None);
                let said =
                    String::from_utf8_lossy(&run.stdout) + String::from_utf8_lossy(&run.stderr);
                if claimed == LEN {
                    assert!(run.status.success(), "{args:?}: {said}");
                    continue;
                }
                assert_eq!(run.status.code(), Some(1), "{args:?}: {said}");
                assert!(
                    said.contains(&want) && said.contains(cut),
                    "{args:?}: {said}"
                );
                assert!(!out.exists(), "{args:?}");
            }
        }
        if claimed == LEN {
            // The payload came through whole: perfdata's own count and size.
            let args = [s("dump"), s("--json"), input.as_os_str()];
            let dump = String::from_utf8(run(&args, None, None).stdout).unwrap();
            let aux: Vec<_> = dump
                .lines()
                .filter(|l| l.contains("\"AUXTRACE\""))
                .collect();
            assert_eq!(aux.len(), 1, "{dump}");
            assert!(aux[0].contains(&format!("\"size\":{LEN}")), "{}", aux[0]);
        }
    }
}
