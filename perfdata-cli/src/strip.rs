//! `perfdata strip IN -o OUT`: remove samples (and the side-band of what they were)
//! by pid, tid, comm, cpu, event or time, or whole record types. The arguments only:
//! the edit is `perfdata_write::edit::Strip`.

use std::path::{Path, PathBuf};

use perfdata_write::convert::Report;
use perfdata_write::edit::{self, Glob, Selection, Selectors};

/// The selectors strip and dump share: perf's --pid, --tid, --comm, --cpu, --event and
/// --time.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct SelectorArgs {
    /// Process ids, perf's list syntax (`1,3-5`).
    #[arg(long, value_name = "LIST")]
    pid: Option<String>,
    /// Thread ids (`1,3-5`).
    #[arg(long, value_name = "LIST")]
    tid: Option<String>,
    /// Command name, exact or a glob with `*` and `?` (repeatable).
    #[arg(long, value_name = "NAME")]
    comm: Vec<String>,
    /// CPUs (`0,2-3`).
    #[arg(long, value_name = "LIST")]
    cpu: Option<String>,
    /// Event name as `perf script` prints it (repeatable).
    #[arg(long, value_name = "NAME")]
    event: Vec<String>,
    /// perf's --time syntax: `START,END` in seconds, or percent slices `10%-20%`, `10%/2`.
    #[arg(long, value_name = "RANGE")]
    time: Option<String>,
}

impl SelectorArgs {
    /// The selectors parsed (an error names the one that does not parse).
    pub fn selectors(&self) -> Result<Selectors, CliError> {
        let list = |s: &Option<String>, what| {
            s.as_deref()
                .map(|s| edit::parse_id_list(s, what))
                .transpose()
        };
        Ok(Selectors {
            pids: list(&self.pid, "pid list")?,
            tids: list(&self.tid, "tid list")?,
            comms: self.comm.iter().map(|c| Glob(c.clone())).collect(),
            cpus: list(&self.cpu, "cpu list")?,
            events: self.event.clone(),
            time: self
                .time
                .as_deref()
                .map(edit::parse_time_ranges)
                .transpose()?,
        })
    }
}

use crate::CliError;

#[derive(clap::Args)]
pub struct StripArgs {
    #[command(flatten)]
    input: crate::input::Input,
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    #[command(flatten)]
    select: SelectorArgs,
    /// Keep what the selectors match and remove everything else.
    #[arg(long)]
    keep: bool,
    /// Keep the side-band records (COMM, MMAP, FORK, ...) of removed threads.
    #[arg(long)]
    keep_sideband: bool,
    /// Remove whole record types by perf's names (`SWITCH,SWITCH_CPU_WIDE`).
    #[arg(long, value_name = "TYPES")]
    drop: Option<String>,
    /// Remove sample fields by perf's names (`REGS_USER,STACK_USER`) from every sample of
    /// the events that have them; the attrs' sample_type is updated.
    #[arg(long, value_name = "FIELDS")]
    drop_sample_fields: Option<String>,
    /// Write the records of compressed input uncompressed.
    #[arg(long)]
    decompress: bool,
}

impl StripArgs {
    /// The input path (for the interrupt policy: a stream ends on the first SIGINT).
    pub fn input(&self) -> &std::path::Path {
        self.input.path()
    }
}

impl StripArgs {
    fn selection(&self) -> Result<Selection, CliError> {
        let sel = Selection {
            keep: self.keep,
            keep_sideband: self.keep_sideband,
            drop_types: match &self.drop {
                Some(t) => perfdata_core::select::parse_record_types(t)?,
                None => Vec::new(),
            },
            select: self.select.selectors()?,
        };
        if !sel.selects_samples() && sel.drop_types.is_empty() && self.drop_sample_fields.is_none()
        {
            return Err(CliError::Usage(
                "nothing to strip: give a selector (--pid, --tid, --comm, --cpu, --event, \
                 --time), --drop or --drop-sample-fields"
                    .into(),
            ));
        }
        Ok(sel)
    }
}

/// Bytes a path holds (a directory: its files).
fn size_of(path: &Path) -> Option<u64> {
    let md = std::fs::metadata(path).ok()?;
    if md.is_dir() {
        let entries = std::fs::read_dir(path).ok()?;
        Some(
            entries
                .filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum(),
        )
    } else {
        md.is_file().then_some(md.len())
    }
}

pub fn run(args: &StripArgs) -> Result<(), CliError> {
    let sel = args.selection()?;
    let fields = args
        .drop_sample_fields
        .as_deref()
        .map(edit::parse_sample_fields)
        .transpose()?;
    let edits = edit::strip_edits(sel, fields);
    let report = crate::output::run_edits(args.input.path(), &args.output, args.decompress, edits)?;
    print_summary(&report, size_of(args.input.path()), report.bytes_written);
    Ok(())
}

/// Records and samples kept and removed, by type and event, and bytes in and out.
fn print_summary(report: &Report, file_in: Option<u64>, file_out: Option<u64>) {
    report.warnings.iter().for_each(crate::warn);
    let Some(s) = report.edits.as_ref().filter(|_| !crate::quiet()) else {
        return;
    };
    errln!("{:<20} {:>10} {:>10}", "record type", "kept", "removed");
    for (ty, c) in &s.records {
        errln!("{:<20} {:>10} {:>10}", ty.name(), c.kept, c.removed);
    }
    for (event, c) in &s.samples {
        let name = s.event_names.get(*event).map_or("?", |n| n.as_str());
        let name = format!("samples {name}");
        errln!("{:<20} {:>10} {:>10}", name, c.kept, c.removed);
    }
    let size = |n: Option<u64>| n.map_or("-".to_string(), |n| n.to_string());
    errln!(
        "bytes: file {} in, {} out; records {} in, {} out",
        size(file_in),
        size(file_out),
        s.bytes_in,
        s.bytes_out
    );
}
