//! Folded stacks (the flame graph tools' input): `comm;outer;...;leaf count` per distinct
//! stack, frames named as `perf script` names them (`[unknown]` where no symbol is found),
//! sorted. The lines are made once per counted stack, sorted on disk (an external merge
//! sort in an anonymous temporary file) and those of one text added up as they are read
//! back, so that memory does not hold them.

use std::io::{self, Write};

use crate::spool::{Records, Spool};
use crate::stacks::Stacks;

/// The folded lines of a recording, sorted on disk ([`lines`]).
pub struct FoldedLines {
    /// Each record: a count (u64, little-endian), then the line; sorted by line.
    records: Records,
}

/// The folded lines of `stacks`. When more than one event has samples, each line starts
/// with the event's name (`event;comm;...`), so that the sets of different events are
/// not merged. They do not borrow `stacks`, which can go before they are written.
pub fn lines(stacks: &Stacks) -> io::Result<FoldedLines> {
    let by_event = stacks.events_with_samples() > 1;
    let mut spool = Spool::new()?;
    let mut record = Vec::new();
    for c in stacks.counts() {
        record.clear();
        record.extend_from_slice(&c.samples.to_le_bytes());
        if by_event {
            record.extend_from_slice(stacks.event_names[c.track.event].as_bytes());
            record.push(b';');
        }
        record.extend_from_slice(c.track.comm.as_bytes());
        for f in stacks.frames_of(c.stack) {
            record.push(b';');
            record.extend_from_slice(stacks.frame(f).name().as_bytes());
        }
        spool.push(&record)?;
    }
    let records = spool.finish()?.sorted_by(|a, b| a[8..].cmp(&b[8..]))?;
    Ok(FoldedLines { records })
}

impl FoldedLines {
    /// Call `each` with every distinct line, in sorted order (as bytes), and its sample
    /// count.
    pub fn for_each(&self, mut each: impl FnMut(&str, u64) -> io::Result<()>) -> io::Result<()> {
        let mut reader = self.records.read_all();
        let mut line: Vec<u8> = Vec::new();
        let mut count = 0u64;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        while let Some(r) = reader.next_record()? {
            let n = u64::from_le_bytes(r[..8].try_into().expect("8 bytes"));
            if count > 0 && r[8..] == line[..] {
                count += n;
                continue;
            }
            if count > 0 {
                each(&text(&line), count)?;
            }
            line.clear();
            line.extend_from_slice(&r[8..]);
            count = n;
        }
        if count > 0 {
            each(&text(&line), count)?;
        }
        Ok(())
    }
}

/// Write `lines` as `stack count` lines.
pub fn write_folded(out: &mut dyn Write, lines: &FoldedLines) -> io::Result<()> {
    lines.for_each(|stack, n| writeln!(out, "{stack} {n}"))
}
