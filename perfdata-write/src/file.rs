//! File-mode writing, streamed: the data section goes straight to the output and the
//! header is written last, by seeking back.
//!
//! The layout is perf's own (FORMAT-NOTES section 1): header at 0; the id arrays of every
//! attr from 104; the attrs section; old-style event types if any; the data section; the
//! feature index at data.offset + data.size, then the payloads back to back in bit order.
//! A file perf wrote this way comes out byte for byte as it went in.

use std::io::{Seek, SeekFrom, Write};

use binrw::Endian;
use perfdata_core::attr::{FileAttr, PerfEventAttr};
use perfdata_core::codec::{encode, u32_at};
use perfdata_core::feature::FeatureId;
use perfdata_core::header::{
    EventType, FeatureBitmap, FileHeader, FileSection, Magic, FILE_HEADER_SIZE,
};
use perfdata_core::record::RecordType;

use crate::error::{Result, WriteError};

/// An event to write: its attr and ids.
#[derive(Debug, Clone)]
pub struct AttrEntry {
    pub attr: PerfEventAttr,
    pub ids: Vec<u64>,
}

/// Where an AUXTRACE record landed: what the AUXTRACE feature indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuxtracePosition {
    pub offset: u64,
    /// The record's header.size (perf indexes the record, not the trace bytes after it).
    pub size: u64,
}

/// A file-mode writer over a seekable output.
pub struct FileWriter<W: Write + Seek> {
    out: W,
    endian: Endian,
    attr_size: u64,
    attrs_section: FileSection,
    event_types_section: FileSection,
    data_offset: u64,
    pos: u64,
    auxtrace: Vec<AuxtracePosition>,
}

fn io_err(e: std::io::Error) -> WriteError {
    WriteError::io("writing the output file", e)
}

impl<W: Write + Seek> FileWriter<W> {
    /// Start a file: a placeholder header, the ids and attrs, and old-style event types
    /// (empty for anything perf wrote since 3.x). Records follow with `write_record`.
    pub fn new(
        mut out: W,
        endian: Endian,
        attrs: &[AttrEntry],
        event_types: &[EventType],
    ) -> Result<Self> {
        let attr_len = attrs
            .first()
            .map_or(perfdata_core::attr::ATTR_SIZE_PERF_6_1, |a| {
                a.attr.encoded_len
            });
        if let Some((i, a)) = attrs
            .iter()
            .enumerate()
            .find(|(_, a)| a.attr.encoded_len != attr_len)
        {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "attr {i} is {} bytes but attr 0 is {attr_len}: a file has one attr size",
                    a.attr.encoded_len
                ),
            ));
        }
        out.seek(SeekFrom::Start(0)).map_err(io_err)?;
        out.write_all(&[0u8; FILE_HEADER_SIZE as usize])
            .map_err(io_err)?;
        let mut pos = FILE_HEADER_SIZE;
        let mut sections = Vec::with_capacity(attrs.len());
        for a in attrs {
            let size = a.ids.len() as u64 * 8;
            sections.push(FileSection { offset: pos, size });
            let mut buf = Vec::with_capacity(size as usize);
            for id in &a.ids {
                buf.extend_from_slice(&encode(id, endian, ()));
            }
            out.write_all(&buf).map_err(io_err)?;
            pos += size;
        }
        let attr_size = attr_len as u64 + 16;
        let attrs_section = FileSection {
            offset: pos,
            size: attr_size * attrs.len() as u64,
        };
        for (a, ids) in attrs.iter().zip(sections) {
            let fa = FileAttr {
                attr: a.attr.clone(),
                ids,
            };
            out.write_all(&encode(&fa, endian, ())).map_err(io_err)?;
        }
        pos += attrs_section.size;
        let event_types_section = if event_types.is_empty() {
            FileSection::default()
        } else {
            let s = FileSection {
                offset: pos,
                size: EventType::SIZE * event_types.len() as u64,
            };
            for et in event_types {
                out.write_all(&encode(et, endian, ())).map_err(io_err)?;
            }
            pos += s.size;
            s
        };
        Ok(FileWriter {
            out,
            endian,
            attr_size,
            attrs_section,
            event_types_section,
            data_offset: pos,
            pos,
            auxtrace: Vec::new(),
        })
    }

    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Bytes of data written so far.
    pub fn data_size(&self) -> u64 {
        self.pos - self.data_offset
    }

    /// Append a record already encoded in this file's byte order (header included),
    /// followed by its payload (tracing data, AUX trace bytes).
    pub fn write_record(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        if u32_at(bytes, 0, self.endian) == Some(RecordType::Auxtrace.as_u32()) {
            self.auxtrace.push(AuxtracePosition {
                offset: self.pos,
                size: bytes.len() as u64,
            });
        }
        self.out.write_all(bytes).map_err(io_err)?;
        self.out.write_all(payload).map_err(io_err)?;
        self.pos += (bytes.len() + payload.len()) as u64;
        Ok(())
    }

    /// Append more payload to the record written last: a payload too large to hold
    /// (see `perfdata_core::raw::MAX_BUFFERED`) is written as it is read.
    pub fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.out.write_all(more).map_err(io_err)?;
        self.pos += more.len() as u64;
        Ok(())
    }

    /// Where the AUXTRACE records written so far are.
    pub fn auxtrace_positions(&self) -> &[AuxtracePosition] {
        &self.auxtrace
    }

    /// Write the feature index and payloads (`features` in ascending bit order, each
    /// already encoded), then the header. `index_slack` is written between the index and
    /// the first payload (perf's zero entries for features it failed to write).
    pub fn finish(mut self, features: &[(FeatureId, Vec<u8>)], index_slack: &[u8]) -> Result<W> {
        let data = FileSection {
            offset: self.data_offset,
            size: self.pos - self.data_offset,
        };
        let mut bits = FeatureBitmap::default();
        let mut payload_at = self.pos + 16 * features.len() as u64 + index_slack.len() as u64;
        let mut index = Vec::with_capacity(features.len() * 16);
        let mut last_bit = None;
        for (id, payload) in features {
            let bit = id.bit();
            if bit >= 256 || last_bit.is_some_and(|b| b >= bit) {
                return Err(WriteError::unsupported(
                    None,
                    format!("feature {id}: features must be in ascending bit order below 256"),
                ));
            }
            last_bit = Some(bit);
            bits.set(bit, true);
            let sec = FileSection {
                offset: payload_at,
                size: payload.len() as u64,
            };
            index.extend_from_slice(&encode(&sec, self.endian, ()));
            payload_at += sec.size;
        }
        self.out.write_all(&index).map_err(io_err)?;
        self.out.write_all(index_slack).map_err(io_err)?;
        for (_, payload) in features {
            self.out.write_all(payload).map_err(io_err)?;
        }
        let header = FileHeader {
            magic: Magic::V2.bytes(self.endian),
            size: FILE_HEADER_SIZE,
            attr_size: self.attr_size,
            attrs: self.attrs_section,
            data,
            event_types: self.event_types_section,
            features: Some(bits),
        };
        self.out.seek(SeekFrom::Start(0)).map_err(io_err)?;
        self.out
            .write_all(&encode(&header, self.endian, ()))
            .map_err(io_err)?;
        self.out.seek(SeekFrom::Start(payload_at)).map_err(io_err)?;
        self.out.flush().map_err(io_err)?;
        Ok(self.out)
    }
}
