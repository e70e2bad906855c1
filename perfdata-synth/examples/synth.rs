//! Build a synthetic trace: a perf.data file with known content, made without perf.
//!
//! ```sh
//! cargo run -p perfdata-synth --example synth -- out.data 1000
//! ```
//!
//! Writes a file-mode recording of SAMPLES cpu-clock samples (a seeded workload of
//! processes, threads and DSOs: the same bytes for the same arguments) and prints how
//! many samples it holds.

use perfdata_synth::{write_workload, SynthSpec, SynthWriter};
use perfdata_write::output::AtomicOutput;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [output, samples] = args.as_slice() else {
        return Err("usage: synth OUT SAMPLES".into());
    };
    let spec = SynthSpec {
        seed: 7,
        samples: samples.parse()?,
        ..SynthSpec::default()
    };
    let (workload, trace) = spec.build()?;
    let mut out = AtomicOutput::create(output.as_ref())?;
    let (mut w, written) =
        write_workload(&workload, SynthWriter::file(out.seekable_writer()?, trace)?)?;
    std::io::Write::flush(&mut w)?;
    drop(w);
    out.commit(None)?;
    println!("samples {written}");
    Ok(())
}
