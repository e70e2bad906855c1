//! Folded stacks (the flame graph tools' input): `comm;outer;...;leaf count` per distinct
//! stack, frames named as `perf script` names them (`[unknown]` where no symbol is found).
//! A name cannot break the format: `;` becomes `:` and control characters `?`
//! ([`frame_text`]).

use std::borrow::Cow;
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
        let mut parts: Vec<Cow<'_, str>> = Vec::with_capacity(s.frames.len() + 2);
        if by_event {
            parts.push(frame_text(&stacks.event_names[s.event]));
        }
        parts.push(frame_text(&s.comm));
        parts.extend(
            s.frames
                .iter()
                .map(|&f| frame_text(stacks.frames[f].name())),
        );
        *lines.entry(parts.join(";")).or_insert(0) += 1;
    }
    lines
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
pub fn write_folded(out: &mut dyn Write, lines: &BTreeMap<String, u64>) -> io::Result<()> {
    for (stack, n) in lines {
        writeln!(out, "{stack} {n}")?;
    }
    Ok(())
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
