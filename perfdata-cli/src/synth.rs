//! `perfdata synth -o OUT`: write a synthetic trace (arguments only; the builder and
//! the workload model are `perfdata_synth`).

use std::path::PathBuf;

use perfdata_synth::{AuxPayload, HostInfo, SynthSpec};
use perfdata_write::convert::Target;
use perfdata_write::Sink;

use crate::convert::FormatArg;
use crate::CliError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SynthEndian {
    Little,
    Big,
}

#[derive(clap::Args)]
pub struct SynthArgs {
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    /// The whole trace as JSON instead of the options below (but -o, --pipe and --dir):
    /// the fields of `perfdata_synth::SynthSpec`, each defaulting as its option.
    #[arg(long, value_name = "FILE.json", conflicts_with_all = [
        "processes", "threads_per_process", "samples", "size", "seed", "events", "period",
        "fields", "callchain", "ips_per_function", "dsos", "functions", "cpus", "compress", "compress_format",
        "endian", "no_build_ids", "no_sample_id_all", "extras", "clock", "round_every",
    ])]
    spec: Option<PathBuf>,
    /// Processes (commands synth0, synth1, ...).
    #[arg(long, default_value_t = 2)]
    processes: u32,
    /// Threads per process, the main thread included.
    #[arg(long, default_value_t = 2)]
    threads_per_process: u32,
    /// Samples, split exactly over threads and functions by their weights.
    #[arg(long, default_value_t = 1000, conflicts_with = "size")]
    samples: u64,
    /// Stop when the records reach this size before compression (2GB, 500MB, 64K:
    /// powers of 1024) instead of at a sample count.
    #[arg(long, value_parser = parse_size)]
    size: Option<u64>,
    /// Seed of every random choice: the same seed and options give the same bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Events: cpu-clock, task-clock, cycles, tracepoint, and {a,b}:S for a group read.
    #[arg(long, default_value = "cpu-clock")]
    events: String,
    /// Sample period of the events (ns for the clocks).
    #[arg(long, default_value_t = 100_000)]
    period: u64,
    /// More sample_type fields for every event, by perf's names: addr, weight,
    /// data_src, phys_addr, cgroup, regs_user, stack_user, branch_stack, ...
    #[arg(long, value_name = "LIST")]
    fields: Option<String>,
    /// Record callchains of up to DEPTH frames.
    #[arg(long, value_name = "DEPTH")]
    callchain: Option<u32>,
    /// Sample at most N distinct addresses per function (evenly spaced in it), so that
    /// the trace has at most DSOs x functions x N distinct stacks at any size; by
    /// default any byte of the function.
    #[arg(long, value_name = "N")]
    ips_per_function: Option<u32>,
    /// DSOs mapped in every process.
    #[arg(long, default_value_t = 3)]
    dsos: u32,
    /// Functions per DSO.
    #[arg(long, default_value_t = 8)]
    functions: u32,
    /// CPUs of the machine the trace claims (samples are spread over them).
    #[arg(long, default_value_t = 4)]
    cpus: u32,
    /// Write pipe mode instead of file mode.
    #[arg(long)]
    pipe: bool,
    /// Write a perf.data directory (`perf record --threads`): `data` and one sample
    /// stream `data.N` per CPU. OUT must not exist.
    #[arg(long, conflicts_with = "pipe")]
    dir: bool,
    #[command(flatten)]
    compression: crate::convert::CompressArgs,
    /// Byte order of the output.
    #[arg(long, value_enum, default_value_t = SynthEndian::Little)]
    endian: SynthEndian,
    /// Leave build ids out of MMAP2 records and the header.
    #[arg(long)]
    no_build_ids: bool,
    /// Non-SAMPLE records without the sample_id trailer.
    #[arg(long)]
    no_sample_id_all: bool,
    /// Also write CGROUP, KSYMBOL, NAMESPACES, SWITCH, LOST, LOST_SAMPLES, THROTTLE and
    /// UNTHROTTLE records.
    #[arg(long)]
    extras: bool,
    /// Events use CLOCK_MONOTONIC, and the header says so (CLOCKID, CLOCK_DATA with the
    /// recording's start at 2026-01-01T00:00:00Z), as `perf record -k monotonic`.
    #[arg(long)]
    clock: bool,
    /// A FINISHED_ROUND after every N records (0: none).
    #[arg(long, default_value_t = 1000)]
    round_every: u64,
    /// Write the DSOs as ELF shared objects with a symbol table into DIR (which must
    /// exist) and map them by their absolute paths, so that perf names each sample's
    /// function; with --spec too, where it replaces the spec's `dso_dir`.
    #[arg(long, value_name = "DIR")]
    dso_dir: Option<PathBuf>,
    /// End with one AUXTRACE record carrying SIZE bytes of AUX data (2GB, 64K: powers
    /// of 1024), written piece by piece as Intel PT recordings hold them; with
    /// --compress it goes inside the compressed records.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    aux_payload: Option<u64>,
}

/// "2GB", "500M", "64k" or a plain byte count; units are powers of 1024.
fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(digits);
    let n: u64 = n.parse().map_err(|_| format!("{s:?} is not a size"))?;
    let shift = match unit.to_ascii_uppercase().trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(format!("{s:?}: unknown unit (B, K, M, G, T)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// The spec the options describe.
fn spec_of(args: &SynthArgs) -> SynthSpec {
    let defaults = SynthSpec::default();
    SynthSpec {
        seed: args.seed,
        processes: args.processes,
        threads_per_process: args.threads_per_process,
        samples: args.samples,
        size: args.size,
        events: args.events.clone(),
        period: args.period,
        fields: args.fields.clone().unwrap_or_default(),
        callchain: args.callchain,
        ips_per_function: args.ips_per_function,
        dsos: args.dsos,
        functions_per_dso: args.functions,
        build_ids: !args.no_build_ids,
        sample_id_all: !args.no_sample_id_all,
        extras: args.extras,
        clock: args.clock,
        round_every: args.round_every,
        big_endian: args.endian == SynthEndian::Big,
        compress: args.compression.compress,
        compressed2: args.compression.compress_format == Some(FormatArg::Compressed2),
        host: HostInfo {
            nr_cpus: args.cpus,
            ..defaults.host.clone()
        },
        ..defaults
    }
}

pub fn run(args: &SynthArgs) -> Result<(), CliError> {
    let spec = match &args.spec {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
            serde_json::from_str::<SynthSpec>(&text)
                .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?
        }
        None => spec_of(args),
    };
    let spec = SynthSpec {
        dso_dir: args.dso_dir.clone().or(spec.dso_dir),
        ..spec
    };
    let (workload, trace) = spec.build()?;
    let aux = args.aux_payload.map(|len| AuxPayload {
        len,
        seed: args.seed,
    });
    if args.dir {
        perfdata_synth::write_dir(&workload, trace, aux, &args.output)?;
        return Ok(());
    }
    let sink = if args.output.as_os_str() == "-" {
        Sink::stdout()
    } else {
        Sink::path(&args.output)?
    };
    let target = if args.pipe {
        Target::Pipe
    } else {
        Target::File
    };
    perfdata_synth::write_to(&workload, trace, aux, sink, target)?;
    Ok(())
}
