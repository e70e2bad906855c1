//! The part of perf's time-order queue kept on disk ([`super::order`]): when the queued
//! records pass the replay's budget ([`super::ReplayOptions::queue_bytes`]), they are
//! written, in their time order, as one run to an anonymous temporary file, and a round
//! lets out each run's prefix up to its limit, merged with what waits in memory.
//!
//! Equal times keep their push order as perf's queue keeps them: a run holds everything
//! that was queued in memory when it was written, so every record of a run was pushed
//! before every record of a later run and of memory; the merge takes, among equal
//! times, the oldest run first and memory last. What a round does not let out stays in
//! its run, whose records after the limit are all later. Samples go to disk as bytes
//! ([`PendingSample::encode`]: their chains' words and user stack copies with them, so
//! a pipe, a compressed file or a directory is never read again); the rarer side-band
//! records stay in memory ([`Spilled::held`]), a run holding their places.
//!
//! Runs are merged [`FAN_IN`] at a time as they pile up (a recording without
//! FINISHED_ROUND waits whole), so the runs read at once, each through a buffer, stay
//! few; the file is written afresh when most of it has been let out.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;

use super::chain::Spare;
use super::event::{Event, PendingSample};

/// Runs of one size merged into one as soon as there are this many.
const FAN_IN: usize = 8;
/// Bytes each run reads from the file at a time.
const READ_BUF: usize = 64 << 10;
/// Bytes let out before the file is written afresh with what stays (when they are also
/// most of it).
const DEAD_BYTES: u64 = 64 << 20;

/// What a record of a run is.
const SAMPLE: u8 = 0;
/// A record held in memory ([`Spilled::held`]), its place following.
const HELD: u8 = 1;
/// A sample still in the mapped file ([`Event::At`]), its key's word following.
const AT: u8 = 2;

/// The queued records on disk: runs, each in time order.
pub(super) struct Spilled {
    file: Option<BufWriter<File>>,
    /// Bytes written to the file.
    end: u64,
    /// Bytes of the file whose records have been let out.
    dead: u64,
    /// Oldest first.
    runs: Vec<Run>,
    /// Records waiting in the runs.
    waiting: usize,
    /// The records of a run that stay in memory, by place ([`HELD`]).
    held: Vec<Option<Event>>,
    /// Places of `held` let go of.
    free: Vec<u32>,
    /// A record's bytes, reused.
    scratch: Vec<u8>,
    /// Bytes let out before the file is written afresh ([`DEAD_BYTES`]).
    rewrite_at: u64,
}

impl Default for Spilled {
    fn default() -> Self {
        Spilled {
            file: None,
            end: 0,
            dead: 0,
            runs: Vec::new(),
            waiting: 0,
            held: Vec::new(),
            free: Vec::new(),
            scratch: Vec::new(),
            rewrite_at: DEAD_BYTES,
        }
    }
}

/// Records in the file from `pos` to `end`, in time order; `buf[at..]` read ahead.
struct Run {
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
    /// How many runs were merged into it, as a power of [`FAN_IN`].
    level: u32,
}

/// A record of a run: its time, what it is, and its body.
struct Item<'a> {
    time: u64,
    kind: u8,
    body: &'a [u8],
}

impl Run {
    /// The next record, read ahead as needed; None at the end.
    fn peek<'a>(&'a mut self, file: &File) -> io::Result<Option<Item<'a>>> {
        if !self.fill(file, 4)? {
            return Ok(None);
        }
        let len = u32::from_le_bytes(self.buf[self.at..self.at + 4].try_into().expect("4 bytes"));
        let len = len as usize;
        if len < 9 || !self.fill(file, 4 + len)? {
            return Err(io::Error::other("a queued record cut short on disk"));
        }
        let rec = &self.buf[self.at + 4..self.at + 4 + len];
        Ok(Some(Item {
            time: u64::from_le_bytes(rec[..8].try_into().expect("8 bytes")),
            kind: rec[8],
            body: &rec[9..],
        }))
    }

    /// Step past the record [`Run::peek`] gave.
    fn advance(&mut self) {
        let len = u32::from_le_bytes(self.buf[self.at..self.at + 4].try_into().expect("4 bytes"));
        self.at += 4 + len as usize;
    }

    /// Whether `need` bytes are read ahead (false: the run has ended before them).
    fn fill(&mut self, file: &File, need: usize) -> io::Result<bool> {
        if self.buf.len() - self.at >= need {
            return Ok(true);
        }
        self.buf.drain(..self.at);
        self.at = 0;
        let want = (need - self.buf.len()).max(READ_BUF);
        let want = want.min(usize::try_from(self.end - self.pos).unwrap_or(usize::MAX));
        let have = self.buf.len();
        self.buf.resize(have + want, 0);
        file.read_exact_at(&mut self.buf[have..], self.pos)?;
        self.pos += want as u64;
        Ok(self.buf.len() >= need)
    }

    /// Bytes of the run not yet let out.
    fn left(&self) -> u64 {
        self.end - self.pos + (self.buf.len() - self.at) as u64
    }
}

impl Spilled {
    /// Whether no record waits on disk.
    pub(super) fn is_empty(&self) -> bool {
        self.waiting == 0
    }

    /// Write the file afresh once `bytes` of it have been let out (and most of it).
    #[cfg(test)]
    pub(super) fn rewrite_at(&mut self, bytes: u64) {
        self.rewrite_at = bytes;
    }

    /// How many records wait on disk.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.waiting
    }

    /// Write `items` (time order, as the memory queue lets them out) as a new run; a
    /// sample's chain words are let go of in `held`.
    pub(super) fn write_run(
        &mut self,
        items: impl Iterator<Item = (u64, Event)>,
        held: &mut Spare,
    ) -> io::Result<()> {
        self.open()?;
        let start = self.end;
        let mut record = std::mem::take(&mut self.scratch);
        for (time, ev) in items {
            record.clear();
            record.extend_from_slice(&[0; 4]);
            record.extend_from_slice(&time.to_le_bytes());
            let spilled = match &ev {
                Event::Sample(p) => {
                    record.push(SAMPLE);
                    let done = p.encode(held.waiting(p.chain), &mut record);
                    if done {
                        let words = held.release(p.chain);
                        held.keep_words(words);
                    }
                    done
                }
                Event::At(word) => {
                    record.push(AT);
                    record.extend_from_slice(&word.to_le_bytes());
                    true
                }
                _ => false,
            };
            if !spilled {
                record.truncate(12);
                record.push(HELD);
                let place = self.hold(ev);
                record.extend_from_slice(&place.to_le_bytes());
            }
            let len = u32::try_from(record.len() - 4)
                .map_err(|_| io::Error::other("a queued record over 4 GiB"))?;
            record[..4].copy_from_slice(&len.to_le_bytes());
            self.file.as_mut().expect("made above").write_all(&record)?;
            self.end += record.len() as u64;
            self.waiting += 1;
        }
        self.scratch = record;
        self.file.as_mut().expect("made above").flush()?;
        if self.end > start {
            self.runs.push(Run {
                pos: start,
                end: self.end,
                buf: Vec::new(),
                at: 0,
                level: 0,
            });
        }
        self.merge_piled()
    }

    /// Make the temporary file, if not yet made.
    pub(super) fn open(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some(new_file()?);
        }
        Ok(())
    }

    /// Keep `ev` in memory; its place.
    fn hold(&mut self, ev: Event) -> u32 {
        match self.free.pop() {
            Some(at) => {
                self.held[at as usize] = Some(ev);
                at
            }
            None => {
                self.held.push(Some(ev));
                u32::try_from(self.held.len() - 1).expect("fewer than 2^32 records wait")
            }
        }
    }

    /// While the last [`FAN_IN`] runs are of one level, merge them into one of the next.
    fn merge_piled(&mut self) -> io::Result<()> {
        while self.runs.len() >= FAN_IN {
            let tail = self.runs.len() - FAN_IN;
            let level = self.runs[tail].level;
            if self.runs[tail..].iter().any(|r| r.level != level) {
                break;
            }
            let src = self
                .file
                .as_ref()
                .expect("runs have a file")
                .get_ref()
                .try_clone()?;
            let merged = self.copy_merged(&src, tail, level + 1)?;
            // The merged runs' bytes are let out of the file as the merge's are written.
            self.dead += merged.end - merged.pos;
            self.runs.truncate(tail);
            self.runs.push(merged);
        }
        Ok(())
    }

    /// The runs from `first` on, read through `src`, merged into one (of `level`) at
    /// the end of the file written; those runs are spent.
    fn copy_merged(&mut self, src: &File, first: usize, level: u32) -> io::Result<Run> {
        let start = self.end;
        let out = self.file.as_mut().expect("runs have a file");
        while let Some(i) = earliest(&mut self.runs[first..], src, u64::MAX)? {
            let run = &mut self.runs[first + i];
            let len = u32::from_le_bytes(run.buf[run.at..run.at + 4].try_into().expect("4 bytes"));
            let bytes = &run.buf[run.at..run.at + 4 + len as usize];
            out.write_all(bytes)?;
            self.end += bytes.len() as u64;
            run.advance();
        }
        out.flush()?;
        Ok(Run {
            pos: start,
            end: self.end,
            buf: Vec::new(),
            at: 0,
            level,
        })
    }

    /// The time of the earliest record up to `limit`, and which run it is in.
    pub(super) fn next_time(&mut self, limit: u64) -> io::Result<Option<(usize, u64)>> {
        let Some(out) = &self.file else {
            return Ok(None);
        };
        let file = out.get_ref();
        let Some(i) = earliest(&mut self.runs, file, limit)? else {
            return Ok(None);
        };
        let time = self.runs[i].peek(file)?.map(|it| it.time).expect("peeked");
        Ok(Some((i, time)))
    }

    /// The next record of run `run` ([`Spilled::next_time`]) made again: a sample with
    /// its chain's words in `words` (in `reuse`'s user state, if given).
    pub(super) fn take(
        &mut self,
        run: usize,
        words: &mut Vec<u64>,
        reuse: Option<Box<crate::unwind::UserState>>,
    ) -> io::Result<Event> {
        let file = self.file.as_ref().expect("runs have a file").get_ref();
        let r = &mut self.runs[run];
        let item = r.peek(file)?.expect("peeked");
        let bad = || io::Error::other("a queued record misread on disk");
        let ev = match item.kind {
            SAMPLE => {
                Event::Sample(PendingSample::decode(item.body, words, reuse).ok_or_else(bad)?)
            }
            AT => Event::At(u64::from_le_bytes(item.body.try_into().map_err(|_| bad())?)),
            _ => {
                let place = u32::from_le_bytes(item.body.try_into().map_err(|_| bad())?);
                let ev = self.held.get_mut(place as usize).and_then(Option::take);
                self.free.push(place);
                ev.ok_or_else(bad)?
            }
        };
        let len = r.left();
        r.advance();
        self.dead += len - r.left();
        self.waiting -= 1;
        Ok(ev)
    }

    /// After a round: runs let out whole go, and the file is written afresh when most
    /// of it has been let out.
    pub(super) fn tidy(&mut self) -> io::Result<()> {
        let file = match &self.file {
            Some(f) => f.get_ref().try_clone()?,
            None => return Ok(()),
        };
        let mut kept = Vec::with_capacity(self.runs.len());
        for mut run in self.runs.drain(..) {
            if run.peek(&file)?.is_some() {
                kept.push(run);
            }
        }
        self.runs = kept;
        if self.runs.is_empty() {
            // Nothing waits: the file starts again from its beginning (written at its
            // cursor, not at `end`).
            file.set_len(0)?;
            if let Some(out) = &mut self.file {
                out.seek(SeekFrom::Start(0))?;
            }
            (self.end, self.dead) = (0, 0);
            return Ok(());
        }
        if self.dead >= self.rewrite_at && self.dead * 2 >= self.end {
            // What waits, read through the old file, merged into one run of the new.
            self.file = Some(new_file()?);
            (self.end, self.dead) = (0, 0);
            let merged = self.copy_merged(&file, 0, 0)?;
            self.runs = vec![merged];
        }
        Ok(())
    }
}

/// A new temporary file for the runs, written through a buffer of [`READ_BUF`].
fn new_file() -> io::Result<BufWriter<File>> {
    Ok(BufWriter::with_capacity(
        READ_BUF,
        crate::spool::temp_file()?,
    ))
}

/// Which of `runs` has the earliest record up to `limit` (equal times: the oldest run).
fn earliest(runs: &mut [Run], file: &File, limit: u64) -> io::Result<Option<usize>> {
    let mut best: Option<(usize, u64)> = None;
    for (i, run) in runs.iter_mut().enumerate() {
        if let Some(item) = run.peek(file)? {
            if item.time <= limit && best.is_none_or(|(_, t)| item.time < t) {
                best = Some((i, item.time));
            }
        }
    }
    Ok(best.map(|(i, _)| i))
}
