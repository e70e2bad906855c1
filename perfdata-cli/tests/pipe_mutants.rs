//! Damaged pipe streams that perf 6.1 reads (`perf report --stats` exits 0; a pipe
//! escapes the checks perf makes of a file's events when it opens one) converted to a
//! file (`--to-file`, `--compat=perf6.1`): the conversion writes a file perf reads, or
//! refuses, saying why (perfdata_core::perf_open), or warns that perf 6.1 will refuse
//! the file it writes and why (a newer perf's attrs), or may (a feature that does not
//! decode, copied as it was read). Targeted mutants for each of perf's
//! refusals, then mutants of every pipe fixture and corpus stream made by a seeded
//! mutator: a byte or a few set, a bit flipped, a record's header or first bytes
//! changed, a record dropped, doubled or swapped with the next. The default run is
//! bounded (`PERFDATA_PIPE_MUTANTS`, 150 by default, sets how many).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use perfdata_tests::{
    corpus_files, fixtures_dir, name, perf_available, perf_run, run_perfdata, Lcg, CORRUPT,
};

/// How a conversion of a mutant ended.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    /// perf reads the file written.
    Read,
    /// convert refused, with this message (the part after `perfdata: error: `).
    Refused(String),
    /// convert wrote a file perf 6.1 refuses, and warned so: the warning.
    Warned(String),
    /// convert wrote a file perf refuses without a word: what perf said.
    PerfRefuses(String),
}

const CONVERSIONS: [&str; 2] = ["--to-file", "--compat=perf6.1"];

/// `perfdata convert OPTION INPUT -o OUT`.
fn run_convert(input: &Path, option: &str, out: &Path) -> std::process::Output {
    let args = [
        OsStr::new("convert"),
        OsStr::new(option),
        input.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ];
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None)
}

/// Convert `input` with `option` into `out` and see whether perf reads the output.
fn convert(input: &Path, option: &str, out: &Path) -> Outcome {
    let _ = std::fs::remove_file(out);
    let run = run_convert(input, option, out);
    let stderr = String::from_utf8_lossy(&run.stderr);
    if !run.status.success() {
        assert_eq!(run.status.code(), Some(1), "{option}: {stderr}");
        assert!(
            !out.exists(),
            "{option}: a refused conversion left {}",
            out.display()
        );
        let why = stderr
            .trim()
            .strip_prefix("perfdata: error: ")
            .unwrap_or(&stderr);
        return Outcome::Refused(why.to_string());
    }
    let perf = perf_run(&["report", "--stats"], out);
    let warned = stderr.lines().find(|l| {
        l.starts_with("perfdata: warning: ")
            && (l.contains("perf 6.1 refuses the file") || l.contains("may refuse the file"))
    });
    match (perf.status, warned) {
        (Some(0), _) => Outcome::Read,
        (_, Some(w)) => Outcome::Warned(w["perfdata: warning: ".len()..].to_string()),
        (status, None) => Outcome::PerfRefuses(format!("{status:?}: {}", perf.stderr.trim())),
    }
}

/// perf reads the stream: `perf report --stats` exits 0.
fn perf_reads(path: &Path) -> bool {
    perf_run(&["report", "--stats"], path).status == Some(0)
}

/// A record of a pipe stream: its offset, type, and length with the payload that
/// follows HEADER_TRACING_DATA.
type Rec = (usize, u32, usize);

/// A pipe stream's records after its 16-byte header.
fn records(b: &[u8]) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut at = 16;
    while at + 8 <= b.len() {
        let ty = u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        let size = u16::from_le_bytes(b[at + 6..at + 8].try_into().unwrap()) as usize;
        let mut len = size;
        if ty == 66 && at + 12 <= b.len() {
            len += u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        }
        if size < 8 || at + len > b.len() {
            break;
        }
        out.push((at, ty, len));
        at += len;
    }
    out
}
/// One mutant of `b`.
fn mutate(b: &[u8], rng: &mut Lcg) -> Vec<u8> {
    let mut m = b.to_vec();
    let recs = records(b);
    let pick = |rng: &mut Lcg| recs[rng.below(recs.len())];
    match rng.below(6) {
        _ if recs.len() < 2 => m[rng.below(b.len())] ^= 0xff,
        0 => {
            for _ in 0..=rng.below(4) {
                let at = rng.below(m.len());
                m[at] = rng.draw() as u8;
            }
        }
        1 => {
            let at = rng.below(m.len());
            m[at] ^= 1 << rng.below(8);
        }
        2 => {
            let (at, _, len) = pick(rng);
            let i = at + rng.below(len.min(64));
            m[i] = rng.draw() as u8;
        }
        3 => {
            let (at, _, len) = pick(rng);
            m.drain(at..at + len);
        }
        4 => {
            let (at, _, len) = pick(rng);
            let copy = b[at..at + len].to_vec();
            m.splice(at..at, copy);
        }
        _ => {
            let i = rng.below(recs.len() - 1);
            let ((a, _, la), (c, _, lc)) = (recs[i], recs[i + 1]);
            let swapped = [&b[c..c + lc], &b[a..a + la]].concat();
            m.splice(a..c + lc, swapped);
        }
    }
    m
}

/// The pipe fixtures and corpus streams.
fn inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = [
        "cpu-clock",
        "inject",
        "stat-record",
        "tracepoint",
        "compressed",
    ]
    .iter()
    .map(|n| fixtures_dir().join(format!("pipe-{n}.data")))
    .collect();
    v.extend(corpus_files().into_iter().filter(|p| {
        std::fs::read(p)
            .is_ok_and(|b| b.starts_with(b"PERFILE2") && b.get(8..16) == Some(&16u64.to_le_bytes()))
    }));
    v
}

/// The pipe fixture with tracepoints (three events, IP|TID|TIME|ID|CPU|PERIOD|RAW), its
/// records, and the offset of each HEADER_ATTR.
fn tracepoint_pipe() -> (Vec<u8>, Vec<Rec>, Vec<usize>) {
    let b = std::fs::read(fixtures_dir().join("pipe-tracepoint.data")).unwrap();
    let recs = records(&b);
    let attrs = recs.iter().filter(|r| r.1 == 64).map(|r| r.0).collect();
    (b, recs, attrs)
}

fn set_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Each of perf's refusals of a file, made from the tracepoint pipe: perf reads the
/// stream, and both conversions refuse it naming what perf would say (before the fix
/// they wrote files perf refused).
#[perfdata_oracle::needs(perf)]
#[test]
fn conversions_refuse_what_perf_would_refuse_in_a_file() {
    assert!(perf_available());
    let (base, recs, attrs) = tracepoint_pipe();
    // A HEADER_ATTR's attr starts after the 8-byte header: type, size, config,
    // sample_period, sample_type, read_format.
    let (config, sample_type) = (8 + 8, 8 + 24);
    let tracing = recs.iter().find(|r| r.1 == 66).copied().unwrap();
    let mut cases: Vec<(&str, Vec<u8>)> = Vec::new();
    let mut m = base.clone();
    let t = u64::from_le_bytes(m[attrs[1] + sample_type..][..8].try_into().unwrap());
    set_u64(&mut m, attrs[1] + sample_type, t & !(1 << 6)); // no ID
    cases.push(("non matching sample_type", m));
    let mut m = base.clone();
    m[attrs[2] + 8 + 40 + 2] ^= 1 << 2; // flags bit 18: sample_id_all
    cases.push(("non matching sample_id_all", m));
    let mut m = base.clone();
    set_u64(&mut m, attrs[0] + config, 999_999);
    cases.push(("cannot find event format for 999999", m));
    let mut m = base.clone();
    m.drain(tracing.0..tracing.0 + tracing.2);
    cases.push(("broken or missing trace data", m));
    let mut m = base.clone();
    // An event format's first field (header_page's fields are not an event's: perf
    // ignores their errors).
    let formats = m[tracing.0..]
        .windows(15)
        .position(|w| w == b"format:\n\tfield:");
    m[tracing.0 + formats.unwrap() + 9 + 3] = b'L';
    cases.push(("expected 'field' but read 'fieLd'", m));
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("m.data"), dir.path().join("out.data"));
    for (perf_says, bytes) in cases {
        std::fs::write(&input, &bytes).unwrap();
        assert!(
            perf_reads(&input),
            "{perf_says}: perf does not read the mutant"
        );
        for option in CONVERSIONS {
            match convert(&input, option, &out) {
                Outcome::Refused(why) => assert!(
                    why.contains(perf_says) && why.contains("perf 6.1 refuses the file"),
                    "{perf_says} {option}: {why}"
                ),
                other => panic!("{perf_says} {option}: {other:?}"),
            }
        }
    }
}

/// The seeded mutants: no conversion writes a file perf refuses.
#[perfdata_oracle::needs(perf)]
#[test]
fn no_conversion_of_a_mutant_perf_reads_writes_a_file_perf_refuses() {
    assert!(perf_available());
    let count: usize = std::env::var("PERFDATA_PIPE_MUTANTS")
        .ok()
        .map_or(150, |n| {
            n.parse().expect("PERFDATA_PIPE_MUTANTS is a number")
        });
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("m.data"), dir.path().join("out.data"));
    let sources: Vec<(PathBuf, Vec<u8>)> = inputs()
        .into_iter()
        .map(|p| {
            let b = std::fs::read(&p).unwrap();
            (p, b)
        })
        .collect();
    // Unmutated, perf reads every conversion but --to-file of a newer perf's streams
    // (attrs of 136 bytes), which warns; the corrupt stream is refused at its offset.
    let mut warned = Vec::new();
    for (p, _) in &sources {
        for option in CONVERSIONS {
            match convert(p, option, &out) {
                Outcome::Read => {}
                Outcome::Refused(why) if name(p) == CORRUPT.0 => {
                    assert!(why.contains(&CORRUPT.1.to_string()), "{why}")
                }
                Outcome::Warned(w) if option == "--to-file" && w.contains("unsupported ABI") => {
                    warned.push(name(p))
                }
                other => panic!("{} {option}: {other:?}", name(p)),
            }
        }
    }
    println!("--to-file warns for {warned:?}");
    let mut rng = Lcg(24);
    let (mut read, mut outcomes) = (0, BTreeMap::<String, usize>::new());
    let mut failures = Vec::new();
    for i in 0..count {
        let (path, bytes) = &sources[i % sources.len()];
        std::fs::write(&input, mutate(bytes, &mut rng)).unwrap();
        if !perf_reads(&input) {
            continue;
        }
        read += 1;
        for option in CONVERSIONS {
            let outcome = convert(&input, option, &out);
            let kind = match &outcome {
                Outcome::Read => "written, perf reads it".to_string(),
                Outcome::Refused(why) => match why.split_once("perf 6.1 refuses the file (") {
                    Some((_, said)) => format!("refused: {}", said.trim_end_matches(')')),
                    None => "refused: the input".to_string(),
                },
                Outcome::Warned(why) => match why.split_once("perf 6.1 refuses the file (") {
                    Some((_, said)) => format!("warned: {}", said.split(')').next().unwrap()),
                    None => "warned: a feature that does not decode".to_string(),
                },
                Outcome::PerfRefuses(why) => {
                    let kept = dir.path().join(format!("mutant-{i}.data"));
                    std::fs::copy(&input, &kept).unwrap();
                    failures.push(format!("mutant {i} of {} {option}: {why}", name(path)));
                    "written, perf refuses it".to_string()
                }
            };
            *outcomes.entry(kind).or_default() += 1;
        }
    }
    println!("{count} mutants, {read} read by perf; conversions: {outcomes:#?}");
    if !failures.is_empty() {
        // Keep the mutants for a look.
        let kept = dir.keep();
        panic!(
            "{}\nmutants kept in {}",
            failures.join("\n"),
            kept.display()
        );
    }
    assert!(
        read * 2 > count,
        "perf reads too few mutants: {read} of {count}"
    );
}

/// A feature that does not decode (MEM_TOPOLOGY saying it holds 1,441,793 nodes) is
/// written as it was read, and the conversion says perf may not read it: an outside run
/// found perf 6.1 crashing on such a file ("malloc(): invalid size").
#[perfdata_oracle::needs(perf)]
#[test]
fn a_feature_that_does_not_decode_is_written_with_a_warning() {
    assert!(perf_available());
    let mut m = std::fs::read(fixtures_dir().join("pipe-cpu-clock.data")).unwrap();
    // HEADER_FEATURE (80) of feat_id 22: version, block_size, then nr.
    let (at, _, _) = records(&m)
        .into_iter()
        .find(|&(at, ty, _)| ty == 80 && m[at + 8] == 22)
        .unwrap();
    m[at + 8 + 8 + 16 + 2] = 22;
    let dir = tempfile::tempdir().unwrap();
    let (input, out) = (dir.path().join("m.data"), dir.path().join("out.data"));
    std::fs::write(&input, &m).unwrap();
    assert!(perf_reads(&input));
    for option in CONVERSIONS {
        let run = run_convert(&input, option, &out);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{option}: {stderr}");
        assert!(
            stderr.contains(
                "feature MEM_TOPOLOGY does not decode as its layout and is written as it was \
                 read: perf 6.1, which reads it by that layout, may refuse the file or fail on it"
            ),
            "{option}: {stderr}"
        );
    }
}
