//! `perfdata buildid list|remap`: the build ids of a recording's binaries, and replacing
//! them (and file-name prefixes) everywhere the recording names its binaries. The
//! arguments only: the logic is `perfdata_view::buildids` and
//! `perfdata_write::edit::Remap`.

use std::io::Write;
use std::path::PathBuf;

use perfdata_core::record::RecordType;
use perfdata_write::edit::{self, RecordEdit, Remap};

use crate::CliError;

#[derive(clap::Subcommand)]
pub enum BuildIdCommand {
    /// Build id and path per binary, as `perf buildid-list` prints them.
    List {
        #[command(flatten)]
        file: crate::input::Input,
        /// Print JSON (an array of {build_id, path}).
        #[arg(long)]
        json: bool,
    },
    /// Replace build ids and path prefixes in the BUILD_ID feature and in HEADER_BUILD_ID,
    /// MMAP and MMAP2 records.
    Remap(RemapArgs),
}

impl BuildIdCommand {
    /// The input path (for the interrupt policy: a stream ends on the first SIGINT).
    pub fn input(&self) -> &std::path::Path {
        match self {
            BuildIdCommand::List { file, .. } => file.path(),
            BuildIdCommand::Remap(a) => a.input.path(),
        }
    }
}

#[derive(clap::Args)]
pub struct RemapArgs {
    #[command(flatten)]
    input: crate::input::Input,
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    /// OLD=NEW build ids in hex (repeatable).
    #[arg(long, value_name = "OLD=NEW")]
    map: Vec<String>,
    /// A file of `OLD NEW` build id lines.
    #[arg(long, value_name = "FILE")]
    map_file: Option<PathBuf>,
    /// OLD_PREFIX=NEW_PREFIX of file names (repeatable; the first match applies).
    #[arg(long, value_name = "OLD=NEW")]
    path: Vec<String>,
}

pub fn run(cmd: &BuildIdCommand) -> Result<(), CliError> {
    match cmd {
        BuildIdCommand::List { file, json } => {
            let list = perfdata_view::buildids::list(perfdata_core::PerfReader::open_with(
                file.path(),
                perfdata_core::ReadOptions::Contents,
            )?)?;
            // Written, never printed: a closed stdout (`| head`) is an error that ends
            // the command quietly, where println! would panic.
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            if *json {
                perfdata_view::json::write_pretty(&mut out, &list)?;
            } else {
                for dso in &list {
                    writeln!(out, "{dso}")?;
                }
            }
            out.flush()?;
            Ok(())
        }
        BuildIdCommand::Remap(args) => remap(args),
    }
}

fn remap(args: &RemapArgs) -> Result<(), CliError> {
    let mut ids = args
        .map
        .iter()
        .map(|m| edit::parse_id_pair(m))
        .collect::<Result<Vec<_>, _>>()?;
    if let Some(f) = &args.map_file {
        let text = std::fs::read_to_string(f)
            .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", f.display())))?;
        ids.extend(edit::parse_map_file(&text)?);
    }
    let paths = args
        .path
        .iter()
        .map(|p| edit::parse_path_pair(p))
        .collect::<Result<Vec<_>, _>>()?;
    if ids.is_empty() && paths.is_empty() {
        return Err(CliError::Usage(
            "nothing to remap: give --map, --map-file or --path".into(),
        ));
    }
    let edits: Vec<Box<dyn RecordEdit>> = vec![Box::new(Remap::new(ids, paths))];
    let report = crate::output::run_edits(args.input.path(), &args.output, false, edits)?;
    report.warnings.iter().for_each(crate::warn);
    if let Some(s) = report.edits.as_ref().filter(|_| !crate::quiet()) {
        let changed: Vec<String> = [
            RecordType::Mmap,
            RecordType::Mmap2,
            RecordType::HeaderBuildId,
        ]
        .iter()
        .filter_map(|t| {
            s.records
                .get(t)
                .map(|c| format!("{} {}", t.name(), c.replaced))
        })
        .collect();
        errln!("records rewritten: {}", changed.join(", "));
    }
    Ok(())
}
