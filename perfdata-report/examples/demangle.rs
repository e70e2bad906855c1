//! Demangle names as perf 6.1 prints them, one a line, for comparing with
//! `c++filt -p -i` (binutils' libiberty with perf's options) over a binary's symbols:
//!
//! ```sh
//! nm -D "$(command -v node)" | awk '{print $NF}' | grep '^_Z' > names
//! cargo run -p perfdata-report --example demangle < names > ours
//! c++filt -p -i < names > theirs
//! ```
//!
//! Prints [`perfdata_report::symtab::demangle`] of each line of standard input.

use std::io::{BufRead, Write};

fn main() -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in std::io::stdin().lock().lines() {
        writeln!(out, "{}", perfdata_report::symtab::demangle(&line?))?;
    }
    out.flush()
}
