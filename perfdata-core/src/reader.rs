//! Opening a recording and walking its records.
//!
//! [`PerfReader::open`] takes a file (memory-mapped), a pipe stream (a file holding one,
//! or `-` for stdin, read without seeking), or a perf.data directory. Its records come
//! from [`PerfReader::next_record`] as raw slices together with the metadata known at
//! that point, which in pipe mode grows as HEADER_* records go by. COMPRESSED and
//! COMPRESSED2 records are expanded with one zstd stream per data stream; by default
//! the container is returned first, then the records inside it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use binrw::Endian;

use crate::error::{Error, Problem, Result};
use crate::header::{self, Container, Probe};
use crate::input::{read_up_to, Bytes, Prefixed};
use crate::meta::{ContainerKind, Metadata};
use crate::raw::{
    advance_slice, locate, plausible_header, Decompressor, Located, RawRecord, Span, StreamRecords,
};
use crate::record::{DecodeContext, Record};
use crate::truncated;

/// What the reader returns of compressed records (COMPRESSED, COMPRESSED2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ReadOptions {
    /// The records inside compressed records, never the containers: every record once,
    /// as a copy loop needs them (the default, so that copying every record cannot
    /// double any).
    #[default]
    Contents,
    /// The compressed records as they are stored, not what they hold.
    Containers,
    /// Each compressed record, then the records inside it: what `perf report --stats`
    /// counts and `perfdata dump` shows. A writer given all of them writes each record
    /// twice.
    ContainersAndContents,
}

impl ReadOptions {
    /// Whether compressed records are expanded into the records they hold.
    pub fn decompress(self) -> bool {
        self != ReadOptions::Containers
    }

    /// Whether the compressed records themselves are returned.
    pub fn keep_containers(self) -> bool {
        self != ReadOptions::Contents
    }
}

enum SourceKind {
    /// A data section or a whole headerless stream in memory.
    Slice {
        bytes: Arc<Bytes>,
        start: usize,
        end: usize,
        pos: usize,
        /// Pipe-mode streams may end with junk; file data sections may not.
        junk_allowed: bool,
        /// Mapped pages before this offset have been given back.
        released: usize,
    },
    Stream(StreamRecords<Box<dyn Read>>),
}

struct Source {
    kind: SourceKind,
    decomp: Option<Decompressor>,
    stream: usize,
    name: String,
}

impl Source {
    /// Records of `bytes[start..end]`, the first at `start + skip`.
    fn slice(
        bytes: Arc<Bytes>,
        (start, end): (usize, usize),
        skip: usize,
        junk_allowed: bool,
        stream: usize,
        name: String,
    ) -> Self {
        Source {
            kind: SourceKind::Slice {
                bytes,
                start,
                end,
                pos: skip,
                junk_allowed,
                released: start,
            },
            decomp: None,
            stream,
            name,
        }
    }

    fn buffer(&self) -> &[u8] {
        self.kind.buffer()
    }
}

impl SourceKind {
    /// The buffer the spans this source frames index into.
    fn buffer(&self) -> &[u8] {
        match self {
            SourceKind::Slice {
                bytes, start, end, ..
            } => &bytes[*start..*end],
            SourceKind::Stream(s) => s.buffer(),
        }
    }
}

/// The warning for bytes after the last record of a stream that are not a record.
fn junk_warning(len: u64) -> String {
    format!("{len} bytes after the last record are not a record (junk); ignored")
}

/// One record and the metadata as of that record.
pub struct Item<'a> {
    pub raw: RawRecord<'a>,
    pub meta: &'a Metadata,
}

impl Item<'_> {
    fn context(&self) -> DecodeContext<'_> {
        DecodeContext {
            endian: self.meta.endian,
            events: &self.meta.events,
        }
    }

    /// The typed record.
    pub fn decode(&self) -> Result<Record> {
        Record::decode(
            self.raw.bytes,
            self.raw.payload,
            self.raw.offset,
            &self.context(),
        )
    }

    /// The typed record, or the raw bytes with the reason they did not decode.
    pub fn decode_or_raw(&self) -> (Record, Option<Error>) {
        Record::decode_or_raw(
            self.raw.bytes,
            self.raw.payload,
            self.raw.offset,
            &self.context(),
        )
    }

    /// Event, id, time, pid, tid and cpu, from fixed offsets.
    pub fn locate(&self) -> Located {
        locate(&self.raw, &self.meta.events, self.meta.endian)
    }
}

/// A recording opened for reading.
pub struct PerfReader {
    meta: Metadata,
    sources: Vec<Source>,
    current: usize,
    opts: ReadOptions,
    failed: bool,
    path: PathBuf,
}

impl PerfReader {
    /// Open a file, a directory, or `-` (stdin), expanding compressed records.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, ReadOptions::default())
    }

    pub fn open_with(path: impl AsRef<Path>, opts: ReadOptions) -> Result<Self> {
        let path = path.as_ref();
        if path.as_os_str() == "-" {
            return Self::from_stream(Box::new(std::io::stdin().lock()), opts, "stdin");
        }
        let md = std::fs::metadata(path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        if md.is_dir() {
            return Self::open_dir(path, opts);
        }
        if !md.is_file() {
            // A FIFO or a character device: read it as a stream.
            let f = std::fs::File::open(path)
                .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
            return Self::from_stream(Box::new(f), opts, &path.display().to_string());
        }
        let bytes = Arc::new(Bytes::map(path)?);
        let mut r = Self::from_bytes(bytes, opts, &path.display().to_string())?;
        r.path = path.to_path_buf();
        Ok(r)
    }

    /// Read a recording held in memory.
    pub fn from_vec(bytes: Vec<u8>, opts: ReadOptions) -> Result<Self> {
        Self::from_bytes(Arc::new(Bytes::Owned(bytes)), opts, "memory")
    }

    fn from_bytes(bytes: Arc<Bytes>, opts: ReadOptions, name: &str) -> Result<Self> {
        let probe = header::probe(&bytes)?;
        match probe.container {
            Container::Pipe => {
                let meta = Metadata::new(ContainerKind::Pipe, &probe);
                let whole = (0, bytes.len());
                let skip = header::PIPE_HEADER_SIZE as usize;
                let source = Source::slice(bytes, whole, skip, true, 0, name.to_string());
                Ok(Self::new(meta, vec![source], opts))
            }
            Container::File => {
                let (probe, mut hdr) = header::read_file_header(&bytes)?;
                let unfinished = truncated::take_unfinished_data(&mut hdr, bytes.len() as u64);
                let data = hdr.data;
                let mut meta = Metadata::load_file(&bytes, &probe, hdr, ContainerKind::File)?;
                let mut source = data_section_source(bytes, data, name);
                if let Some((at, warning)) = unfinished {
                    meta.warn(Some(at), warning);
                    meta.unfinished = true;
                    // It may end anywhere, as a stream may.
                    if let SourceKind::Slice { junk_allowed, .. } = &mut source.kind {
                        *junk_allowed = true;
                    }
                }
                Ok(Self::new(meta, vec![source], opts))
            }
        }
    }

    /// Read from a stream that cannot seek (stdin, a FIFO). A pipe-mode stream is read
    /// as it arrives; a file-mode file arriving this way is read into memory first, since
    /// its sections are found by offset.
    pub fn from_stream(mut input: Box<dyn Read>, opts: ReadOptions, name: &str) -> Result<Self> {
        let first = read_up_to(&mut input, header::PIPE_HEADER_SIZE as usize + 8)
            .map_err(|e| Error::io(format!("reading {name}"), e))?;
        let probe: Probe = header::probe(&first)?;
        match probe.container {
            Container::Pipe => {
                let meta = Metadata::new(ContainerKind::Pipe, &probe);
                let rest = first[header::PIPE_HEADER_SIZE as usize..].to_vec();
                let reader: Box<dyn Read> = Box::new(Prefixed::new(rest, input));
                let stream = StreamRecords::new(reader, header::PIPE_HEADER_SIZE, probe.endian, 0);
                let source = Source {
                    kind: SourceKind::Stream(stream),
                    decomp: None,
                    stream: 0,
                    name: name.to_string(),
                };
                Ok(Self::new(meta, vec![source], opts))
            }
            Container::File => {
                let mut all = first;
                input
                    .read_to_end(&mut all)
                    .map_err(|e| Error::io(format!("reading {name}"), e))?;
                Self::from_bytes(Arc::new(Bytes::Owned(all)), opts, name)
            }
        }
    }

    /// A perf.data directory: `data` (file mode, with DIR_FORMAT) and `data.N` streams.
    fn open_dir(dir: &Path, opts: ReadOptions) -> Result<Self> {
        let main = dir.join("data");
        let bytes = Arc::new(Bytes::map(&main)?);
        let (probe, hdr) = header::read_file_header(&bytes)?;
        let data = hdr.data;
        let meta = Metadata::load_file(&bytes, &probe, hdr, ContainerKind::Directory)?;
        let mut sources = vec![data_section_source(
            bytes,
            data,
            &main.display().to_string(),
        )];
        for (n, path) in numbered_streams(dir)? {
            let bytes = Arc::new(Bytes::map(&path)?);
            let whole = (0, bytes.len());
            let name = path.display().to_string();
            sources.push(Source::slice(bytes, whole, 0, false, n + 1, name));
        }
        let mut r = Self::new(meta, sources, opts);
        r.path = dir.to_path_buf();
        Ok(r)
    }

    fn new(meta: Metadata, sources: Vec<Source>, opts: ReadOptions) -> Self {
        PerfReader {
            meta,
            sources,
            current: 0,
            opts,
            failed: false,
            path: PathBuf::new(),
        }
    }

    /// The metadata known so far (complete for file mode; in pipe mode it grows while
    /// records are read).
    pub fn meta(&self) -> &Metadata {
        &self.meta
    }

    pub fn into_meta(self) -> Metadata {
        self.meta
    }

    pub fn endian(&self) -> Endian {
        self.meta.endian
    }

    /// How records are returned (whether compressed records are expanded).
    pub fn options(&self) -> ReadOptions {
        self.opts
    }

    /// The path this reader was opened from (empty for streams and memory).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Names of the data streams (one, or `data` + `data.N` for a directory).
    pub fn stream_names(&self) -> Vec<String> {
        self.sources.iter().map(|s| s.name.clone()).collect()
    }

    /// Split a directory reader into one reader per data stream (`data`, then `data.N`),
    /// each with a copy of the metadata: what merging the streams by time needs. Any
    /// other reader comes back as the only element.
    pub fn into_streams(self) -> Vec<PerfReader> {
        let PerfReader {
            meta,
            sources,
            opts,
            path,
            ..
        } = self;
        sources
            .into_iter()
            .map(|source| PerfReader {
                meta: meta.clone(),
                sources: vec![source],
                current: 0,
                opts,
                failed: false,
                path: path.clone(),
            })
            .collect()
    }

    /// The next record, with the metadata as of that record; `Ok(None)` at the end.
    /// After an error, the reader returns `Ok(None)`.
    pub fn next_record(&mut self) -> Result<Option<Item<'_>>> {
        if self.failed {
            return Ok(None);
        }
        let (src, inner, span) = match self.advance() {
            Ok(Some(found)) => found,
            Ok(None) => return Ok(None),
            Err(e) => {
                self.failed = true;
                return Err(e);
            }
        };
        let source = &self.sources[src];
        let buf = if inner {
            source
                .decomp
                .as_ref()
                .expect("inner records come from a decompressor")
                .buffer()
        } else {
            source.buffer()
        };
        let raw = span.record(buf, self.meta.endian);
        if let Err(e) = self.meta.fold(&raw) {
            self.failed = true;
            return Err(e);
        }
        Ok(Some(Item {
            raw,
            meta: &self.meta,
        }))
    }

    /// Find the next record: (source index, from the decompressor?, span).
    fn advance(&mut self) -> Result<Option<(usize, bool, Span)>> {
        let endian = self.meta.endian;
        loop {
            // Whether the current source ended inside a record (a warning, not an error).
            let mut cut_short = false;
            let cur = self.current;
            let Some(source) = self.sources.get_mut(cur) else {
                return Ok(None);
            };
            let Source {
                kind,
                decomp,
                stream,
                name,
            } = source;
            if self.opts.decompress() {
                if let Some(d) = decomp.as_mut() {
                    if let Some(span) = d.advance()? {
                        return Ok(Some((cur, true, span)));
                    }
                }
            }
            let top = match kind {
                SourceKind::Slice {
                    bytes,
                    start,
                    end,
                    pos,
                    junk_allowed,
                    released,
                } => {
                    // Records before `pos` have been handed out and dropped.
                    bytes.release_behind(released, *start + *pos);
                    let data = &bytes[*start..*end];
                    match advance_slice(data, pos, *start as u64, endian, *stream) {
                        Ok(top) => top,
                        Err(e) if *junk_allowed && !plausible_header(&data[*pos..], endian) => {
                            let junk = (data.len() - *pos) as u64;
                            self.meta.warn(
                                Some((*start + *pos) as u64),
                                format!("{}: {e}", junk_warning(junk)),
                            );
                            *pos = data.len();
                            None
                        }
                        Err(e) if *junk_allowed && truncated::is_truncation(&e) => {
                            self.meta
                                .warn(e.offset(), truncated::truncation_warning(&e));
                            cut_short = true;
                            *pos = data.len();
                            None
                        }
                        Err(e) => return Err(e),
                    }
                }
                SourceKind::Stream(s) => match s.advance() {
                    Err(e) if truncated::is_truncation(&e) => {
                        self.meta
                            .warn(e.offset(), truncated::truncation_warning(&e));
                        cut_short = true;
                        None
                    }
                    other => other?,
                },
            };
            let Some(span) = top else {
                if let Some(d) = decomp.as_ref() {
                    if d.pending() > 0 && self.opts.decompress() && cut_short {
                        let at = d.total_out() - d.pending() as u64;
                        self.meta.warn(
                            Some(d.pending_container()),
                            format!(
                                "the decompressed stream of {name} ends {} bytes into a \
                                 record (at decompressed byte {at}): cut short with its input",
                                d.pending()
                            ),
                        );
                    } else if d.pending() > 0 && self.opts.decompress() {
                        // Named by the compressed record the cut record starts in.
                        let pos = d.total_out() - d.pending() as u64;
                        return Err(Error::format(
                            d.pending_container(),
                            format!(
                                "the record at byte {pos} of the decompressed stream of {name}"
                            ),
                            Problem::Truncated {
                                needed: 8,
                                available: d.pending() as u64,
                            },
                        ));
                    }
                }
                if let SourceKind::Stream(s) = kind {
                    if let Some(crate::raw::StreamEnd::Junk { offset, len }) = s.end() {
                        let (offset, len) = (*offset, *len);
                        self.meta.warn(Some(offset), junk_warning(len));
                    }
                }
                self.current += 1;
                continue;
            };
            let raw = span.record(kind.buffer(), endian);
            if raw.is_compressed() && self.opts.decompress() {
                self.meta.compression_record = Some(raw.record_type());
                if decomp.is_none() {
                    *decomp = Some(Decompressor::new(endian, *stream)?);
                }
                decomp
                    .as_mut()
                    .expect("just created")
                    .feed(raw.bytes, raw.offset)?;
                if !self.opts.keep_containers() {
                    continue;
                }
            }
            return Ok(Some((cur, false, span)));
        }
    }
}

/// The data section of a file-mode file as a source.
fn data_section_source(bytes: Arc<Bytes>, data: crate::header::FileSection, name: &str) -> Source {
    let range = (data.offset as usize, data.end() as usize);
    Source::slice(bytes, range, 0, false, 0, name.to_string())
}

/// `data.0`, `data.1`, ... of a perf.data directory, in number order.
fn numbered_streams(dir: &Path) -> Result<Vec<(usize, PathBuf)>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("cannot list {}", dir.display()), e))?;
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("cannot list {}", dir.display()), e))?;
        let name = entry.file_name();
        let Some(n) = name
            .to_str()
            .and_then(|s| s.strip_prefix("data."))
            .and_then(|s| s.parse::<usize>().ok())
        else {
            continue;
        };
        out.push((n, entry.path()));
    }
    out.sort();
    Ok(out)
}
