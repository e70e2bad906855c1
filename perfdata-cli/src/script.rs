//! `perfdata script`: perf script's listing of samples (the work is in
//! perfdata_report::script).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use perfdata_report::filter::SampleFilter;
use perfdata_report::script::fields::FieldSpec;
use perfdata_report::script::{sideband, Refusal, Script};

use crate::CliError;

#[derive(clap::Args)]
pub struct ScriptArgs {
    #[command(flatten)]
    file: crate::input::Input,
    /// Fields to print, as perf's -F: comm, tid, pid, time, cpu, event, trace, ip, sym,
    /// symoff, dso, addr, period, srcline, data_src, weight, ins_lat, synth; `+field`/`-field`
    /// change the defaults,
    /// `TYPE:list` (hw, sw, trace, raw, break) one kind of event. Printed in perf's
    /// order, not the order given. Repeatable.
    #[arg(
        short = 'F',
        long = "fields",
        value_name = "FIELDS",
        allow_hyphen_values = true
    )]
    fields: Vec<String>,
    /// Times in nanoseconds.
    #[arg(long)]
    ns: bool,
    /// Do not print callchains (perf's -G).
    #[arg(short = 'G', long = "hide-call-graph")]
    hide_call_graph: bool,
    /// At most this many frames of each callchain (perf's --max-stack, 127 by default;
    /// of a `--call-graph dwarf` chain, this many kernel and this many unwound frames).
    #[arg(long, value_name = "N")]
    max_stack: Option<usize>,
    /// Look for binaries and debug files under this directory (perf's --symfs).
    #[arg(long)]
    symfs: Option<PathBuf>,
    /// Only samples of these processes (`1,3-5`).
    #[arg(long, value_name = "PID,...")]
    pid: Option<String>,
    /// Only samples of these threads.
    #[arg(long, value_name = "TID,...")]
    tid: Option<String>,
    /// Only samples of threads of these names at the sample (comma-separated).
    #[arg(long = "comms", short = 'c', alias = "comm", value_name = "COMM,...")]
    comms: Option<String>,
    /// Only samples on these CPUs (the recording must sample the CPU).
    #[arg(long, short = 'C', value_name = "CPU,...")]
    cpu: Option<String>,
    /// Only samples in this time range: `START,END` in seconds (either may be empty),
    /// or percent slices (`10%-20%`, `25%/2`), as perf's --time.
    #[arg(long, value_name = "START,END")]
    time: Option<String>,
    /// Print the COMM, FORK and EXIT records among the samples.
    #[arg(long)]
    show_task_events: bool,
    /// Print the MMAP and MMAP2 records among the samples.
    #[arg(long)]
    show_mmap_events: bool,
    /// Print the context switch records (SWITCH, SWITCH_CPU_WIDE) among the samples.
    #[arg(long)]
    show_switch_events: bool,
    /// Print the NAMESPACES records among the samples.
    #[arg(long)]
    show_namespace_events: bool,
    /// Print the LOST records among the samples.
    #[arg(long)]
    show_lost_events: bool,
    #[command(flatten)]
    unwind: crate::unwinding::UnwindArgs,
    #[command(flatten)]
    inline: crate::unwinding::InlineArgs,
}

/// The input path (for the interrupt policy: a stream ends on the first SIGINT).
pub fn input_of(a: &ScriptArgs) -> &std::path::Path {
    a.file.path()
}

/// perf 6.1's exit status where its option parser refuses an option's value
/// (`usage_with_options`): a `-F` list it cannot parse.
const USAGE_STATUS: u8 = 129;
/// perf's where `cmd_script` returns -1: a view refused before the listing.
const SETUP_STATUS: u8 = 255;
/// perf's where `cmd_script` returns -EINVAL: a `--time` that does not parse, a view
/// refused while the records are processed.
const INVALID_STATUS: u8 = 234;

/// Run the listing; perf's exit status where perf refuses the view (see
/// [`Refusal`]), the error said on stderr.
pub fn run(a: &ScriptArgs) -> Result<ExitCode, CliError> {
    let mut spec = FieldSpec::default();
    for f in &a.fields {
        match spec.parse(f) {
            Ok(warnings) => warnings.iter().for_each(crate::warn),
            Err(e) => return Ok(crate::fail(e.into(), ExitCode::from(USAGE_STATUS))),
        }
    }
    let filter = SampleFilter::parse(
        a.pid.as_deref(),
        a.tid.as_deref(),
        a.cpu.as_deref(),
        a.comms.as_deref(),
        &[],
        "absolute",
    )?;
    let time = match a
        .time
        .as_deref()
        .map(perfdata_core::select::parse_time_ranges)
    {
        Some(Err(e)) => return Ok(crate::fail(e.into(), ExitCode::from(INVALID_STATUS))),
        t => t.transpose()?,
    };
    let shown = [
        (a.show_task_events, sideband::TASK_EVENTS),
        (a.show_mmap_events, sideband::MMAP_EVENTS),
        (a.show_switch_events, sideband::SWITCH_EVENTS),
        (a.show_namespace_events, sideband::NAMESPACE_EVENTS),
        (a.show_lost_events, sideband::LOST_EVENTS),
    ];
    let mut script = Script::new()
        .fields(spec)
        .nanoseconds(a.ns)
        .callchains(!a.hide_call_graph)
        .max_stack(a.max_stack)
        .filter(filter)
        .time(time)
        .symfs(a.symfs.clone())
        .unwind(a.unwind.on())
        .inline(a.inline.on());
    for (on, types) in shown {
        if on {
            script = script.show(types);
        }
    }
    let reader = perfdata_core::PerfReader::open(a.file.path())?;
    // Stdout itself (its lock cannot go to the replay's thread); the listing is
    // written in 64 KiB blocks of whole lines.
    let mut out = std::io::stdout();
    match script.write(reader, &mut out) {
        Ok(listed) => {
            crate::unwinding::tell(&listed.unwind);
            listed.warnings.iter().for_each(crate::warn);
            if let Some(r) = listed.refused {
                out.flush()?;
                let status = match r {
                    Refusal::Setup(_) => SETUP_STATUS,
                    Refusal::Processing(_) => INVALID_STATUS,
                };
                return Ok(crate::fail(
                    CliError::Usage(r.to_string()),
                    ExitCode::from(status),
                ));
            }
        }
        // The reader of the listing went away (`| head`): not a failure.
        Err(perfdata_core::Error::Io { source, .. })
            if source.kind() == std::io::ErrorKind::BrokenPipe =>
        {
            return Ok(ExitCode::SUCCESS)
        }
        Err(e) => return Err(e.into()),
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
