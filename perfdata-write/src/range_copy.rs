//! Runs of unchanged input records copied file to file by the kernel
//! (`copy_file_range`), not through memory, and beside the reading: what makes an
//! identity conversion or a strip that keeps long stretches run at `cp`'s speed.
//!
//! The file writer hands each record that is the input's own bytes to [`RangeCopy`]. A
//! run of records that follow each other in the input is written through the writer's
//! buffer for its first [`BUFFERED_RUN`] bytes (a short run costs what it always did);
//! beyond that, the rest of the run is only counted, and handed in pieces of
//! [`COPY_PIECE`] bytes (and its last piece when the run ends) to a thread that copies
//! them into their place in the output while the records after them are read: on two
//! cores, the walk over the input and the kernel's copy take the time of the longer.
//! The writer goes on after the run's place; [`RangeCopy::finish`] waits for the copies
//! and reports the first that failed.
//!
//! A conversion that changes no record (an identity conversion) says so
//! ([`RangeCopy::expect_run_to`]), and the whole run is handed to the kernel at its first
//! record, as `cp` copies: the copy no longer waits for the walk to hand it pieces, and
//! on two cores the conversion takes the time of the copy alone. The walk still reads
//! every record and decides what is kept: where the run ends before the place expected
//! (a record the conversion does not write as the input's bytes after all), the copy is
//! stopped there and the output cut back to the run's end before anything is written
//! after it.

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::{Result, WriteError};

/// Bytes of a run written through the buffer before the rest is left to the kernel. A
/// copy call costs about a microsecond; below this, copying through memory is as fast.
pub(crate) const BUFFERED_RUN: u64 = 256 << 10;

/// The pieces a long run is copied in, as it grows: the first of [`FIRST_PIECE`]
/// bytes, each next one twice as large up to this. The copy cannot start before the walk
/// has handed its first piece, so a small first piece starts it early (with 16 MiB
/// pieces throughout, an identity conversion of a 60 MiB file waited 6 ms for it and
/// then copied behind the walk); larger ones later keep the calls few.
#[cfg(not(test))]
const COPY_PIECE: u64 = 16 << 20;
/// Small in tests, so that a run of a few MiB is copied in several pieces.
#[cfg(test)]
const COPY_PIECE: u64 = 512 << 10;

/// The first piece of a run's copy (see [`COPY_PIECE`]).
const FIRST_PIECE: u64 = if COPY_PIECE < 1 << 20 {
    COPY_PIECE
} else {
    1 << 20
};

/// The calls a speculative copy ([`RangeCopy::expect_run_to`]) is made in: between two,
/// the copier looks whether the walk has found the run to end sooner.
#[cfg(not(test))]
const SPECULATIVE_CALL: u64 = 16 << 20;
#[cfg(test)]
const SPECULATIVE_CALL: u64 = 256 << 10;

/// One copy: `len` bytes of the input at `src` to the output at `dst`.
struct Piece {
    src: u64,
    dst: u64,
    len: u64,
    /// A speculative piece: the input offset it must not be copied beyond (the end of
    /// the run, once the walk found it; `u64::MAX` before). The output is cut back to
    /// it.
    limit: Option<Arc<AtomicU64>>,
}

impl Piece {
    /// A piece copied whole.
    fn plain(src: u64, dst: u64, len: u64) -> Self {
        Piece {
            src,
            dst,
            len,
            limit: None,
        }
    }

    /// Copy the piece; the bytes it counts for (a speculative piece's are counted by
    /// [`RangeCopy::flush`], which knows where its run ended).
    fn copy(&self, from: &File, to: &File) -> std::io::Result<u64> {
        let Some(limit) = &self.limit else {
            copy_range(from, self.src, to, self.dst, self.len)?;
            return Ok(self.len);
        };
        let end = self.src + self.len;
        let mut at = self.src;
        loop {
            let stop = end.min(limit.load(Ordering::Acquire));
            if at >= stop {
                return Ok(0);
            }
            let len = (stop - at).min(SPECULATIVE_CALL);
            copy_range(from, at, to, self.dst + (at - self.src), len)?;
            at += len;
        }
    }
}

/// The copying thread: pieces go in; the bytes copied, or the first error, come out.
struct Copier {
    pieces: SyncSender<Piece>,
    done: JoinHandle<std::io::Result<u64>>,
}

impl Copier {
    /// One thread: two copying into one file take longer than one (measured: an
    /// identity conversion's data section in two halves, 1.1x the time of one copy; a
    /// file system's writes to a file take its lock).
    fn start(from: &File, to: &File) -> std::io::Result<Self> {
        // A few pieces in flight at most: the walk may run ahead of the copy.
        let (pieces, rx) = sync_channel::<Piece>(4);
        let (from, to) = (from.try_clone()?, to.try_clone()?);
        let done = crate::output::interrupt::spawn_without_signals(move || {
            let mut copied = 0;
            for p in rx {
                copied += p.copy(&from, &to)?;
            }
            Ok(copied)
        });
        Ok(Copier { pieces, done })
    }
}

/// Copies runs of records from the input file to the output file.
pub(crate) struct RangeCopy {
    from: File,
    to: File,
    copier: Option<Copier>,
    /// Input offset the next record must have to continue the run.
    next: u64,
    /// Bytes of the run written through the buffer.
    buffered: u64,
    /// The part of the run left to the kernel and not yet handed to the copier: where
    /// it starts in the input and in the output.
    skipped: Option<(u64, u64)>,
    /// Bytes the copier copied (known once it finished).
    copied: u64,
    /// Size of the run's next piece.
    piece: u64,
    /// The end of the run expected from the next record on ([`RangeCopy::expect_run_to`]).
    expected: Option<u64>,
    /// The run being copied speculatively: where its copy ends in the input, and the
    /// limit the copier reads.
    speculative: Option<(u64, Arc<AtomicU64>)>,
}

impl RangeCopy {
    /// Copy from `from` into `to`, the file the writer's output goes to.
    pub fn new(from: File, to: File) -> Self {
        RangeCopy {
            from,
            to,
            copier: None,
            next: u64::MAX,
            buffered: 0,
            skipped: None,
            copied: 0,
            piece: FIRST_PIECE,
            expected: None,
            speculative: None,
        }
    }

    /// The records from the next one taken up to input offset `end` are expected to be
    /// one run of the input's own bytes: its copy is handed to the kernel whole at its
    /// first record (`end` cut to the input's length). Where the run ends sooner, the
    /// copy is stopped and the output cut back ([`RangeCopy::flush`]); where it goes
    /// on, the rest is copied as any run's.
    pub fn expect_run_to(&mut self, end: u64) -> Result<()> {
        let len = self.from.metadata().map_err(copy_err)?.len();
        self.expected = Some(end.min(len));
        Ok(())
    }

    /// A record of `len` bytes at input offset `at` is to be written: `true` when it is
    /// left to the kernel (the caller writes nothing), `false` when the caller writes it
    /// (after the run before it was ended, if it broke).
    #[inline]
    pub fn take<W: Write + Seek>(&mut self, out: &mut W, at: u64, len: u64) -> Result<bool> {
        // The common case of an identity conversion: the copy of the run is under way.
        if at == self.next && self.speculative.is_some() {
            self.next = at.saturating_add(len);
            return Ok(true);
        }
        self.take_slow(out, at, len)
    }

    #[inline(never)]
    fn take_slow<W: Write + Seek>(&mut self, out: &mut W, at: u64, len: u64) -> Result<bool> {
        if at != self.next {
            self.flush(out)?;
            self.buffered = 0;
        }
        self.next = at.saturating_add(len);
        if let Some(end) = self.expected.take().filter(|&end| end > at) {
            let dst = out.stream_position().map_err(copy_err)?;
            let limit = Arc::new(AtomicU64::new(u64::MAX));
            self.send(Piece {
                src: at,
                dst,
                len: end - at,
                limit: Some(limit.clone()),
            })?;
            self.speculative = Some((end, limit));
            self.skipped = Some((at, dst));
            return Ok(true);
        }
        if self.skipped.is_none() && self.buffered + len > BUFFERED_RUN {
            // The run's place in the output: where the writer is now.
            let dst = out.stream_position().map_err(copy_err)?;
            self.skipped = Some((at, dst));
            self.piece = FIRST_PIECE;
        }
        match self.skipped {
            Some((src, dst)) => {
                if self.next - src >= self.piece {
                    let len = self.next - src;
                    self.send(Piece::plain(src, dst, len))?;
                    self.skipped = Some((self.next, dst + len));
                    self.piece = (self.piece * 2).min(COPY_PIECE);
                }
                Ok(true)
            }
            None => {
                self.buffered += len;
                Ok(false)
            }
        }
    }

    /// End the run: its last piece goes to the copier, and the writer moves past the
    /// run's place (what it writes next goes after it).
    pub fn flush<W: Write + Seek>(&mut self, out: &mut W) -> Result<()> {
        let end = std::mem::replace(&mut self.next, u64::MAX);
        let Some((mut src, mut dst)) = self.skipped.take() else {
            return Ok(());
        };
        let run = end - src;
        if let Some((copying_to, limit)) = self.speculative.take() {
            if end < copying_to {
                // The run ended sooner than expected: the copy stops at its end, and
                // what it copied beyond is cut off before anything is written there.
                limit.store(end, Ordering::Release);
                self.finish()?;
                self.to.set_len(dst + run).map_err(copy_err)?;
                self.copied += run;
                return out
                    .seek(SeekFrom::Start(dst + run))
                    .map(drop)
                    .map_err(copy_err);
            }
            // The run went on past the expected end: the rest as any run's last piece.
            self.copied += copying_to - src;
            dst += copying_to - src;
            src = copying_to;
        }
        let len = end - src;
        if len > 0 {
            self.send(Piece::plain(src, dst, len))?;
        }
        out.seek(SeekFrom::Start(dst + len)).map_err(copy_err)?;
        Ok(())
    }

    fn send(&mut self, piece: Piece) -> Result<()> {
        if self.copier.is_none() {
            self.copier = Some(Copier::start(&self.from, &self.to).map_err(copy_err)?);
        }
        let copier = self.copier.as_ref().expect("just started");
        if copier.pieces.send(piece).is_err() {
            // The copier stopped on an error: finish reports it.
            return self.finish();
        }
        Ok(())
    }

    /// Wait for every copy handed out; the first error, if one failed.
    pub fn finish(&mut self) -> Result<()> {
        let Some(copier) = self.copier.take() else {
            return Ok(());
        };
        drop(copier.pieces);
        let copied = copier
            .done
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            .map_err(copy_err)?;
        self.copied += copied;
        Ok(())
    }

    /// Bytes the kernel copied (final once [`RangeCopy::finish`] returned).
    pub fn copied(&self) -> u64 {
        self.copied
    }
}

impl Drop for RangeCopy {
    /// A conversion that failed or was interrupted stops a speculative copy at once
    /// (its output is thrown away).
    fn drop(&mut self) {
        if let Some((_, limit)) = &self.speculative {
            limit.store(0, Ordering::Release);
        }
    }
}

fn copy_err(e: std::io::Error) -> WriteError {
    WriteError::io("copying records from the input", e)
}

/// Copy `len` bytes of `from` at `src` into `to` at `dst`; where the file systems cannot
/// (`copy_file_range` unsupported between them), through memory.
fn copy_range(
    from: &File,
    mut src: u64,
    to: &File,
    mut dst: u64,
    mut len: u64,
) -> std::io::Result<()> {
    while len > 0 {
        let chunk = len.min(1 << 30) as usize;
        let mut off_in = src as libc::loff_t;
        let mut off_out = dst as libc::loff_t;
        // SAFETY: both descriptors are open files owned by the caller; the offsets are
        // passed by pointer to locals, as the call requires.
        let n = unsafe {
            libc::copy_file_range(
                from.as_raw_fd(),
                &mut off_in,
                to.as_raw_fd(),
                &mut off_out,
                chunk,
                0,
            )
        };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            return match e.raw_os_error() {
                Some(libc::EXDEV | libc::ENOSYS | libc::EOPNOTSUPP | libc::EINVAL) => {
                    copy_through_memory(from, src, to, dst, len)
                }
                _ => Err(e),
            };
        }
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("the input ended at byte {src}, {len} bytes short of its records"),
            ));
        }
        src += n as u64;
        dst += n as u64;
        len -= n as u64;
    }
    Ok(())
}

fn copy_through_memory(
    from: &File,
    mut src: u64,
    to: &File,
    mut dst: u64,
    mut len: u64,
) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    while len > 0 {
        let n = len.min(buf.len() as u64) as usize;
        from.read_exact_at(&mut buf[..n], src)?;
        to.write_all_at(&buf[..n], dst)?;
        src += n as u64;
        dst += n as u64;
        len -= n as u64;
    }
    Ok(())
}

#[cfg(test)]
#[path = "range_copy_tests.rs"]
mod tests;
