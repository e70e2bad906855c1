//! `anonymize` on damaged recordings that carry secrets: every mutant it accepts (the
//! edit returns its output, as the command exits 0) must hold no secret, in its bytes as
//! written, with its compressed records expanded, and (for a sample, perf being slow) in
//! what `perf script -D --header` prints of it. The inputs are the fixtures whose secrets
//! all start with `zqx` (`fixtures/anon-secret.data` and `fixtures/anon/`): hostname,
//! comms, binary paths, argv and an environment value in user stacks, tracepoint
//! strings, a THREAD_MAP comm, a BPF program's name.
//!
//! `PERFDATA_ANON_MUTANTS` sets how many mutants (default 600, a few seconds);
//! `PERFDATA_ANON_PERF_CHECKS` how many accepted ones perf dumps (default 12). The
//! mutants are the same on every run: mutant `i` is made from input `i % inputs` by
//! the mutator seeded with `i`.

mod mutate;

use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_core::{PerfReader, ReadOptions};
use perfdata_tests::{fixtures_dir, name, perf_available};
use perfdata_write::convert::{Compression, ConvertOptions};
use perfdata_write::edit::{Anonymize, Pseudonyms, DEFAULT_KEEP_PATHS};
use perfdata_write::{Conversion, Input, Sink};

/// What no output may hold, compared in lower case: the prefix every secret has, and
/// each secret's rest, so that a secret whose prefix a mutation hit is still found.
const SECRETS: &[&str] = &[
    "zqx",
    "secretworker",
    "otherhelper",
    "anondir",
    "secrethost",
    "envsecretvalue",
    "secretenv",
    "secretargument",
    "secretnap",
    "bpfsecret",
];

fn inputs() -> Vec<PathBuf> {
    let mut v = vec![fixtures_dir().join("anon-secret.data")];
    let mut anon: Vec<PathBuf> = std::fs::read_dir(fixtures_dir().join("anon"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "data"))
        .collect();
    anon.sort();
    v.extend(anon);
    v
}

fn env_count(var: &str, default: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The secrets found in `bytes` (ASCII case ignored).
fn secrets_in(bytes: &[u8]) -> Vec<&'static str> {
    let lower: Vec<u8> = bytes.iter().map(u8::to_ascii_lowercase).collect();
    SECRETS
        .iter()
        .copied()
        .filter(|s| lower.windows(s.len()).any(|w| w == s.as_bytes()))
        .collect()
}

/// `anonymize` as the command runs it (Compression::Keep, the input's container), in
/// memory: the output, or the error the command would exit 1 with.
fn anonymize(bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let reader = PerfReader::from_vec(bytes, ReadOptions::Contents).map_err(|e| e.to_string())?;
    let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
    let names = Pseudonyms::new("mutant-salt", keep, Vec::new()).map_err(|e| e.to_string())?;
    let anon = Anonymize::new(names, false);
    let mut out = Cursor::new(Vec::new());
    Conversion::new(Input::from_reader(reader))
        .edit(anon)
        .write(Sink::seekable(&mut out, None))
        .map_err(|e| e.to_string())?;
    Ok(out.into_inner())
}

/// The output with its compressed records expanded (`convert --decompress`).
fn expanded(out: &[u8]) -> Result<Vec<u8>, String> {
    let reader =
        PerfReader::from_vec(out.to_vec(), ReadOptions::Contents).map_err(|e| e.to_string())?;
    let opts = ConvertOptions {
        compression: Compression::Decompress,
        ..Default::default()
    };
    let mut w = Cursor::new(Vec::new());
    Conversion::new(Input::from_reader(reader))
        .options(opts)
        .write(Sink::seekable(&mut w, None))
        .map_err(|e| e.to_string())?;
    Ok(w.into_inner())
}

/// One mutant: which input, what was done, and what anonymize made of it.
struct Run {
    input: usize,
    what: Vec<String>,
    result: Result<Vec<u8>, String>,
}

impl Run {
    /// Whether a string field of its tracing data was declared as numbers.
    fn retyped(&self) -> bool {
        self.what.iter().any(|w| w.contains(" declared "))
    }
}

fn run(i: usize, inputs: &[Vec<u8>]) -> Run {
    let input = i % inputs.len();
    let mut rng = mutate::Rng::new(i as u64);
    let (bytes, what) = mutate::mutant(&inputs[input], &mut rng);
    // `PERFDATA_ANON_KEEP=DIR`: every mutant kept there as `mutant-I.data`, to look at.
    if let Some(dir) = std::env::var_os("PERFDATA_ANON_KEEP") {
        std::fs::write(Path::new(&dir).join(format!("mutant-{i}.data")), &bytes).unwrap();
    }
    let result = std::panic::catch_unwind(|| anonymize(bytes))
        .unwrap_or_else(|_| panic!("anonymize panicked on mutant {i}: {what:?}"));
    Run {
        input,
        what,
        result,
    }
}

#[test]
fn intact_inputs_keep_no_secret() {
    for p in inputs() {
        let bytes = std::fs::read(&p).unwrap();
        assert!(secrets_in(&bytes).contains(&"zqx"), "{}", name(&p));
        let out = anonymize(bytes).unwrap_or_else(|e| panic!("{}: {e}", name(&p)));
        assert_eq!(secrets_in(&out), Vec::<&str>::new(), "{}", name(&p));
        let plain = expanded(&out).unwrap();
        assert_eq!(secrets_in(&plain), Vec::<&str>::new(), "{}", name(&p));
    }
}

#[test]
fn accepted_mutants_hold_no_secret() {
    let paths = inputs();
    let inputs: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let n = env_count("PERFDATA_ANON_MUTANTS", 600);
    let from = env_count("PERFDATA_ANON_FROM", 0);
    let (mut accepted, mut per_input) = (0, vec![(0usize, 0usize, 0usize); inputs.len()]);
    let (mut leaks, mut leaky) = (Vec::new(), 0);
    let mut unreadable = Vec::new();
    // Mutants whose tracing data declares a string as numbers: made, accepted, leaking.
    let mut retyped = (0, 0, 0);
    for i in from..from + n {
        let r = run(i, &inputs);
        per_input[r.input].0 += 1;
        retyped.0 += usize::from(r.retyped());
        let Ok(out) = &r.result else { continue };
        accepted += 1;
        retyped.1 += usize::from(r.retyped());
        per_input[r.input].1 += 1;
        let raw = secrets_in(out);
        let leaked = leaks.len();
        if !raw.is_empty() {
            leaks.push(format!("mutant {i} {:?}: {raw:?} in the output", r.what));
        }
        match expanded(out) {
            Ok(plain) => {
                let found = secrets_in(&plain);
                if !found.is_empty() {
                    leaks.push(format!("mutant {i} {:?}: {found:?} expanded", r.what));
                }
            }
            Err(e) => unreadable.push(format!("mutant {i} {:?}: {e}", r.what)),
        }
        leaky += usize::from(leaks.len() > leaked);
        per_input[r.input].2 += usize::from(leaks.len() > leaked);
        retyped.2 += usize::from(leaks.len() > leaked && r.retyped());
    }
    for (p, (made, ok, leaked)) in paths.iter().zip(&per_input) {
        eprintln!(
            "{}: {made} mutants, {ok} accepted, {leaked} holding a secret",
            name(p)
        );
    }
    eprintln!(
        "{n} mutants, {accepted} accepted, {leaky} of them holding a secret ({} findings), \
         {} unreadable",
        leaks.len(),
        unreadable.len()
    );
    eprintln!(
        "of them {} with a string field declared as numbers, {} accepted, {} holding a secret",
        retyped.0, retyped.1, retyped.2
    );
    assert!(leaks.is_empty(), "{} leaks: {leaks:#?}", leaks.len());
    // One mutant in twelve is secret-tp.data's with a field retyped.
    assert!(retyped.1 * 30 >= n, "only {} retyped accepted", retyped.1);
    assert!(
        unreadable.is_empty(),
        "outputs perfdata cannot read: {unreadable:#?}"
    );
    // Not a test of refusals only: most mutants are damage anonymize gets through.
    assert!(accepted * 4 >= n, "only {accepted} of {n} accepted");
}

/// `perf script -D --header` of `file`: stdout and stderr.
fn perf_dump(file: &Path) -> String {
    let o = Command::new("timeout")
        .args(["60", "perf", "script", "-D", "--header", "-i"])
        .arg(file)
        .env("PERF_PAGER", "cat")
        .output()
        .expect("perf runs");
    let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&o.stderr));
    text
}

#[perfdata_oracle::needs(perf)]
#[test]
fn perf_shows_no_secret_of_accepted_mutants() {
    assert!(perf_available());
    let paths = inputs();
    let inputs: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let want = env_count("PERFDATA_ANON_PERF_CHECKS", 12);
    // The mutants of the other test, from a seed of their own so that CI sees others;
    // and as many again whose tracing data declares a string as numbers, which perf
    // prints with its trace format (`prev_comm=%s`) whatever the type.
    let mut runs = Vec::new();
    let mut i = 1usize << 40;
    while runs.len() < want && i < (1 << 40) + 100 * want {
        let r = run(i, &inputs);
        if r.result.is_ok() {
            runs.push((i, r));
        }
        i += 1;
    }
    let mut i = 1usize << 41;
    while runs.len() < 2 * want && i < (1 << 41) + 1000 * want {
        let r = run(i, &inputs);
        if r.retyped() && r.result.is_ok() {
            runs.push((i, r));
        }
        i += 1;
    }
    let mut leaks = Vec::new();
    // perf shows the secrets of an input (hostname in the header, comms in -D).
    let dump = perf_dump(&paths[0]);
    assert!(dump.contains("zqxsecrethost") && dump.contains("zqxsecretworker"));
    for (i, r) in &runs {
        let Ok(out) = &r.result else { unreachable!() };
        let file = dir.path().join(format!("mutant-{i}.data"));
        std::fs::write(&file, out).unwrap();
        let found = secrets_in(perf_dump(&file).as_bytes());
        if !found.is_empty() {
            leaks.push(format!(
                "mutant {i} of {} {:?}: {found:?}",
                name(&paths[r.input]),
                r.what
            ));
        }
        std::fs::remove_file(&file).unwrap();
    }
    let retyped = runs.iter().filter(|(_, r)| r.retyped()).count();
    eprintln!(
        "perf dumped {} accepted mutants ({retyped} with a string field declared as \
         numbers), {} leaked",
        runs.len(),
        leaks.len()
    );
    assert_eq!(runs.len(), 2 * want);
    assert!(retyped >= want);
    assert!(leaks.is_empty(), "{leaks:#?}");
}
