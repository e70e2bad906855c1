//! The unwinding of `--call-graph dwarf` samples, as `report` and the exports ask for
//! it (the work is in perfdata_report::unwind), and what is said of it.

use perfdata_report::unwind::UnwindStats;

#[derive(clap::Args)]
pub struct UnwindArgs {
    /// Keep the recorded callchains of `--call-graph dwarf` samples (their kernel part
    /// only) instead of unwinding their user stack copies (perf has no such option:
    /// it always unwinds them).
    #[arg(long)]
    no_unwind: bool,
}

impl UnwindArgs {
    /// Whether to unwind: unless `--no-unwind`.
    pub fn on(&self) -> bool {
        !self.no_unwind
    }
}

/// perf's `--inline` / `--no-inline`: whether unwound frames list the functions inlined
/// at them (perfdata_report::inlines).
#[derive(clap::Args)]
pub struct InlineArgs {
    /// List the functions inlined at unwound (`--call-graph dwarf`) frames, from the
    /// binaries' DWARF, as perf 6.1 does by default.
    #[arg(long, overrides_with = "no_inline")]
    inline: bool,
    /// Do not list inlined functions (perf's --no-inline).
    #[arg(long, overrides_with = "inline")]
    no_inline: bool,
}

impl InlineArgs {
    /// Whether to list inlined functions: unless `--no-inline` came last.
    pub fn on(&self) -> bool {
        !self.no_inline
    }
}

/// Say what became of the stack copies: with `-v` always, else a warning when frames
/// were cut or binaries were missing, naming each missing binary once with its samples.
pub fn tell(stats: &UnwindStats) {
    tell_of(None, stats)
}

/// [`tell`], each line naming `input` (one of several).
pub fn tell_about(input: &std::path::Path, stats: &UnwindStats) {
    tell_of(Some(input), stats)
}

fn tell_of(input: Option<&std::path::Path>, stats: &UnwindStats) {
    if !stats.any() {
        return;
    }
    let said = |line: String| match input {
        Some(p) => format!("{}: {line}", p.display()),
        None => line,
    };
    if stats.cut == 0 && stats.missing_binaries.is_empty() {
        crate::verbose::say(1, said(stats.summary()));
        return;
    }
    crate::warn(said(stats.summary()));
    for line in stats.missing_lines() {
        crate::warn(said(line));
    }
}
