//! Any bytes: converting to a file and to a pipe never panics, and whatever a conversion
//! writes its own reader reads back to the end, with the input's samples (a writer never
//! emits what its reader would reject).
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_write::convert::{self, ConvertOptions};

mod common;

fuzz_target!(|data: &[u8]| {
    let opts = ConvertOptions::default();
    let read = || PerfReader::from_vec(data.to_vec(), ReadOptions::default());
    let Some(samples) = common::samples(data.to_vec()) else {
        return;
    };
    if let Ok(reader) = read() {
        if let Ok((out, _)) = convert::to_file(reader, Cursor::new(Vec::new()), &opts) {
            common::assert_reads_back(out.into_inner(), samples, "file");
        }
    }
    if let Ok(reader) = read() {
        if let Ok((out, _)) = convert::to_pipe(reader, Vec::new(), &opts) {
            common::assert_reads_back(out, samples, "pipe");
        }
    }
});
