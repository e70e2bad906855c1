//! Where a recording's AUX buffers are, and their bytes read when the decoder reaches
//! them. perf queues every AUXTRACE buffer before it decodes (`auxtrace_queues__add_event`
//! keeps the file offset of each) and reads one when its queue's decoder needs it
//! (`auxtrace_buffer__get_data`); perfdata does the same, so memory does not grow with
//! the trace: only the buffer being decoded, per queue, is held.
//!
//! The bytes are read from the input file where the AUXTRACE record is stored as is
//! (its data follows it in the file). Where it is not (a record inside compressed
//! records, a perf.data directory's streams, memory), the data is copied as the
//! recording is read to an anonymous temporary file and read from there.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::sync::Mutex;

use perfdata_core::raw::Origin;
use perfdata_core::record::RecordBody;
use perfdata_core::RecordRef;
use perfdata_core::{Error, PerfReader, Result};

/// The most bytes of one AUX buffer held in memory while it is decoded. perf's
/// decoder takes a buffer whole; a larger buffer (perf record's AUX area is a few MiB)
/// leaves the trace undecoded rather than memory growing with it.
pub const MAX_BUFFER_BYTES: u64 = 256 << 20;

/// One AUXTRACE record's data, where it is: perf's `struct auxtrace_buffer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuxBuffer {
    /// Offset of the AUXTRACE record in the file (or stream).
    pub file_offset: u64,
    /// Offset of the data in the AUX area (perf's `buffer->offset`).
    pub offset: u64,
    /// perf's `reference`: for Intel PT, the TSC when the data was copied.
    pub reference: u64,
    /// Index of the mmap it came from.
    pub idx: u32,
    /// Thread of the data (-1 for CPU-wide).
    pub tid: i32,
    /// CPU of the data (-1 for per-thread).
    pub cpu: i32,
    /// Bytes of trace.
    pub size: u64,
    /// Where the bytes are: in the input file, or the temporary file they were copied to.
    pub(super) at: u64,
    /// Whether they were copied.
    pub(super) copied: bool,
}

/// Where the buffers' bytes are read from.
#[derive(Debug, Default)]
pub struct AuxStore {
    /// The input file, for buffers stored as is in it.
    input: Option<File>,
    /// The temporary file buffers were copied to.
    copied: Option<File>,
    /// The first read that failed (a decoder's queue then ends there).
    failed: Mutex<Option<String>>,
}

impl AuxStore {
    /// The bytes of `b`.
    pub fn read(&self, b: &AuxBuffer) -> Result<Vec<u8>> {
        let file = if b.copied {
            self.copied.as_ref()
        } else {
            self.input.as_ref()
        };
        let context = || format!("cannot read the AUX buffer at offset {:#x}", b.file_offset);
        let file = file.ok_or_else(|| Error::io(context(), io::ErrorKind::NotFound.into()))?;
        let len = usize::try_from(b.size)
            .map_err(|_| Error::io(context(), io::ErrorKind::OutOfMemory.into()))?;
        let mut data = vec![0; len];
        file.read_exact_at(&mut data, b.at)
            .map_err(|e| Error::io(context(), e))?;
        Ok(data)
    }

    /// The bytes of `b` for a decoder: `None` (the queue's data ends) where they cannot
    /// be read, the error kept for [`AuxStore::failure`].
    pub fn read_for_decoder(&self, b: &AuxBuffer) -> Option<Vec<u8>> {
        match self.read(b) {
            Ok(data) => Some(data),
            Err(e) => {
                let mut failed = self.failed.lock().unwrap_or_else(|p| p.into_inner());
                failed.get_or_insert_with(|| e.to_string());
                None
            }
        }
    }

    /// The first read that failed while decoding, if one did.
    pub fn failure(&self) -> Option<String> {
        self.failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The AUX buffers of a recording as it is read: where each is, the bytes copied to a
/// temporary file where the input cannot be read there again.
pub(super) struct Collector {
    input: Option<File>,
    copy: Option<BufWriter<File>>,
    copied: u64,
    /// The buffers found, in file order.
    pub(super) buffers: Vec<AuxBuffer>,
    /// The largest buffer's size.
    pub(super) largest: u64,
}

impl Collector {
    /// A collector of the buffers `reader` holds: read from its file when they are in it
    /// as stored.
    pub(super) fn new(reader: &PerfReader) -> Result<Collector> {
        let input = match reader.input_file() {
            Some(f) => Some(
                f.try_clone()
                    .map_err(|e| Error::io("cannot reopen the input", e))?,
            ),
            None => None,
        };
        Ok(Collector {
            input,
            copy: None,
            copied: 0,
            buffers: Vec::new(),
            largest: 0,
        })
    }

    /// Note the AUXTRACE record `item`: where its data is, copying the part held unless
    /// the input holds it as stored. True when the rest of the data (beyond what the
    /// reader held) is to be copied too, with [`Collector::copy_bytes`].
    pub(super) fn add(&mut self, item: RecordRef<'_>) -> Result<bool> {
        // The record's fields without a copy of its data.
        let mut raw = item.raw;
        raw.payload = &[];
        let RecordBody::Auxtrace(a) = RecordRef::new(raw, item.meta).decode()?.body else {
            return Ok(false);
        };
        let size = item.raw.payload_len();
        self.largest = self.largest.max(size);
        let stored = item.raw.origin == Origin::Top && self.input.is_some();
        let at = if stored {
            item.raw.offset + item.raw.bytes.len() as u64
        } else {
            self.copied
        };
        self.buffers.push(AuxBuffer {
            file_offset: item.raw.offset,
            offset: a.offset,
            reference: a.reference,
            idx: a.idx,
            tid: a.tid,
            cpu: a.cpu as i32,
            size,
            at,
            copied: !stored,
        });
        if stored {
            return Ok(false);
        }
        self.copy_bytes(item.raw.payload)?;
        Ok(item.raw.rest > 0)
    }

    /// Copy `bytes` of a buffer's data to the temporary file.
    pub(super) fn copy_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let context = |e| Error::io("cannot copy the AUX data to a temporary file", e);
        if self.copy.is_none() {
            let file = crate::spool::temp_file().map_err(context)?;
            self.copy = Some(BufWriter::with_capacity(1 << 20, file));
        }
        if let Some(out) = self.copy.as_mut() {
            out.write_all(bytes).map_err(context)?;
        }
        self.copied += bytes.len() as u64;
        Ok(())
    }

    /// The store the buffers are read from.
    pub(super) fn finish(self) -> Result<(Vec<AuxBuffer>, AuxStore)> {
        let copied = match self.copy {
            Some(out) => Some(out.into_inner().map_err(|e| {
                Error::io(
                    "cannot copy the AUX data to a temporary file",
                    e.into_error(),
                )
            })?),
            None => None,
        };
        Ok((
            self.buffers,
            AuxStore {
                input: self.input,
                copied,
                failed: Mutex::default(),
            },
        ))
    }
}
