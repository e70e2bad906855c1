//! What compresses a batch: a zstd context on the caller's thread, or threads of their
//! own, each with its context, so that the conversion reads and frames the next batches
//! while zstd works on these ([`Compressor::in_thread`](super::Compressor::in_thread)).
//!
//! Either way a batch is *started* and its compressed bytes *taken* later, in the order
//! started ([`Engine::depth`] batches at most in flight), so the compressor's ordering
//! logic is the same for both.
//!
//! On the caller's thread the batches continue one zstd frame, flushed after each (as
//! `perf record -z` writes: a batch may refer to the one before). On threads each batch
//! is a frame of its own: frames made on different threads follow each other in one
//! stream, which perf and our reader decompress with one context as they do perf's
//! single frame (zstd's streaming decompression starts the next frame where one ends),
//! and the bytes are the same whichever thread made a frame.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use zstd::stream::raw::{Encoder, InBuffer, Operation, OutBuffer};

use crate::error::{Result, WriteError};

/// A batch and the buffer its compressed bytes go into; they travel together so that
/// both are reused, batch after batch.
pub(super) struct Job {
    pub batch: Vec<u8>,
    pub out: Vec<u8>,
}

/// The zstd side of a [`Compressor`](super::Compressor).
pub(super) enum Engine {
    /// Compresses when a batch starts; the result waits to be taken.
    Inline {
        enc: Box<Encoder<'static>>,
        done: Option<std::io::Result<Job>>,
        level: i32,
    },
    /// Threads compress, one batch each at most, taken in turn.
    Threads {
        workers: Vec<Worker>,
        /// Batches started and taken so far: the next goes to, or comes from, the
        /// worker of that number (modulo their count).
        started: usize,
        taken: usize,
    },
}

/// Threads that compress at once: a conversion's walk is light beside zstd's work, so
/// on two cores two compressors finish sooner than one (59 MiB at level 1: 75 -> 62 ms).
/// Up to level [`TWO_WORKERS_UP_TO`] only: a context at higher levels is large (peak
/// RSS at level 9 with two: 46 MiB; with one, 31 MiB, under issue #13's 32).
const WORKERS: usize = 2;

/// The highest level compressed by [`WORKERS`] threads (level 3 with two: 28 MiB).
pub(super) const TWO_WORKERS_UP_TO: i32 = 3;

pub(super) struct Worker {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<std::io::Result<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    pub fn inline(level: i32) -> Result<Self> {
        let enc = encoder(level)?;
        Ok(Engine::Inline {
            enc: Box::new(enc),
            done: None,
            level,
        })
    }

    /// Compress on threads of their own ([`WORKERS`], or one above level
    /// [`TWO_WORKERS_UP_TO`]), each with its zstd context (with the process's signals
    /// blocked, as every helper thread: the main thread takes SIGINT).
    pub fn into_thread(self) -> Result<Self> {
        let Engine::Inline { enc, level, .. } = self else {
            return Ok(self);
        };
        let n = if level <= TWO_WORKERS_UP_TO {
            WORKERS
        } else {
            1
        };
        // The caller's context is the first worker's (it has compressed nothing: see
        // `Compressor::in_thread`).
        let mut workers = vec![Worker::start(*enc)];
        while workers.len() < n {
            workers.push(Worker::start(encoder(level)?));
        }
        Ok(Engine::Threads {
            workers,
            started: 0,
            taken: 0,
        })
    }

    /// How many batches may be in flight: started and not yet taken.
    pub fn depth(&self) -> usize {
        match self {
            Engine::Inline { .. } => 1,
            Engine::Threads { workers, .. } => workers.len(),
        }
    }

    /// Start compressing `job.batch` into `job.out`; fewer than [`Engine::depth`]
    /// batches may be in flight.
    pub fn start(&mut self, job: Job) -> Result<()> {
        match self {
            Engine::Inline { enc, done, .. } => {
                let mut job = job;
                *done = Some(compress(enc, &job.batch, &mut job.out, false).map(|()| job));
                Ok(())
            }
            Engine::Threads {
                workers, started, ..
            } => {
                let n = workers.len();
                let w = &mut workers[*started % n];
                *started += 1;
                let sent = w.jobs.as_ref().is_some_and(|jobs| jobs.send(job).is_ok());
                if sent {
                    Ok(())
                } else {
                    Err(w.stopped())
                }
            }
        }
    }

    /// The oldest batch in flight, compressed (waiting for its thread if need be).
    pub fn take(&mut self) -> Result<Job> {
        let result = match self {
            Engine::Inline { done, .. } => done.take().ok_or_else(|| {
                WriteError::io(
                    "zstd compression",
                    std::io::Error::other("no batch started"),
                )
            })?,
            Engine::Threads { workers, taken, .. } => {
                let n = workers.len();
                let w = &mut workers[*taken % n];
                *taken += 1;
                w.done.recv().map_err(|_| w.stopped())?
            }
        };
        result.map_err(|e| WriteError::io("zstd compression", e))
    }
}

impl Worker {
    /// A thread compressing the jobs sent to it with `enc`, in order.
    fn start(mut enc: Encoder<'static>) -> Self {
        let (jobs, rx) = sync_channel::<Job>(1);
        let (tx, done) = sync_channel::<std::io::Result<Job>>(1);
        let thread = crate::output::interrupt::spawn_without_signals(move || {
            for mut job in rx {
                let result = compress(&mut enc, &job.batch, &mut job.out, true).map(|()| job);
                let failed = result.is_err();
                if tx.send(result).is_err() || failed {
                    return;
                }
            }
        });
        Worker {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        }
    }

    /// The thread ended without a result: it failed on the batch before (reported then)
    /// or panicked (reported now, as the panic it was).
    fn stopped(&mut self) -> WriteError {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            if let Err(panic) = t.join() {
                std::panic::resume_unwind(panic);
            }
        }
        WriteError::io(
            "zstd compression",
            std::io::Error::other("the compression thread stopped after an error"),
        )
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Closing the queue ends the thread's loop; a result it still sends is dropped
        // with the receiver.
        self.jobs = None;
        while self.done.try_recv().is_ok() {}
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A zstd context at `level` whose window our reader (and perf) take: levels 20 to 22
/// would write windows of 32 to 128 MiB, over the reader's limit
/// ([`perfdata_core::raw::WINDOW_LOG_MAX`]), so their window is cut to that.
fn encoder(level: i32) -> Result<Encoder<'static>> {
    let context = |e| WriteError::io("creating a zstd compressor", e);
    let mut enc = Encoder::new(level).map_err(context)?;
    if level > 19 {
        let log = zstd::zstd_safe::CParameter::WindowLog(perfdata_core::raw::WINDOW_LOG_MAX);
        enc.set_parameter(log).map_err(context)?;
    }
    Ok(enc)
}

/// Compress `batch` into `out` (cleared first): as a zstd frame of its own when `frame`,
/// its size given first (zstd then fits its tables to the batch: a 59 MiB recording in
/// frames of 512 KiB comes out smaller than in one frame, as with the zstd tool); else
/// continuing the frame of the batches before and flushing it.
fn compress(
    enc: &mut Encoder<'static>,
    batch: &[u8],
    out: &mut Vec<u8>,
    frame: bool,
) -> std::io::Result<()> {
    out.clear();
    if frame {
        enc.reinit()?;
        enc.set_pledged_src_size(Some(batch.len() as u64))?;
    }
    // zstd writes straight into the spare room of one buffer, large enough for the
    // batch's worst case (more room is made should it not be).
    out.reserve(zstd::compress_bound(batch.len()) + 1024);
    let mut input = InBuffer::around(batch);
    while input.pos() < batch.len() {
        make_room(out);
        let pos = out.len();
        enc.run(&mut input, &mut OutBuffer::around_pos(out, pos))?;
    }
    loop {
        make_room(out);
        let pos = out.len();
        let left = match frame {
            true => enc.finish(&mut OutBuffer::around_pos(out, pos), true)?,
            false => enc.flush(&mut OutBuffer::around_pos(out, pos))?,
        };
        if left == 0 {
            return Ok(());
        }
    }
}

/// At least 64 KiB of spare room in `out` for zstd to write into.
fn make_room(out: &mut Vec<u8>) {
    if out.capacity() - out.len() < 64 << 10 {
        out.reserve(64 << 10);
    }
}
