//! Shared helpers for the integration tests: where the corpus and fixtures are, and
//! running the real `perf` as an oracle.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

mod oracle;
pub use oracle::{
    listed, perf_available, perf_inputs, perf_run, script_fields, PerfRun, PERF_NO_HEADER,
    PERF_REFUSES,
};

/// The workspace's root directory.
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the workspace")
        .to_path_buf()
}

/// The public corpus named by `PERFDATA_CORPUS` (a relative path is taken from the
/// workspace root, as the README's test command writes it). Unset, tests that need it
/// print why they skip; set to a directory that does not exist, they fail.
pub fn corpus_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os("PERFDATA_CORPUS")?);
    let dir = if dir.is_relative() {
        workspace_root().join(dir)
    } else {
        dir
    };
    assert!(
        dir.is_dir(),
        "PERFDATA_CORPUS names {}, which is not a directory",
        dir.display()
    );
    Some(dir)
}

/// Every perf.data in the corpus (MANIFEST.md and other notes left out), sorted.
pub fn corpus_files() -> Vec<PathBuf> {
    let Some(dir) = corpus_dir() else {
        eprintln!("SKIP: PERFDATA_CORPUS is not set (CI sets it to ../shared/corpus)");
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus directory is readable")
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file() && p.extension().is_none_or(|e| e != "md"))
        .collect();
    files.sort();
    files
}

/// The repository's `fixtures/` directory.
pub fn fixtures_dir() -> PathBuf {
    workspace_root().join("fixtures")
}

/// Every fixture recording: `*.data` files and `*.data` directories, sorted.
pub fn fixture_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures_dir())
        .expect("fixtures directory is readable")
        .map(|e| e.expect("fixture entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    files.sort();
    files
}

/// Corpus files and fixtures together.
pub fn all_inputs() -> Vec<PathBuf> {
    let mut v = corpus_files();
    v.extend(fixture_files());
    v
}

/// The name of a test input, for messages.
pub fn name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The corpus file that is corrupt on purpose, and the offset its reader must name.
pub const CORRUPT: (&str, u64) = (
    "google-perf.data.piped.corrupted.zero_size_sample-3.2",
    49104,
);

/// Run `perf ARGS -i input` as the oracle tests do: no pager, times in UTC (perfdata
/// prints UTC where perf prints local time).
pub fn perf_output(args: &[&str], input: &Path) -> Output {
    Command::new("perf")
        .args(args)
        .arg("-i")
        .arg(input)
        .env("TZ", "UTC")
        .env("PERF_PAGER", "cat")
        .output()
        .expect("perf runs")
}

/// Run the perfdata binary `exe` (the tests of perfdata-cli pass
/// `env!("CARGO_BIN_EXE_perfdata")`) with `args`, feeding `stdin` if given.
pub fn run_perfdata(exe: &str, args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("perfdata runs");
    if let Some(input) = stdin {
        // A writer thread: the child may fill its stdout before reading all of stdin.
        let mut pipe = child.stdin.take().expect("stdin is piped");
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        });
    }
    child.wait_with_output().expect("perfdata finishes")
}

/// What `perf report --stats` printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfStats {
    /// Record counts by perf's names, TOTAL left out.
    pub records: std::collections::BTreeMap<String, u64>,
    /// (event name, SAMPLE count) in perf's order.
    pub samples: Vec<(String, u64)>,
    /// Whether perf read the whole input without complaint.
    pub clean: bool,
}

/// Run `perf report --stats -i path` and parse its output.
pub fn perf_stats(path: &Path) -> PerfStats {
    let run = perf_run(&["report", "--stats"], path);
    let stdout = &run.stdout;
    let mut records = std::collections::BTreeMap::new();
    let mut samples = Vec::new();
    let mut current_event: Option<String> = None;
    let mut in_aggregated = false;
    for line in stdout.lines() {
        if line.starts_with("Aggregated stats") {
            in_aggregated = true;
            continue;
        }
        if let Some(ev) = line.strip_suffix(" stats:") {
            in_aggregated = false;
            current_event = Some(ev.to_string());
            continue;
        }
        let Some((name, rest)) = line.split_once(" events:") else {
            continue;
        };
        let name = name.trim().to_string();
        let count: u64 = rest
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if in_aggregated {
            if name != "TOTAL" {
                records.insert(name, count);
            }
        } else if let (Some(ev), "SAMPLE") = (&current_event, name.as_str()) {
            samples.push((ev.clone(), count));
        }
    }
    // Clean: perf exited 0, printed its table, and said nothing on stderr that is about
    // the file (see `PerfRun::clean`).
    let clean = run.clean() && stdout.contains("Aggregated stats");
    PerfStats {
        records,
        samples,
        clean,
    }
}

/// A deterministic generator for test mutants (Knuth's MMIX LCG, the high bits).
pub struct Lcg(pub u64);

impl Lcg {
    /// The next 31 bits.
    pub fn draw(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.draw() % n.max(1) as u64) as usize
    }
}

/// The README's library example, compiled as a doctest (`cargo test --doc -p
/// perfdata-tests`) so that the front door's code cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// `f` of each item, in the items' order, computed on as many threads as the machine
/// has cores: the oracle tests that run perf and perfdata once per input and view keep
/// every core busy, where one loop left all but one idle (docs/testing.md#ci-time). A
/// panic in `f` is the test's.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers.min(items.len()))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else {
                            return mine;
                        };
                        mine.push((i, f(item)));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// The test files of `crate_dir/tests` (files, and directories with a `main.rs`) that no
/// target runs: neither a module of `tests/suite.rs` (`#[path = "FILE"]` then `mod M;`)
/// nor a `[[test]]` of the crate's Cargo.toml, with how many test files there are. The
/// crates keep autotests off and their tests in one binary (docs/testing.md#ci-time), so
/// a file added and not named would never run.
pub fn test_files_run_by_no_target(crate_dir: &Path) -> (Vec<String>, usize) {
    let dir = crate_dir.join("tests");
    let suite = std::fs::read_to_string(dir.join("suite.rs")).expect("suite.rs");
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).expect("Cargo.toml");
    let (mut missing, mut seen) = (Vec::new(), 0);
    for entry in std::fs::read_dir(&dir).expect("tests/") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name")
            .to_string();
        let (module, file) = if path.join("main.rs").is_file() {
            (name.clone(), format!("{name}/main.rs"))
        } else if let Some(stem) = name.strip_suffix(".rs") {
            (stem.to_string(), name.clone())
        } else {
            continue;
        };
        if module == "suite" {
            continue;
        }
        seen += 1;
        let in_suite = suite.contains(&format!("#[path = \"{file}\"]\nmod {module};"));
        let own = manifest.contains(&format!("path = \"tests/{file}\""));
        if !in_suite && !own {
            missing.push(file);
        }
    }
    (missing, seen)
}
