//! `perfdata convert` against perf 6.1 itself: for every corpus file and fixture perf
//! reads, each conversion must leave what perf shows unchanged: `perf script` with the
//! default fields and with `-F time,ip,sym,period,cpu`, and the metadata of
//! `perf report --header-only -I`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use perfdata_tests::{
    all_inputs, fixtures_dir, name, perf_available, perf_output, perf_stats, run_perfdata,
};

/// Inputs whose byte order cannot change (see tests/tests/rewrite.rs).
const NO_BYTE_SWAP: &[&str] = &[
    "jbeich-etm-perf_etm.data",
    "jbeich-lbr-perf_lbr.data",
    "jbeich-perf_with_add_counter.data",
    "jbeich-perf_with_arm_regs.data",
    "jbeich-perf_with_tracepoint_event.data",
];

fn perfdata(args: &[&str]) -> Result<(), String> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn perf_stdout(args: &[&str], input: &Path) -> String {
    String::from_utf8_lossy(&perf_output(args, input).stdout).into_owned()
}

/// What perf shows of a recording.
#[derive(PartialEq, Eq)]
struct View {
    script: String,
    fields: String,
    header: Vec<String>,
}

fn view(path: &Path) -> View {
    View {
        script: perf_stdout(&["script"], path),
        fields: perf_stdout(&["script", "-F", "time,ip,sym,period,cpu"], path),
        header: perf_stdout(&["report", "--header-only", "-I"], path)
            .lines()
            // The layout lines change with any rewrite; "captured on" is the file's mtime.
            .filter(|l| {
                ![
                    "# captured on",
                    "# header version",
                    "# data offset",
                    "# data size",
                    "# feat offset",
                    "# missing features",
                    "# ========",
                ]
                .iter()
                .any(|p| l.starts_with(p))
                    && *l != "#"
            })
            .map(str::to_string)
            .collect(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conversion {
    ToPipe,
    ToFile,
    Compress,
    Decompress,
    BigEndian,
    /// A file made from the pipe made from a file (event names survive: see below).
    PipeAndBack,
}

impl Conversion {
    fn args(self) -> &'static [&'static str] {
        match self {
            Conversion::ToPipe => &["--to-pipe"],
            Conversion::ToFile => &["--to-file"],
            Conversion::Compress => &["--compress"],
            Conversion::Decompress => &["--decompress"],
            Conversion::BigEndian => &["--endian", "big"],
            Conversion::PipeAndBack => &["--to-file"],
        }
    }
}

/// Header lines a conversion may add: what a file derives that a pipe stream lacks
/// (SAMPLE_TIME from the samples, STAT for `perf stat record` data, the AUXTRACE index,
/// BRANCH_STACK when an event samples branches).
const DERIVED_IN_FILES: &[&str] = &[
    "# contains samples with branch stack",
    "# time of first sample",
    "# time of last sample",
    "# sample duration",
    "# contains stat data",
    "# contains AUX area data",
];

/// Header lines perf 6.1 cannot show for a pipe stream: it drops these features in pipe
/// mode (BRANCH_STACK, AUXTRACE, STAT and DIR_FORMAT have no pipe-mode form in perf).
const NOT_IN_PIPES: &[&str] = &[
    "# contains samples with branch stack",
    "# contains AUX area data",
    "# contains stat data",
    "# directory data version",
];

/// Known perf 6.1 defects met by these comparisons, each with where it is in perf's code.
/// A difference matching one of these is perf's, not perfdata's.
const PERF_DEFECTS: &[(&str, Conversion, &str)] = &[
    (
        "jbeich-generated_by_linux_perf.data",
        Conversion::BigEndian,
        "perf_event__mmap2_swap does not swap MMAP2 prot/flags, so anonymous maps of a \
         big-endian file are named differently",
    ),
    (
        "google-perf.data.intel_pt-4.14",
        Conversion::ToPipe,
        "perf 6.1 fails on AUX area data in pipe mode: the corpus's own piped Intel PT \
         recording (google-perf.data.piped.intel_pt-4.14) stops with 'bad event header \
         size' too",
    ),
    (
        "google-perf.data.branch_stack_spec",
        Conversion::ToPipe,
        "its 132 KB BPF_PROG_INFO does not fit a pipe-mode record (u16 size); perfdata \
         warns and leaves it out",
    ),
    (
        "google-perf.data.branch_stack_spec",
        Conversion::PipeAndBack,
        "as above: the BPF_PROG_INFO left out of the pipe is not in the file made from it",
    ),
];

fn perf_defect(n: &str, conv: Conversion) -> bool {
    PERF_DEFECTS.iter().any(|(f, c, _)| *f == n && *c == conv)
}

/// Normalise what a conversion legitimately changes in the header view.
fn normalise(lines: &[String], conv: Conversion, is_input: bool, other: &[String]) -> Vec<String> {
    lines
        .iter()
        .filter(|l| match conv {
            Conversion::ToPipe if is_input => !NOT_IN_PIPES.iter().any(|p| l.starts_with(p)),
            Conversion::ToFile | Conversion::PipeAndBack if !is_input => {
                !DERIVED_IN_FILES.iter().any(|p| l.starts_with(p)) || other.contains(l)
            }
            _ => true,
        })
        .filter(|l| {
            !(conv == Conversion::ToFile && is_input && l.starts_with("# directory data version"))
        })
        // A stream's zero SAMPLE_TIME (perf 6.1 sends zeros) is recomputed in the file.
        .filter(|l| {
            let zero_time = l.starts_with("# time of first sample")
                || l.starts_with("# time of last sample")
                || l.starts_with("# sample duration");
            let value = l.rsplit(':').next().unwrap_or("").trim();
            !(is_input
                && matches!(conv, Conversion::ToFile | Conversion::PipeAndBack)
                && zero_time
                && value.trim_end_matches(" ms").parse::<f64>() == Ok(0.0)
                && !other.contains(l))
        })
        // Compressing or expanding is what these conversions are for.
        .filter(|l| {
            !(matches!(conv, Conversion::Compress | Conversion::Decompress)
                && l.starts_with("# compressed"))
        })
        // perf 6.1 cannot interpret BPF data of the other byte order.
        .filter(|l| {
            !(conv == Conversion::BigEndian
                && (l.starts_with("# bpf_prog_info")
                    || l.starts_with("# \tsub_prog")
                    || l.starts_with("# btf info")))
        })
        .map(|l| {
            let mut l = l.clone();
            // Re-compression changes the ratio, never the method or level.
            if l.starts_with("# compressed") {
                if let Some(i) = l.find(", ratio") {
                    l.truncate(i);
                }
            }
            // perf_event__attr_swap of perf 6.1 does not swap clockid or
            // sample_regs_intr (nor anything after sample_max_stack but aux_sample_size).
            if conv == Conversion::BigEndian && l.starts_with("# event :") {
                l = l
                    .split(", ")
                    .filter(|f| {
                        !f.starts_with("clockid = ") && !f.starts_with("sample_regs_intr = ")
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            l
        })
        .collect()
}

fn compare(input: &View, out: &View, conv: Conversion, pipe_out: bool) -> Vec<String> {
    let mut problems = Vec::new();
    // perf 6.1 names pipe-mode events from their attrs and never shows the names
    // EVENT_DESC carries, so a pipe's default `perf script` lines can differ in the
    // event column; its -F lines and the round trip back to a file must not.
    if conv != Conversion::ToPipe && input.script != out.script {
        problems.push(first_difference("perf script", &input.script, &out.script));
    }
    if input.fields != out.fields {
        problems.push(first_difference(
            "perf script -F",
            &input.fields,
            &out.fields,
        ));
    }
    // perf 6.1 does not byte-swap HEADER_FEATURE's feat_id ("wrong feature ID"), so it
    // cannot print the header of any big-endian pipe stream.
    if conv == Conversion::BigEndian && pipe_out {
        return problems;
    }
    let a = normalise(&input.header, conv, true, &out.header);
    let b = normalise(&out.header, conv, false, &input.header);
    if a != b {
        problems.push(first_difference(
            "perf report --header-only -I",
            &a.join("\n"),
            &b.join("\n"),
        ));
    }
    problems
}

fn first_difference(what: &str, a: &str, b: &str) -> String {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    let i = la
        .iter()
        .zip(&lb)
        .position(|(x, y)| x != y)
        .unwrap_or(la.len().min(lb.len()));
    format!(
        "{what} differs at line {} ({} vs {} lines):\n    in:  {:?}\n    out: {:?}",
        i + 1,
        la.len(),
        lb.len(),
        la.get(i),
        lb.get(i)
    )
}

fn is_pipe(path: &Path) -> bool {
    let bytes = if path.is_dir() {
        Vec::new()
    } else {
        std::fs::read(path).unwrap()
    };
    bytes.len() >= 16 && bytes[8..16] == 16u64.to_le_bytes()
}

/// The conversions that apply to an input.
fn conversions(path: &Path, n: &str) -> Vec<Conversion> {
    let pipe = is_pipe(path);
    let compressed = perf_stdout(&["report", "--header-only", "-I"], path).contains("# compressed");
    let mut v = Vec::new();
    if path.is_dir() {
        v.push(Conversion::ToFile);
        return v;
    }
    if pipe {
        v.push(Conversion::ToFile);
    } else {
        v.push(Conversion::ToPipe);
        v.push(Conversion::PipeAndBack);
        v.push(Conversion::Compress);
    }
    if compressed {
        v.push(Conversion::Decompress);
    }
    if !NO_BYTE_SWAP.contains(&n) {
        v.push(Conversion::BigEndian);
    }
    v
}

/// Whether an input has attrs larger than perf 6.1 reads in a file (it reads them in a
/// pipe): its file outputs need --compat=perf6.1.
fn needs_compat(path: &Path) -> bool {
    perfdata_core::PerfReader::open(path).is_ok_and(|mut r| {
        while let Ok(Some(_)) = r.next_record() {}
        r.meta()
            .attrs
            .iter()
            .any(|a| a.attr.encoded_len > perfdata_core::attr::ATTR_SIZE_PERF_6_1)
    })
}

fn check_input(path: &Path, dir: &Path, failures: &Mutex<Vec<String>>, done: &Mutex<Vec<String>>) {
    let n = name(path);
    let input = view(path);
    let compat = needs_compat(path);
    let pipe_in = is_pipe(path);
    for conv in conversions(path, &n) {
        let out = dir.join(format!("{n}.{conv:?}"));
        let out_s = out.to_str().unwrap();
        let result = match conv {
            Conversion::PipeAndBack => {
                let pipe = dir.join(format!("{n}.pipe-for-round-trip"));
                perfdata(&[
                    "convert",
                    path.to_str().unwrap(),
                    "--to-pipe",
                    "-o",
                    pipe.to_str().unwrap(),
                ])
                .and_then(|_| {
                    perfdata(&["convert", pipe.to_str().unwrap(), "--to-file", "-o", out_s])
                })
            }
            _ => {
                let mut args = vec!["convert", path.to_str().unwrap(), "-o", out_s];
                args.extend_from_slice(conv.args());
                if compat && conv == Conversion::ToFile {
                    args.push("--compat=perf6.1");
                }
                perfdata(&args)
            }
        };
        if let Err(e) = result {
            failures
                .lock()
                .unwrap()
                .push(format!("{n} {conv:?}: perfdata failed: {e}"));
            continue;
        }
        let pipe_out = conv == Conversion::ToPipe || (pipe_in && conv == Conversion::BigEndian);
        let problems = compare(&input, &view(&out), conv, pipe_out);
        if perf_defect(&n, conv) {
            println!("{n} {conv:?}: known perf 6.1 defect, differences not counted: {problems:?}");
        } else {
            for p in problems {
                failures.lock().unwrap().push(format!("{n} {conv:?}: {p}"));
            }
        }
        done.lock().unwrap().push(format!("{n} {conv:?}"));
    }
}

#[test]
fn conversions_keep_what_perf_shows() {
    if !perf_available() {
        return;
    }
    let inputs: Vec<PathBuf> = all_inputs()
        .into_iter()
        .filter(|p| perf_stats(p).clean || p.is_dir())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let failures = Mutex::new(Vec::new());
    let done = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(path) = inputs.get(i) else { break };
                check_input(path, dir.path(), &failures, &done);
            });
        }
    });
    let done = done.into_inner().unwrap();
    println!("{} conversions checked with perf: {done:?}", done.len());
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(done.len() > 60, "only {} conversions checked", done.len());
}

/// A pipe recording made with `perf record -o -` has all its features after --to-file,
/// which perf 6.1's own `perf inject` cannot do.
#[test]
fn pipe_recording_to_file_has_every_feature() {
    if !perf_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    let input = fixtures_dir().join("pipe-cpu-clock.data");
    perfdata(&[
        "convert",
        "--to-file",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let header = perf_stdout(&["report", "--header-only", "-I"], &out);
    for line in [
        "# hostname :",
        "# os release :",
        "# perf version :",
        "# arch :",
        "# nrcpus online :",
        "# cpudesc :",
        "# total memory :",
        "# cmdline :",
        "# event : name = cpu-clock",
        "# sibling sockets :",
        "# CPU 0: Core ID",
        "# node0 meminfo",
        "# pmu mappings:",
    ] {
        assert!(header.contains(line), "missing {line:?} in:\n{header}");
    }
    let stats = perf_stats(&out);
    assert!(stats.clean, "perf complains about the converted file");
    assert_eq!(stats.records.get("SAMPLE"), Some(&130));
}

/// `perf record -z -o -` makes a stream perf 6.1's `report --stats` cannot read; after
/// --to-file --decompress it reads all of it.
#[test]
fn compressed_pipe_recording_becomes_readable() {
    if !perf_available() {
        return;
    }
    let input = fixtures_dir().join("pipe-compressed.data");
    assert!(
        !perf_stats(&input).clean,
        "perf 6.1 reads the compressed pipe: fixture changed?"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.data");
    perfdata(&[
        "convert",
        "--to-file",
        "--decompress",
        input.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ])
    .unwrap();
    let stats = perf_stats(&out);
    assert!(stats.clean, "perf complains about the converted file");
    assert_eq!(stats.records.get("SAMPLE"), Some(&265));
    assert!(!stats.records.contains_key("COMPRESSED"));
    assert_eq!(
        perf_stdout(&["script"], &input).lines().count(),
        perf_stdout(&["script"], &out).lines().count()
    );
}

/// Every corpus file perf 6.1 refuses (the corrupt one aside) is read by it after
/// --compat=perf6.1, with every sample there.
#[test]
fn compat_makes_refused_corpus_files_readable() {
    if !perf_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut fixed = Vec::new();
    let mut failures = Vec::new();
    for path in perfdata_tests::corpus_files() {
        let n = name(&path);
        if n == perfdata_tests::CORRUPT.0 || perf_stats(&path).clean {
            continue;
        }
        let out = dir.path().join(&n);
        if let Err(e) = perfdata(&[
            "convert",
            "--compat=perf6.1",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]) {
            failures.push(format!("{n}: {e}"));
            continue;
        }
        let theirs = perf_stats(&out);
        if !theirs.clean {
            failures.push(format!("{n}: perf 6.1 still refuses it"));
            continue;
        }
        let ours = Command::new(env!("CARGO_BIN_EXE_perfdata"))
            .args(["stats", "--json"])
            .arg(&path)
            .output()
            .unwrap();
        let ours: serde_json::Value = serde_json::from_slice(&ours.stdout).unwrap();
        if theirs.records.get("SAMPLE").copied() != ours["records"]["SAMPLE"].as_u64() {
            failures.push(format!(
                "{n}: perf reads {:?} samples, the input has {}",
                theirs.records.get("SAMPLE"),
                ours["records"]["SAMPLE"]
            ));
        }
        fixed.push(n);
    }
    println!("perf 6.1 reads after --compat: {fixed:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if !perfdata_tests::corpus_files().is_empty() {
        assert!(
            fixed.len() >= 12,
            "only {} refused files checked",
            fixed.len()
        );
    }
}
