//! Folded stacks (the flame graph tools' input): `comm;outer;...;leaf count` per distinct
//! stack, frames named as `perf script` names them (`[unknown]` where no symbol is found).

use std::collections::BTreeMap;
use std::io::{self, Write};

use crate::process::Location;
use crate::replay::Replay;
use crate::symbolize::{SymbolName, Symbolizer};

/// The folded lines of `replay`, sorted, each with its sample count. When more than one
/// event has samples, each line starts with the event's name (`event;comm;...`), so that
/// the sets of different events are not merged.
pub fn folded(replay: &Replay, symbols: &mut Symbolizer) -> BTreeMap<String, u64> {
    let events_with_samples = {
        let mut seen: Vec<usize> = replay.samples.iter().map(|s| s.event).collect();
        seen.sort_unstable();
        seen.dedup();
        seen.len()
    };
    let m = &replay.machine;
    let mut lines = BTreeMap::new();
    for s in &replay.samples {
        let mut parts = Vec::with_capacity(s.callchain.len() + 2);
        if events_with_samples > 1 {
            parts.push(replay.event_names[s.event].clone());
        }
        parts.push(m.comms[s.ip.comm].clone());
        // Without a callchain the sample's ip is the only frame.
        let frames = if s.callchain.is_empty() {
            std::slice::from_ref(&s.ip)
        } else {
            &s.callchain[..]
        };
        parts.extend(frames.iter().rev().map(|f| frame_name(replay, symbols, f)));
        *lines.entry(parts.join(";")).or_insert(0) += 1;
    }
    lines
}

fn frame_name(replay: &Replay, symbols: &mut Symbolizer, at: &Location) -> String {
    let Some(d) = at.dso else {
        return "[unknown]".into();
    };
    match symbols.name(d, &replay.machine.dsos[d], at.addr) {
        SymbolName::Function { name, .. } => name,
        SymbolName::Address(_) => "[unknown]".into(),
    }
}

/// Write `lines` as `stack count` lines.
pub fn write_folded(out: &mut dyn Write, lines: &BTreeMap<String, u64>) -> io::Result<()> {
    for (stack, n) in lines {
        writeln!(out, "{stack} {n}")?;
    }
    Ok(())
}
