//! The input of a command, as perf takes it: a positional FILE, or `-i FILE`, or
//! `./perf.data` when neither is given.

use std::path::{Path, PathBuf};

/// `FILE` or `-i FILE`; `perf.data` by default.
#[derive(clap::Args, Debug, Clone)]
pub struct Input {
    /// A perf.data file, a perf.data directory, or `-` for stdin [default: perf.data].
    #[arg(value_name = "FILE", conflicts_with = "input")]
    file: Option<PathBuf>,
    /// The input, as perf's `-i`: the same as FILE.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    input: Option<PathBuf>,
}

impl Input {
    /// The path to read (`-` for stdin).
    pub fn path(&self) -> &Path {
        self.file
            .as_deref()
            .or(self.input.as_deref())
            .unwrap_or(Path::new("perf.data"))
    }
}
