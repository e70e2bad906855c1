//! An SVG flame graph of the folded stacks, drawn by the inferno crate: each frame's
//! width is its number of samples; with several events, each event is a root of its own.
//! A recording without samples is an error (there is nothing to draw). A differential
//! flame graph (inferno's, as Brendan Gregg's `difffolded.pl` feeds `flamegraph.pl`)
//! draws the new recording's stacks coloured by their change from a baseline's: red
//! where a frame grew, blue where it shrank.

use std::io::{self, Write};

use crate::folded::FoldedLines;

/// Why a recording without samples gives no flame graph.
pub const NOTHING_TO_DRAW: &str = "the recording has no samples to draw";

/// Draw the folded stacks `folded` ([`crate::folded::lines`]) as an SVG flame graph
/// titled `title`. inferno borrows every line while it draws, so the lines (one per
/// distinct stack) are held in one string.
pub fn write_flamegraph(out: &mut dyn Write, folded: &FoldedLines, title: &str) -> io::Result<()> {
    let mut text = String::new();
    let mut lines = Vec::new();
    folded.for_each(|stack, n| {
        let start = text.len();
        text.push_str(stack);
        text.push(' ');
        text.push_str(itoa::Buffer::new().format(n));
        lines.push((start, text.len()));
        Ok(())
    })?;
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    // Every frame is drawn, however narrow, so that the widths add up to the samples.
    opts.min_width = 0.0;
    if lines.is_empty() {
        // inferno draws an error picture for empty input; say it plainly instead.
        return Err(io::Error::new(io::ErrorKind::InvalidData, NOTHING_TO_DRAW));
    }
    let lines = lines.iter().map(|&(a, b)| &text[a..b]);
    inferno::flamegraph::from_lines(&mut opts, lines, out)
}

/// Draw the differential flame graph of `base` (before) and `new` (after): every stack
/// of either, as wide as its samples in `new`, coloured by the change of its share from
/// `base` (inferno's two-count input, `stack BEFORE AFTER`, the baseline's counts scaled
/// to the new total). The stacks of both are held once, by stack.
pub fn write_differential(
    out: &mut dyn Write,
    base: &FoldedLines,
    new: &FoldedLines,
    title: &str,
) -> io::Result<()> {
    let mut counts: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    base.for_each(|stack, n| {
        counts.entry(stack.to_string()).or_default().0 += n;
        Ok(())
    })?;
    new.for_each(|stack, n| {
        counts.entry(stack.to_string()).or_default().1 += n;
        Ok(())
    })?;
    if counts.values().all(|&(_, after)| after == 0) {
        return Err(io::Error::new(io::ErrorKind::InvalidData, NOTHING_TO_DRAW));
    }
    // The baseline's counts scaled to the new recording's total (difffolded.pl's -n):
    // two runs of different lengths compare by share, as perf diff's percents do.
    let (total_before, total_after) = counts.values().fold((0u128, 0u128), |(b, a), &(x, y)| {
        (b + x as u128, a + y as u128)
    });
    let scaled = |before: u64| -> u64 {
        match total_before {
            0 => 0,
            t => ((before as u128 * total_after + t / 2) / t) as u64,
        }
    };
    let lines: Vec<String> = counts
        .iter()
        .map(|(stack, &(before, after))| format!("{stack} {} {after}", scaled(before)))
        .collect();
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    opts.min_width = 0.0;
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
}
