//! Edit a recording as it streams: keep the samples of one process (and the side-band
//! its threads need), write the rest of the recording as it was.
//!
//! ```sh
//! cargo run -p perfdata-write --example stream_edit -- perf.data mine.data 4242
//! ```
//!
//! Prints the samples kept and removed. The output is written to a temp file beside it
//! and renamed into place only when the edit succeeded.

use perfdata_core::record::RecordType;
use perfdata_write::edit::{Selection, Selectors, Strip};
use perfdata_write::{Conversion, Input, Sink};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, pid] = args.as_slice() else {
        return Err("usage: stream_edit IN OUT PID".into());
    };
    let pid: u64 = pid.parse()?;
    let only_pid = Strip::new(Selection {
        select: Selectors {
            pids: Some(vec![(pid, pid)]),
            ..Default::default()
        },
        keep: true,
        ..Default::default()
    });
    // A file, a pipe stream, a directory or "-": compressed records are expanded so that
    // the edit sees every record once (and compressed again on the way out); the same
    // container, compression and byte order as the input.
    let report = Conversion::new(Input::open(input)?)
        .edit(only_pid)
        .write(Sink::path(output)?)?;
    let summary = report.edits.ok_or("the edit did not run")?;
    let samples = summary
        .records
        .get(&RecordType::Sample)
        .copied()
        .unwrap_or_default();
    println!("samples kept {} removed {}", samples.kept, samples.removed);
    for w in &report.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}
