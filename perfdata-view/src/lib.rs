//! perfdata-view: perf's views of a `perf.data` file, as text and as JSON, over the
//! model and reader of [`perfdata_core`].
//!
//! - [`info`]: the header and features as `perf report --header-only -I` prints them.
//! - [`dump`]: one record per line, as text or JSON Lines.
//! - [`stats`]: record counts as `perf report --stats` gives them.
//! - [`check`]: every problem of a recording, not only the first.
//! - [`buildids`]: the build ids of a recording's binaries, as `perf buildid-list`.
//! - [`tracing`]: tracepoint payloads as perf script prints them.
//! - [`json`]: the JSON form every `--json` output shares (addresses as `"0x..."`,
//!   integers a double cannot hold as strings), written by the serializer of [`ser`],
//!   the one that knows the marks of [`perfdata_core::mark`].
//!
//! ```
//! let input = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/file-cpu-clock.data");
//! let (stats, _reader, read) = perfdata_view::stats::Stats::of(input)?;
//! read?;
//! assert!(stats.total > 0 && stats.events.iter().any(|e| e.samples > 0));
//! # Ok::<(), perfdata_core::Error>(())
//! ```
#![warn(missing_docs)]

pub mod buildids;
pub mod check;
pub mod dump;
pub mod info;
pub mod json;
pub mod ser;
pub mod stats;
pub mod tracing;
