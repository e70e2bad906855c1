//! Folded stacks (the flame graph tools' input): `comm;outer;...;leaf count` per distinct
//! stack, frames named as `perf script` names them (`[unknown]` where no symbol is found).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::stacks::Stacks;

/// The folded lines of `stacks`, sorted, each with its sample count. When more than one
/// event has samples, each line starts with the event's name (`event;comm;...`), so that
/// the sets of different events are not merged.
pub fn folded(stacks: &Stacks) -> BTreeMap<String, u64> {
    let by_event = stacks.events_with_samples() > 1;
    let mut lines = BTreeMap::new();
    for s in &stacks.samples {
        let mut parts: Vec<&str> = Vec::with_capacity(s.frames.len() + 2);
        if by_event {
            parts.push(&stacks.event_names[s.event]);
        }
        parts.push(&s.comm);
        parts.extend(s.frames.iter().map(|&f| stacks.frames[f].name()));
        *lines.entry(parts.join(";")).or_insert(0) += 1;
    }
    lines
}

/// Write `lines` as `stack count` lines.
pub fn write_folded(out: &mut dyn Write, lines: &BTreeMap<String, u64>) -> io::Result<()> {
    for (stack, n) in lines {
        writeln!(out, "{stack} {n}")?;
    }
    Ok(())
}
