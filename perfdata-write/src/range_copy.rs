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

use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, SyncSender};
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

/// One copy: `len` bytes of the input at `src` to the output at `dst`.
struct Piece {
    src: u64,
    dst: u64,
    len: u64,
}

/// The copying thread: pieces go in; the bytes copied, or the first error, come out.
struct Copier {
    pieces: SyncSender<Piece>,
    done: JoinHandle<std::io::Result<u64>>,
}

impl Copier {
    fn start(from: File, to: File) -> Self {
        // A few pieces in flight at most: the walk may run ahead of the copy.
        let (pieces, rx) = sync_channel::<Piece>(4);
        let done = crate::output::interrupt::spawn_without_signals(move || {
            let mut copied = 0;
            for p in rx {
                copy_range(&from, p.src, &to, p.dst, p.len)?;
                copied += p.len;
            }
            Ok(copied)
        });
        Copier { pieces, done }
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
        }
    }

    /// A record of `len` bytes at input offset `at` is to be written: `true` when it is
    /// left to the kernel (the caller writes nothing), `false` when the caller writes it
    /// (after the run before it was ended, if it broke).
    pub fn take<W: Write + Seek>(&mut self, out: &mut W, at: u64, len: u64) -> Result<bool> {
        if at != self.next {
            self.flush(out)?;
            self.buffered = 0;
        }
        self.next = at.saturating_add(len);
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
                    self.send(Piece { src, dst, len })?;
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
        let Some((src, dst)) = self.skipped.take() else {
            return Ok(());
        };
        let len = end - src;
        if len > 0 {
            self.send(Piece { src, dst, len })?;
        }
        out.seek(SeekFrom::Start(dst + len)).map_err(copy_err)?;
        Ok(())
    }

    fn send(&mut self, piece: Piece) -> Result<()> {
        if self.copier.is_none() {
            let from = self.from.try_clone().map_err(copy_err)?;
            let to = self.to.try_clone().map_err(copy_err)?;
            self.copier = Some(Copier::start(from, to));
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

    /// Bytes the kernel copied (those of finished copies).
    pub fn copied(&self) -> u64 {
        self.copied
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
mod tests {
    use std::io::{Cursor, Read, Seek, SeekFrom};

    use perfdata_core::record::RecordType;
    use perfdata_core::{PerfReader, ReadOptions};

    use crate::convert::{self, ConvertOptions, Target};
    use crate::edit::{self, Selection, Strip};
    use crate::synth::{write_workload, SynthSpec, SynthWriter};

    /// A synthetic recording of `samples` samples of 4 threads, in a temp file.
    fn recording(samples: u64) -> tempfile::NamedTempFile {
        recording_in(samples, &std::env::temp_dir())
    }

    fn recording_in(samples: u64, dir: &std::path::Path) -> tempfile::NamedTempFile {
        let spec = SynthSpec {
            samples,
            processes: 2,
            threads_per_process: 2,
            callchain: Some(4),
            ..SynthSpec::default()
        };
        let (workload, trace) = spec.build().unwrap();
        let file = tempfile::NamedTempFile::new_in(dir).unwrap();
        let w = SynthWriter::file(std::io::BufWriter::new(file.reopen().unwrap()), trace).unwrap();
        write_workload(&workload, w).unwrap();
        file
    }

    fn read_all(mut f: &std::fs::File) -> Vec<u8> {
        let mut v = Vec::new();
        f.seek(SeekFrom::Start(0)).unwrap();
        f.read_to_end(&mut v).unwrap();
        v
    }

    #[test]
    fn an_identity_conversion_is_copied_by_the_kernel_and_equals_the_input() {
        let input = recording(40_000);
        let opts = ConvertOptions::default();
        let open = || PerfReader::open_with(input.path(), ReadOptions::Containers).unwrap();
        let (through_memory, plain) =
            convert::to_target(open(), Target::File, Cursor::new(Vec::new()), &opts).unwrap();
        assert_eq!(plain.bytes_copied, 0);
        let mut out = tempfile::tempfile().unwrap();
        let handle = out.try_clone().unwrap();
        let (_, copied) = convert::to_target_in(
            open(),
            Target::File,
            std::io::BufWriter::new(&mut out),
            Some(handle),
            &opts,
        )
        .unwrap();
        let bytes = read_all(&out);
        assert_eq!(bytes, through_memory.into_inner());
        assert_eq!(bytes, std::fs::read(input.path()).unwrap());
        // All but the first run's buffered part (the data section is one run): the
        // records up to BUFFERED_RUN bytes (each at most 64 KiB).
        let reader = PerfReader::open(input.path()).unwrap();
        let data = reader.meta().header.as_ref().unwrap().data;
        let through_buffer = data.size - copied.bytes_copied;
        assert!(through_buffer <= super::BUFFERED_RUN, "{through_buffer}");
        assert!(
            through_buffer > super::BUFFERED_RUN - (64 << 10),
            "{through_buffer}"
        );
    }

    /// Between file systems that cannot copy to each other (tmpfs to the temp
    /// directory's, where /dev/shm exists), the copy goes through memory, same bytes.
    #[test]
    fn a_copy_between_file_systems_falls_back_to_memory() {
        let shm = std::path::Path::new("/dev/shm");
        let dir = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let input = recording_in(40_000, &dir);
        let reader = PerfReader::open_with(input.path(), ReadOptions::Containers).unwrap();
        let mut out = tempfile::tempfile().unwrap();
        let handle = out.try_clone().unwrap();
        let opts = ConvertOptions::default();
        let w = std::io::BufWriter::new(&mut out);
        convert::to_target_in(reader, Target::File, w, Some(handle), &opts).unwrap();
        assert_eq!(read_all(&out), std::fs::read(input.path()).unwrap());
    }

    /// A strip of one process (short runs) and of the second half of the time (one long
    /// run) write the same bytes with and without the kernel's copies.
    #[test]
    fn a_strip_copies_the_runs_it_keeps_and_writes_what_memory_would() {
        for (pids, time, long_runs) in [
            (Some(vec![(10000, 10000)]), None, false),
            (None, Some("50%-100%"), true),
        ] {
            strips_alike(pids, time, long_runs);
        }
    }

    fn strips_alike(pids: Option<Vec<(u64, u64)>>, time: Option<&str>, long_runs: bool) {
        let input = recording(40_000);
        let opts = ConvertOptions::default();
        let strip = || -> Vec<Box<dyn edit::RecordEdit>> {
            let sel = Selection {
                pids: pids.clone(),
                time: time.map(|t| edit::parse_time_ranges(t).unwrap()),
                ..Selection::default()
            };
            vec![Box::new(Strip::new(sel))]
        };
        let open = || edit::open(input.path()).unwrap();
        let (expected, _) = edit::run(
            open(),
            Target::File,
            Cursor::new(Vec::new()),
            &opts,
            strip(),
        )
        .unwrap();
        let mut out = tempfile::tempfile().unwrap();
        let handle = out.try_clone().unwrap();
        let (_, report) = edit::run_in(
            open(),
            Target::File,
            std::io::BufWriter::new(&mut out),
            Some(handle),
            &opts,
            strip(),
        )
        .unwrap();
        let expected = expected.into_inner();
        assert_eq!(read_all(&out), expected);
        let samples = report.edits.unwrap().records[&RecordType::Sample];
        assert!(
            samples.removed > 5_000 && samples.kept > 5_000,
            "{samples:?}"
        );
        assert_eq!(
            report.bytes_copied > 0,
            long_runs,
            "{}",
            report.bytes_copied
        );
        assert!(report.bytes_copied < expected.len() as u64);
    }
}
