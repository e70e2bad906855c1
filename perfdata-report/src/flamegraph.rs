//! An SVG flame graph of the folded stacks, drawn by the inferno crate: each frame's
//! width is its number of samples; with several events, each event is a root of its own.
//! A recording without samples is an error (there is nothing to draw).

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
