//! A whole synthetic trace as data: what `perfdata synth` takes as options, or as a
//! JSON file (`--spec`), turned into the workload and the writer's spec.

use std::path::PathBuf;

use serde::Deserialize;

use super::event::{parse_events, parse_sample_fields};
use super::extra::EXTRA_RECORD_FLAGS;
use super::host::HostInfo;
use super::workload::{Stop, Workload, WorkloadSpec, START_NS};
use super::writer::{SynthOptions, TraceSpec};
use perfdata_write::compress::CompressFormat;
use perfdata_write::error::{Result, WriteError};

/// 2026-01-01T00:00:00Z in ns: the wall clock CLOCK_DATA gives the start of a trace
/// with a clock (fixed, so that the bytes do not depend on when they were made).
pub const WALL_CLOCK_REF_NS: u64 = 1_767_225_600_000_000_000;

/// Everything a synthetic trace is made from but its container. Every field has the
/// default `perfdata synth` has; a JSON spec names only what it changes, and a name
/// that is not a field is an error.
///
/// ```
/// use perfdata_synth::{write_workload, SynthSpec, SynthWriter};
///
/// let spec = SynthSpec { samples: 1000, processes: 3, ..SynthSpec::default() };
/// let (workload, trace) = spec.build()?;
/// let writer = SynthWriter::file(std::io::Cursor::new(Vec::new()), trace)?;
/// let (out, samples) = write_workload(&workload, writer)?;
/// assert_eq!(samples, 1000);
/// let reader = perfdata_core::PerfReader::from_vec(out.into_inner(), Default::default())?;
/// assert!(!reader.meta().attrs().is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SynthSpec {
    /// Seed of the random choices: the same spec gives the same bytes.
    pub seed: u64,
    /// Number of processes.
    pub processes: u32,
    /// Threads of each process.
    pub threads_per_process: u32,
    /// Exactly this many samples, unless `size` is given.
    pub samples: u64,
    /// Bytes of records (before compression) to stop at instead of a sample count.
    pub size: Option<u64>,
    /// Event presets, as [`parse_events`] reads them.
    pub events: String,
    /// Every event's sample_period.
    pub period: u64,
    /// More sample_type fields for every event, as [`parse_sample_fields`] reads them.
    pub fields: String,
    /// Callchains of up to this many frames.
    pub callchain: Option<u32>,
    /// At most this many distinct sampled addresses per function (see
    /// [`WorkloadSpec::ips_per_function`]); any byte of it when `None`.
    pub ips_per_function: Option<u32>,
    /// DSOs mapped into every process.
    pub dsos: u32,
    /// Functions of each DSO.
    pub functions_per_dso: u32,
    /// Give each DSO a build id (in MMAP2 and the BUILD_ID feature).
    pub build_ids: bool,
    /// Non-SAMPLE records carry the sample_id trailer (attr.sample_id_all).
    pub sample_id_all: bool,
    /// The less common records (see [`WorkloadSpec::extras`]).
    pub extras: bool,
    /// Events on CLOCK_MONOTONIC, with CLOCKID and CLOCK_DATA.
    pub clock: bool,
    /// A FINISHED_ROUND after every this many records (0: none).
    pub round_every: u64,
    /// Write big-endian (as recorded on a big-endian machine).
    pub big_endian: bool,
    /// zstd level of COMPRESSED records (COMPRESSED2 with `compressed2`).
    pub compress: Option<i32>,
    /// Write COMPRESSED2 records rather than COMPRESSED.
    pub compressed2: bool,
    /// Relative sample weights of the threads, in order (uniform when `None`).
    pub thread_weights: Option<Vec<u64>>,
    /// Relative sample weights of the functions, in order (uniform when `None`).
    pub function_weights: Option<Vec<u64>>,
    /// Write the DSOs as ELF files with symbols here (see [`WorkloadSpec::dso_dir`]).
    pub dso_dir: Option<PathBuf>,
    /// The machine; its `clock` is set from `clock` above.
    pub host: HostInfo,
}

impl Default for SynthSpec {
    fn default() -> Self {
        let w = WorkloadSpec::default();
        SynthSpec {
            seed: w.seed,
            processes: w.processes,
            threads_per_process: w.threads_per_process,
            samples: 1000,
            size: None,
            events: "cpu-clock".into(),
            period: 100_000,
            fields: String::new(),
            callchain: None,
            ips_per_function: None,
            dsos: w.dsos,
            functions_per_dso: w.functions_per_dso,
            build_ids: true,
            sample_id_all: true,
            extras: false,
            clock: false,
            round_every: 1000,
            big_endian: false,
            compress: None,
            compressed2: false,
            thread_weights: None,
            function_weights: None,
            dso_dir: None,
            host: HostInfo::default(),
        }
    }
}

fn bad(what: impl Into<String>) -> WriteError {
    WriteError::unsupported(None, what)
}

impl SynthSpec {
    /// The workload and the writer's spec this describes.
    pub fn build(&self) -> Result<(Workload, TraceSpec)> {
        let mut fields = parse_sample_fields(&self.fields)?;
        if let Some(depth) = self.callchain {
            if depth == 0 {
                return Err(bad("a callchain needs a depth of 1 or more"));
            }
            fields |= perfdata_core::attr::SampleType::CALLCHAIN;
        }
        if self.ips_per_function == Some(0) {
            return Err(bad("--ips-per-function needs 1 or more"));
        }
        if let Some(level) = self.compress.filter(|l| !(1..=22).contains(l)) {
            return Err(bad(format!("zstd level {level} is not 1 to 22")));
        }
        let mut events: Vec<_> = parse_events(&self.events, self.period)?
            .into_iter()
            .map(|e| e.with(fields))
            .collect();
        if self.extras {
            if let Some(first) = events.first_mut() {
                first.attr.flags |= EXTRA_RECORD_FLAGS;
            }
        }
        // What the writer would refuse (RAW samples of an event that is no tracepoint,
        // say) is refused here, before any output exists.
        super::event::normalize(&mut events.clone(), self.sample_id_all)?;
        let workload = Workload::new(WorkloadSpec {
            seed: self.seed,
            processes: self.processes,
            threads_per_process: self.threads_per_process,
            dsos: self.dsos,
            functions_per_dso: self.functions_per_dso,
            stop: self.size.map_or(Stop::Samples(self.samples), Stop::Bytes),
            callchain_depth: self.callchain.unwrap_or(1),
            ips_per_function: self.ips_per_function,
            build_ids: self.build_ids,
            extras: self.extras,
            thread_weights: self.thread_weights.clone(),
            function_weights: self.function_weights.clone(),
            dso_dir: self.dso_dir.clone(),
            ..Default::default()
        })?;
        let mut host = self.host.clone();
        host.nr_cpus = host.nr_cpus.max(1);
        host.clock = self.clock.then_some((1, WALL_CLOCK_REF_NS, START_NS));
        let format = if self.compressed2 {
            CompressFormat::Compressed2
        } else {
            CompressFormat::Compressed
        };
        let opts = SynthOptions {
            endian: if self.big_endian {
                binrw::Endian::Big
            } else {
                binrw::Endian::Little
            },
            sample_id_all: self.sample_id_all,
            compress: self.compress.map(|level| (level, format)),
            round_every: self.round_every,
        };
        Ok((workload, TraceSpec { events, host, opts }))
    }
}
