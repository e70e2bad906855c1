//! Any number of recordings as Parquet tables that DuckDB, Spark, Trino or DataFusion
//! query: `samples` (one row per sample, its leaf named), `stacks` (each distinct stack
//! once, leaf first) and `recordings` (one row per recording). The schema is in
//! docs/parquet.md; its version is every file's `schema_version` key-value metadata.
//!
//! Each table is a folder of part files under the export directory. A recording's
//! samples are a part of their own, named by the recording's id (the hash of its header
//! and features, [`recording::recording_id`]), in Hive-style partition folders
//! (`host=.../date=...`) when asked; each export adds one stacks part and one recordings
//! part, named by the hash of its recordings' ids. A later export into the same
//! directory adds parts: recordings already there are skipped, and stacks already there
//! are not written again (a stack's id is the hash of its frames, so that ids agree
//! across exports and each is in one part only).
//!
//! Memory is flat in the samples: each recording is replayed and symbolised as `report`
//! does, its samples spooled to disk meanwhile, then written a row group at a time;
//! what stays is the ids of the distinct stacks.
//!
//! ```
//! use perfdata_report::export::parquet::{Added, ParquetExport};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-callgraph-fp.data");
//! let dir = tempfile::tempdir()?;
//! let mut export = ParquetExport::new(dir.path().to_path_buf()).begin()?;
//! let reader = perfdata_core::PerfReader::open(std::path::Path::new(path))?;
//! let Added::Written(r) = export.add(std::path::Path::new(path), reader)? else {
//!     panic!("a new recording");
//! };
//! assert!(r.samples > 0);
//! export.finish()?;
//! assert!(dir.path().join("samples").join(format!("part-{}.parquet", r.id)).exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use perfdata_core::{Error, PerfReader, Result};
use sha1::{Digest, Sha1};

use crate::replay::{replay, ReplayOptions};
use crate::stacks::{Detail, Frame, FrameId, Sources, StackCollector, StackId, Stacks};
use crate::symbolize::{SymbolName, SymbolOptions, Symbolizer};
use crate::unwind::UnwindStats;

pub mod inputs;
pub mod recording;
pub mod schema;

mod stack_set;

mod parts;

pub use super::partition::Partition;
pub use parts::ROW_GROUP;
use parts::{other, partition_value, Part};
use recording::{date_text, RecordingInfo};
use schema::{RecordingBatch, RecordingRow, SampleBatch, SampleRow, StackBatch};
use stack_set::StackSet;

/// Rows put in one Arrow batch before it goes to the writer.
const BATCH: usize = 8 * 1024;

/// The partition layout of the samples part at `path` under `samples`: the Hive keys
/// of the folders between them.
fn layout_of(samples: &Path, path: &Path) -> Partition {
    let mut p = Partition::default();
    let folders = path.parent().and_then(|d| d.strip_prefix(samples).ok());
    for c in folders.into_iter().flat_map(|f| f.components()) {
        let c = c.as_os_str().to_string_lossy();
        p.host |= c.starts_with("host=");
        p.date |= c.starts_with("date=");
    }
    p
}

/// A Parquet export into a directory: its options ([`ParquetExport::begin`] starts it).
#[derive(Debug, Clone)]
pub struct ParquetExport {
    dir: PathBuf,
    symfs: Option<PathBuf>,
    unwind: bool,
    partition: Partition,
}

impl ParquetExport {
    /// An export into `dir` (made if missing), perf's defaults otherwise.
    pub fn new(dir: PathBuf) -> Self {
        ParquetExport {
            dir,
            symfs: None,
            unwind: true,
            partition: Partition::default(),
        }
    }

    /// Where binaries and debug files are looked for (perf's `--symfs`).
    pub fn symfs(mut self, dir: Option<PathBuf>) -> Self {
        self.symfs = dir;
        self
    }

    /// Whether `--call-graph dwarf` user stacks are unwound (on by default, as perf).
    pub fn unwind(mut self, on: bool) -> Self {
        self.unwind = on;
        self
    }

    /// The partition folders of the samples table.
    pub fn partition(mut self, p: Partition) -> Self {
        self.partition = p;
        self
    }

    /// Start: make the directory, and read the ids of the recordings and stacks an
    /// earlier export wrote there.
    pub fn begin(self) -> Result<ParquetWriter> {
        let known = |what: &str, e| Error::io(format!("the {what} in {}", self.dir.display()), e);
        std::fs::create_dir_all(&self.dir).map_err(|e| known("folder", e))?;
        parts::check_versions(&self.dir).map_err(|e| known("schema versions", e))?;
        let recordings = parts::recording_ids(&self.dir.join("recordings"))
            .map_err(|e| known("recordings", e))?;
        let stacks = parts::stack_ids(&self.dir.join("stacks")).map_err(|e| known("stacks", e))?;
        // Samples parts of recordings the recordings table does not list: an export
        // interrupted before its end wrote them, and exporting them again replaces them.
        let samples = self.dir.join("samples");
        let mut leftovers = parts::samples_parts(&samples).map_err(|e| known("samples", e))?;
        // One partition layout per folder: a reader takes the folder's Hive keys from
        // its paths, and DuckDB refuses a folder whose parts disagree.
        if let Some(path) = leftovers
            .values()
            .find(|p| layout_of(&samples, p) != self.partition)
        {
            let said = |p: Partition| match (p.host, p.date) {
                (false, false) => "no --partition".to_string(),
                (h, d) => format!(
                    "--partition {}",
                    [h.then_some("host"), d.then_some("date")]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(",")
                ),
            };
            let msg = format!(
                "{} was written with {}, and this export asks {}: give the same, or \
                 another folder",
                path.display(),
                said(layout_of(&samples, path)),
                said(self.partition)
            );
            return Err(known(
                "partition folders",
                std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
            ));
        }
        leftovers.retain(|id, _| !recordings.contains(id));
        // Temporary parts found before this export made any of its own.
        let mut temps = Vec::new();
        for table in ["samples", "stacks", "recordings"] {
            temps.extend(parts::temp_files(&self.dir.join(table)).map_err(|e| known(table, e))?);
        }
        let spool = |e| Error::io("the temporary file of the stacks", e);
        Ok(ParquetWriter {
            export: self,
            known_recordings: recordings,
            leftovers,
            temps,
            existing_stacks: stacks,
            stack_set: StackSet::new().map_err(spool)?,
            recordings: RecordingBatch::default(),
            recordings_part: None,
            added: Vec::new(),
            pending: 0,
        })
    }
}

/// What [`ParquetWriter::add`] did with a recording.
#[derive(Debug)]
pub enum Added {
    /// Its samples were written.
    Written(Box<Written>),
    /// A recording of this id is in the directory already (an earlier export, or an
    /// input given twice): nothing was written.
    AlreadyThere(String),
}

/// A recording written.
#[derive(Debug)]
pub struct Written {
    /// Its id (the `recording` column).
    pub id: String,
    /// The samples written.
    pub samples: u64,
    /// Its samples' part file.
    pub part: PathBuf,
    /// Its distinct stacks (those not in the directory yet are written at the end).
    pub stacks: u64,
    /// What became of its user stack copies (`--call-graph dwarf`).
    pub unwind: UnwindStats,
    /// What the reading could not use, to be said once each.
    pub warnings: Vec<String>,
}

/// An export under way: [`ParquetWriter::add`] each recording, then
/// [`ParquetWriter::finish`].
pub struct ParquetWriter {
    export: ParquetExport,
    known_recordings: HashSet<String>,
    /// Samples parts of recordings not in the recordings table, by id.
    leftovers: std::collections::HashMap<String, PathBuf>,
    /// Temporary parts in the directory before this export began.
    temps: Vec<PathBuf>,
    /// The stack ids of the directory's stacks parts.
    existing_stacks: crate::spool::Records,
    /// Every recording's distinct stacks, spooled.
    stack_set: StackSet,
    recordings: RecordingBatch,
    recordings_part: Option<Part>,
    /// The ids of the recordings written, which name the export's parts.
    added: Vec<String>,
    /// Recording rows not yet handed to their part.
    pending: usize,
}

/// An I/O error while writing the part file `path`, named.
fn io_err(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| Error::io(format!("writing {}", path.display()), e)
}

impl ParquetWriter {
    /// The samples part of recording `info`.
    fn samples_path(&self, info: &RecordingInfo) -> PathBuf {
        let mut p = self.export.dir.join("samples");
        if self.export.partition.host {
            p.push(format!(
                "host={}",
                partition_value(info.hostname.as_deref())
            ));
        }
        if self.export.partition.date {
            let day = info.date.map(date_text);
            p.push(format!("date={}", partition_value(day.as_deref())));
        }
        p.push(format!("part-{}.parquet", info.id));
        p
    }

    /// Read, symbolise and write the recording `reader` reads (from `path`).
    pub fn add(&mut self, path: &Path, reader: PerfReader) -> Result<Added> {
        let mut info = RecordingInfo::read(path, reader.meta())
            .map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        if !self.known_recordings.insert(info.id.clone()) {
            return Ok(Added::AlreadyThere(info.id));
        }
        let spool = |e| Error::io("the temporary file of the samples", e);
        let mut collector = StackCollector::new(Detail::Samples).map_err(spool)?;
        let opts = ReplayOptions::unwinding(self.export.unwind, self.export.symfs.clone());
        let done = replay(reader, &opts, |m, d| {
            d.sample().inspect(|s| collector.add(m, s));
        });
        let replay = done.inspect_err(|_| {
            self.known_recordings.remove(&info.id);
        })?;
        let symbols = SymbolOptions::for_replay(&replay, self.export.symfs.clone());
        let stacks = collector
            .finish(&replay, &mut Symbolizer::new(symbols), Sources::Off)
            .map_err(spool)?;
        // A pipe's features came among its records.
        info.hostname = info.hostname.or_else(|| replay.hostname.clone());
        info.os_release = info.os_release.or_else(|| replay.osrelease.clone());
        let dsos: Vec<&str> = replay
            .machine
            .dsos
            .iter()
            .map(|d| d.short_name.as_str())
            .collect();
        let part_path = self.samples_path(&info);
        let host = (!self.export.partition.host).then_some(info.hostname.as_deref());
        let mut batch = SampleBatch::new(&info.id, host);
        let mut part = Part::create(part_path.clone(), "samples", batch.schema())
            .map_err(io_err(&part_path))?;
        let mut ids = StackIds::new(&stacks, &dsos);
        let mut events = vec![(0u64, 0u64); stacks.event_names.len()];
        let mut distinct = 0;
        let stack_set = &mut self.stack_set;
        stacks
            .each_sample(|track, row| {
                let (id, frames) = ids.of(row.stack);
                if let Some(frames) = frames {
                    distinct += 1;
                    stack_set.push(id, frames.iter().map(|(s, d, a)| (&**s, *d, *a)))?;
                }
                let (dso, symbol) = ids.leaf(row.stack);
                let e = &mut events[track.event];
                e.0 += 1;
                e.1 = e.1.wrapping_add(row.period);
                batch.push(&SampleRow {
                    time: match row.when {
                        crate::stacks::When::Time(t) => Some(t),
                        crate::stacks::When::Nth(_) => None,
                    },
                    pid: track.pid,
                    tid: track.tid,
                    cpu: row.cpu,
                    event: &stacks.event_names[track.event],
                    period: row.period,
                    stack_id: id,
                    comm: &track.comm,
                    dso,
                    symbol,
                });
                if batch.len() >= BATCH {
                    part.write(&batch.take().map_err(other)?)?;
                }
                Ok(())
            })
            .map_err(io_err(&part_path))?;
        if batch.len() > 0 {
            batch
                .take()
                .map_err(other)
                .and_then(|b| part.write(&b))
                .map_err(io_err(&part_path))?;
        }
        let samples: u64 = events.iter().map(|e| e.0).sum();
        let leftover = self.leftovers.remove(&info.id);
        let part_path = part
            .commit_over(leftover.as_deref())
            .map_err(io_err(&part_path))?;
        // The leftover of another partition layout is this recording's samples too.
        if let Some(old) = leftover.filter(|old| *old != part_path) {
            std::fs::remove_file(&old).map_err(io_err(&old))?;
        }
        let events: Vec<(String, u64, u64)> = stacks
            .event_names
            .iter()
            .zip(&events)
            .filter(|(_, e)| e.0 > 0)
            .map(|(n, e)| (n.clone(), e.0, e.1))
            .collect();
        let path_text = path.display().to_string();
        self.recordings.push(&RecordingRow {
            recording: &info.id,
            path: &path_text,
            hostname: info.hostname.as_deref(),
            os_release: info.os_release.as_deref(),
            cmdline: info.cmdline.as_deref(),
            perf_version: info.perf_version.as_deref(),
            date: info.date,
            build_ids: &info.build_ids,
            events: &events,
            samples,
            lost_samples: replay.lost_samples,
        });
        self.pending += 1;
        self.added.push(info.id.clone());
        if self.pending >= BATCH {
            self.flush_recordings()?;
        }
        Ok(Added::Written(Box::new(Written {
            id: info.id,
            samples,
            part: part_path,
            stacks: distinct,
            unwind: replay.unwind.clone(),
            warnings: replay.warnings.clone(),
        })))
    }

    /// The name of this export's stacks and recordings parts: the hash of the ids of
    /// the recordings it wrote.
    fn export_id(&self) -> String {
        let mut h = Sha1::new();
        for id in &self.added {
            h.update(id.as_bytes());
        }
        h.finalize()[..8]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// A table's part of this export, made on first use. Its name is only known at the
    /// end (the recordings it holds), so it is written under a provisional one and
    /// named at [`ParquetWriter::finish`].
    fn part_of(dir: &Path, table: &str, schema: arrow_schema::SchemaRef) -> Result<Part> {
        let path = dir.join(table).join("part-pending.parquet");
        Part::create(path.clone(), table, schema).map_err(io_err(&path))
    }

    fn flush_recordings(&mut self) -> Result<()> {
        if self.pending == 0 {
            return Ok(());
        }
        self.pending = 0;
        if self.recordings_part.is_none() {
            let part = Self::part_of(&self.export.dir, "recordings", schema::recordings())?;
            self.recordings_part = Some(part);
        }
        let batch = self
            .recordings
            .take()
            .map_err(|e| Error::io("the recordings", other(e)))?;
        let part = self.recordings_part.as_mut().expect("made above");
        part.write(&batch)
            .map_err(|e| Error::io("writing the recordings", e))
    }

    /// Samples parts an interrupted export left (no recordings row, no stacks) that this
    /// export has not replaced: a query of the samples table alone counts them.
    pub fn leftovers(&self) -> Vec<&Path> {
        let mut v: Vec<&Path> = self.leftovers.values().map(PathBuf::as_path).collect();
        v.sort();
        v
    }

    /// Temporary part files that were in the directory when this export began: an
    /// export killed while writing left them (or one running now into the same
    /// directory writes them, so they are named, never removed).
    pub fn temp_leftovers(&self) -> &[PathBuf] {
        &self.temps
    }

    /// Write the stacks and what is left of the recordings, and name this export's
    /// stacks and recordings parts; returns the recordings written. Stacks go first: a
    /// recording in the recordings table has its stacks in place.
    pub fn finish(mut self) -> Result<Vec<String>> {
        self.flush_recordings()?;
        let name = format!("part-{}.parquet", self.export_id());
        let dir = self.export.dir.clone();
        let mut part: Option<Part> = None;
        let mut batch = StackBatch::default();
        let write = |batch: &mut StackBatch, part: &mut Option<Part>| -> io::Result<()> {
            if part.is_none() {
                let path = dir.join("stacks").join(&name);
                *part = Some(Part::create(path, "stacks", schema::stacks())?);
            }
            let rows = batch.take().map_err(other)?;
            part.as_mut().expect("made above").write(&rows)
        };
        let ParquetWriter {
            existing_stacks,
            stack_set,
            recordings_part,
            added,
            ..
        } = self;
        stack_set
            .finish(existing_stacks, |id, frames| {
                batch.push(id, frames);
                if batch.len() >= BATCH {
                    write(&mut batch, &mut part)?;
                }
                Ok(())
            })
            .and_then(|()| match batch.len() {
                0 => Ok(()),
                _ => write(&mut batch, &mut part),
            })
            .map_err(|e| Error::io("writing the stacks", e))?;
        for part in [part, recordings_part].into_iter().flatten() {
            part.commit_as(&name)
                .map_err(|e| Error::io(format!("naming {name}"), e))?;
        }
        Ok(added)
    }
}

/// A frame's `symbol`: its function, or where no symbol covers the address, the address
/// as perf report's Symbol column prints it (the text of [`SymbolName::Address`], which
/// `perfdata report` prints): one row per address, as perf's.
fn symbol_text<'a>(f: &Frame<'a>) -> Cow<'a, str> {
    match f.function {
        Some(name) => Cow::Borrowed(name),
        None => Cow::Owned(SymbolName::Address(f.addr).to_string()),
    }
}

/// A frame as the tables hold it: (symbol, DSO, address).
type FrameRow<'a> = (Cow<'a, str>, &'a str, u64);

/// Each local stack's id in the export (the hash of its frames) and its leaf, made on
/// first use.
struct StackIds<'a> {
    stacks: &'a Stacks,
    dsos: &'a [&'a str],
    /// Per local stack: its id and its leaf frame (None: a stack without frames), once
    /// known.
    ids: Vec<Option<(i64, Option<FrameId>)>>,
    /// The text of the last leaf asked for ([`StackIds::leaf`]).
    symbol: String,
}

impl<'a> StackIds<'a> {
    fn new(stacks: &'a Stacks, dsos: &'a [&'a str]) -> Self {
        StackIds {
            stacks,
            dsos,
            ids: vec![None; stacks.summary().prefixes],
            symbol: String::new(),
        }
    }

    /// Frame `f` as the tables hold it.
    fn row(&self, f: FrameId) -> FrameRow<'a> {
        let f = self.stacks.frame(f);
        let dso = f.dso.map_or("[unknown]", |d| self.dsos[d]);
        (symbol_text(&f), dso, f.addr)
    }

    /// The id of `stack`, and its frames (leaf first) if this is its first time.
    fn of(&mut self, stack: StackId) -> (i64, Option<Vec<FrameRow<'a>>>) {
        if let Some((id, _)) = self.ids[stack as usize] {
            return (id, None);
        }
        let ids = self.stacks.frames_of(stack);
        let frames: Vec<FrameRow<'a>> = ids.iter().rev().map(|&f| self.row(f)).collect();
        let mut h = Sha1::new();
        for (symbol, dso, addr) in &frames {
            h.update(symbol.as_bytes());
            h.update([0]);
            h.update(dso.as_bytes());
            h.update([0]);
            h.update(addr.to_le_bytes());
        }
        let id = i64::from_le_bytes(h.finalize()[..8].try_into().expect("8 bytes"));
        self.ids[stack as usize] = Some((id, ids.last().copied()));
        (id, Some(frames))
    }

    /// The leaf of `stack` (asked for by [`StackIds::of`] before): its (DSO, symbol).
    fn leaf(&mut self, stack: StackId) -> (&'a str, &str) {
        let Some((_, Some(leaf))) = self.ids[stack as usize] else {
            return ("[unknown]", "[unknown]");
        };
        let f = self.stacks.frame(leaf);
        let dso = f.dso.map_or("[unknown]", |d| self.dsos[d]);
        match f.function {
            Some(name) => (dso, name),
            None => {
                // symbol_text's, without a new String per sample.
                self.symbol.clear();
                write!(self.symbol, "{}", SymbolName::Address(f.addr)).expect("into a String");
                (dso, &self.symbol)
            }
        }
    }
}
