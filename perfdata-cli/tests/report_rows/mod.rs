//! `perf report --stdio -n` of perf 6.1 parsed into rows, for the tests that compare
//! perfdata's tables with perf's.

use std::collections::BTreeMap;
use std::path::Path;

use perfdata_tests::perf_output;

/// Rows of one event: cells -> (samples, percent).
pub type Rows = BTreeMap<Vec<String>, (u64, f64)>;

/// What perf says on stderr that is not about the file: the recording's kernel is not
/// this one.
pub fn benign(line: &str) -> bool {
    line.trim().is_empty() || line.starts_with("No kallsyms or vmlinux with build-id")
}

/// `perf report --stdio -n --sort KEYS`, parsed per event by the columns its dotted rule
/// lays out.
pub fn perf_rows(path: &Path, sort: &str) -> BTreeMap<String, Rows> {
    let out = perf_output(
        &[
            "report",
            "--stdio",
            "-n",
            "--no-children",
            "-g",
            "none",
            "--sort",
            sort,
        ],
        path,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "perf report failed on {}: {stderr}",
        path.display()
    );
    let odd: Vec<&str> = stderr.lines().filter(|l| !benign(l)).collect();
    assert!(odd.is_empty(), "perf report on {}: {odd:?}", path.display());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut events = BTreeMap::new();
    let mut event: Option<String> = None;
    let mut columns: Vec<(usize, usize)> = Vec::new();
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("# Samples: ") {
            let name = rest.split(" of event '").nth(1).unwrap_or_default();
            event = Some(name.trim_end_matches('\'').to_string());
            columns.clear();
        } else if line.starts_with("# ..") {
            columns = rule_columns(line);
        } else if !line.starts_with('#') && !line.trim().is_empty() && !columns.is_empty() {
            let cell = |&(s, e): &(usize, usize)| {
                line.get(s..e.min(line.len()))
                    .unwrap_or_default()
                    .trim()
                    .to_string()
            };
            let mut cells: Vec<String> = columns.iter().map(cell).collect();
            let last = columns.last().expect("columns").0;
            *cells.last_mut().expect("cells") = line.get(last..).unwrap_or_default().trim().into();
            let percent: f64 = cells[0].trim_end_matches('%').parse().expect("overhead");
            let samples: u64 = cells[1].parse().expect("samples");
            let ev = event.clone().expect("a row follows an event header");
            events
                .entry(ev)
                .or_insert_with(Rows::new)
                .insert(cells[2..].to_vec(), (samples, percent));
        }
    }
    events
}

/// (start, end) of each run of dots in perf's rule line.
fn rule_columns(line: &str) -> Vec<(usize, usize)> {
    let mut cols = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (c == '.', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                cols.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    cols
}
