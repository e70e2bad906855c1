//! A recording in another profiler's format: folded stacks, pprof, speedscope, the
//! Firefox Profiler's processed format, or an SVG flame graph. [`Export::read`] reads the
//! recording (the caller may watch [`PerfReader::progress`] meanwhile),
//! [`Collected::finish`] names the stacks, [`Exported::write`] writes the format.
//!
//! ```
//! use perfdata_report::export::{Export, Format};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-callgraph-fp.data");
//! let reader = perfdata_core::PerfReader::open(std::path::Path::new(path))?;
//! let exported = Export::new(Format::Folded).read(reader)?.finish()?;
//! let mut out = Vec::new();
//! exported.write(&mut out)?;
//! assert!(!out.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::{self, Write};
use std::path::PathBuf;
use std::str::FromStr;

use perfdata_core::{Error, PerfReader, Result};

use crate::model::Replay;
use crate::replay::{replay, ReplayOptions};
use crate::stacks::{Detail, Sources, StackCollector, Stacks, Summary};
use crate::symbolize::{SymbolOptions, Symbolizer};
use crate::unwind::UnwindStats;
use crate::{firefox, flamegraph, folded, pprof, speedscope};

// Behind the cargo feature `parquet`: the arrow and parquet crates nearly double a
// first build of the workspace.
#[cfg(feature = "parquet")]
pub mod parquet;
mod partition;

pub use partition::Partition;

/// The start of a Parquet part's temporary name (hidden: Spark, Trino and DataFusion
/// pass over files starting with `.`).
pub const PARQUET_TEMP_PREFIX: &str = ".tmp-";
/// The end of a Parquet part's temporary name: not `.parquet`, so that an export killed
/// while writing (`kill -9`, a crash: nothing removes its temporary file) leaves no
/// file that a reader's glob `**/*.parquet` takes (DuckDB's matches hidden files, and
/// refuses the unfinished one). Outside the `parquet` feature, as the tests name it.
pub const PARQUET_TEMP_SUFFIX: &str = ".parquet.partial";

/// The formats an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `comm;outer;...;leaf count` lines (flame graph input).
    Folded,
    /// pprof's profile.proto, gzipped (`go tool pprof`).
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// The Firefox Profiler's processed format (JSON).
    Firefox,
    /// An SVG flame graph.
    Flamegraph,
}

impl Format {
    /// Every format, in the order the command line lists them.
    pub const ALL: [Format; 5] = [
        Format::Folded,
        Format::Pprof,
        Format::Speedscope,
        Format::Firefox,
        Format::Flamegraph,
    ];

    /// The format's name on the command line (`--format NAME`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Folded => "folded",
            Format::Pprof => "pprof",
            Format::Speedscope => "speedscope",
            Format::Firefox => "firefox",
            Format::Flamegraph => "flamegraph",
        }
    }

    /// One line on what the format is, for a command line's help.
    pub fn about(self) -> &'static str {
        match self {
            Format::Folded => "`comm;outer;...;leaf count` lines (flame graph input)",
            Format::Pprof => "pprof's profile.proto, gzipped (`go tool pprof`)",
            Format::Speedscope => "speedscope's JSON file format",
            Format::Firefox => "The Firefox Profiler's processed format (JSON)",
            Format::Flamegraph => "An SVG flame graph",
        }
    }

    /// What the format says of each sample: its stack (folded, flame graph), with its
    /// labels (pprof), or each one (speedscope and Firefox list every sample, so those
    /// are spooled to a temporary file).
    fn detail(self) -> Detail {
        match self {
            Format::Folded | Format::Flamegraph => Detail::Stacks,
            Format::Pprof => Detail::Labels,
            Format::Speedscope | Format::Firefox => Detail::Samples,
        }
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown format {s:?}"))
    }
}

/// One export: its format and options.
#[derive(Debug, Clone)]
pub struct Export {
    format: Format,
    symfs: Option<PathBuf>,
    inline: bool,
    event: Option<String>,
    title: String,
    unwind: bool,
}

impl Export {
    /// An export in `format`, perf's defaults otherwise.
    pub fn new(format: Format) -> Self {
        Export {
            format,
            symfs: None,
            inline: false,
            event: None,
            title: String::new(),
            unwind: true,
        }
    }

    /// Where binaries and debug files are looked for (perf's `--symfs`).
    pub fn symfs(mut self, dir: Option<PathBuf>) -> Self {
        self.symfs = dir;
        self
    }

    /// Functions inlined at each address (DWARF) as frames of their own, and in pprof
    /// as extra lines of the address's location (perf's `--inline`).
    pub fn inline(mut self, on: bool) -> Self {
        self.inline = on;
        self
    }

    /// Only this event's samples (as `perf script` names it); without it, every event
    /// with samples is a root of its own.
    pub fn event(mut self, name: Option<String>) -> Self {
        self.event = name;
        self
    }

    /// The profile's name (the flame graph's title, speedscope's name, Firefox's
    /// product): usually the input's path.
    pub fn title(mut self, title: String) -> Self {
        self.title = title;
        self
    }

    /// Whether the user stack copies of `--call-graph dwarf` samples are unwound (on by
    /// default, as perf always does; off, their callchains are the recorded kernel part).
    pub fn unwind(mut self, on: bool) -> Self {
        self.unwind = on;
        self
    }

    /// What the format asks DWARF of each location: pprof's locations have lines.
    fn sources(&self) -> Sources {
        match (self.inline, self.format) {
            (true, _) => Sources::Inlines,
            (false, Format::Pprof) => Sources::Lines,
            (false, _) => Sources::Off,
        }
    }

    /// Read the recording, counting its samples per stack as they come.
    pub fn read(self, reader: PerfReader) -> Result<Collected> {
        let spool = |e| Error::io("the temporary file of the samples", e);
        let mut collector = StackCollector::new(self.format.detail()).map_err(spool)?;
        let opts = ReplayOptions::unwinding(self.unwind, self.symfs.clone());
        let replay = replay(reader, &opts, |m, d| {
            d.sample().inspect(|s| collector.add(m, s));
        })?;
        Ok(Collected {
            export: self,
            collector,
            replay,
        })
    }
}

/// A recording read for an export: [`Collected::finish`] names its stacks.
pub struct Collected {
    export: Export,
    collector: StackCollector,
    replay: Replay,
}

impl Collected {
    /// What became of the samples' user stack copies (`--call-graph dwarf`).
    pub fn unwind(&self) -> &UnwindStats {
        &self.replay.unwind
    }

    /// What the reading could not use, to be said once each (a jitdump it could not
    /// read).
    pub fn warnings(&self) -> &[String] {
        &self.replay.warnings
    }

    /// The stacks symbolised, the event chosen, in the form the format writes.
    pub fn finish(self) -> Result<Exported> {
        let Collected {
            export,
            collector,
            replay,
        } = self;
        let spool = |e| Error::io("the temporary file of the samples", e);
        let opts = SymbolOptions::for_replay(&replay, export.symfs.clone());
        let mut stacks = collector
            .finish(&replay, &mut Symbolizer::new(opts), export.sources())
            .map_err(spool)?;
        let summary = stacks.summary();
        if let Some(event) = &export.event {
            stacks.retain_event(event).map_err(Error::Select)?;
        }
        // Folded lines do not need the stacks once made: those go before the drawing.
        let made = match export.format {
            Format::Folded | Format::Flamegraph => {
                let lines = folded::lines(&stacks).map_err(spool)?;
                drop(stacks);
                if export.format == Format::Flamegraph && lines.is_empty() {
                    // Said before anything is written: the fault is the recording's.
                    return Err(Error::Select(flamegraph::NOTHING_TO_DRAW.into()));
                }
                Made::Lines(lines)
            }
            _ => Made::Stacks(Box::new(stacks)),
        };
        Ok(Exported {
            export,
            made,
            replay,
            summary,
        })
    }
}

/// What an export writes from: folded lines (folded, flame graph) or the stacks.
enum Made {
    Lines(folded::FoldedLines),
    Stacks(Box<Stacks>),
}

/// An export ready to write.
pub struct Exported {
    export: Export,
    made: Made,
    replay: Replay,
    summary: Summary,
}

impl Exported {
    /// What the stacks hold (samples, stacks, frames), before an event was chosen.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Write the differential flame graph of `base` (the recording before) and this one
    /// ([`flamegraph::write_differential`]), flushed; both exports must be flame graphs
    /// (folded stacks).
    pub fn write_differential(&self, base: &Exported, w: &mut dyn Write) -> io::Result<()> {
        let (Made::Lines(before), Made::Lines(after)) = (&base.made, &self.made) else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a differential flame graph is drawn from folded stacks (--format flamegraph)",
            ));
        };
        flamegraph::write_differential(w, before, after, &self.export.title)?;
        w.flush()
    }

    /// Write the format into `w`, flushed.
    pub fn write(&self, w: &mut dyn Write) -> io::Result<()> {
        let title = &self.export.title;
        let dsos = &self.replay.machine.dsos;
        match (&self.made, self.export.format) {
            (Made::Lines(lines), Format::Flamegraph) => {
                flamegraph::write_flamegraph(w, lines, title)?
            }
            (Made::Lines(lines), _) => folded::write_folded(w, lines)?,
            (Made::Stacks(s), Format::Pprof) => pprof::write_pprof(w, s, &self.replay.machine)?,
            (Made::Stacks(s), Format::Speedscope) => {
                speedscope::write_speedscope(w, s, dsos, title)?
            }
            (Made::Stacks(s), _) => firefox::write_firefox(w, s, dsos, title)?,
        }
        w.flush()
    }
}
