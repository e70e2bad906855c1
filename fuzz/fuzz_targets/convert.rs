//! Any bytes: converting to a file and to a pipe never panics, and whatever a conversion
//! writes its own reader reads back to the end, with the input's samples (a writer never
//! emits what its reader would reject).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_write::convert::{ConvertOptions, Target};
use perfdata_write::{Conversion, Input, Sink};

mod common;

fuzz_target!(|data: &[u8]| {
    let to = |target| ConvertOptions {
        target: Some(target),
        ..ConvertOptions::default()
    };
    let read = || PerfReader::from_vec(data.to_vec(), ReadOptions::default());
    let Some(samples) = common::samples(data.to_vec()) else {
        return;
    };
    if let Ok(reader) = read() {
        let mut out = Cursor::new(Vec::new());
        let conversion = Conversion::new(Input::from_reader(reader)).options(to(Target::File));
        if conversion.write(Sink::seekable(&mut out, None)).is_ok() {
            common::assert_reads_back(out.into_inner(), samples, "file");
        }
    }
    if let Ok(reader) = read() {
        let mut out = Vec::new();
        let conversion = Conversion::new(Input::from_reader(reader)).options(to(Target::Pipe));
        if conversion.write(Sink::stream(&mut out)).is_ok() {
            common::assert_reads_back(out, samples, "pipe");
        }
    }
});
