//! Stacks folded from `perf script -F comm,event,ip,sym` of perf 6.1: what the exports
//! are compared with.

use std::path::Path;

use perfdata_tests::perf_output;

use super::decode::Folded;

/// How the stacks of an input are compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Depth {
    /// Every frame.
    Full,
    /// The sample's own frame only (DWARF recordings).
    Leaf,
}

/// perf script's samples, folded: each sample's first line is `comm event:` (then one
/// `ip sym` line per frame, leaf first) or, without a callchain, `comm event: ip sym`.
/// Keys start with the event's name when more than one event has samples.
pub fn perf_folded(path: &Path, depth: Depth) -> (Folded, bool) {
    let mut args = vec!["script", "-F", "comm,event,ip,sym"];
    if depth == Depth::Leaf {
        args.push("-G");
    }
    let out = perf_output(&args, path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "perf script: {stderr}");
    let odd: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("No kallsyms or vmlinux"))
        .collect();
    assert!(odd.is_empty(), "perf script on {}: {odd:?}", path.display());
    let text = String::from_utf8_lossy(&out.stdout);
    let mut samples: Vec<(String, String, Vec<String>)> = Vec::new();
    let frame = |l: &str| -> String {
        let l = l.trim();
        l.split_once(' ')
            .map_or("", |(_, sym)| sym)
            .trim()
            .to_string()
    };
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    while let Some(head) = lines.next() {
        let (who, rest) = head
            .rsplit_once(": ")
            .unwrap_or((head.trim_end().trim_end_matches(':'), ""));
        let (comm, event) = who.trim().rsplit_once(' ').expect("comm and event");
        let mut frames = Vec::new();
        if rest.trim().is_empty() {
            // Frames follow, indented by a tab.
            while let Some(l) = lines.next_if(|l| l.starts_with('\t')) {
                frames.push(frame(l));
            }
        } else {
            frames.push(frame(rest));
        }
        frames.reverse();
        samples.push((event.trim().to_string(), comm.trim().to_string(), frames));
    }
    let mut events: Vec<&str> = samples.iter().map(|s| s.0.as_str()).collect();
    events.sort_unstable();
    events.dedup();
    let multi = events.len() > 1;
    let mut folded = Folded::new();
    for (event, comm, frames) in &samples {
        let mut parts: Vec<&str> = Vec::new();
        if multi {
            parts.push(event);
        }
        parts.push(comm);
        parts.extend(frames.iter().map(String::as_str));
        *folded.entry(parts.join(";")).or_insert(0) += 1;
    }
    (folded, multi)
}

/// Keep the prefix (comm, and the event when `multi`) and the leaf of each stack.
pub fn leaves(folded: &Folded, multi: bool) -> Folded {
    let keep = if multi { 2 } else { 1 };
    let mut out = Folded::new();
    for (stack, n) in folded {
        let parts: Vec<&str> = stack.split(';').collect();
        let mut cut: Vec<&str> = parts[..keep.min(parts.len())].to_vec();
        if parts.len() > keep {
            cut.push(parts[parts.len() - 1]);
        }
        *out.entry(cut.join(";")).or_insert(0) += n;
    }
    out
}
