//! Hold a whole recording as an owned tree, change it, write it back: rename a command
//! (its COMM records, and the COMM inside compressed records too) and write the tree,
//! every offset, record size and derived feature recomputed.
//!
//! ```sh
//! cargo run -p perfdata-write --example tree_edit -- perf.data renamed.data OLD NEW
//! ```
//!
//! Prints how many COMM records it renamed.

use perfdata_core::record::{PaddedString, RecordBody};
use perfdata_core::{PerfData, ReadOptions};
use perfdata_write::{Conversion, Sink, TreeSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, old, new] = args.as_slice() else {
        return Err("usage: tree_edit IN OUT OLD NEW".into());
    };
    // Contents: the records inside compressed records, compressed again when written.
    let mut tree = PerfData::read_with(input, ReadOptions::Contents)?;
    let mut renamed = 0;
    for entry in &mut tree.records {
        if let RecordBody::Comm(comm) = &mut entry.record.body {
            if comm.comm.as_str_lossy() == old.as_str() {
                comm.comm = PaddedString::new(new);
                renamed += 1;
            }
        }
    }
    // A file, or a pipe stream when the input was one.
    Conversion::new(TreeSource::new(&tree)).write(Sink::path(output)?)?;
    println!("renamed {renamed} COMM records");
    Ok(())
}
