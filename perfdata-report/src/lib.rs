//! perfdata-report: what a perf.data recording means. The side-band records are replayed
//! into a process model (threads, names, maps, DSOs) as perf's machine code does, each
//! sample is resolved to its thread, DSO and DSO-relative address, addresses are named
//! from ELF symbol tables and kallsyms, and samples are grouped into perf report's
//! tables.
//!
//! ```no_run
//! use perfdata_report::{replay, table, symbolize::{SymbolOptions, Symbolizer}};
//!
//! let keys = table::SortKey::parse_list("comm,dso,sym").unwrap();
//! // Samples are counted as the replay hands them out, none kept.
//! let mut tally = table::Tally::new(&keys);
//! let r = replay::replay_each("perf.data".as_ref(), |m, s| tally.count(m, &s))?;
//! let opts = SymbolOptions { kallsyms: r.kernel_is_running(), ..Default::default() };
//! let tables = tally.tables(&r, &mut Symbolizer::new(opts));
//! let preamble = perfdata_report::text::Preamble { lost_samples: r.lost_samples, single_comm: None };
//! perfdata_report::text::write_stdio(&mut std::io::stdout(), &tables, &keys, true, &preamble)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod children;
pub mod filter;
pub mod firefox;
pub mod flamegraph;
pub mod folded;
pub mod group;
mod intern;
mod keys;
pub mod pprof;
pub mod process;
pub mod readperf;
pub mod replay;
mod same_names;
pub mod sample_fields;
mod sample_read;
pub mod speedscope;
mod spool;
pub mod srcline;
pub mod stacks;
pub mod symbolize;
pub mod symtab;
pub mod table;
pub mod text;
pub mod unwind;
