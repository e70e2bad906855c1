//! `-v`/`--verbose`: what the reader and the writers found and decided, on stderr, as
//! perf's `-v` says more. Once (`-v`) gives the input's kind and the policy a command
//! resolved; twice (`-vv`) adds each section and feature with its offset and size.
//!
//! `report` also prints its text as `perf report -v` does (DSOs by path, each symbol after
//! its entry's address and symtab origin), stderr saying what it said before.
//!
//! `-q` and `-v` exclude each other (clap refuses both): perf has no meaning for both.

use std::sync::atomic::{AtomicU8, Ordering};

use perfdata_core::Metadata;

/// How many times `-v` was given.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// Record the `-v` count of the command line.
pub fn set_level(level: u8) {
    LEVEL.store(level, Ordering::Relaxed);
}

/// How many times `-v` was given.
pub fn level() -> u8 {
    LEVEL.load(Ordering::Relaxed)
}

/// Print `msg` on stderr when `-v` was given at least `level` times.
pub fn say(level: u8, msg: impl std::fmt::Display) {
    if LEVEL.load(Ordering::Relaxed) >= level {
        errln!("perfdata: {msg}");
    }
}

/// The input's kind, byte order and events (`-v`); its sections and features with their
/// offsets and sizes (`-vv`).
pub fn describe_input(meta: &Metadata) {
    if LEVEL.load(Ordering::Relaxed) == 0 {
        return;
    }
    say(
        1,
        format_args!(
            "input: {:?} mode, {:?} endian, {} event attrs, {} features",
            meta.container,
            meta.endian,
            meta.attrs().len(),
            meta.features.len()
        ),
    );
    if let Some(h) = &meta.header {
        for (name, s) in [
            ("attrs", &h.attrs),
            ("data", &h.data),
            ("event_types", &h.event_types),
        ] {
            say(
                2,
                format_args!("section {name}: offset {:#x}, {} bytes", s.offset, s.size),
            );
        }
    }
    for (id, s) in &meta.feature_sections {
        say(
            2,
            format_args!(
                "feature {}: offset {:#x}, {} bytes",
                id.name(),
                s.offset,
                s.size
            ),
        );
    }
}
