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

use crate::error::{Error, Result};
use crate::header::{self, Container, Probe};
use crate::input::{read_up_to, Bytes, Prefixed};
use crate::meta::{ContainerKind, Metadata};
use crate::raw::{Decompressor, RecordSource, Span, StreamEnd, StreamRecords};
use crate::truncated;

mod each;
mod record_ref;
mod sources;

pub use each::Piece;
pub use record_ref::RecordRef;

use sources::{Source, Top};

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

/// The warning for bytes after the last record of a stream that are not a record.
fn junk_warning(len: u64) -> String {
    format!("{len} bytes after the last record are not a record (junk); ignored")
}

/// The bytes of a reader's one input ([`PerfReader::input_bytes`]), shared.
#[derive(Clone)]
pub struct InputBytes(Arc<Bytes>);

impl InputBytes {
    /// Give the mapped pages of `start..end` back to the kernel (nothing for bytes not
    /// mapped from a file): for a reader of the bytes behind the walk, which touches
    /// again pages the walk gave back. They are read again from the file if touched.
    pub fn release(&self, start: usize, end: usize) {
        self.0.release(start, end);
    }
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

/// A recording opened for reading.
///
/// ```
/// use perfdata_core::PerfReader;
/// use perfdata_core::record::RecordType;
///
/// let mut reader = PerfReader::open(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data"))?;
/// let mut samples = 0;
/// while let Some(item) = reader.next_record()? {
///     samples += u64::from(item.raw.record_type() == RecordType::Sample);
/// }
/// assert_eq!(samples, 279); // as perf report --stats counts them
/// # Ok::<(), perfdata_core::Error>(())
/// ```
pub struct PerfReader {
    meta: Metadata,
    sources: Vec<Source>,
    current: usize,
    opts: ReadOptions,
    failed: bool,
    path: PathBuf,
    /// Where the last record came from (source index, from its decompressor?): whose
    /// streamed payload [`PerfReader::payload_chunk`] reads.
    last: Option<(usize, bool)>,
    /// Bytes of the input read so far, for a progress display (see
    /// [`PerfReader::progress`]).
    progress: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl PerfReader {
    /// Open a file, a directory, or `-` (stdin), expanding compressed records.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, ReadOptions::default())
    }

    /// Open a file, a directory, or `-` (stdin), reading compressed records as `opts` says.
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
                let records = header::PIPE_HEADER_SIZE as usize..bytes.len();
                let mut top = Top::slice(bytes, records, probe.endian, 0);
                if let Top::Slice { records, .. } = &mut top {
                    records.allow_junk();
                }
                let source = Source::new(top, 0, name.to_string());
                Ok(Self::new(meta, vec![source], opts))
            }
            Container::File => {
                let (probe, mut hdr) = header::read_file_header(&bytes)?;
                let unfinished = truncated::take_unfinished_data(&mut hdr, bytes.len() as u64);
                let data = hdr.data;
                let mut meta = Metadata::load_file(&bytes, &probe, hdr, ContainerKind::File)?;
                let mut source = data_section_source(bytes, data, meta.endian, name);
                if let Some((at, warning)) = unfinished {
                    meta.warn(Some(at), warning);
                    meta.unfinished = true;
                    // It may end anywhere, as a stream may.
                    if let Top::Slice { records, .. } = &mut source.top {
                        records.allow_junk();
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
                let source = Source::new(Top::Stream(stream), 0, name.to_string());
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
        let endian = meta.endian;
        let mut sources = vec![data_section_source(
            bytes,
            data,
            endian,
            &main.display().to_string(),
        )];
        for (n, path) in numbered_streams(dir)? {
            let bytes = Arc::new(Bytes::map(&path)?);
            let whole = 0..bytes.len();
            let name = path.display().to_string();
            sources.push(Source::new(
                Top::slice(bytes, whole, endian, n + 1),
                n + 1,
                name,
            ));
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
            last: None,
            progress: Default::default(),
        }
    }

    /// A counter of the input's bytes read so far (the file offset reached in the data
    /// being read; in a directory, in its current file), updated as records are read,
    /// for a progress display on another thread. Coarse where records go by fast: it
    /// moves at least every 8 MiB.
    pub fn progress(&self) -> std::sync::Arc<std::sync::atomic::AtomicU64> {
        std::sync::Arc::clone(&self.progress)
    }

    /// Note that the input was read up to `pos`.
    #[inline]
    fn note_progress(&self, pos: u64) {
        self.progress
            .store(pos, std::sync::atomic::Ordering::Relaxed);
    }

    /// The regular file the records are read from, when they all come from one mapped
    /// file (not a directory, a stream or memory). Records of
    /// [`Origin::Top`](crate::raw::Origin::Top) are its bytes at their
    /// [`offset`](crate::raw::RawRecord::offset): a writer may copy runs of unchanged
    /// records from it in the kernel instead of through memory.
    pub fn input_file(&self) -> Option<&std::fs::File> {
        match self.sources.as_slice() {
            [only] => only.top.mapped_file(),
            _ => None,
        }
    }

    /// The bytes of the one input the records are read from, when they are all read
    /// from one mapped file or buffer (not a directory or a stream), shared: a record
    /// read as stored is these bytes at its [`offset`](crate::raw::RawRecord::offset).
    /// For a caller that reads records again after the walk has passed them (the
    /// replay's queue of keys). The walk gives the mapped pages behind it back to the
    /// kernel (MADV_DONTNEED on a read-only file mapping), which reads them again when
    /// touched: the bytes stay what they were while this is held.
    pub fn input_bytes(&self) -> Option<InputBytes> {
        match self.sources.as_slice() {
            [only] => only.top.input_bytes().map(InputBytes),
            _ => None,
        }
    }

    /// The metadata known so far (complete for file mode; in pipe mode it grows while
    /// records are read).
    pub fn meta(&self) -> &Metadata {
        &self.meta
    }

    /// The metadata, the reader given up.
    pub fn into_meta(self) -> Metadata {
        self.meta
    }

    /// Byte order of the recording.
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
        // Read at once, the streams share what one stream may hold ahead.
        let limit = crate::raw::MAX_BUFFERED / sources.len().max(1) as u64;
        sources
            .into_iter()
            .map(|mut source| {
                source.limit = limit;
                source.top.set_limit(limit);
                source
            })
            .map(|source| PerfReader {
                meta: meta.clone(),
                sources: vec![source],
                current: 0,
                opts,
                failed: false,
                path: path.clone(),
                last: None,
                progress: Default::default(),
            })
            .collect()
    }

    /// The next record, with the metadata as of that record; `Ok(None)` at the end.
    /// After an error, the reader returns `Ok(None)`.
    pub fn next_record(&mut self) -> Result<Option<RecordRef<'_>>> {
        if self.failed {
            return Ok(None);
        }
        let (src, inner, span) = match self.advance() {
            Ok(Some(found)) => found,
            Ok(None) => {
                // Every stream ended (and dropped its decompressor): no payload is left.
                self.last = None;
                return Ok(None);
            }
            Err(e) => {
                self.failed = true;
                return Err(e);
            }
        };
        self.last = Some((src, inner));
        let source = &self.sources[src];
        let buf = match &source.decomp {
            Some(d) if inner => d.buffer(),
            _ => source.top.buffer(),
        };
        let raw = span.record(buf, self.meta.endian);
        if raw.origin == crate::raw::Origin::Top {
            // Saturating: a hostile payload size near 2^64 must not wrap (the record is
            // cut short by the end of the input later, with an error).
            self.note_progress(
                raw.offset
                    .saturating_add(raw.bytes.len() as u64)
                    .saturating_add(raw.payload_len()),
            );
        }
        if let Err(e) = self.meta.fold(&raw) {
            self.failed = true;
            return Err(e);
        }
        Ok(Some(RecordRef::new(raw, &self.meta)))
    }

    /// The next part (at most [`crate::raw::PAYLOAD_CHUNK`] bytes) of the payload of the
    /// last record that [`PerfReader::next_record`] returned, beyond what it held
    /// ([`RawRecord::rest`](crate::raw::RawRecord::rest) bytes in all, for a record larger than
    /// [`crate::raw::MAX_BUFFERED`]); `Ok(None)` when all of it was handed out. What is
    /// not read is skipped by the next `next_record`. A payload inside compressed
    /// records reads the compressed records it needs (they are not returned as records
    /// then).
    pub fn payload_chunk(&mut self) -> Result<Option<&[u8]>> {
        let Some((src, inner)) = self.last.filter(|_| !self.failed) else {
            return Ok(None);
        };
        let got = if inner {
            self.fill_decompressed_payload(src)
        } else {
            Ok(self.sources[src].top.payload_left() > 0)
        };
        match got {
            Ok(false) => return Ok(None),
            Ok(true) => {}
            Err(e) => {
                self.failed = true;
                return Err(e);
            }
        }
        let source = &mut self.sources[src];
        let chunk = match source.decomp.as_mut() {
            Some(d) if inner => d.payload_chunk(),
            _ => source.top.payload_chunk(),
        };
        if chunk.is_err() {
            self.failed = true;
        }
        chunk.map(Some)
    }

    /// Make bytes of a decompressed record's streamed payload ready, feeding the
    /// decompressor the compressed records that follow; `false` when none are left.
    fn fill_decompressed_payload(&mut self, src: usize) -> Result<bool> {
        let endian = self.meta.endian;
        let source = &mut self.sources[src];
        let Some(d) = source.decomp.as_mut() else {
            return Ok(false);
        };
        while d.payload_left() > 0 {
            if d.fill_payload()? > 0 {
                return Ok(true);
            }
            // The decompressed stream ends here (no record, or one not compressed):
            // inside the record, as for a reader that skips the payload.
            let Some(span) = source.top.advance()? else {
                return Err(d.cut_record_error(Some(&source.name)));
            };
            let raw = span.record(source.top.buffer(), endian);
            if !raw.is_compressed() {
                return Err(d.cut_record_error(Some(&source.name)));
            }
            self.meta.compression_record = Some(raw.record_type());
            d.feed(raw.bytes, raw.offset)?;
        }
        Ok(false)
    }

    /// Find the next record: (source index, from the decompressor?, span).
    fn advance(&mut self) -> Result<Option<(usize, bool, Span)>> {
        let endian = self.meta.endian;
        loop {
            let cur = self.current;
            let Some(source) = self.sources.get_mut(cur) else {
                return Ok(None);
            };
            let Source {
                top,
                decomp,
                stream,
                name,
                limit,
            } = source;
            if self.opts.decompress() {
                if let Some(d) = decomp.as_mut() {
                    if let Some(span) = d.advance()? {
                        return Ok(Some((cur, true, span)));
                    }
                }
            }
            // Whether the source ended inside a record (a warning, not an error).
            let mut cut_short = false;
            let next = match top.advance() {
                Err(e) if top.ends_anywhere() && truncated::is_truncation(&e) => {
                    self.meta
                        .warn(e.offset(), truncated::truncation_warning(&e));
                    cut_short = true;
                    None
                }
                other => other?,
            };
            let Some(span) = next else {
                if let Some(d) = decomp.as_ref().filter(|_| self.opts.decompress()) {
                    end_of_decompressed(&mut self.meta, d, name, cut_short)?;
                }
                // Its buffer (up to its limit) and its mapped pages are not kept while
                // later streams are read.
                *decomp = None;
                top.release_all();
                if let Some(StreamEnd::Junk { offset, len }) = top.end() {
                    let (offset, len) = (*offset, *len);
                    self.meta.warn(Some(offset), junk_warning(len));
                }
                self.current += 1;
                continue;
            };
            let raw = span.record(top.buffer(), endian);
            if raw.is_compressed() && self.opts.decompress() {
                self.meta.compression_record = Some(raw.record_type());
                if decomp.is_none() {
                    *decomp = Some(Decompressor::new(endian, *stream)?.with_limit(*limit));
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

/// At the end of a data stream, its decompressed stream must end with a whole record:
/// a warning if the input itself was cut short, an error otherwise.
fn end_of_decompressed(
    meta: &mut Metadata,
    d: &Decompressor,
    name: &str,
    cut_short: bool,
) -> Result<()> {
    if d.pending() == 0 && d.payload_left() == 0 {
        return Ok(());
    }
    if cut_short {
        let at = d.total_out() - d.pending() as u64;
        meta.warn(
            Some(d.pending_container()),
            format!(
                "the decompressed stream of {name} ends {} bytes into a record (at \
                 decompressed byte {at}): cut short with its input",
                d.pending()
            ),
        );
        return Ok(());
    }
    Err(d.cut_record_error(Some(name)))
}

/// The data section of a file-mode file as a source.
fn data_section_source(
    bytes: Arc<Bytes>,
    data: crate::header::FileSection,
    endian: Endian,
    name: &str,
) -> Source {
    let range = data.offset as usize..data.end() as usize;
    Source::new(Top::slice(bytes, range, endian, 0), 0, name.to_string())
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
