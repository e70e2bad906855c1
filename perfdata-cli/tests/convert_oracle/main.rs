//! `perfdata convert` against perf 6.1 itself: for every corpus file and fixture perf
//! reads, each conversion must leave what perf shows unchanged: `perf script` with the
//! default fields and with every sample field asked per event type, the header of
//! `perf report --header-only -I`, the feature set, the SAMPLE_TIME a file derives, and
//! the warnings perfdata prints. Every difference perf 6.1 or the target container
//! explains is listed in `expect.rs`, narrowed to the lines it excuses.

mod expect;
mod view;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use perfdata_tests::{name, perf_available, perf_inputs, run_perfdata};

use expect::{Conversion, Expect};
use view::{first_last_time, view, View};

/// Run perfdata; its stderr lines (warnings) on success.
fn perfdata(args: &[&str]) -> Result<Vec<String>, String> {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        Ok(stderr.lines().map(str::to_string).collect())
    } else {
        Err(stderr)
    }
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
    !path.is_dir()
        && std::fs::read(path).is_ok_and(|b| b.len() >= 16 && b[8..16] == 16u64.to_le_bytes())
}

/// Convert `path` as `conv` says into `out`; perfdata's warnings.
fn convert(
    path: &Path,
    conv: Conversion,
    compat: bool,
    out: &Path,
    dir: &Path,
) -> Result<Vec<String>, String> {
    let p = path.to_str().unwrap();
    let o = out.to_str().unwrap();
    if conv == Conversion::PipeAndBack {
        let pipe = dir.join(format!("{}.pipe-for-round-trip", name(path)));
        let pipe = pipe.to_str().unwrap();
        let mut warnings = perfdata(&["convert", p, "--to-pipe", "-o", pipe])?;
        warnings.extend(perfdata(&["convert", pipe, "--to-file", "-o", o])?);
        return Ok(warnings);
    }
    let mut args = vec!["convert", p, "-o", o];
    args.extend_from_slice(conv.args());
    if compat && conv == Conversion::ToFile {
        args.push("--compat=perf6.1");
    }
    perfdata(&args)
}

/// Whether an input has attrs larger than perf 6.1 reads in a file (it reads them in a
/// pipe): its file outputs need --compat=perf6.1.
fn needs_compat(path: &Path) -> bool {
    perfdata_core::PerfReader::open(path).is_ok_and(|mut r| {
        while let Ok(Some(_)) = r.next_record() {}
        r.meta()
            .attrs()
            .iter()
            .any(|a| a.attr.encoded_len > perfdata_core::attr::ATTR_SIZE_PERF_6_1)
    })
}

/// What one conversion was checked for.
#[derive(Default)]
struct Tally {
    /// (input, conversion) pairs compared without a difference, their views non-empty.
    compared: Vec<String>,
    /// Pairs of the inputs in `expect::NO_SCRIPT`: header and features compared.
    no_script: Vec<String>,
    /// Pairs whose output perf 6.1 cannot read, as `expect` lists.
    unreadable: Vec<String>,
    failures: Vec<String>,
}

fn check_input(path: &Path, dir: &Path, tally: &Mutex<Tally>) {
    let n = name(path);
    let conversions = Conversion::for_input(path, &n, is_pipe(path));
    let input = view(path, conversions.contains(&Conversion::ToPipe), true);
    // Without iregs, for the conversions after which perf cannot show them.
    let input_no_iregs = conversions
        .iter()
        .any(|c| !c.shows_iregs())
        .then(|| view::fields(path, true, false));
    let compat = needs_compat(path);
    let mut problems = Vec::new();
    // Every input perf reads shows something in perf script (samples, or perf stat's
    // counts): an empty view would make every comparison below vacuous.
    let empty = input.fields.stdout.is_empty() || input.script.stdout.is_empty();
    if empty != perfdata_tests::listed(expect::NO_SCRIPT, &n).is_some() {
        problems.push(format!(
            "{n}: perf script printed {} lines; NO_SCRIPT disagrees",
            input.fields.stdout.lines().count()
        ));
    }
    for &conv in &conversions {
        let e = Expect::of(&n, conv);
        let out = dir.join(format!("{n}.{conv:?}"));
        let warnings = match convert(path, conv, compat, &out, dir) {
            Ok(w) => w,
            Err(err) => {
                problems.push(format!("{n} {conv:?}: perfdata failed: {err}"));
                continue;
            }
        };
        let label = format!("{n} {conv:?}");
        let before = problems.len();
        check_warnings(&label, &warnings, e.warnings, &mut problems);
        let pipe_out =
            conv == Conversion::ToPipe || (is_pipe(path) && conv == Conversion::BigEndian);
        let output = view(&out, conv == Conversion::ToPipe, conv.shows_iregs());
        if let Some(why) = e.unreadable {
            if output.fields.clean() {
                problems.push(format!(
                    "{label}: perf reads the output now, but expect.rs says: {why}"
                ));
            }
            tally.lock().unwrap().unreadable.push(label);
            continue;
        }
        let input_fields = if conv.shows_iregs() {
            &input.fields
        } else {
            input_no_iregs.as_ref().unwrap()
        };
        compare(
            &label,
            &input,
            input_fields,
            &output,
            conv,
            pipe_out,
            &e,
            &mut problems,
        );
        if problems.len() == before {
            let mut t = tally.lock().unwrap();
            if empty {
                t.no_script.push(label)
            } else {
                t.compared.push(label)
            }
        }
    }
    tally.lock().unwrap().failures.extend(problems);
}

/// perfdata's warnings are exactly the expected ones.
fn check_warnings(label: &str, got: &[String], expected: &[&str], problems: &mut Vec<String>) {
    for w in got {
        if !expected.iter().any(|e| w.contains(e)) {
            problems.push(format!("{label}: unexpected warning: {w}"));
        }
    }
    for e in expected {
        if !got.iter().any(|w| w.contains(e)) {
            problems.push(format!(
                "{label}: expected a warning containing {e:?}, got {got:?}"
            ));
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn compare(
    label: &str,
    input: &View,
    input_fields: &perfdata_tests::PerfRun,
    out: &View,
    conv: Conversion,
    pipe_out: bool,
    e: &Expect,
    problems: &mut Vec<String>,
) {
    let subst = |s: &str| {
        e.substitutions
            .iter()
            .fold(s.to_string(), |s, (a, b)| s.replace(a, b))
    };
    // Callchain lines are tab-indented in perf script.
    let lines = |s: &str| -> String {
        s.lines()
            .filter(|l| !(e.skip_callchains && l.starts_with('\t')))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    // The sample views: perf read both the same way, with the same warnings.
    let (fi, fo) = if conv == Conversion::ToPipe {
        (
            input.fields_no_event.as_ref().unwrap(),
            out.fields_no_event.as_ref().unwrap(),
        )
    } else {
        (input_fields, &out.fields)
    };
    for (what, a, b) in [
        ("perf script -F", fi, fo),
        ("perf script", &input.script, &out.script),
    ] {
        if conv == Conversion::ToPipe && what == "perf script" {
            // perf 6.1 prints pipe-mode samples with other default fields (no tid) and
            // names events from their attrs: the -F view without the event name is the
            // comparison for pipes.
            continue;
        }
        // perf's warnings about the input (no kernel symbols, trace errors, an
        // unsupported unwinder) must be the same for the output, plus those the
        // conversion explains.
        let b_stderr: String = b
            .stderr
            .lines()
            .filter(|l| !conv.extra_stderr().contains(l) && !e.extra_stderr.contains(l))
            .map(|l| format!("{l}\n"))
            .collect();
        if b.status != Some(0) || b_stderr != a.stderr {
            problems.push(format!(
                "{label}: {what}: perf exited {:?} with {:?} (input: {:?})",
                b.status, b.stderr, a.stderr
            ));
        } else if lines(&subst(&a.stdout)) != lines(&b.stdout) {
            let (a, b) = (lines(&subst(&a.stdout)), lines(&b.stdout));
            problems.push(format!("{label}: {}", first_difference(what, &a, &b)));
        }
    }
    // An exception that excuses nothing any more is stale: it would hide the next defect.
    if !e.substitutions.is_empty() && subst(&fi.stdout) == fi.stdout {
        problems.push(format!(
            "{label}: its substitutions change nothing: stale exception"
        ));
    }
    if e.skip_callchains && fi.stdout == fo.stdout {
        problems.push(format!(
            "{label}: its callchains are the same now: stale exception"
        ));
    }
    for l in e.extra_stderr {
        if !fo.stderr.lines().any(|x| x == *l) {
            problems.push(format!(
                "{label}: perf no longer says {l:?}: stale exception"
            ));
        }
    }
    // The feature set: what the conversion may add or drop is listed.
    let mut expected: BTreeSet<String> = input.features.clone();
    for f in conv.drops(pipe_out).iter().chain(e.drops) {
        expected.remove(*f);
    }
    for f in conv.adds(&input.features, out) {
        expected.insert(f);
    }
    if expected != out.features {
        problems.push(format!(
            "{label}: features differ: lost {:?}, gained {:?}",
            expected.difference(&out.features).collect::<Vec<_>>(),
            out.features.difference(&expected).collect::<Vec<_>>()
        ));
    }
    // SAMPLE_TIME: a file made from a stream says the samples' first and last time, or
    // keeps a span the input stated when it holds every sample (perf and quipper may
    // state a wider one).
    if matches!(conv, Conversion::ToFile | Conversion::PipeAndBack)
        && out.features.contains("SAMPLE_TIME")
    {
        if let Some((first, last)) = first_last_time(&out.fields.stdout) {
            let lines = |h: &[String]| -> Vec<String> {
                h.iter()
                    .filter(|l| {
                        l.starts_with("# time of first sample")
                            || l.starts_with("# time of last sample")
                    })
                    .cloned()
                    .collect()
            };
            let samples = vec![
                format!("# time of first sample : {first}"),
                format!("# time of last sample : {last}"),
            ];
            let stated = lines(&input.header);
            let holds = stated.len() == 2 && {
                let t = |l: &String| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok());
                let (f, l) = (t(&stated[0]), t(&stated[1]));
                let (sf, sl) = (first.parse::<f64>().ok(), last.parse::<f64>().ok());
                f.zip(sf).is_some_and(|(f, sf)| f > 0.0 && f <= sf)
                    && l.zip(sl).is_some_and(|(l, sl)| l >= sl)
            };
            let got = lines(&out.header);
            if got != samples && !(holds && got == stated) {
                problems.push(format!(
                    "{label}: SAMPLE_TIME says {got:?}; the samples run {samples:?}, the input stated {stated:?}"
                ));
            }
        }
    }
    // perf 6.1 does not byte-swap HEADER_FEATURE's feat_id ("wrong feature ID"), so it
    // cannot print the header of any big-endian pipe stream.
    if conv == Conversion::BigEndian && pipe_out {
        return;
    }
    let a = expect::normalise_header(&input.header, conv, true, e);
    let b = expect::normalise_header(&out.header, conv, false, e);
    if a != b {
        problems.push(format!(
            "{label}: {}",
            first_difference("perf report --header-only -I", &a.join("\n"), &b.join("\n"))
        ));
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn conversions_keep_what_perf_shows() {
    assert!(perf_available());
    let inputs: Vec<PathBuf> = perf_inputs();
    let dir = tempfile::tempdir().unwrap();
    let tally = Mutex::new(Tally::default());
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
                check_input(path, dir.path(), &tally);
            });
        }
    });
    let t = tally.into_inner().unwrap();
    println!(
        "{} conversions compared, perf's views non-empty: {:?}",
        t.compared.len(),
        t.compared
    );
    println!(
        "{} conversions of NO_SCRIPT inputs (header, features): {:?}",
        t.no_script.len(),
        t.no_script
    );
    println!(
        "{} conversions perf 6.1 cannot read, as listed: {:?}",
        t.unreadable.len(),
        t.unreadable
    );
    assert!(
        t.failures.is_empty(),
        "{} problems:\n{}",
        t.failures.len(),
        t.failures.join("\n")
    );
    assert!(!t.compared.is_empty());
}
