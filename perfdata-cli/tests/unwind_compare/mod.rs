//! What the DWARF unwinding oracle tests compare: `perfdata report --children` rows
//! against perf's, and folded stacks against `perf script`'s unwinding (see
//! unwind_oracle.rs's note for the exceptions, each by design).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{perf_output, run_perfdata};

use super::report_rows::{our_children_rows_with, perf_children_rows_with, resolved};

/// Our rows against perf's (see unwind_oracle.rs's note), with the functions inlined at
/// unwound frames (if `inline`) and without (`--no-inline`, given to both): the
/// differences, and how many rows were compared.
pub fn compare_children(path: &Path, inline: bool) -> (Vec<String>, usize) {
    let sort = "comm,dso,sym";
    // Exception (c): the samples whose stacks perf unwinds otherwise.
    let (agree, total) = agreeing(&perf_script_folded(path), &our_folded(path, &[]));
    let slack = total - agree;
    assert!(slack * 100 <= total, "{slack} of {total} stacks differ");
    let slack_pct = slack as f64 * 100.0 / total.max(1) as f64 + 0.006;
    let same = |a: &(Vec<f64>, u64, u64), b: &(Vec<f64>, u64, u64)| {
        let unit = [a, b].iter().find(|r| r.1 > 0).map_or(0, |r| r.2 / r.1);
        a.1.abs_diff(b.1) <= slack
            && a.2.abs_diff(b.2) <= slack * unit
            && a.0.len() == b.0.len()
            && a.0
                .iter()
                .zip(&b.0)
                .all(|(x, y)| (x - y).abs() <= slack_pct)
    };
    let (mut problems, mut compared) = (Vec::new(), 0);
    let views = [
        (&[][..], "perf"),
        (&["--no-inline"][..], "perf --no-inline"),
    ];
    for (extra, perf_name) in views.into_iter().skip(usize::from(!inline)) {
        let perf = resolved(perf_children_rows_with(path, sort, extra));
        let ours = resolved(our_children_rows_with(path, sort, extra));
        assert_eq!(
            perf.keys().collect::<Vec<_>>(),
            ours.keys().collect::<Vec<_>>(),
            "events"
        );
        for (ev, rows) in &perf {
            for (cells, theirs) in rows.iter().filter(|(_, v)| v.0[0] > 0.1) {
                compared += 1;
                match ours[ev].get(cells) {
                    Some(mine) if same(mine, theirs) => {}
                    got => {
                        problems.push(format!("  {cells:?}: {perf_name} {theirs:?}, ours {got:?}"))
                    }
                }
            }
            for (cells, mine) in ours[ev].iter().filter(|(_, v)| v.0[0] > 0.1) {
                if !rows.contains_key(cells) {
                    problems.push(format!("  {cells:?}: ours {mine:?}, not in {perf_name}"));
                }
            }
        }
    }
    (problems, compared)
}

/// `perf script --no-inline -F comm,ip,sym` folded as `comm;outer;...;leaf` (each frame
/// its symbol, `[unknown]` as perf prints it) with counts. Where the walk needs a return
/// address beyond the stack copy, perf reads it as 0 and gives an outermost frame
/// `ffffffffffffffff [unknown]` (0 less its 1), and so does perfdata: it is compared.
pub fn perf_script_folded(input: &Path) -> BTreeMap<String, u64> {
    let out = perf_output(&["script", "--no-inline", "-F", "comm,ip,sym"], input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut folded = BTreeMap::new();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    while let Some(head) = lines.next() {
        let comm = head.trim().to_string();
        let mut frames = Vec::new();
        while let Some(l) = lines.next_if(|l| l.starts_with('\t')) {
            let (ip, sym) = l.trim().split_once(' ').unwrap_or_default();
            frames.push((ip.to_string(), sym.trim().to_string()));
        }
        let mut frames: Vec<String> = frames.into_iter().map(|f| f.1).collect();
        frames.push(comm);
        frames.reverse();
        *folded.entry(frames.join(";")).or_insert(0) += 1;
    }
    folded
}

/// `perfdata export --format folded` of `input`, with `extra` options.
pub fn our_folded(input: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut args: Vec<&OsStr> = ["export", "--format", "folded", "-o", "-"]
        .into_iter()
        .map(OsStr::new)
        .collect();
    args.extend(extra.iter().map(OsStr::new));
    args.push(input.as_os_str());
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("stack and count");
            (stack.to_string(), n.parse().expect("count"))
        })
        .collect()
}

/// Samples whose folded stack is the same on both sides, and all samples (perf's).
pub fn agreeing(perf: &BTreeMap<String, u64>, ours: &BTreeMap<String, u64>) -> (u64, u64) {
    let same = perf
        .iter()
        .map(|(k, n)| (*n).min(ours.get(k).copied().unwrap_or(0)))
        .sum();
    (same, perf.values().sum())
}
