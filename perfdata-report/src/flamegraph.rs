//! An SVG flame graph of the folded stacks, drawn by the inferno crate: each frame's
//! width is its number of samples; with several events, each event is a root of its own.
//! A recording without samples is an error (there is nothing to draw).

use std::io::{self, Write};

use crate::folded;
use crate::stacks::Stacks;

/// Draw `stacks` as an SVG flame graph titled `title`.
pub fn write_flamegraph(out: &mut dyn Write, stacks: &Stacks, title: &str) -> io::Result<()> {
    let lines: Vec<String> = folded::folded(stacks)
        .into_iter()
        .map(|(stack, n)| format!("{stack} {n}"))
        .collect();
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = title.to_string();
    opts.count_name = "samples".to_string();
    // Every frame is drawn, however narrow, so that the widths add up to the samples.
    opts.min_width = 0.0;
    if lines.is_empty() {
        // inferno draws an error picture for empty input; say it plainly instead.
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the recording has no samples to draw",
        ));
    }
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
}
