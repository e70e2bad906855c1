//! Output files written atomically: to a temp file in the target's directory, renamed
//! over the target only at the end, so a failed run leaves no half-written file and
//! never touches its input.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, WriteError};

/// A temp file that becomes `target` on [`AtomicOutput::commit`] and disappears if
/// dropped before.
pub struct AtomicOutput {
    temp: tempfile::NamedTempFile,
    target: PathBuf,
}

impl AtomicOutput {
    pub fn create(target: &Path) -> Result<Self> {
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".perfdata-")
            .suffix(".tmp")
            .tempfile_in(&dir)
            .map_err(|e| {
                WriteError::io(format!("cannot create a temp file in {}", dir.display()), e)
            })?;
        Ok(AtomicOutput {
            temp,
            target: target.to_path_buf(),
        })
    }

    /// A buffered writer over the temp file.
    pub fn writer(&mut self) -> BufWriter<&mut File> {
        BufWriter::with_capacity(1 << 20, self.temp.as_file_mut())
    }

    /// Rename the temp file over the target. With `like`, the output gets that file's
    /// permissions and modification time (perf shows the latter as "captured on").
    pub fn commit(self, like: Option<&Path>) -> Result<()> {
        let target = self.target.clone();
        // No fsync, as perf and cp do not: the rename makes a failed or killed run
        // leave nothing half-written at the target; durability across a power cut is
        // the file system's (ext4 flushes a file renamed over another). Syncing 800 MB
        // would add half the conversion's time again.
        let file = self.temp.as_file();
        match like.map(std::fs::metadata) {
            Some(Ok(md)) => {
                file.set_permissions(md.permissions())
                    .map_err(|e| WriteError::io("setting the output's permissions", e))?;
                if let Ok(mtime) = md.modified() {
                    file.set_modified(mtime)
                        .map_err(|e| WriteError::io("setting the output's time", e))?;
                }
            }
            // A new file, not a copy: the usual permissions rather than the temp file's
            // private ones.
            _ => {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o644))
                    .map_err(|e| WriteError::io("setting the output's permissions", e))?;
            }
        }
        self.temp.persist(&target).map_err(|e| {
            WriteError::io(
                format!("cannot rename the output to {}", target.display()),
                e.error,
            )
        })?;
        Ok(())
    }
}

/// Copy a finished temp file to a stream (file mode to stdout needs seeking while it is
/// written, so it is written to a temp file first).
pub fn copy_to<W: Write>(file: &mut File, out: &mut W) -> Result<()> {
    file.seek(SeekFrom::Start(0))
        .map_err(|e| WriteError::io("rewinding the temp output", e))?;
    std::io::copy(file, out).map_err(|e| WriteError::io("copying the output", e))?;
    out.flush()
        .map_err(|e| WriteError::io("flushing the output", e))?;
    Ok(())
}
