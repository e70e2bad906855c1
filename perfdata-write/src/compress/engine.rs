//! What compresses a batch: the zstd context itself, on the caller's thread, or a thread
//! of its own holding it, so that the conversion reads and frames the next batch while
//! zstd works on this one ([`Compressor::in_thread`](super::Compressor::in_thread)).
//!
//! Either way a batch is *started* and its compressed bytes *taken* later, one batch at
//! a time, so the compressor's ordering logic is the same for both.

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
    },
    /// A thread compresses; one batch at most is in flight.
    Thread(Worker),
}

pub(super) struct Worker {
    jobs: Option<SyncSender<Job>>,
    done: Receiver<std::io::Result<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl Engine {
    pub fn inline(level: i32) -> Result<Self> {
        let enc =
            Encoder::new(level).map_err(|e| WriteError::io("creating a zstd compressor", e))?;
        Ok(Engine::Inline {
            enc: Box::new(enc),
            done: None,
        })
    }

    /// Move the zstd context to a thread of its own (with the process's signals
    /// blocked, as every helper thread: the main thread takes SIGINT).
    pub fn into_thread(self) -> Self {
        let Engine::Inline { enc, .. } = self else {
            return self;
        };
        let mut enc = *enc;
        let (jobs, rx) = sync_channel::<Job>(1);
        let (tx, done) = sync_channel::<std::io::Result<Job>>(1);
        let thread = crate::output::interrupt::spawn_without_signals(move || {
            for mut job in rx {
                let result = compress(&mut enc, &job.batch, &mut job.out).map(|()| job);
                let failed = result.is_err();
                if tx.send(result).is_err() || failed {
                    return;
                }
            }
        });
        Engine::Thread(Worker {
            jobs: Some(jobs),
            done,
            thread: Some(thread),
        })
    }

    /// Start compressing `job.batch` into `job.out`; the previous batch must have been
    /// taken.
    pub fn start(&mut self, job: Job) -> Result<()> {
        match self {
            Engine::Inline { enc, done } => {
                let mut job = job;
                *done = Some(compress(enc, &job.batch, &mut job.out).map(|()| job));
                Ok(())
            }
            Engine::Thread(w) => {
                let sent = w.jobs.as_ref().is_some_and(|jobs| jobs.send(job).is_ok());
                if sent {
                    Ok(())
                } else {
                    Err(w.stopped())
                }
            }
        }
    }

    /// The batch started last, compressed (waiting for the thread if need be).
    pub fn take(&mut self) -> Result<Job> {
        let result = match self {
            Engine::Inline { done, .. } => done.take().ok_or_else(|| {
                WriteError::io(
                    "zstd compression",
                    std::io::Error::other("no batch started"),
                )
            })?,
            Engine::Thread(w) => w.done.recv().map_err(|_| w.stopped())?,
        };
        result.map_err(|e| WriteError::io("zstd compression", e))
    }
}

impl Worker {
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

/// Compress `batch` into `out` (cleared first) and flush the stream (a flush, never an
/// end: the next batch continues the same zstd stream, as perf's do).
fn compress(enc: &mut Encoder<'static>, batch: &[u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    out.clear();
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
        if enc.flush(&mut OutBuffer::around_pos(out, pos))? == 0 {
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
