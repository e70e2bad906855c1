//! `perfdata anonymize IN -o OUT`: replace comms, paths, the hostname, the command line,
//! cgroup paths and BPF program names with stable pseudonyms, and zero or leave out what
//! cannot be vouched for. The arguments only: the edit is
//! `perfdata_write::edit::Anonymize`.

use std::path::PathBuf;

use perfdata_write::edit::{self, Anonymize, AnonymizeCounts, Pseudonyms, RecordEdit};

use crate::CliError;

#[derive(clap::Args)]
pub struct AnonymizeArgs {
    #[command(flatten)]
    input: crate::input::Input,
    /// Output path, or `-` for stdout.
    #[arg(short, long)]
    output: PathBuf,
    /// Secret the pseudonyms are made with: the same salt gives the same pseudonym for
    /// the same name in every file. Without it a random salt is used.
    #[arg(long)]
    salt: Option<String>,
    /// Keep paths under this prefix as they are (repeatable; added to the defaults
    /// /usr/lib, /usr/lib64, /lib, /lib64, //anon, /dev/zero, /anon_hugepage, /SYSV and
    /// every bracketed name such as `[kernel.kallsyms]` and `[vdso]`).
    #[arg(long, value_name = "PREFIX")]
    keep_path: Vec<String>,
    /// Keep this comm as it is (repeatable).
    #[arg(long, value_name = "NAME")]
    keep_comm: Vec<String>,
    /// Keep RAW tracepoint payloads, user stacks, registers and AUX trace data instead
    /// of zeroing them (they may hold names and memory contents).
    #[arg(long)]
    keep_raw: bool,
    /// Fail, writing nothing, on the first record or feature that cannot be vouched
    /// for (a type or layout not known, bytes that do not fit it, an id that matches
    /// no event), instead of leaving it out with a warning.
    #[arg(long)]
    strict: bool,
    /// Write the records of compressed input uncompressed.
    #[arg(long)]
    decompress: bool,
}

impl AnonymizeArgs {
    /// The input path (for the interrupt policy: a stream ends on the first SIGINT).
    pub fn input(&self) -> &std::path::Path {
        self.input.path()
    }
}

pub fn run(args: &AnonymizeArgs) -> Result<(), CliError> {
    let salt = match &args.salt {
        Some(s) => s.clone(),
        None => edit::random_salt()?,
    };
    let mut keep_paths: Vec<String> = edit::DEFAULT_KEEP_PATHS
        .iter()
        .map(|s| s.to_string())
        .collect();
    keep_paths.extend(args.keep_path.iter().cloned());
    let names = Pseudonyms::new(&salt, keep_paths, args.keep_comm.clone())?;
    let anon = Anonymize::new(names, args.keep_raw).strict(args.strict);
    let counts = anon.counts();
    let edits: Vec<Box<dyn RecordEdit>> = vec![Box::new(anon)];
    let report = crate::output::run_edits(args.input.path(), &args.output, args.decompress, edits)?;
    report.warnings.iter().for_each(crate::warn);
    counts.borrow().warnings().iter().for_each(crate::warn);
    if !crate::quiet() {
        print_summary(&counts.borrow(), args.salt.is_none(), args.keep_raw);
    }
    Ok(())
}

/// What was renamed and what was zeroed.
fn print_summary(c: &AnonymizeCounts, random_salt: bool, keep_raw: bool) {
    let features: Vec<String> = c.features.iter().map(|f| f.name()).collect();
    errln!(
        "renamed: {} records; features {}",
        c.renamed_records,
        if features.is_empty() {
            "none".to_string()
        } else {
            features.join(", ")
        }
    );
    if c.raw_rebuilt > 0 {
        errln!(
            "rebuilt from their tracepoint formats (single numbers kept, strings renamed, \
             arrays and fields that may hold text zeroed): {} RAW payloads",
            c.raw_rebuilt
        );
    }
    let zeroed = [
        ("RAW tracepoint payloads (no format)", c.raw_zeroed),
        ("user stacks", c.stack_zeroed),
        ("register sets", c.regs_zeroed),
        ("AUX samples", c.aux_zeroed),
        ("AUXTRACE records", c.auxtrace_zeroed),
    ];
    let zeroed: Vec<String> = zeroed
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    if !zeroed.is_empty() {
        errln!(
            "zeroed (unvouched bytes; --keep-raw keeps them): {}",
            zeroed.join(", ")
        );
    }
    let others: Vec<String> = c
        .zeroed
        .iter()
        .map(|(what, n)| format!("{n} {what}"))
        .collect();
    if !others.is_empty() {
        errln!("zeroed: {}", others.join(", "));
    }
    if keep_raw && zeroed.is_empty() {
        errln!("--keep-raw: RAW payloads, user stacks, registers and AUX data kept as they were");
    }
    if random_salt {
        errln!("salt: random (give --salt to get the same pseudonyms in other files)");
    }
}
