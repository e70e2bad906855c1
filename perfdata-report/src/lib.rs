//! perfdata-report: what a perf.data recording means. The side-band records are replayed
//! into a process model (threads, names, maps, DSOs) as perf's machine code does, each
//! sample is resolved to its thread, DSO and DSO-relative address, addresses are named
//! from ELF symbol tables and kallsyms, and samples are grouped into perf report's
//! tables.
//!
//! ```no_run
//! use perfdata_report::{model::SortKey, Report};
//!
//! let keys = SortKey::parse_list("comm,dso,sym").unwrap();
//! // Samples are counted as the replay hands them out, none kept.
//! let reader = perfdata_core::PerfReader::open(std::path::Path::new("perf.data"))?;
//! let tables = Report::new().sort(keys).read(reader)?.tables();
//! tables.write_stdio(&mut std::io::stdout(), true)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod callgraph;
mod children;
pub mod diff;
pub mod export;
pub mod fields;
mod files;
pub mod filter;
pub mod firefox;
pub mod flamegraph;
pub mod folded;
pub mod group;
mod hist_split;
mod hists;
pub mod inlines;
pub mod intel_pt;
mod intern;
pub mod jitdump;
mod keys;
mod libiberty;
mod max_stack;
pub mod model;
pub mod pprof;
pub mod process;
pub mod readperf;
pub mod replay;
pub mod report;
mod row_order;
mod same_names;
mod sample_read;
pub mod script;
pub mod speedscope;
mod spool;
pub mod srcline;
pub mod stacks;
pub mod symbolize;
pub mod symtab;
pub mod table;
pub mod text;
mod trace_keys;
pub mod unwind;
mod verbose;

pub use report::Report;
