//! Tracepoint samples as perf script shows them: the RAW payload decoded with the
//! event formats of the tracing data ([`event`]) and each format's `print fmt:` line
//! evaluated over the fields ([`mod@print`]). Reading the tracing data blob itself is
//! [`perfdata_core::tracing`]'s.

pub mod event;
pub mod print;
#[cfg(test)]
mod print_tests;
pub use event::{DecodedTrace, FieldValue, TraceEvent, TraceEvents};
