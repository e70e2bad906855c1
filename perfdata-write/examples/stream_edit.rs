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
use perfdata_write::convert::{ConvertOptions, Target};
use perfdata_write::edit::{self, RecordEdit, Selection, Selectors, Strip};
use perfdata_write::output::AtomicOutput;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, pid] = args.as_slice() else {
        return Err("usage: stream_edit IN OUT PID".into());
    };
    let pid: u64 = pid.parse()?;
    // A file, a pipe stream, a directory or "-": compressed records are expanded so that
    // the edit sees every record once (and compressed again on the way out).
    let reader = edit::open(input)?;
    let only_pid = Strip::new(Selection {
        select: Selectors {
            pids: Some(vec![(pid, pid)]),
            ..Default::default()
        },
        keep: true,
        ..Default::default()
    });
    let edits: Vec<Box<dyn RecordEdit>> = vec![Box::new(only_pid)];
    let mut out = AtomicOutput::create(output.as_ref())?;
    let opts = ConvertOptions::default(); // same container, compression and byte order
    let target = opts.target_for(reader.meta().container);
    let (mut w, report) = match target {
        Target::Pipe => edit::run_to_pipe(reader, out.writer(), &opts, edits)?,
        _ => edit::run(reader, target, out.seekable_writer()?, &opts, edits)?,
    };
    std::io::Write::flush(&mut w)?;
    drop(w);
    out.commit(None)?;
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
