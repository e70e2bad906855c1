//! Folded stacks (the flame graph tools' input): `comm;outer;...;leaf count` per distinct
//! stack, frames named as `perf script` names them (`[unknown]` where no symbol is found),
//! sorted. A name cannot break the format: `;` becomes `:` and control characters `?`
//! ([`frame_text`]). The lines are made once per counted stack, sorted on disk (an
//! external merge sort in an anonymous temporary file) and those of one text added up as
//! they are read back, so that memory does not hold them.

use std::borrow::Cow;
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
            record.extend_from_slice(frame_text(&stacks.event_names[c.track.event]).as_bytes());
            record.push(b';');
        }
        record.extend_from_slice(frame_text(&c.track.comm).as_bytes());
        for f in stacks.frames_of(c.stack) {
            record.push(b';');
            record.extend_from_slice(frame_text(stacks.frame(f).name()).as_bytes());
        }
        spool.push(&record)?;
    }
    let records = spool.finish()?.sorted_by(|a, b| a[8..].cmp(&b[8..]))?;
    Ok(FoldedLines { records })
}

impl FoldedLines {
    /// Whether there is no line (no sample was counted).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

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

/// A comm, symbol or event name as one frame of a folded line. `;` separates frames and
/// a line break ends the line, so a comm `a;b\nfake 9999` would forge a stack of its
/// own: `;` becomes `:`, as stackcollapse-perf.pl's tidy_generic writes it, and control
/// characters (line breaks, tabs, escapes; a `perf script` line, which stackcollapse
/// reads, cannot hold them) become `?`, as `ls` shows them. A name that ends in a blank
/// and a number (`fake 8888`) would, as a stack's last frame, be read as its count by
/// flamegraph.pl and inferno (`stack count1 count2` is their differential form): that
/// blank becomes `_`, as stackcollapse-perf.pl writes a comm's blanks.
pub fn frame_text(name: &str) -> Cow<'_, str> {
    let count_at = count_suffix(name);
    if count_at.is_none() && !name.contains(|c: char| c == ';' || c.is_control()) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.char_indices()
            .map(|(i, c)| match c {
                ';' => ':',
                c if c.is_control() => '?',
                _ if Some(i) == count_at => '_',
                c => c,
            })
            .collect(),
    )
}

/// Where the blank is before a trailing number (`\s(\d+(\.\d*)?)$`, the count
/// flamegraph.pl's and inferno's parsers take from the end of a line).
fn count_suffix(name: &str) -> Option<usize> {
    let body = name.trim_end_matches(|c: char| c.is_ascii_digit());
    let body = match body.strip_suffix('.') {
        // `12.` and `12.5`: digits before the point too.
        Some(whole) => whole.trim_end_matches(|c: char| c.is_ascii_digit()),
        None if body.len() < name.len() => body,
        None => return None,
    };
    let digits_from = body.len();
    if !name[digits_from..].starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let (i, c) = body.char_indices().next_back()?;
    c.is_whitespace().then_some(i)
}

/// Write `lines` as `stack count` lines.
pub fn write_folded(out: &mut dyn Write, lines: &FoldedLines) -> io::Result<()> {
    lines.for_each(|stack, n| writeln!(out, "{stack} {n}"))
}

#[cfg(test)]
mod tests {
    use super::frame_text;

    #[test]
    fn separators_and_control_characters_are_replaced() {
        assert_eq!(frame_text("a;b\nfake 9999"), "a:b?fake_9999");
        assert_eq!(frame_text("x;y"), "x:y");
        assert_eq!(frame_text("t\tab\r\u{1b}[0m\u{7f}"), "t?ab??[0m?");
        assert_eq!(
            frame_text("std::vec::Vec<T>::push"),
            "std::vec::Vec<T>::push"
        );
        assert!(matches!(
            frame_text("[unknown]"),
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn a_trailing_number_is_not_left_after_a_blank() {
        for (name, text) in [
            ("f 12", "f_12"),
            ("f 12.", "f_12."),
            ("f 1.5", "f_1.5"),
            ("f\u{a0}7", "f_7"),
            ("f 1 2", "f 1_2"),
            ("f12", "f12"),
            ("f .5", "f .5"),
            ("f 1.2.3", "f 1.2.3"),
            ("12", "12"),
            ("f ", "f "),
        ] {
            assert_eq!(frame_text(name), text, "{name:?}");
        }
    }
}
