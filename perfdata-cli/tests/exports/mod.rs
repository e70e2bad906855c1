//! Readers of the export formats and perf script's stacks, for the export oracle tests.
// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

pub mod decode;
pub mod script;
