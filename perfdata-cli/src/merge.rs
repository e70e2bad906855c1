//! `perfdata merge A B ... -o OUT`: several recordings as one that perf reads. The
//! arguments and the pid table only: the merge is `perfdata_write::merge::Merge`.

use std::path::{Path, PathBuf};

use perfdata_write::compress::CompressFormat;
use perfdata_write::convert::{Compression, ConvertOptions, Target};
use perfdata_write::merge::{Align, Merge, MergeOptions};
use perfdata_write::Conversion;

use crate::CliError;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AlignArg {
    /// Each input keeps its clock.
    Keep,
    /// Each input shifted so that its first sample has the first input's first sample
    /// time.
    Start,
    /// Each input put on the first input's clock by wall-clock time (the CLOCK_DATA
    /// feature `perf record --clockid` writes).
    Clock,
}

#[derive(clap::Args)]
pub struct MergeArgs {
    /// The recordings: files, pipe-mode files, perf.data directories, `-` for stdin
    /// (once). The first one's HOSTNAME, CMDLINE and other features are kept.
    #[arg(required = true, num_args = 2.., value_name = "INPUT")]
    inputs: Vec<PathBuf>,
    /// Output path, or `-` for stdout (pipe mode unless --to-file).
    #[arg(short, long)]
    output: PathBuf,
    /// Write file mode.
    #[arg(long, conflicts_with = "to_pipe")]
    to_file: bool,
    /// Write pipe mode.
    #[arg(long)]
    to_pipe: bool,
    /// Compress the kernel's records with zstd (LEVEL 1-22, default 1, as perf -z).
    #[arg(
        short = 'z',
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1",
        value_parser = clap::value_parser!(i32).range(1..=22)
    )]
    compress: Option<i32>,
    /// Move the pids and tids of the n-th host (by HOSTNAME, in the inputs' order, the
    /// first host 0th) by n times N; default 4194304, Linux's largest pid_max.
    #[arg(long, value_name = "N")]
    pid_offset: Option<u32>,
    /// How the inputs' clocks are put together.
    #[arg(long, value_enum, default_value_t = AlignArg::Keep)]
    align: AlignArg,
    /// Merge a recording with itself (the same file, or a copy: same host, event ids and
    /// sample times): its samples count twice. Refused otherwise.
    #[arg(long)]
    allow_duplicates: bool,
}

impl MergeArgs {
    /// The input that decides the interrupt policy: stdin if it is one, else the first.
    pub fn input(&self) -> &Path {
        self.inputs
            .iter()
            .find(|p| p.as_os_str() == "-")
            .unwrap_or(&self.inputs[0])
    }

    fn options(&self) -> ConvertOptions {
        let target = match (self.to_file, self.to_pipe) {
            (true, _) => Target::File,
            (false, true) => Target::Pipe,
            (false, false) if self.output.as_os_str() == "-" => Target::Pipe,
            (false, false) => Target::File,
        };
        ConvertOptions {
            target: Some(target),
            compression: match self.compress {
                Some(level) => Compression::Compress {
                    level,
                    format: CompressFormat::Compressed,
                },
                None => Compression::Decompress,
            },
            ..Default::default()
        }
    }
}

pub fn run(args: &MergeArgs) -> Result<(), CliError> {
    for input in &args.inputs {
        crate::output::refuse_same(input, &args.output, "")?;
    }
    let sink = crate::output::sink(&args.output, &args.inputs[0])?;
    let opts = MergeOptions {
        pid_offset: args.pid_offset,
        align: match args.align {
            AlignArg::Keep => Align::Keep,
            AlignArg::Start => Align::Start,
            AlignArg::Clock => Align::Clock,
        },
        allow_duplicates: args.allow_duplicates,
    };
    let merge = Merge::open(&args.inputs, &opts)?;
    if !crate::quiet() {
        print_table(&merge);
    }
    let report = Conversion::new(merge)
        .options(args.options())
        .cancel(crate::interrupt::cancel())
        .write(sink)?;
    report.warnings.iter().for_each(crate::warn);
    crate::verbose::say(
        1,
        format_args!(
            "merge: {} records read, {} written",
            report.records_in, report.records_out
        ),
    );
    Ok(())
}

/// What the merge does to each input's pids and clock, on stderr.
fn print_table(merge: &Merge) {
    errln!("perfdata: merge: input, hostname, pid offset, time shift (ns)");
    for i in merge.inputs() {
        errln!(
            "  {}\t{}\t+{}\t{:+}",
            i.path,
            i.hostname.as_deref().unwrap_or("-"),
            i.pid_offset,
            i.time_delta
        );
    }
}
