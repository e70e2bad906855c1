//! Records kept on disk instead of in memory: what an output lists once per sample or per
//! record (speedscope's and the Firefox Profiler's samples, readperf's overview) is
//! appended to an anonymous temporary file (unnamed, so nothing is left behind however
//! the process ends) and read back in pieces, sorted on disk where the output's order is
//! not the recording's. The first [`MEMORY_BYTES`] stay in memory: a small recording
//! needs no temporary file (nor a writable `TMPDIR`), and memory stays bounded. The file is read and written with `pread`/buffered writes, never
//! mapped: touched pages of a file mapping count towards the process's resident memory,
//! the page cache does not.
//!
//! Sorting is a stable external merge sort: runs of at most [`RUN_BYTES`] sorted in
//! memory, then merged [`FAN_IN`] at a time, so memory stays at a few MiB whatever the
//! number of records.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Bytes a spool holds in memory before it moves them to a temporary file.
const MEMORY_BYTES: usize = 4 << 20;
/// Bytes of records sorted in memory at once (one run).
const RUN_BYTES: usize = 8 << 20;
/// Runs merged at once; more are merged in passes of this many.
const FAN_IN: usize = 64;
/// The read buffer of each run while merging, and of a plain reader.
const READ_BUF: usize = 64 << 10;

/// What records are sorted by (compared as a tuple; equal keys keep their order).
pub(crate) type Key = (u64, u64);

/// Records of bytes being appended, each framed by its length (u32, little-endian): in
/// memory up to [`MEMORY_BYTES`], then to an anonymous temporary file.
pub(crate) struct Spool {
    out: Store,
    len: u64,
    /// Bytes held in memory before the temporary file.
    memory: usize,
}

/// Where a spool's bytes are being written.
enum Store {
    Memory(Vec<u8>),
    File(BufWriter<File>),
}

/// Where a spool's finished bytes are read from.
#[derive(Debug)]
enum Data {
    Memory(Vec<u8>),
    File(File),
}

impl Data {
    /// Bytes at `pos` into `buf`, as `pread` reads them (0 at the end).
    fn read_at(&self, buf: &mut [u8], pos: u64) -> io::Result<usize> {
        match self {
            Data::File(f) => f.read_at(buf, pos),
            Data::Memory(v) => {
                let start = usize::try_from(pos).map_or(v.len(), |p| p.min(v.len()));
                let n = buf.len().min(v.len() - start);
                buf[..n].copy_from_slice(&v[start..start + n]);
                Ok(n)
            }
        }
    }
}

/// An anonymous file in the system's temporary directory (`TMPDIR`, else `/tmp`); the
/// error names that directory, not the output (an export to a writable place fails
/// where `TMPDIR` is read-only).
pub(crate) fn temp_file() -> io::Result<File> {
    let dir = std::env::temp_dir();
    #[cfg(test)]
    let dir = testing::TEMP_DIR
        .with(|d| d.borrow().clone())
        .unwrap_or(dir);
    tempfile::tempfile_in(&dir).map_err(|e| {
        // tempfile names its file in the error: the system's error alone.
        let cause = e.raw_os_error().map_or(e.to_string(), |code| {
            io::Error::from_raw_os_error(code).to_string()
        });
        io::Error::new(
            e.kind(),
            format!("cannot create it in {}: {cause}", temp_dir_named()),
        )
    })
}

/// The directory [`temp_file`] makes its files in, and where that came from: for an
/// error of a temporary file (a full `TMPDIR` fails at a write, not at the file's
/// making), the place the user can change.
pub(crate) fn temp_dir_named() -> String {
    let whence = match std::env::var_os("TMPDIR") {
        Some(_) => "TMPDIR",
        None => "TMPDIR is not set",
    };
    format!("{} ({whence})", std::env::temp_dir().display())
}

/// What tests change of the spools they make.
#[cfg(test)]
pub(crate) mod testing {
    use std::cell::RefCell;
    use std::path::PathBuf;

    thread_local! {
        /// The directory this thread's spools make their files in instead of `TMPDIR`'s,
        /// where set: a test of a failing `TMPDIR` changes no other test's (the
        /// environment is the process's).
        pub(crate) static TEMP_DIR: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    }
}

impl Spool {
    /// An empty spool: in memory until it outgrows [`MEMORY_BYTES`], then in the
    /// system's temporary directory (`TMPDIR`, else `/tmp`).
    pub(crate) fn new() -> io::Result<Spool> {
        Ok(Spool::with_memory(MEMORY_BYTES))
    }

    /// An empty spool that holds `memory` bytes before its temporary file.
    pub(crate) fn with_memory(memory: usize) -> Spool {
        Spool {
            out: Store::Memory(Vec::new()),
            len: 0,
            memory,
        }
    }

    /// Append one record.
    pub(crate) fn push(&mut self, record: &[u8]) -> io::Result<()> {
        let n = u32::try_from(record.len())
            .map_err(|_| io::Error::other("a spooled record over 4 GiB"))?;
        if let Store::Memory(v) = &self.out {
            if v.len() + 4 + record.len() > self.memory {
                let mut file = BufWriter::with_capacity(READ_BUF, temp_file()?);
                file.write_all(v)?;
                self.out = Store::File(file);
            }
        }
        match &mut self.out {
            Store::Memory(v) => {
                v.extend_from_slice(&n.to_le_bytes());
                v.extend_from_slice(record);
            }
            Store::File(out) => {
                out.write_all(&n.to_le_bytes())?;
                out.write_all(record)?;
            }
        }
        self.len += 4 + u64::from(n);
        Ok(())
    }

    /// The records appended, in that order.
    pub(crate) fn finish(self) -> io::Result<Records> {
        let data = match self.out {
            Store::Memory(v) => Data::Memory(v),
            Store::File(out) => {
                Data::File(out.into_inner().map_err(io::IntoInnerError::into_error)?)
            }
        };
        Ok(Records {
            file: data,
            len: self.len,
        })
    }
}

/// Length-framed records in memory or a temporary file, read back in byte ranges.
#[derive(Debug)]
pub(crate) struct Records {
    file: Data,
    len: u64,
}

impl Records {
    /// Whether no record was appended.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The records of bytes `start..end` (record boundaries), in order.
    pub(crate) fn read(&self, start: u64, end: u64) -> Reader<'_> {
        Reader::new(&self.file, start, end.min(self.len), READ_BUF)
    }

    /// Every record, in order.
    pub(crate) fn read_all(&self) -> Reader<'_> {
        self.read(0, self.len)
    }

    /// The same records in a new file, stably sorted by `key`; these go as they are read
    /// (see [`Records::sorted_by`]).
    pub(crate) fn sorted(self, key: impl Fn(&[u8]) -> Key) -> io::Result<Records> {
        self.sorted_by(|a, b| key(a).cmp(&key(b)))
    }

    /// The same records in a new file, stably sorted by `cmp`. These records' disk space
    /// is given back as they are read into runs, and their file goes once the runs are
    /// made, so that the sort takes about twice the records' size on disk at most (the
    /// runs and the merged output), not three times.
    pub(crate) fn sorted_by(self, cmp: impl Fn(&[u8], &[u8]) -> Ordering) -> io::Result<Records> {
        self.sort(&cmp, RUN_BYTES, FAN_IN)
    }

    /// [`Records::sorted_by`] in runs of `run_bytes`, merged `fan_in` at a time.
    fn sort(
        self,
        cmp: &impl Fn(&[u8], &[u8]) -> Ordering,
        run_bytes: usize,
        fan_in: usize,
    ) -> io::Result<Records> {
        let (file, mut runs) = self.runs(cmp, run_bytes)?;
        drop(self);
        if runs.len() <= 1 {
            let len = runs.first().map_or(0, |r| r.1);
            return Ok(Records { file, len });
        }
        let mut file = file;
        while runs.len() > fan_in {
            let mut out = Spool::new()?;
            let mut merged = Vec::new();
            for group in runs.chunks(fan_in) {
                let start = out.len;
                merge(&file, group, cmp, &mut out)?;
                merged.push((start, out.len));
            }
            file = out.finish()?.file;
            runs = merged;
        }
        let mut out = Spool::new()?;
        merge(&file, &runs, cmp, &mut out)?;
        out.finish()
    }

    /// Runs of about `run_bytes`, each sorted, written one after the other into a new
    /// file: the file and each run's byte range.
    fn runs(
        &self,
        cmp: &impl Fn(&[u8], &[u8]) -> Ordering,
        run_bytes: usize,
    ) -> io::Result<(Data, Vec<(u64, u64)>)> {
        let mut out = Spool::new()?;
        let mut runs = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut index: Vec<(usize, usize)> = Vec::new();
        let mut reader = self.read_all();
        loop {
            let more = reader.advance()?;
            if more {
                let r = reader.current();
                index.push((buf.len(), r.len()));
                buf.extend_from_slice(r);
                if buf.len() < run_bytes {
                    continue;
                }
            }
            if !index.is_empty() {
                // Stable: equal records keep the order they were appended in.
                let at = |&(a, n): &(usize, usize)| &buf[a..a + n];
                index.sort_by(|a, b| cmp(at(a), at(b)));
                let start = out.len;
                for e in &index {
                    out.push(at(e))?;
                }
                runs.push((start, out.len));
                buf.clear();
                index.clear();
                // What was read into runs is not read again.
                release(&self.file, reader.pos.saturating_sub(READ_BUF as u64));
            }
            if !more {
                break;
            }
        }
        Ok((out.finish()?.file, runs))
    }
}

/// Give back the disk space of `file`'s first `end` bytes (rounded down to whole MiB),
/// which will not be read again. Where the file system cannot punch holes, nothing
/// happens: the space then goes with the file (as memory goes with its spool).
fn release(file: &Data, end: u64) {
    let Data::File(file) = file else {
        return;
    };
    let end = end & !((1 << 20) - 1);
    if end == 0 {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let len = libc::off_t::try_from(end).unwrap_or(libc::off_t::MAX);
        // SAFETY: fallocate on a file descriptor this process owns; the range is in
        // the file; the call only changes which of its blocks hold data.
        unsafe {
            libc::fallocate(
                file.as_raw_fd(),
                libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
                0,
                len,
            );
        }
    }
}

/// Merge the sorted `runs` of `file` into `out`; equal records come from the earlier
/// run first, so the merge of consecutive stable runs is stable.
fn merge(
    file: &Data,
    runs: &[(u64, u64)],
    cmp: &impl Fn(&[u8], &[u8]) -> Ordering,
    out: &mut Spool,
) -> io::Result<()> {
    let mut readers: Vec<Reader> = runs
        .iter()
        .map(|&(s, e)| Reader::new(file, s, e, READ_BUF))
        .collect();
    // A binary heap of the runs that have a current record, the least on top; ties go
    // to the earlier run.
    let mut heap: Vec<usize> = Vec::with_capacity(readers.len());
    for (i, r) in readers.iter_mut().enumerate() {
        if r.advance()? {
            heap.push(i);
        }
    }
    let before = |readers: &[Reader], a: usize, b: usize| {
        cmp(readers[a].current(), readers[b].current()).then(a.cmp(&b)) == Ordering::Less
    };
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| before(&readers, a, b));
    }
    while let Some(&top) = heap.first() {
        out.push(readers[top].current())?;
        if !readers[top].advance()? {
            let last = heap.pop().expect("not empty");
            if heap.is_empty() {
                break;
            }
            heap[0] = last;
        }
        sift_down(&mut heap, 0, |a, b| before(&readers, a, b));
    }
    Ok(())
}

/// Restore the heap order below `i` (`before(a, b)`: `a` goes out first).
fn sift_down(heap: &mut [usize], mut i: usize, before: impl Fn(usize, usize) -> bool) {
    loop {
        let (l, r) = (2 * i + 1, 2 * i + 2);
        let mut least = i;
        if l < heap.len() && before(heap[l], heap[least]) {
            least = l;
        }
        if r < heap.len() && before(heap[r], heap[least]) {
            least = r;
        }
        if least == i {
            return;
        }
        heap.swap(i, least);
        i = least;
    }
}

/// A buffered reader of the records in a byte range of a file (with `pread`, so that
/// several can read one file at once).
pub(crate) struct Reader<'a> {
    file: &'a Data,
    /// File offset of the next byte to read into the buffer.
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    /// The current record is `buf[at..at + len]`; unread bytes run to `filled`.
    at: usize,
    len: usize,
    filled: usize,
}

impl<'a> Reader<'a> {
    fn new(file: &'a Data, start: u64, end: u64, capacity: usize) -> Reader<'a> {
        Reader {
            file,
            pos: start,
            end,
            buf: vec![0; capacity],
            at: 0,
            len: 0,
            filled: 0,
        }
    }

    /// The next record (None at the end of the range).
    pub(crate) fn next_record(&mut self) -> io::Result<Option<&[u8]>> {
        Ok(if self.advance()? {
            Some(self.current())
        } else {
            None
        })
    }

    /// The record [`Reader::advance`] moved to.
    fn current(&self) -> &[u8] {
        &self.buf[self.at..self.at + self.len]
    }

    /// Move to the next record; false at the end of the range.
    fn advance(&mut self) -> io::Result<bool> {
        self.at += self.len;
        self.len = 0;
        if !self.fill(4)? {
            return Ok(false);
        }
        let n = u32::from_le_bytes(self.buf[self.at..self.at + 4].try_into().expect("4 bytes"));
        let n = n as usize;
        self.at += 4;
        if !self.fill(n)? {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "a spooled record cut short",
            ));
        }
        self.len = n;
        Ok(true)
    }

    /// Make `n` bytes from `at` available; false if the range ends before any.
    fn fill(&mut self, n: usize) -> io::Result<bool> {
        if self.filled - self.at >= n {
            return Ok(true);
        }
        // Keep what is unread at the front, grow for a record larger than the buffer.
        self.buf.copy_within(self.at..self.filled, 0);
        self.filled -= self.at;
        self.at = 0;
        if self.buf.len() < n {
            self.buf.resize(n, 0);
        }
        while self.filled < n {
            let want = (self.buf.len() - self.filled).min((self.end - self.pos) as usize);
            if want == 0 {
                return if self.filled == 0 {
                    Ok(false)
                } else {
                    Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "a spooled record cut short",
                    ))
                };
            }
            let got = self
                .file
                .read_at(&mut self.buf[self.filled..self.filled + want], self.pos)?;
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the spool file is shorter than written",
                ));
            }
            self.pos += got as u64;
            self.filled += got;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spool_of(records: &[Vec<u8>], memory: usize) -> Records {
        let mut s = Spool::with_memory(memory);
        for r in records {
            s.push(r).expect("written");
        }
        s.finish().expect("finished")
    }

    fn all(r: &Records) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut reader = r.read_all();
        while let Some(rec) = reader.next_record().expect("read") {
            out.push(rec.to_vec());
        }
        out
    }

    #[test]
    fn records_come_back_as_written() {
        let records: Vec<Vec<u8>> = (0..1000u32)
            .map(|i| vec![i as u8; (i % 37) as usize])
            .collect();
        // In memory, in a file from the start, and moved to a file on the way.
        for memory in [MEMORY_BYTES, 0, 5000] {
            let r = spool_of(&records, memory);
            assert_eq!(all(&r), records);
            // A record larger than the read buffer.
            let big = vec![vec![7u8; 3 * READ_BUF + 5], vec![1, 2, 3]];
            assert_eq!(all(&spool_of(&big, memory)), big);
            assert!(all(&spool_of(&[], memory)).is_empty());
        }
    }

    /// Enough records for many runs and two merge passes: sorted by key, and records of
    /// equal keys in the order they were written.
    #[test]
    fn the_sort_is_stable_across_runs_and_passes() {
        // 24-byte records: (key, sequence number, padding), in runs of 100 records
        // merged 8 at a time: 800 runs, four passes; the 2.2 MB spooled are given back
        // as they are read (punched holes), which must not lose any.
        let n: u64 = 80_000;
        let mut s = Spool::with_memory(0);
        let mut rec = [0u8; 24];
        for i in 0..n {
            let k = (i.wrapping_mul(2_654_435_761) >> 7) % 1000;
            rec[..8].copy_from_slice(&k.to_le_bytes());
            rec[8..16].copy_from_slice(&i.to_le_bytes());
            s.push(&rec).expect("written");
        }
        let key = |r: &[u8]| (u64::from_le_bytes(r[..8].try_into().unwrap()), 0);
        let spooled = s.finish().expect("finished");
        let cmp = |a: &[u8], b: &[u8]| key(a).cmp(&key(b));
        let sorted = spooled.sort(&cmp, 100 * 24, 8).expect("sorted");
        let mut reader = sorted.read_all();
        let (mut last, mut count) = ((0u64, 0u64), 0u64);
        while let Some(r) = reader.next_record().expect("read") {
            let k = u64::from_le_bytes(r[..8].try_into().unwrap());
            let i = u64::from_le_bytes(r[8..16].try_into().unwrap());
            assert!((k, i) > last || count == 0, "{:?} after {last:?}", (k, i));
            last = (k, i);
            count += 1;
        }
        assert_eq!(count, n);
    }
}
