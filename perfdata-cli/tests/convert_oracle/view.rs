//! What perf (and perfdata's own reader, for the feature set) shows of a recording.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{perf_run, run_perfdata, script_fields, PerfRun};

/// The sample fields compared with `perf script -F`: everything perf can print of a
/// sample without symbol files or unwinding. Asked per event type, so each event prints
/// the fields it samples.
const FIELDS: &str =
    "comm,pid,tid,cpu,time,ip,sym,dso,symoff,addr,period,weight,phys_addr,data_src,brstack,uregs";

/// One recording as perf shows it.
pub struct View {
    /// `perf script`, default fields.
    pub script: PerfRun,
    /// `perf script --ns -F FIELDS,event`.
    pub fields: PerfRun,
    /// `perf script --ns -F FIELDS` (without the event name, which perf 6.1 takes from
    /// attrs in pipe mode): only made for the inputs of `--to-pipe`.
    pub fields_no_event: Option<PerfRun>,
    /// `perf report --header-only -I`, lines that only describe the layout left out.
    pub header: Vec<String>,
    /// The features perfdata reads (info --json), by perf's names.
    pub features: BTreeSet<String>,
}

/// Header lines that change with any rewrite: the layout, the file's mtime, framing.
/// "# missing features" is compared as a set (see `features`), not as a line.
const LAYOUT: &[&str] = &[
    "# captured on",
    "# header version",
    "# data offset",
    "# data size",
    "# feat offset",
    "# missing features",
    "# ========",
];

pub fn fields(path: &Path, event: bool, iregs: bool) -> PerfRun {
    let mut f = FIELDS.to_string();
    if event {
        f.push_str(",event");
    }
    if iregs {
        f.push_str(",iregs");
    }
    let mut args = vec!["script".to_string(), "--ns".to_string()];
    args.extend(script_fields(&f));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    perf_run(&args, path)
}

pub fn view(path: &Path, no_event_too: bool, iregs: bool) -> View {
    let header = perf_run(&["report", "--header-only", "-I"], path);
    View {
        script: perf_run(&["script"], path),
        fields: fields(path, true, iregs),
        fields_no_event: no_event_too.then(|| fields(path, false, iregs)),
        header: header
            .stdout
            .lines()
            .filter(|l| !LAYOUT.iter().any(|p| l.starts_with(p)) && *l != "#")
            .map(str::to_string)
            .collect(),
        features: features(path, &header.stdout),
    }
}

/// The features of a recording as perfdata reads them, cross-checked against perf's
/// "# missing features" line where perf prints one (file mode): the feature set a
/// conversion writes is then the one perf sees.
fn features(path: &Path, perf_header: &str) -> BTreeSet<String> {
    let args = [OsStr::new("info"), OsStr::new("--json"), path.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "perfdata info {}: {out:?}",
        path.display()
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ours: BTreeSet<String> = v["features"]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.to_uppercase())
        .collect();
    if let Some(line) = perf_header
        .lines()
        .find(|l| l.starts_with("# missing features:"))
    {
        let perf_missing: BTreeSet<&str> = line["# missing features:".len()..]
            .split_whitespace()
            .collect();
        let our_missing: BTreeSet<&str> = v["missing_features"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            // perf 6.1 does not know CPU_DOMAIN_INFO (bit 32), so never lists it missing.
            .filter(|m| *m != "CPU_DOMAIN_INFO")
            .collect();
        assert_eq!(
            perf_missing,
            our_missing,
            "{}: perf and perfdata disagree on the missing features",
            path.display()
        );
    }
    ours
}

/// The first and last sample time perf's `--ns` lines show, in perf's header format
/// (seconds and microseconds), or `None` without timed samples.
pub fn first_last_time(fields: &str) -> Option<(String, String)> {
    let times: Vec<u64> = fields
        .lines()
        .filter_map(|l| {
            l.split_whitespace().find_map(|t| {
                let (s, ns) = t.strip_suffix(':')?.split_once('.')?;
                (ns.len() == 9).then_some(())?;
                Some(s.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?)
            })
        })
        .collect();
    let fmt = |t: u64| format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000);
    Some((fmt(*times.iter().min()?), fmt(*times.iter().max()?)))
}
