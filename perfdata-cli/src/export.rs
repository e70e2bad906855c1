//! `perfdata export`: a recording in another profiler's format (the work is in
//! perfdata-report).

use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use perfdata_report::export::{Export, Exported, Format, Partition};
use perfdata_write::output::{AtomicOutput, NewFile};

use crate::CliError;

mod parquet;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// The recording: a perf.data file, a perf.data directory, or `-` for stdin
    /// [default: perf.data]. With `--format parquet`, any number of recordings,
    /// directories of recordings and globs.
    #[arg(value_name = "FILE", conflicts_with = "input")]
    files: Vec<PathBuf>,
    /// The input, as perf's `-i`: the same as FILE.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
    /// The output format.
    #[arg(long, value_parser = format_parser())]
    format: Target,
    /// The output file (written to a temporary file, renamed into place when complete),
    /// or `-` for standard output; with `--format parquet`, the directory the tables'
    /// part files are added to.
    #[arg(short, long)]
    output: PathBuf,
    /// With `--format parquet`: Hive-style partition folders of the samples table,
    /// `host`, `date` or `host,date` (`samples/host=NAME/date=YYYY-MM-DD/`).
    #[arg(long, value_name = "KEYS")]
    partition: Option<Partition>,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Show functions inlined at each address (DWARF) as frames of their own, and in
    /// pprof as extra lines of the address's location (perf's --inline).
    #[arg(long)]
    inline: bool,
    /// With `--format flamegraph`: a differential flame graph against this baseline
    /// recording (the input's stacks, red where they grew since BASE, blue where they
    /// shrank).
    #[arg(long, value_name = "BASE")]
    diff: Option<PathBuf>,
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
}

/// `perfdata flamegraph`: `export --format flamegraph` with perf's habits (an output
/// named by default, one event picked).
#[derive(clap::Args)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// The SVG file written (a temporary file renamed into place when complete), or `-`
    /// for standard output.
    #[arg(short, long, default_value = "flamegraph.svg")]
    output: PathBuf,
    /// Draw only this event's samples (as `perf script` names it); without it, every
    /// event with samples is a root of its own in one graph.
    #[arg(short, long)]
    event: Option<String>,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Show functions inlined at each address (DWARF) as frames of their own.
    #[arg(long)]
    inline: bool,
    /// A differential flame graph against this baseline recording (red where the
    /// input's stacks grew since BASE, blue where they shrank).
    #[arg(long, value_name = "BASE")]
    diff: Option<PathBuf>,
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
}

/// What `--format` names: one of the library's single-file formats, or Parquet tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    File(Format),
    Parquet,
}

impl ExportArgs {
    /// The inputs given (`perf.data` when none).
    fn inputs(&self) -> Vec<PathBuf> {
        match (&self.input, self.files.is_empty()) {
            (Some(i), _) => vec![i.clone()],
            (None, true) => vec![PathBuf::from("perf.data")],
            (None, false) => self.files.clone(),
        }
    }
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ExportArgs) -> &std::path::Path {
    a.input
        .as_deref()
        .or(a.files.first().map(PathBuf::as_path))
        .unwrap_or(Path::new("perf.data"))
}

/// The input path of `perfdata flamegraph`.
pub fn flamegraph_input_of(a: &FlamegraphArgs) -> &std::path::Path {
    a.file.path()
}

/// `--format`: the library's formats by name, each with its line of help, and parquet.
fn format_parser() -> impl TypedValueParser<Value = Target> {
    let values = Format::ALL
        .map(|f| PossibleValue::new(f.name()).help(f.about()))
        .into_iter()
        .chain([
            PossibleValue::new("parquet").help(if cfg!(feature = "parquet") {
                "Parquet tables (samples, stacks, recordings) in the directory -o names, \
             for DuckDB, Spark, DataFusion"
            } else {
                "Parquet tables for DuckDB, Spark, DataFusion (not in this build: it needs \
             the cargo feature `parquet`)"
            }),
        ]);
    PossibleValuesParser::new(values).map(|name| match name.as_str() {
        "parquet" => Target::Parquet,
        _ => Target::File(name.parse().expect("a listed format")),
    })
}

/// `perfdata export`.
pub fn run(a: &ExportArgs) -> Result<(), CliError> {
    let format = match a.format {
        Target::Parquet => return parquet::run(a),
        Target::File(f) => f,
    };
    if a.partition.is_some() {
        return Err(CliError::Usage(
            "--partition names the folders of --format parquet".into(),
        ));
    }
    let inputs = a.inputs();
    let [input] = &inputs[..] else {
        return Err(CliError::Usage(format!(
            "--format {} writes one recording: give one FILE (--format parquet takes many)",
            format.name()
        )));
    };
    if a.diff.is_some() && format != Format::Flamegraph {
        return Err(CliError::Usage(
            "--diff draws a differential flame graph: give --format flamegraph".into(),
        ));
    }
    let export = || {
        Export::new(format)
            .symfs(a.symfs.clone())
            .inline(a.inline)
            .unwind(a.unwind.on())
    };
    write(input, &export, a.diff.as_deref(), &a.output)
}

/// `perfdata flamegraph`.
pub fn run_flamegraph(a: &FlamegraphArgs) -> Result<(), CliError> {
    let export = || {
        Export::new(Format::Flamegraph)
            .symfs(a.symfs.clone())
            .inline(a.inline)
            .unwind(a.unwind.on())
            .event(a.event.clone())
    };
    write(a.file.path(), &export, a.diff.as_deref(), &a.output)
}

/// `input` read and made ready as `export` says; with `named` (one of two inputs),
/// its warnings and error name it.
fn collect(input: &Path, export: Export, named: bool) -> Result<Exported, CliError> {
    let run = || -> Result<Exported, CliError> {
        let reader = perfdata_core::PerfReader::open(input)?;
        let collected = {
            let _progress = crate::progress::Progress::watch(input, reader.progress());
            export.title(input.display().to_string()).read(reader)?
        };
        if named {
            crate::unwinding::tell_about(input, collected.unwind());
            let warn = |w: &String| crate::warn_about(input, w);
            collected.warnings().iter().for_each(warn);
        } else {
            crate::unwinding::tell(collected.unwind());
            collected.warnings().iter().for_each(crate::warn);
        }
        Ok(collected.finish()?)
    };
    run().map_err(|e| if named { e.about(input) } else { e })
}

/// Export `input` into `output` (`-`: standard output, as convert and report take it,
/// not a file named "-"); with `base`, a differential flame graph from it to `input`.
fn write(
    input: &Path,
    export: &dyn Fn() -> Export,
    base: Option<&Path>,
    output: &Path,
) -> Result<(), CliError> {
    crate::output::refuse_same(input, output, "")?;
    if let Some(b) = base {
        crate::output::refuse_same(b, output, "")?;
    }
    crate::alloc::return_large_blocks();
    let named = base.is_some();
    let base = base.map(|b| collect(b, export(), true)).transpose()?;
    let exported = collect(input, export(), named)?;
    crate::verbose::say(1, exported.summary());
    let draw = |w: &mut dyn std::io::Write| match &base {
        Some(base) => exported.write_differential(base, w),
        None => exported.write(w),
    };
    if output.as_os_str() == "-" {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        return Ok(draw(&mut w)?);
    }
    let mut out = AtomicOutput::create(output)?.new_file(NewFile::Umask);
    draw(&mut out.writer())?;
    out.commit(None)?;
    Ok(())
}
