//! Opening the files a recording names (binaries, JIT maps, jitdumps), shared by the
//! symboliser and the jitdump reader so that neither imports the other.

use std::path::{Path, PathBuf};

/// `path` opened for reading if it is a regular file. Opened without blocking, then
/// checked: a FIFO (or a device) where a binary was would otherwise block the open
/// until a writer came, forever.
pub(crate) fn open_regular(path: &Path) -> Option<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    file.metadata().ok()?.is_file().then_some(file)
}

/// The file to read for a JIT's file named `filename` in the recording (a jitdump
/// marker, a perf map): its copy under `symfs` when there is one, else the file itself.
pub fn locate(filename: &str, symfs: Option<&Path>) -> PathBuf {
    let named = Path::new(filename);
    symfs
        .map(|root| root.join(named.strip_prefix("/").unwrap_or(named)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| named.to_path_buf())
}
