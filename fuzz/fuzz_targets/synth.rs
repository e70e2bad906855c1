//! Any synth spec (picked from the input bytes): building never panics, and what it
//! writes reads back to the end with exactly the samples it says it wrote.
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfdata_synth::{write_workload, SynthSpec, SynthWriter};

mod common;

const EVENTS: [&str; 6] = [
    "cpu-clock",
    "task-clock,cycles",
    "tracepoint",
    "{cycles,task-clock}:S",
    "cycles,tracepoint,cpu-clock",
    "{task-clock,cycles,cpu-clock}:S",
];
const FIELDS: [&str; 6] = [
    "",
    "ADDR",
    "PHYS_ADDR,DATA_SRC",
    "RAW",
    "WEIGHT,TRANSACTION",
    "IDENTIFIER",
];

fuzz_target!(|data: &[u8]| {
    let byte = |i: usize| data.get(i).copied().unwrap_or(0);
    let seed = u64::from_le_bytes(std::array::from_fn(|i| byte(i)));
    let flags = byte(8);
    let spec = SynthSpec {
        seed,
        processes: u32::from(byte(9) % 6) + 1,
        threads_per_process: u32::from(byte(10) % 4) + 1,
        samples: u64::from(byte(11)) * 2,
        events: EVENTS[usize::from(byte(12)) % EVENTS.len()].into(),
        fields: FIELDS[usize::from(byte(13)) % FIELDS.len()].into(),
        callchain: (flags & 1 != 0).then(|| u32::from(byte(14) % 16) + 1),
        dsos: u32::from(byte(15) % 5) + 1,
        functions_per_dso: u32::from(byte(16) % 9) + 1,
        build_ids: flags & 2 != 0,
        sample_id_all: flags & 4 != 0,
        extras: flags & 8 != 0,
        clock: flags & 16 != 0,
        round_every: u64::from(byte(17)) + 1,
        big_endian: flags & 32 != 0,
        compress: (flags & 64 != 0).then(|| i32::from(byte(18) % 4) + 1),
        compressed2: byte(18) & 0x80 != 0,
        ..SynthSpec::default()
    };
    let Ok((workload, trace)) = spec.build() else {
        return;
    };
    let pipe = flags & 128 != 0;
    let written = if pipe {
        SynthWriter::pipe(Vec::new(), trace).and_then(|w| write_workload(&workload, w))
    } else {
        SynthWriter::file(std::io::Cursor::new(Vec::new()), trace)
            .and_then(|w| write_workload(&workload, w))
            .map(|(c, n)| (c.into_inner(), n))
    };
    let (bytes, samples) = written.expect("a spec that builds is written");
    common::assert_reads_back(bytes, samples, if pipe { "pipe" } else { "file" });
});
