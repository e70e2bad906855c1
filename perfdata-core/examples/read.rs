//! Read a recording and count its records by type and its samples by event, as
//! `perf report --stats` counts them (for an input without compressed records):
//!
//! ```sh
//! cargo run -p perfdata-core --example read -- perf.data
//! ```
//!
//! Prints one `TYPE COUNT` line per record type, then `samples EVENT COUNT` per event
//! and the first and last sample time. Works on files, pipe streams (`-` for stdin)
//! and perf.data directories.

use std::collections::BTreeMap;

use perfdata_core::record::RecordType;
use perfdata_core::PerfReader;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .unwrap_or_else(|| "perf.data".into());
    let mut reader = PerfReader::open(&path)?;
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    let mut by_event: BTreeMap<usize, u64> = BTreeMap::new();
    let mut span: Option<(u64, u64)> = None;
    while let Some(item) = reader.next_record()? {
        let ty = item.raw.record_type();
        *by_type.entry(ty.name()).or_default() += 1;
        if ty == RecordType::Sample {
            // The raw layer finds the event and time without decoding the sample.
            let at = item.locate();
            if let Some(event) = at.event {
                *by_event.entry(event).or_default() += 1;
            }
            if let Some(t) = at.time {
                span = Some(span.map_or((t, t), |(a, b)| (a.min(t), b.max(t))));
            }
        }
    }
    for (name, count) in &by_type {
        println!("{name} {count}");
    }
    let meta = reader.meta();
    for (event, count) in &by_event {
        println!("samples {} {count}", meta.event_name(*event));
    }
    if let Some((first, last)) = span {
        println!("time {first} {last}");
    }
    for w in &meta.warnings {
        eprintln!("warning: {w}");
    }
    Ok(())
}
