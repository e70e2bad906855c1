//! Any bytes through the edit pipeline (strip by pid, then drop the user stack and
//! registers): it never panics, and what it writes reads back to the end.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use perfdata_core::attr::SampleType;
use perfdata_core::{PerfReader, ReadOptions};
use perfdata_write::convert::{ConvertOptions, Target};
use perfdata_write::edit::{DropSampleFields, RecordEdit, Selection, Selectors, Strip};
use perfdata_write::{Conversion, Input, Sink};

mod common;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, rest)) = data.split_first() else {
        return;
    };
    if common::samples(rest.to_vec()).is_none() {
        return;
    }
    // The first byte picks the pids (0..=choice/2) and whether to keep or remove them.
    let sel = Selection {
        select: Selectors {
            pids: Some(vec![(0, u64::from(choice / 2))]),
            ..Default::default()
        },
        keep: choice & 1 == 1,
        ..Default::default()
    };
    let edits: Vec<Box<dyn RecordEdit>> = vec![
        Box::new(Strip::new(sel)),
        Box::new(DropSampleFields::new(
            SampleType::REGS_USER | SampleType::STACK_USER,
        )),
    ];
    let Ok(reader) = PerfReader::from_vec(rest.to_vec(), ReadOptions::Contents) else {
        return;
    };
    let opts = ConvertOptions {
        target: Some(Target::File),
        ..ConvertOptions::default()
    };
    let mut out = Cursor::new(Vec::new());
    let written = Conversion::new(Input::from_reader(reader))
        .options(opts)
        .edits(edits)
        .write(Sink::seekable(&mut out, None));
    if let Ok(report) = written {
        let kept = report
            .edits
            .as_ref()
            .map_or(0, |s| s.kept(perfdata_core::record::RecordType::Sample));
        common::assert_reads_back(out.into_inner(), kept, "strip");
    }
});
