//! Synthetic traces: perf.data files with known content, made without perf, a PMU or
//! root.
//!
//! - [`SynthWriter`] is the builder: events ([`EventSpec`] presets or any attr), then
//!   records one at a time (FORK, COMM, EXIT, MMAP2 with build ids, the kernel MMAP,
//!   samples with every sample_type field the event asks for), written at once through
//!   [`perfdata_write::FileWriter`] or [`perfdata_write::PipeWriter`] (compressed if asked), with a
//!   FINISHED_ROUND every N records and the header features perf writes
//!   ([`HostInfo`]).
//! - [`Workload`] is a model deterministic from a seed: processes, threads, DSOs with
//!   functions, samples spread by weight with callchains and ordered timestamps;
//!   optionally its DSOs as real ELF files with symbols ([`dso_elf`]).
//!
//! Same spec and seed, same bytes: nothing depends on the clock, the host or hash
//! order.

#![warn(missing_docs)]

mod aux;
mod cells;
mod dir;
mod dso;
mod elf;
mod event;
mod extra;
mod host;
mod output;
mod rng;
mod sample;
mod spec;
#[cfg(test)]
mod tests;
mod tracing;
mod workload;
mod writer;

pub use cells::{apportion, Alias, Cells};
pub use dir::DirWriter;
pub use dso::{Dso, Function};
pub use elf::{dso_elf, function_name, TEXT_OFFSET};
pub use event::{normalize, parse_events, parse_sample_fields, EventSpec, DEFAULT_SAMPLE_TYPE};
pub use extra::EXTRA_RECORD_FLAGS;
pub use host::{HostInfo, Recorded};
pub use output::{write_dir, write_to, AuxPayload};
pub use rng::Rng;
pub use spec::{SynthSpec, WALL_CLOCK_REF_NS};
pub use tracing::{tracing_data, Tracepoint, TracepointHit};
pub use workload::{Planned, Stop, Thread, Workload, WorkloadSpec, KERNEL_TEXT, START_NS};
pub use writer::{Mapping, SampleSpec, SynthOptions, SynthTarget, SynthWriter, TraceSpec};

use perfdata_write::error::Result;

/// Write `workload` through `writer` and finish it: returns the output and the number
/// of samples.
pub fn write_workload<T: SynthTarget>(
    workload: &Workload,
    mut writer: SynthWriter<T>,
) -> Result<(T::Output, u64)> {
    let samples = workload.write(&mut writer)?;
    Ok((writer.finish()?, samples))
}
