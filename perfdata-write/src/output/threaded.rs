//! [`ThreadedWriter`]: a file written by a thread, so that the kernel's copy of the
//! output into the page cache (most of a conversion's system time) runs beside the
//! reading and editing of records instead of after each buffer.
//!
//! Bytes are gathered in 1 MiB buffers; a full buffer goes, with its place in the file,
//! to the thread, which writes it there (`pwrite`). At most four are in flight, so memory
//! stays bounded whatever the output's size. Seeking only moves where the next bytes go.
//! `flush` waits until the thread has written everything and reports the first error.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

/// Bytes gathered before they go to the thread.
const BUFFER: usize = 1 << 20;

enum Job {
    /// Write the bytes at this offset.
    Write(u64, Vec<u8>),
    /// Say whether every write so far succeeded.
    Sync(SyncSender<io::Result<()>>),
}

/// A seekable writer over a file whose writes a thread carries out. See the module
/// documentation.
pub struct ThreadedWriter {
    file: File,
    /// Where `buf` goes in the file.
    buf_at: u64,
    buf: Vec<u8>,
    jobs: Option<SyncSender<Job>>,
    /// Buffers the thread is done with, to be filled again.
    spare: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<()>>,
    /// Set by the thread when a write failed (a full disk): the next buffer sent
    /// reports the error rather than converting the rest of the input for nothing.
    failed: Arc<AtomicBool>,
}

impl ThreadedWriter {
    /// Write `file` (from its current position) through a thread.
    pub fn new(file: &File) -> io::Result<Self> {
        let mut file = file.try_clone()?;
        let at = file.stream_position()?;
        let theirs = file.try_clone()?;
        let (jobs, rx) = sync_channel::<Job>(4);
        let (give_back, spare) = sync_channel::<Vec<u8>>(8);
        let failed = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&failed);
        let thread = super::interrupt::spawn_without_signals(move || {
            write_jobs(&theirs, rx, give_back, &flag)
        });
        Ok(ThreadedWriter {
            file,
            buf_at: at,
            buf: Vec::with_capacity(BUFFER),
            jobs: Some(jobs),
            spare,
            thread: Some(thread),
            failed,
        })
    }

    /// The file written (another handle of it).
    pub fn file(&self) -> &File {
        &self.file
    }

    /// Hand the gathered bytes to the thread; the next ones go right after them.
    fn send(&mut self) -> io::Result<()> {
        if self.failed.load(Ordering::Relaxed) {
            // The thread's error, as flush reports it.
            self.flush_written()?;
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        let next = self
            .spare
            .try_recv()
            .map(|mut v| {
                v.clear();
                v
            })
            .unwrap_or_else(|_| Vec::with_capacity(BUFFER));
        let full = std::mem::replace(&mut self.buf, next);
        let at = self.buf_at;
        self.buf_at += full.len() as u64;
        self.job(Job::Write(at, full))
    }

    fn job(&mut self, job: Job) -> io::Result<()> {
        let gone = || io::Error::other("the output's writer thread stopped");
        self.jobs
            .as_ref()
            .ok_or_else(gone)?
            .send(job)
            .map_err(|_| gone())
    }
}

/// The thread: write each job's bytes at its offset; after an error, write nothing more
/// and report it at every sync.
fn write_jobs(file: &File, jobs: Receiver<Job>, give_back: SyncSender<Vec<u8>>, flag: &AtomicBool) {
    let mut failed: Option<(io::ErrorKind, String)> = None;
    for job in jobs {
        match job {
            Job::Write(at, bytes) => {
                if failed.is_none() {
                    if let Err(e) = file.write_all_at(&bytes, at) {
                        failed = Some((e.kind(), e.to_string()));
                        flag.store(true, Ordering::Relaxed);
                    }
                }
                let _ = give_back.try_send(bytes);
            }
            Job::Sync(ack) => {
                let result = match &failed {
                    Some((kind, what)) => Err(io::Error::new(*kind, what.clone())),
                    None => Ok(()),
                };
                let _ = ack.send(result);
            }
        }
    }
}

impl Write for ThreadedWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.write_all(data).map(|()| data.len())
    }

    /// Every byte is taken at once, so this is the whole write: no loop over `write`
    /// (a conversion writes each record it keeps here, through a `dyn` writer).
    #[inline]
    fn write_all(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.len() + data.len() <= BUFFER {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        self.send()?;
        if data.len() >= BUFFER {
            // Large enough to go as it is.
            let at = self.buf_at;
            self.buf_at += data.len() as u64;
            self.job(Job::Write(at, data.to_vec()))?;
        } else {
            self.buf.extend_from_slice(data);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        self.flush_written()
    }
}

impl ThreadedWriter {
    /// Wait until the thread has written what it was given; its first error, if any.
    fn flush_written(&mut self) -> io::Result<()> {
        let (ack, done) = sync_channel(1);
        self.job(Job::Sync(ack))?;
        done.recv()
            .map_err(|_| io::Error::other("the output's writer thread stopped"))?
    }
}

impl Seek for ThreadedWriter {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let here = self.buf_at + self.buf.len() as u64;
        let to = match pos {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => here.checked_add_signed(d),
            SeekFrom::End(d) => {
                // The end is known once everything is written.
                self.flush()?;
                self.file.metadata()?.len().checked_add_signed(d)
            }
        }
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start"))?;
        if to != here {
            self.send()?;
            self.buf_at = to;
        }
        Ok(to)
    }

    fn stream_position(&mut self) -> io::Result<u64> {
        Ok(self.buf_at + self.buf.len() as u64)
    }
}

impl Drop for ThreadedWriter {
    /// What was not flushed is written (or its error lost, as a `BufWriter`'s would be).
    fn drop(&mut self) {
        let _ = self.send();
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn writes_and_seeks_land_where_a_file_would_have_them() {
        let file = tempfile::tempfile().unwrap();
        let mut expected = vec![0u8; 0];
        {
            let mut w = ThreadedWriter::new(&file).unwrap();
            // Small writes, one larger than a buffer, a seek back to patch a header
            // and a seek to the end: the convert writer's pattern.
            w.write_all(&[0u8; 16]).unwrap();
            expected.extend_from_slice(&[0u8; 16]);
            for i in 0..300_000u32 {
                w.write_all(&i.to_le_bytes()).unwrap();
                expected.extend_from_slice(&i.to_le_bytes());
            }
            let big: Vec<u8> = (0..3 * BUFFER).map(|i| (i % 251) as u8).collect();
            w.write_all(&big).unwrap();
            expected.extend_from_slice(&big);
            assert_eq!(w.stream_position().unwrap(), expected.len() as u64);
            w.seek(SeekFrom::Start(4)).unwrap();
            w.write_all(b"HEAD").unwrap();
            expected[4..8].copy_from_slice(b"HEAD");
            let end = w.seek(SeekFrom::End(0)).unwrap();
            assert_eq!(end, expected.len() as u64);
            w.write_all(b"tail").unwrap();
            expected.extend_from_slice(b"tail");
            w.flush().unwrap();
        }
        let mut got = Vec::new();
        (&file).seek(SeekFrom::Start(0)).unwrap();
        (&file).read_to_end(&mut got).unwrap();
        assert_eq!(got.len(), expected.len());
        assert!(got == expected);
    }

    #[test]
    fn a_write_error_stops_the_writes_that_follow() {
        let path = tempfile::NamedTempFile::new().unwrap();
        let file = File::open(path.path()).unwrap();
        let mut w = ThreadedWriter::new(&file).unwrap();
        let chunk = vec![7u8; 64 << 10];
        // The thread fails on the first buffer; a later write says so, and every one
        // after it. How many buffers go before the thread's flag is seen depends on the
        // scheduler (a loaded machine once saw 112 chunks, seven buffers), so the bound
        // is only that the error comes while writing, long before the end.
        let failed_at = (0..1000).find(|_| w.write_all(&chunk).is_err());
        assert!(failed_at.is_some_and(|n| n < 1000), "{failed_at:?}");
        assert!(w.write_all(&chunk).is_err() || w.flush().is_err());
    }

    #[test]
    fn a_write_error_is_reported_at_flush() {
        // A read-only handle: every write of the thread fails.
        let path = tempfile::NamedTempFile::new().unwrap();
        let file = File::open(path.path()).unwrap();
        let mut w = ThreadedWriter::new(&file).unwrap();
        w.write_all(b"bytes").unwrap();
        assert!(w.flush().is_err());
    }
}
