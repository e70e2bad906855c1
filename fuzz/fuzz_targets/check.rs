//! Any bytes through `perfdata check`'s library: it never panics, and whatever the reader
//! rejects, check reports as a problem.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfdata_view::check::check_bytes;
use perfdata_core::{PerfReader, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let report = check_bytes(data.to_vec());
    let rejected = match PerfReader::from_vec(data.to_vec(), ReadOptions::default()) {
        Err(_) => true,
        Ok(mut reader) => loop {
            match reader.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => break false,
                Err(_) => break true,
            }
        },
    };
    if rejected {
        assert!(
            !report.is_clean(),
            "the reader rejects it but check finds nothing"
        );
    }
});
