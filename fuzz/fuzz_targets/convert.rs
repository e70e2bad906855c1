//! Any bytes: converting to a file and to a pipe never panics.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_write::convert::{self, ConvertOptions};

fuzz_target!(|data: &[u8]| {
    let opts = ConvertOptions::default();
    let read = || PerfReader::from_vec(data.to_vec(), ReadOptions::default());
    if let Ok(reader) = read() {
        let _ = convert::to_file(reader, Cursor::new(Vec::new()), &opts);
    }
    if let Ok(reader) = read() {
        let _ = convert::to_pipe(reader, Vec::new(), &opts);
    }
});
