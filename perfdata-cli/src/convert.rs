//! `perfdata convert IN -o OUT`: rewrite a recording, changing its container, its
//! compression or its byte order.

use std::path::{Path, PathBuf};

use perfdata_write::compress::CompressFormat;
use perfdata_write::convert::{Compression, ConvertOptions, Report, Source, Target};
use perfdata_write::{Conversion, Input};

use crate::CliError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EndianArg {
    Little,
    Big,
    Keep,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FormatArg {
    /// PERF_RECORD_COMPRESSED (81), what perf 6.1 reads.
    Compressed,
    /// PERF_RECORD_COMPRESSED2 (83), perf 6.16 and later.
    Compressed2,
}

/// `--compress[=LEVEL]` and `--compress-format`, as `convert` and `synth` take them.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct CompressArgs {
    /// Compress the kernel's records with zstd (LEVEL 1-22, default 1, as perf -z).
    #[arg(
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = clap::value_parser!(i32).range(1..=22)
    )]
    pub compress: Option<i32>,
    /// Which compressed record type to write (default: COMPRESSED, what perf 6.1 reads).
    /// For `convert`, given alone, it re-encodes the input's compressed records.
    #[arg(long, value_enum)]
    pub compress_format: Option<FormatArg>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CompatArg {
    /// A file perf 6.1 can open: written in file mode (unless --to-pipe), attrs cut to
    /// 128 bytes, COMPRESSED2 re-encoded as COMPRESSED, simpleperf's in-data tracing
    /// record moved to the TRACING_DATA feature, compressed pipe streams expanded.
    #[value(name = "perf6.1")]
    Perf61,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    input: crate::input::Input,
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    /// Write file mode (a pipe stream's metadata becomes header sections).
    #[arg(long, conflicts_with = "to_pipe")]
    to_file: bool,
    /// Write pipe mode (header sections become HEADER_* records).
    #[arg(long)]
    to_pipe: bool,
    #[command(flatten)]
    compression: CompressArgs,
    /// Expand every compressed record and drop the COMPRESSED feature.
    #[arg(long, conflicts_with = "compress")]
    decompress: bool,
    /// Byte order of the output.
    #[arg(long, value_enum, default_value_t = EndianArg::Keep)]
    endian: EndianArg,
    /// Make the output readable by an older perf.
    #[arg(long, value_enum)]
    compat: Option<CompatArg>,
    /// Allow OUT to be the input file (it is replaced only when the conversion succeeded).
    #[arg(long)]
    in_place: bool,
}

impl ConvertArgs {
    /// The input path (`-` for stdin).
    pub fn input(&self) -> &Path {
        self.input.path()
    }
}

impl ConvertArgs {
    /// The library's options for these arguments; what `--compat` implies is resolved
    /// by the library from the input (`perfdata_write::convert::Plan`).
    fn options(&self) -> ConvertOptions {
        let format = match self.compression.compress_format {
            Some(FormatArg::Compressed2) => CompressFormat::Compressed2,
            Some(FormatArg::Compressed) | None => CompressFormat::Compressed,
        };
        let compression = match (self.compression.compress, self.decompress) {
            (Some(level), _) => Compression::Compress { level, format },
            (None, true) => Compression::Decompress,
            (None, false) => Compression::Keep,
        };
        ConvertOptions {
            target: match (self.to_file, self.to_pipe) {
                (true, _) => Some(Target::File),
                (false, true) => Some(Target::Pipe),
                (false, false) => None,
            },
            compression,
            endian: match self.endian {
                EndianArg::Little => Some(perfdata_core::Endian::Little),
                EndianArg::Big => Some(perfdata_core::Endian::Big),
                EndianArg::Keep => None,
            },
            compat_perf_6_1: self.compat == Some(CompatArg::Perf61),
            // --compress-format alone re-encodes the kept compressed records.
            keep_format: match compression {
                Compression::Keep => self.compression.compress_format.map(|_| format),
                _ => None,
            },
        }
    }
}

pub fn run(args: &ConvertArgs) -> Result<(), CliError> {
    if !args.in_place {
        let hint = "; pass --in-place to replace it";
        crate::output::refuse_same(args.input.path(), &args.output, hint)?;
    }
    // The output first: a directory or unwritable place is refused before any work.
    let sink = crate::output::sink(&args.output, args.input.path())?;
    let source = Input::open(args.input.path())?;
    crate::verbose::describe_input(source.meta());
    let conversion = Conversion::new(source).options(args.options());
    let plan = conversion.plan();
    crate::verbose::say(
        1,
        format_args!(
            "convert: to {:?}, policy {:?}",
            plan.target(),
            plan.options()
        ),
    );
    let report = crate::output::run(args.input.path(), conversion, sink)?;
    crate::verbose::say(
        1,
        format_args!(
            "convert: {} records read, {} written ({} bytes of them copied by the kernel)",
            report.records_in, report.records_out, report.bytes_copied
        ),
    );
    print_report(&report);
    Ok(())
}

/// `--compress 3` (a space, as perf's `-z` habits suggest) read as `--compress=3`: the
/// level is optional, so clap alone would take `3` for the input file. Only a number
/// right after `--compress` is joined, and nothing after `--`.
pub fn join_compress_level(args: Vec<std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut args = args.into_iter().peekable();
    while let Some(arg) = args.next() {
        if arg == "--" {
            out.push(arg);
            out.extend(args);
            break;
        }
        let level = args
            .peek()
            .and_then(|next| next.to_str())
            .filter(|next| !next.is_empty() && next.bytes().all(|b| b.is_ascii_digit()))
            .map(str::to_owned);
        match level {
            Some(level) if arg == "--compress" => {
                args.next();
                out.push(format!("--compress={level}").into());
            }
            _ => out.push(arg),
        }
    }
    out
}

fn print_report(report: &Report) {
    report.warnings.iter().for_each(crate::warn);
}
