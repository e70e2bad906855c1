//! Where the bytes come from: a memory-mapped file, an owned buffer, or a stream.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::{Arc, OnceLock};

use crate::error::{Error, Result};

/// The bytes of a whole file: memory-mapped when it is a regular file, owned otherwise.
pub enum Bytes {
    /// A mapped regular file, the file (what a writer may copy ranges from), and the
    /// thread that maps and gives back its pages beside the walk, once it has one.
    Mmap(Arc<memmap2::Mmap>, File, OnceLock<Option<Ahead>>),
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mmap(m, ..) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// What the helper thread of a mapping does, in order: map `start..end`
/// (MADV_POPULATE_READ), or give it back (MADV_DONTNEED).
enum Advice {
    Populate(usize, usize),
    Release(usize, usize),
}

/// A thread that maps the chunk after the one the walk is in and gives back the one it
/// left, so that the kernel's work on the mapping (`stats` of a 385 MiB recording spent
/// 55% of its time mapping and unmapping pages; 74 -> 61 ms with the helper, paired
/// medians) runs on another core. What is mapped stays bounded whatever the helper's
/// pace: the walk waits to hand over a job while four are queued, and a chunk the walk
/// has already given back is not mapped again. The thread holds the mapping, so it
/// cannot be unmapped under it; it ends when the bytes are dropped.
pub struct Ahead {
    jobs: SyncSender<Advice>,
    /// Where the walk's pages have been given back up to: a chunk before it is stale.
    released: Arc<AtomicUsize>,
}

impl Ahead {
    /// The helper of `map`, with the process's signals blocked in it (the main thread
    /// takes SIGINT); `None` where a thread cannot be started (the walk then maps and
    /// releases pages itself).
    fn start(map: Arc<memmap2::Mmap>) -> Option<Self> {
        let (jobs, rx) = sync_channel::<Advice>(4);
        let released = Arc::new(AtomicUsize::new(0));
        let behind = Arc::clone(&released);
        let spawn = move || {
            for job in rx {
                match job {
                    Advice::Populate(from, _) if from < behind.load(Ordering::Relaxed) => {}
                    #[cfg(target_os = "linux")]
                    Advice::Populate(from, to) => {
                        let _ = map.advise_range(memmap2::Advice::PopulateRead, from, to - from);
                    }
                    #[cfg(not(target_os = "linux"))]
                    Advice::Populate(..) => {}
                    Advice::Release(from, to) => {
                        // SAFETY: as in `Bytes::release`: a read-only file mapping.
                        let _ = unsafe {
                            map.unchecked_advise_range(
                                memmap2::UncheckedAdvice::DontNeed,
                                from,
                                to - from,
                            )
                        };
                    }
                }
            }
        };
        // SAFETY: plain signal mask calls on sets we own; the old mask is put back.
        let thread = unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
            let t = std::thread::Builder::new()
                .name("perfdata-map".into())
                .spawn(spawn);
            libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            t
        };
        thread.ok().map(|_| Ahead { jobs, released })
    }

    /// Ask for `start..end` (page-aligned, within the map) to be mapped, waiting while
    /// four jobs are queued.
    fn map(&self, start: usize, end: usize) {
        let _ = self.jobs.send(Advice::Populate(start, end));
    }

    /// Give `start..end` (page-aligned) back, waiting while four jobs are queued.
    /// Whether the helper took it.
    fn release(&self, start: usize, end: usize) -> bool {
        self.released.fetch_max(end, Ordering::Relaxed);
        self.jobs.send(Advice::Release(start, end)).is_ok()
    }
}

/// Files smaller than this are walked without a helper thread: starting one costs more
/// than it saves.
const AHEAD_FROM: usize = 4 * RELEASE_CHUNK;

/// How far behind the reading position pages are given back (see [`Bytes::release`]),
/// and how far ahead they are mapped (see [`Bytes::populate`]): a few chunks of the file
/// are mapped at a time (the walk's, the one the helper maps next, and those behind it
/// until the helper gives them back; `tests/mapped_walk.rs` measures 8 MiB).
pub(crate) const RELEASE_CHUNK: usize = 4 << 20;

impl Bytes {
    /// Tell the kernel the mapped pages in `range` are no longer needed. Touched pages of
    /// a file mapping count in a process's resident memory; giving back what a forward
    /// walk has passed keeps memory flat however large the file. The mapping is
    /// read-only and file-backed, so a page touched again is simply read again.
    pub fn release(&self, start: usize, end: usize) {
        if let Bytes::Mmap(m, ..) = self {
            let page = 4096;
            let from = start.div_ceil(page) * page;
            let to = end / page * page;
            if to > from {
                if self.ahead().is_some_and(|ahead| ahead.release(from, to)) {
                    return;
                }
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
            match self.ahead() {
                // The helper mapped this chunk already (see `Bytes::start_walk`); it maps
                // the next one while the walk reads this one.
                Some(ahead) => {
                    self.populate_by(ahead, pos + RELEASE_CHUNK, pos + 2 * RELEASE_CHUNK)
                }
                None => self.populate(pos, pos + RELEASE_CHUNK),
            }
        }
    }

    /// [`Bytes::populate`] done by the helper.
    fn populate_by(&self, ahead: &Ahead, start: usize, end: usize) {
        let page = 4096;
        let from = start / page * page;
        let to = end.min(self.len()).div_ceil(page) * page;
        if to > from {
            ahead.map(from, to);
        }
    }

    /// A walk starts at `start`: its first chunk is mapped now, the one after it by the
    /// helper (for a file large enough to have one).
    pub fn start_walk(&self, start: usize) {
        self.populate(start, start + RELEASE_CHUNK);
        if let Some(ahead) = self.ahead() {
            self.populate_by(ahead, start + RELEASE_CHUNK, start + 2 * RELEASE_CHUNK);
        }
    }

    /// The mapping's helper thread, started on first use for a large mapping.
    fn ahead(&self) -> Option<&Ahead> {
        match self {
            Bytes::Mmap(m, _, ahead) if m.len() >= AHEAD_FROM => {
                ahead.get_or_init(|| Ahead::start(Arc::clone(m))).as_ref()
            }
            _ => None,
        }
    }

    /// Map the pages of `start..end` (clamped to the file) now, in one call, instead of
    /// one page fault per few pages as the walk touches them (MADV_POPULATE_READ, Linux
    /// 5.14; older kernels refuse it and the walk faults as before). Pages not in the
    /// page cache are read here too, ahead of the walk.
    pub fn populate(&self, start: usize, end: usize) {
        if let Bytes::Mmap(m, ..) = self {
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
            Bytes::Mmap(_, file, _) => Some(file),
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
        Ok(Bytes::Mmap(Arc::new(map), file, OnceLock::new()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_bytes_given_back_read_as_the_file_again() {
        // What a reader of the bytes behind the walk (the replay's queue of keys)
        // relies on: pages given back are the file's when touched again.
        let path = std::env::temp_dir().join(format!("perfdata-release-{}", std::process::id()));
        let want: Vec<u8> = (0..5 * 4096 + 100)
            .map(|i: u32| (i * 7 % 251) as u8)
            .collect();
        std::fs::write(&path, &want).expect("writes");
        let bytes = Bytes::map(&path).expect("maps");
        std::fs::remove_file(&path).expect("removes");
        assert_eq!(&bytes[..], &want[..]);
        bytes.release(0, bytes.len());
        let mut released = 0;
        bytes.release_behind(&mut released, bytes.len());
        assert_eq!(&bytes[..], &want[..]);
    }
}
