//! Any bytes: reading never panics, and every record that decodes encodes back to the
//! bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfdata_core::{PerfReader, ReadOptions};

fuzz_target!(|data: &[u8]| {
    let Ok(mut reader) = PerfReader::from_vec(data.to_vec(), ReadOptions::default()) else {
        return;
    };
    while let Ok(Some(item)) = reader.next_record() {
        let (record, err) = item.decode_or_raw();
        let mut original = item.raw.bytes.to_vec();
        original.extend_from_slice(item.raw.payload);
        if err.is_none() {
            assert_eq!(record.encode(item.meta.endian).unwrap(), original);
        }
    }
});
