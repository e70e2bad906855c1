//! Records of a `Read` stream (stdin, a FIFO), with one buffer reused across records.

use std::io::{self, Read};

use binrw::Endian;

use super::{frame, header_of, plausible_header, Frame, Origin, RecordSource, Span, PAYLOAD_CHUNK};
use crate::error::{Error, Problem, Result};
use crate::record::RecordType;

/// Read-ahead size: large enough that a pipe is drained in few syscalls.
const CHUNK: usize = 256 * 1024;

/// What ended a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// Ended exactly after a record.
    Clean,
    /// `len` bytes at `offset` that do not look like a record (perf's stderr text after
    /// the last record, say): a warning, not an error.
    Junk {
        /// Where the bytes start.
        offset: u64,
        /// How many there are.
        len: u64,
    },
}

/// A lending iterator over the records of a stream: each record borrows the buffer
/// until the next call.
pub struct StreamRecords<R> {
    reader: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// Stream offset of `buf[start]`.
    offset: u64,
    endian: Endian,
    stream: usize,
    eof: bool,
    finished: Option<StreamEnd>,
    /// Unread bytes of the last record's streamed payload (see [`super::MAX_BUFFERED`]).
    payload_left: u64,
    /// That record's offset, whole length and type, for the error if the stream ends
    /// inside it.
    large: (u64, u64, RecordType),
}

impl<R: Read> StreamRecords<R> {
    /// Records of `reader`, whose first byte is at stream offset `offset`.
    pub fn new(reader: R, offset: u64, endian: Endian, stream: usize) -> Self {
        StreamRecords {
            reader,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset,
            endian,
            stream,
            eof: false,
            finished: None,
            payload_left: 0,
            large: (0, 0, RecordType::Auxtrace),
        }
    }

    /// How the stream ended, once `next_record` has returned `Ok(None)`.
    pub fn end(&self) -> Option<&StreamEnd> {
        self.finished.as_ref()
    }

    /// Read more bytes so that at least `needed` are buffered after `start`, or until
    /// EOF. The buffer grows only as bytes arrive, so a corrupt size cannot make it
    /// allocate more than the stream holds.
    fn fill(&mut self, needed: u64) -> Result<()> {
        if self.start > 0 && (self.start >= self.buf.len() / 2 || self.end == self.start) {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        while !self.eof && ((self.end - self.start) as u64) < needed {
            if self.buf.len() - self.end < CHUNK {
                let want = self.end + CHUNK;
                self.buf.resize(want, 0);
            }
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(Error::io(
                        format!("reading the stream at byte {}", self.offset),
                        e,
                    ))
                }
            }
        }
        Ok(())
    }

    /// The stream ended inside a record: junk if it does not even look like one.
    fn finish_at_eof(&mut self, needed: u64) -> Result<Option<Span>> {
        let avail = &self.buf[self.start..self.end];
        if avail.is_empty() {
            self.finished = Some(StreamEnd::Clean);
            return Ok(None);
        }
        if !plausible_header(avail, self.endian) {
            self.drain_junk()?;
            return Ok(None);
        }
        let context = format!("record {}", header_of(avail, self.endian).record_type());
        let available = avail.len() as u64;
        self.finished = Some(StreamEnd::Clean);
        Err(Error::format(
            self.offset,
            context,
            Problem::Truncated { needed, available },
        ))
    }

    /// Count the rest of the stream as junk.
    fn drain_junk(&mut self) -> Result<()> {
        let mut len = (self.end - self.start) as u64;
        let mut sink = [0u8; 8192];
        while !self.eof {
            match self.reader.read(&mut sink) {
                Ok(0) => self.eof = true,
                Ok(n) => len += n as u64,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Error::io("reading junk at the end of the stream", e)),
            }
        }
        self.start = self.end;
        self.finished = Some(StreamEnd::Junk {
            offset: self.offset,
            len,
        });
        Ok(())
    }
}

impl<R: Read> RecordSource for StreamRecords<R> {
    /// Frame the next record, reading more of the stream as needed; `Ok(None)` at the
    /// end of the stream (or at junk after the last record: see [`StreamRecords::end`]).
    fn advance(&mut self) -> Result<Option<Span>> {
        if self.finished.is_some() {
            return Ok(None);
        }
        while self.payload_left > 0 {
            self.payload_chunk()?;
        }
        loop {
            let framed = frame(&self.buf[self.start..self.end], self.endian);
            match framed {
                Frame::Complete { size, payload } => {
                    let span = Span {
                        pos: self.start,
                        size,
                        payload,
                        rest: 0,
                        offset: self.offset,
                        origin: Origin::Top,
                        stream: self.stream,
                    };
                    self.start += size + payload;
                    self.offset += (size + payload) as u64;
                    return Ok(Some(span));
                }
                Frame::Large { size, payload } => {
                    let span = Span {
                        pos: self.start,
                        size,
                        payload: 0,
                        rest: payload,
                        offset: self.offset,
                        origin: Origin::Top,
                        stream: self.stream,
                    };
                    let ty = header_of(&self.buf[self.start..], self.endian).record_type();
                    self.large = (self.offset, (size as u64).saturating_add(payload), ty);
                    self.start += size;
                    self.offset += size as u64;
                    self.payload_left = payload;
                    return Ok(Some(span));
                }
                Frame::Incomplete { needed } if !self.eof => self.fill(needed)?,
                Frame::Incomplete { needed } => return self.finish_at_eof(needed),
                Frame::Invalid(problem) => {
                    if !plausible_header(&self.buf[self.start..self.end], self.endian) {
                        self.drain_junk()?;
                        return Ok(None);
                    }
                    self.finished = Some(StreamEnd::Clean);
                    return Err(Error::format(self.offset, "record header", problem));
                }
            }
        }
    }

    fn buffer(&self) -> &[u8] {
        &self.buf
    }

    fn endian(&self) -> Endian {
        self.endian
    }

    fn payload_left(&self) -> u64 {
        self.payload_left
    }

    /// Bytes already buffered first, then one read of the stream at a time into the
    /// start of the buffer, so the buffer does not grow with the payload.
    fn payload_chunk(&mut self) -> Result<&[u8]> {
        if self.payload_left == 0 {
            return Ok(&[]);
        }
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
            if self.buf.len() < PAYLOAD_CHUNK {
                self.buf.resize(PAYLOAD_CHUNK, 0);
            }
            let want = self.payload_left.min(self.buf.len() as u64) as usize;
            while self.end == 0 && !self.eof {
                match self.reader.read(&mut self.buf[..want]) {
                    Ok(0) => self.eof = true,
                    Ok(n) => self.end = n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        return Err(Error::io(
                            format!("reading the stream at byte {}", self.offset),
                            e,
                        ))
                    }
                }
            }
            if self.end == 0 {
                let (at, needed, ty) = self.large;
                let available = needed - self.payload_left;
                self.payload_left = 0;
                self.finished = Some(StreamEnd::Clean);
                return Err(Error::format(
                    at,
                    format!("record {ty}"),
                    Problem::Truncated { needed, available },
                ));
            }
        }
        let n = self
            .payload_left
            .min((self.end - self.start).min(PAYLOAD_CHUNK) as u64) as usize;
        let at = self.start;
        self.start += n;
        self.offset += n as u64;
        self.payload_left -= n as u64;
        Ok(&self.buf[at..at + n])
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_record as rec;
    use super::*;

    /// A reader that returns one byte at a time, like a slow pipe.
    struct Trickle(Vec<u8>, usize);
    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.1 >= self.0.len() || out.is_empty() {
                return Ok(0);
            }
            out[0] = self.0[self.1];
            self.1 += 1;
            Ok(1)
        }
    }

    #[test]
    fn reads_records_across_short_reads_and_reports_junk() {
        let mut data = rec(3, 24);
        data.extend_from_slice(&rec(9, 40));
        data.extend_from_slice(b"[ perf record: Woken up 1 times ]\n");
        let mut s = StreamRecords::new(Trickle(data, 0), 16, Endian::Little, 0);
        let mut offsets = Vec::new();
        while let Some(r) = s.next_record().unwrap() {
            offsets.push((r.offset, r.header.type_, r.bytes.len()));
        }
        assert_eq!(offsets, vec![(16, 3, 24), (40, 9, 40)]);
        assert_eq!(
            s.end(),
            Some(&StreamEnd::Junk {
                offset: 80,
                len: 34
            })
        );
    }

    #[test]
    fn truncated_record_is_an_error() {
        let mut data = rec(3, 24);
        data.extend_from_slice(&rec(9, 40)[..30]);
        let mut s = StreamRecords::new(&data[..], 16, Endian::Little, 0);
        assert!(s.next_record().unwrap().is_some());
        let e = s.next_record().unwrap_err();
        assert_eq!(e.offset(), Some(40));
        assert!(s.next_record().unwrap().is_none());
    }

    #[test]
    fn size_zero_is_an_error() {
        let mut data = rec(3, 24);
        data.extend_from_slice(&[9, 0, 0, 0, 0, 0, 0, 0]);
        let mut s = StreamRecords::new(&data[..], 16, Endian::Little, 0);
        assert!(s.next_record().unwrap().is_some());
        let e = s.next_record().unwrap_err();
        assert_eq!(e.offset(), Some(40));
    }
}
