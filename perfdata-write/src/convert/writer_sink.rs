//! Where converted records go inside the pipeline: a file writer or a pipe writer.

use std::io::{Seek, Write};

use crate::error::Result;
use crate::file::FileWriter;
use crate::pipe::PipeWriter;

/// A destination for encoded records.
pub(crate) trait Sink {
    /// Write a record (header included, `header.size` bytes) and its payload.
    fn write(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()>;
    /// Write a record that is, with its payload, the input file's bytes at `at`.
    fn write_input(&mut self, bytes: &[u8], payload: &[u8], _at: u64) -> Result<()> {
        self.write(bytes, payload)
    }
    /// Write a kernel record (no payload, framed by the reader) that is the input
    /// file's bytes at `at`.
    fn write_kernel_input(&mut self, bytes: &[u8], at: u64) -> Result<()> {
        self.write_input(bytes, &[], at)
    }
    /// Append more payload to the record written last (a payload streamed in pieces).
    fn write_payload(&mut self, more: &[u8]) -> Result<()>;
    /// This sink as a trait object (for the stage's less common paths, which are not
    /// made once per sink type).
    fn as_dyn(&mut self) -> &mut dyn Sink;
}

pub(crate) struct FileSink<'a, W: Write + Seek>(pub &'a mut FileWriter<W>);

impl<W: Write + Seek> Sink for FileSink<'_, W> {
    fn write(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.0.write_record(bytes, payload)
    }
    fn write_input(&mut self, bytes: &[u8], payload: &[u8], at: u64) -> Result<()> {
        self.0.write_input_record(bytes, payload, at)
    }
    fn write_kernel_input(&mut self, bytes: &[u8], at: u64) -> Result<()> {
        self.0.write_kernel_record(bytes, at)
    }
    fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.0.write_payload(more)
    }
    fn as_dyn(&mut self) -> &mut dyn Sink {
        self
    }
}

pub(crate) struct PipeSink<'a, W: Write>(pub &'a mut PipeWriter<W>);

impl<W: Write> Sink for PipeSink<'_, W> {
    fn write(&mut self, bytes: &[u8], payload: &[u8]) -> Result<()> {
        self.0.write_record(bytes, payload)
    }
    fn write_payload(&mut self, more: &[u8]) -> Result<()> {
        self.0.write_payload(more)
    }
    fn as_dyn(&mut self) -> &mut dyn Sink {
        self
    }
}
