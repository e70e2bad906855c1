//! The names a recording holds, as perf 6.1 shows them, for `anonymize_oracle`: comms,
//! paths outside the kept prefixes, the hostname, command-line words, cgroup paths and
//! the strings tracepoint arguments name, less the text that is kept on purpose (event
//! and PMU names, kept paths, the kernel's own strings).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use perfdata_tests::{perf_run, perf_stats};

/// stdout of a perf run listing what a recording holds, which must succeed; perf may
/// warn (corpus files lack their kernel's symbols, Intel PT its binaries) but not fail.
fn perf_listing(args: &[&str], input: &Path) -> String {
    let run = perf_run(args, input);
    let failed = run
        .stderr
        .lines()
        .any(|l| l.contains("Error") || l.contains("error:") || l.contains("failed"));
    assert!(
        run.status == Some(0) && !failed,
        "perf {args:?} {}: {run:?}",
        input.display()
    );
    run.stdout
}

/// Samples per comm, from `perf script --no-itrace -F comm` (callchains hidden); empty for a
/// recording without samples (`perf stat record`), where perf script prints counts.
pub fn comm_counts(input: &Path) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    if perf_stats(input).samples.iter().all(|(_, n)| *n == 0) {
        return counts;
    }
    // The samples recorded, not those perf makes from AUX trace data, which is zeroed.
    let comms = perf_listing(&["script", "--no-itrace", "-F", "comm", "-G"], input);
    for line in comms.lines() {
        *counts.entry(line.trim().to_string()).or_insert(0) += 1;
    }
    counts
}

/// Paths perf and the kernel name memory with, and the default kept prefixes.
pub fn kept_path(p: &str) -> bool {
    p.starts_with('[')
        || ["/usr/lib/", "/usr/lib64/", "/lib/", "/lib64/", "//anon"]
            .iter()
            .any(|k| p.starts_with(k))
}

/// The kernel's own text in a recording, which names no user's thing and is kept whole:
/// the tracing data's format descriptions (`field:` lines, the header_event's `type ==`
/// lines: `local_t commit`, `char data`) and the string literals of its printk formats
/// (lines `0xADDRESS : "TEXT"`, which perf needs to print trace arguments), and the
/// string tables of the kernel's BTF (the BPF_BTF feature: type names such as
/// `scan_record`). A kernel thread named by a literal (`rcu_preempt`) is named alike on
/// every machine running that kernel.
struct KernelText {
    literals: BTreeSet<String>,
    formats: String,
    btf: String,
}

impl KernelText {
    fn of(input: &[u8]) -> Self {
        let text = String::from_utf8_lossy(input);
        let mut literals = BTreeSet::new();
        let mut formats = String::new();
        for line in text.split('\n') {
            if line.contains("field:") || line.contains("type ==") || line.contains("type_len") {
                formats.push_str(line);
                formats.push('\n');
            }
            let Some((address, literal)) = line.split_once(" : \"") else {
                continue;
            };
            let hex = address.rsplit_once("0x").map_or("", |(_, h)| h);
            if !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit()) {
                literals.insert(literal.trim_end_matches('"').to_string());
            }
        }
        // struct btf_header: magic 0xeb9f, version 1, flags, hdr_len, type_off, type_len,
        // str_off, str_len.
        let mut btf = String::new();
        let u32_at = |i: usize| -> Option<usize> {
            let b = input.get(i..i + 4)?;
            Some(u32::from_le_bytes(b.try_into().unwrap()) as usize)
        };
        for at in 0..input.len().saturating_sub(24) {
            if input[at..at + 3] != [0x9f, 0xeb, 1] {
                continue;
            }
            let (hdr_len, str_off, str_len) = (u32_at(at + 4), u32_at(at + 16), u32_at(at + 20));
            let start = at + hdr_len.unwrap_or(0) + str_off.unwrap_or(0);
            if let Some(strings) = input.get(start..start + str_len.unwrap_or(0)) {
                btf.push_str(&String::from_utf8_lossy(strings));
            }
        }
        KernelText {
            literals,
            formats,
            btf,
        }
    }

    fn has(&self, word: &str) -> bool {
        self.literals.contains(word) || self.formats.contains(word) || self.btf.contains(word)
    }
}

/// The bytes of a recording: a file's, or a directory's files' in turn.
fn recording_bytes(input: &Path) -> Vec<u8> {
    if !input.is_dir() {
        return std::fs::read(input).unwrap();
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(input)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| std::fs::read(f).unwrap())
        .collect()
}

/// The names `input` holds, as perf shows them: (kind, word) with words of 4 bytes or
/// more (shorter ones occur in any binary by chance). Words that are part of an event's
/// or a PMU's name are left out: those names are kept on purpose; so are the kernel's
/// text (see [`KernelText`]) and words inside the kept paths of MMAPs.
pub fn secrets(input: &Path) -> Vec<(&'static str, String)> {
    secrets_counted(input, &comm_counts(input))
}

/// [`secrets`] of `input`, whose [`comm_counts`] are `counts` (the anonymize oracle
/// needs them too: two perf runs each, not made twice).
pub fn secrets_counted(
    input: &Path,
    counts: &BTreeMap<String, u64>,
) -> Vec<(&'static str, String)> {
    let mut words = Vec::new();
    let header = perf_listing(&["report", "--header-only", "-I"], input);
    // Event names (evlist's, and the header's for pipes whose attrs have no ids) and
    // PMU names are kept: perf's and the kernel's vocabulary, not the user's.
    let mut kept_text = perf_listing(&["evlist"], input);
    for line in header.lines() {
        if line.starts_with("# event : ") || line.starts_with("# pmu mappings: ") {
            kept_text.push_str(line);
        }
    }
    for line in header.lines() {
        if let Some(h) = line.strip_prefix("# hostname : ") {
            words.push(("hostname", h.trim().to_string()));
        }
        if let Some(c) = line.strip_prefix("# cmdline : ") {
            for w in c.split(|ch: char| ch.is_whitespace() || ch == '/') {
                words.push(("cmdline", w.to_string()));
            }
        }
    }
    let args = [
        "script",
        "--show-task-events",
        "--show-mmap-events",
        "--show-cgroup-events",
        "-F",
        "comm,pid,tid,event",
    ];
    let mut kept = Vec::new();
    for line in perf_listing(&args, input).lines() {
        if let Some((_, rest)) = line.split_once("PERF_RECORD_COMM") {
            // `PERF_RECORD_COMM[ exec]: NAME:PID/TID`
            let rest = rest.trim_start_matches(" exec").trim_start_matches(": ");
            if let Some((comm, _)) = rest.rsplit_once(':') {
                words.push(("comm", comm.to_string()));
            }
        }
        if line.contains("PERF_RECORD_MMAP") {
            let path = line.rsplit(' ').next().unwrap_or("");
            if !kept_path(path) {
                words.extend(path.split('/').map(|w| ("path", w.to_string())));
            } else {
                kept.push(path.to_string());
            }
        }
        if let Some((_, rest)) = line.split_once("PERF_RECORD_CGROUP cgroup: ") {
            let path = rest.split_once(' ').map_or("", |(_, p)| p);
            words.extend(path.split('/').map(|w| ("cgroup", w.to_string())));
        }
    }
    for comm in counts.keys() {
        if !comm.starts_with(':') && comm != "swapper" {
            words.push(("comm", comm.clone()));
        }
    }
    words.extend(trace_strings(input));
    let kernel = KernelText::of(&recording_bytes(input));
    // A name inside a kept path (`python3` in /usr/lib/libpython3.11.so) or an event's
    // name (a uprobe's group, `probe_untitled1:main`) stays with it. A name perf shows
    // with U+FFFD for bytes that are no UTF-8 cannot be looked for as text.
    words.retain(|(_, w)| {
        w.len() >= 4
            && !w.contains('\u{fffd}')
            && !kernel.has(w)
            && !kept.iter().any(|k| k.contains(w))
            && !kept_text.contains(w)
    });
    words.sort();
    words.dedup();
    words
}

/// The comms and paths (outside the kept prefixes) tracepoints name in their arguments,
/// from perf script's `KEY=VALUE` trace words: (kind, word), paths split into their parts.
fn trace_strings(input: &Path) -> Vec<(&'static str, String)> {
    let mut words = Vec::new();
    if !perf_listing(&["evlist", "-v"], input).contains(" type: 2,") {
        return words; // no tracepoint (perf script -F trace would refuse)
    }
    for line in perf_listing(&["script", "-F", "trace:event,trace"], input).lines() {
        for (key, value) in line.split(' ').filter_map(|w| w.split_once('=')) {
            if key.ends_with("comm") && value != "swapper" {
                words.push(("trace comm", value.to_string()));
            } else if value.starts_with('/') && !kept_path(value) {
                words.extend(value.split('/').map(|w| ("trace path", w.to_string())));
            }
        }
    }
    words
}
