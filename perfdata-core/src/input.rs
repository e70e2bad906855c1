//! Where the bytes come from: a memory-mapped file, an owned buffer, or a stream.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

use crate::error::{Error, Result};

/// The bytes of a whole file: memory-mapped when it is a regular file, owned otherwise.
pub enum Bytes {
    /// A mapped regular file, and the file (what a writer may copy ranges from).
    Mmap(memmap2::Mmap, File),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mmap(m, _) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// How far behind the reading position pages are given back (see [`Bytes::release`]),
/// and how far ahead they are mapped (see [`Bytes::populate`]): at most two chunks of
/// the file are mapped at a time.
pub(crate) const RELEASE_CHUNK: usize = 8 << 20;

impl Bytes {
    /// Tell the kernel the mapped pages in `range` are no longer needed. Touched pages of
    /// a file mapping count in a process's resident memory; giving back what a forward
    /// walk has passed keeps memory flat however large the file. The mapping is
    /// read-only and file-backed, so a page touched again is simply read again.
    pub fn release(&self, start: usize, end: usize) {
        if let Bytes::Mmap(m, _) = self {
            let page = 4096;
            let from = start.div_ceil(page) * page;
            let to = end / page * page;
            if to > from {
                // SAFETY: DONTNEED on a read-only file mapping drops cached pages only;
                // no data the mapping shows can change.
                let _ = unsafe {
                    m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
                };
            }
        }
    }

    /// Release everything before `pos` once at least [`RELEASE_CHUNK`] bytes have gone by
    /// since `*released`, and map the chunk the walk goes into next.
    pub fn release_behind(&self, released: &mut usize, pos: usize) {
        if pos >= *released + RELEASE_CHUNK {
            self.release(*released, pos);
            *released = pos / 4096 * 4096;
            self.populate(pos, pos + RELEASE_CHUNK);
        }
    }

    /// Map the pages of `start..end` (clamped to the file) now, in one call, instead of
    /// one page fault per few pages as the walk touches them (MADV_POPULATE_READ, Linux
    /// 5.14; older kernels refuse it and the walk faults as before). Pages not in the
    /// page cache are read here too, ahead of the walk.
    pub fn populate(&self, start: usize, end: usize) {
        if let Bytes::Mmap(m, _) = self {
            let page = 4096;
            let from = start / page * page;
            let to = end.min(m.len()).div_ceil(page) * page;
            if to > from {
                #[cfg(target_os = "linux")]
                let _ = m.advise_range(memmap2::Advice::PopulateRead, from, to - from);
            }
        }
    }

    /// The mapped file, if the bytes are one.
    pub fn file(&self) -> Option<&File> {
        match self {
            Bytes::Mmap(_, file) => Some(file),
            Bytes::Owned(_) => None,
        }
    }

    /// Map the regular file at `path`.
    pub fn map(path: &Path) -> Result<Self> {
        let file = File::open(path)
            .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
        let len = file
            .metadata()
            .map_err(|e| Error::io(format!("cannot stat {}", path.display()), e))?
            .len();
        if len == 0 {
            // An empty file cannot be mapped; it is simply empty.
            return Ok(Bytes::Owned(Vec::new()));
        }
        // SAFETY: the map is read-only. A concurrent writer truncating the file under us
        // would be a problem for any reader of perf.data; perf itself maps the same way.
        let map = unsafe { memmap2::Mmap::map(&file) }
            .map_err(|e| Error::io(format!("cannot map {}", path.display()), e))?;
        Ok(Bytes::Mmap(map, file))
    }
}

/// Read up to `n` bytes, fewer only at end of input.
pub(crate) fn read_up_to<R: Read>(r: &mut R, n: usize) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(n);
    r.take(n as u64).read_to_end(&mut out)?;
    Ok(out)
}

/// A `Read` that first returns bytes already read from the stream (the probed header),
/// then the rest of the stream.
pub(crate) struct Prefixed<R> {
    prefix: Vec<u8>,
    pos: usize,
    inner: R,
}

impl<R> Prefixed<R> {
    pub(crate) fn new(prefix: Vec<u8>, inner: R) -> Self {
        Prefixed {
            prefix,
            pos: 0,
            inner,
        }
    }
}

impl<R: Read> Read for Prefixed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos < self.prefix.len() {
            let n = buf.len().min(self.prefix.len() - self.pos);
            buf[..n].copy_from_slice(&self.prefix[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}
