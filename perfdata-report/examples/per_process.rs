//! Replay a recording and count its samples per process, each sample resolved to its
//! thread as perf's machine model does:
//!
//! ```sh
//! cargo run -p perfdata-report --example per_process -- perf.data
//! ```
//!
//! Prints `PID COUNT` lines in pid order.

use std::collections::BTreeMap;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .unwrap_or_else(|| "perf.data".into());
    let mut per_pid: BTreeMap<i32, u64> = BTreeMap::new();
    // Each sample is handed over as the replay resolves it, and counted.
    let reader = perfdata_core::PerfReader::open(std::path::Path::new(&path))?;
    perfdata_report::replay::replay(reader, &Default::default(), |_machine, delivered| {
        if let Some(sample) = delivered.sample() {
            *per_pid.entry(sample.pid).or_default() += 1;
        }
    })?;
    for (pid, count) in &per_pid {
        println!("{pid} {count}");
    }
    Ok(())
}
