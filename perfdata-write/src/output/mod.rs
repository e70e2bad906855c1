//! Output files written atomically: to a temp file in the target's directory, linked or
//! renamed over the target only at the end, so a failed or interrupted run leaves no
//! half-written file and never touches its input.
//!
//! An output that exists and is no regular file (a character or block device such as
//! `/dev/null`, a FIFO, the pipe behind `/dev/stdout`) is not replaced: it is opened and
//! written in place, as a stream, as perf writes into it ([`AtomicOutput::is_stream`]).
//!
//! Where the file system allows it the temp file is unnamed (`O_TMPFILE`): it has no
//! name until the conversion succeeded, so even SIGKILL leaves nothing behind. Elsewhere
//! it is a named `.perfdata-XXXXXX.tmp`, removed when the output is dropped unfinished
//! (an error, a [`crate::Cancel`]) or by [`interrupt::remove_temp_files`], which the
//! binary's SIGINT and SIGTERM handlers call.

pub mod interrupt;
mod threaded;

pub use threaded::ThreadedWriter;

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Result, WriteError};
use interrupt::{SignalsBlocked, TempPathGuard};

/// The file being written before it becomes the target.
enum Temp {
    /// An `O_TMPFILE` file: no name until it is linked into place.
    Unnamed(File),
    /// A named temp file, removed when dropped or on SIGINT/SIGTERM.
    Named(tempfile::NamedTempFile, TempPathGuard),
}

/// Where the bytes go.
enum Dest {
    /// A temp file, put in place of the target on commit.
    Replace(Temp),
    /// No temp file: an existing output that is no regular file, written in place.
    /// What must seek is built in `spool`, an unnamed temp file (in `$TMPDIR`) made on
    /// demand and copied into the node on commit.
    Node { node: File, spool: Option<File> },
}

/// The permissions of an output that did not exist before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewFile {
    /// 0600, as perf record and perf inject create perf.data files (they hold paths,
    /// command lines and the host's name).
    Private,
    /// 0666 less the process's umask, as any tool creates a file: for exports (SVG,
    /// folded stacks, JSON, pprof, CSV tables).
    Umask,
}

/// A temp file that becomes `target` on [`AtomicOutput::commit`] and disappears if
/// dropped before (or if the process is interrupted, see [`interrupt`]); or, where the
/// target is a device or a FIFO, that node itself, written in place (see
/// [`AtomicOutput::is_stream`]).
pub struct AtomicOutput {
    dest: Dest,
    /// The file replaced: a symlink's target rather than the link.
    target: PathBuf,
    dir: PathBuf,
    /// The mode of a target that does not exist yet.
    new_file: NewFile,
}

/// Where a path leads through symlinks (also a dangling link's destination, which
/// writing creates, as `open(O_CREAT)` does).
fn follow_links(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    // Bounded as the kernel bounds it (ELOOP after 40 links).
    for _ in 0..40 {
        match std::fs::read_link(&p) {
            Ok(next) if next.is_absolute() => p = next,
            Ok(next) => p = p.parent().unwrap_or(Path::new("")).join(next),
            Err(_) => break,
        }
    }
    p
}

/// An I/O error without the temp file's name (tempfile adds it): messages name the
/// target, which is what the user asked for.
fn plain(e: std::io::Error) -> std::io::Error {
    let os = e.raw_os_error().or_else(|| {
        let inner = e.get_ref()?.source()?;
        inner.downcast_ref::<std::io::Error>()?.raw_os_error()
    });
    match os {
        Some(code) => std::io::Error::from_raw_os_error(code),
        None => e,
    }
}

/// An unnamed file in `dir`, or `None` where the file system (or kernel) has none.
fn unnamed_in(dir: &Path) -> std::io::Result<Option<File>> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::FromRawFd;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())?;
    let flags = libc::O_TMPFILE | libc::O_RDWR | libc::O_CLOEXEC;
    // SAFETY: open(2) with a NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), flags, 0o600) };
    if fd >= 0 {
        // SAFETY: a descriptor open(2) just returned, owned by nobody else.
        return Ok(Some(unsafe { File::from_raw_fd(fd) }));
    }
    let e = std::io::Error::last_os_error();
    // What open(2) says when the file system or the kernel has no O_TMPFILE.
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOSYS) => Ok(None),
        _ => Err(e),
    }
}

/// Give the unnamed `file` the name `path` (which must not exist).
fn link_unnamed(file: &File, path: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let to = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    let proc_path = std::ffi::CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    // SAFETY: linkat(2) with NUL-terminated paths. Through /proc needs no privilege;
    // AT_EMPTY_PATH (where /proc is not mounted) needs CAP_DAC_READ_SEARCH.
    let rc = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            proc_path.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let first = std::io::Error::last_os_error();
    // SAFETY: as above, on the descriptor itself.
    let rc = unsafe {
        libc::linkat(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_EMPTY_PATH,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(first)
    }
}

fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut b = tempfile::Builder::new();
    b.prefix(".perfdata-").suffix(".tmp");
    b
}

impl AtomicOutput {
    /// Start writing `target`. A symlink is followed (the file it names is replaced,
    /// not the link); a directory is refused before anything is written. An existing
    /// target that is no regular file (a device, a FIFO, `/dev/stdout` on a pipe) is
    /// opened for writing now (a FIFO waits for its reader, as with perf) and written
    /// in place: it is never replaced.
    pub fn create(target: &Path) -> Result<Self> {
        let cannot = |e| WriteError::io(format!("cannot write {}", target.display()), e);
        // stat(2) follows every link, also /proc/self/fd's, which name a pipe
        // `pipe:[N]` rather than a path.
        match std::fs::metadata(target) {
            Ok(md) if md.is_dir() => {
                return Err(cannot(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "it is a directory",
                )))
            }
            Ok(md) if !md.is_file() => {
                use std::os::unix::fs::OpenOptionsExt;
                // Neither created nor truncated; O_NOCTTY: a terminal written to does
                // not become this process's controlling terminal.
                let node = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NOCTTY)
                    .open(target)
                    .map_err(cannot)?;
                return Ok(AtomicOutput {
                    dest: Dest::Node { node, spool: None },
                    target: target.to_path_buf(),
                    dir: PathBuf::new(),
                    new_file: NewFile::Private,
                });
            }
            _ => {}
        }
        let target = follow_links(target);
        let dir = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let cannot = |e| WriteError::io(format!("cannot write {}", target.display()), e);
        // PERFDATA_NAMED_TEMP=1 asks for the named temp file (a file system whose
        // O_TMPFILE misbehaves; the tests of the interrupt handlers).
        let unnamed = match std::env::var_os("PERFDATA_NAMED_TEMP") {
            Some(v) if v == "1" => None,
            _ => unnamed_in(&dir).map_err(cannot)?,
        };
        let temp = match unnamed {
            Some(file) => Temp::Unnamed(file),
            None => {
                let named = temp_builder()
                    .tempfile_in(&dir)
                    .map_err(|e| cannot(plain(e)))?;
                let guard = TempPathGuard::new(named.path());
                Temp::Named(named, guard)
            }
        };
        Ok(AtomicOutput {
            dest: Dest::Replace(temp),
            target,
            dir,
            new_file: NewFile::Private,
        })
    }

    /// The permissions the output gets if the target does not exist when it is put in
    /// place ([`NewFile::Private`] unless told). An existing target always keeps its own.
    pub fn new_file(mut self, mode: NewFile) -> Self {
        self.new_file = mode;
        self
    }

    /// The file replaced on commit (a symlink's target).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the output is a node written in place (a device, a FIFO, a pipe): what
    /// [`AtomicOutput::writer`] writes goes straight into it and cannot seek, and
    /// nothing is renamed. A pipe-mode stream is written there as it is made; a file,
    /// whose header is written last, through [`AtomicOutput::seekable_writer`].
    pub fn is_stream(&self) -> bool {
        matches!(self.dest, Dest::Node { .. })
    }

    /// The file that may seek: the temp file, or a node's spool (made now).
    fn seekable(&mut self) -> std::io::Result<&mut File> {
        Ok(match &mut self.dest {
            Dest::Replace(Temp::Unnamed(f)) => f,
            Dest::Replace(Temp::Named(t, _)) => t.as_file_mut(),
            Dest::Node { spool: Some(f), .. } => f,
            Dest::Node { spool, .. } => spool.insert(tempfile::tempfile()?),
        })
    }

    /// A writer over the temp file whose writes a thread carries out (see
    /// [`ThreadedWriter`]): flush it before [`AtomicOutput::commit`]. It writes at
    /// offsets: into a node's spool, copied into the node on commit.
    pub fn threaded_writer(&mut self) -> std::io::Result<ThreadedWriter> {
        ThreadedWriter::new(self.seekable()?)
    }

    /// A buffered writer over the temp file, or straight into a node (see
    /// [`AtomicOutput::is_stream`]): for writers that never seek (a pipe-mode stream,
    /// an export). Flush it before [`AtomicOutput::commit`].
    pub fn writer(&mut self) -> BufWriter<&mut File> {
        let file = match &mut self.dest {
            Dest::Replace(Temp::Unnamed(f)) => f,
            Dest::Replace(Temp::Named(t, _)) => t.as_file_mut(),
            Dest::Node { node, .. } => node,
        };
        BufWriter::with_capacity(1 << 20, file)
    }

    /// A buffered writer that may seek (a file-mode writer seeks back to write the
    /// header last): over the temp file, or for a node over its spool, copied into
    /// the node on commit. Flush it before [`AtomicOutput::commit`].
    pub fn seekable_writer(&mut self) -> std::io::Result<BufWriter<&mut File>> {
        Ok(BufWriter::with_capacity(1 << 20, self.seekable()?))
    }

    /// An error of writing the output, named by the target rather than the temp file.
    pub fn name_error(&self, e: WriteError) -> WriteError {
        match e {
            WriteError::Io { context, source } => WriteError::Io {
                context: format!("{}: {context}", self.target.display()),
                source,
            },
            other => other,
        }
    }

    /// Put the finished output in place of the target. A target that exists (a regular
    /// file) keeps its permissions and, where this process may set it, its owner; a new
    /// one gets what [`AtomicOutput::new_file`] says. With `like`, the output gets that
    /// file's modification time (perf shows it as "captured on"). A node keeps its own
    /// everything: its spool, if any, is copied into it.
    pub fn commit(mut self, like: Option<&Path>) -> Result<()> {
        if let Dest::Node { node, spool } = &mut self.dest {
            let copied = spool.as_mut().map_or(Ok(()), |spool| copy_to(spool, node));
            return copied.map_err(|e| self.name_error(e));
        }
        let Dest::Replace(temp) = self.dest else {
            return Ok(());
        };
        let file = match &temp {
            Temp::Unnamed(f) => f,
            Temp::Named(t, _) => t.as_file(),
        };
        // No fsync, as perf and cp do not: the rename makes a failed or killed run
        // leave nothing half-written at the target; durability across a power cut is
        // the file system's (ext4 flushes a file renamed over another). Syncing 800 MB
        // would add half the conversion's time again.
        let err = |what: &str, e| WriteError::io(format!("{what} {}", self.target.display()), e);
        set_mode(file, &self.target, self.new_file)
            .map_err(|e| err("setting the permissions of", e))?;
        if let Some(Ok(md)) = like.map(std::fs::metadata) {
            if let Ok(mtime) = md.modified() {
                file.set_modified(mtime)
                    .map_err(|e| err("setting the time of", e))?;
            }
        }
        // An interrupt from here on is taken after the rename: the finished output is
        // in place rather than a stray link beside it.
        let _blocked = SignalsBlocked::new();
        let rename_err = |e: std::io::Error| err("cannot rename the output to", plain(e));
        match temp {
            // linkat cannot replace a file: link under a fresh temp name, then rename.
            Temp::Unnamed(f) => temp_builder()
                .make_in(&self.dir, |p| link_unnamed(&f, p))
                .map_err(|e| err("cannot write", plain(e)))?
                .persist(&self.target)
                .map_err(|e| rename_err(e.error))?,
            Temp::Named(t, guard) => {
                t.persist(&self.target).map_err(|e| rename_err(e.error))?;
                // Renamed into place: no longer the handler's to remove.
                drop(guard);
            }
        };
        Ok(())
    }
}

/// Give the finished temp `file` the permissions (and owner) of the regular file it
/// replaces at `target`, or those of a new file.
fn set_mode(file: &File, target: &Path, new_file: NewFile) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mode = match std::fs::metadata(target) {
        Ok(old) if old.is_file() => {
            let mine = file.metadata()?;
            if (old.uid(), old.gid()) != (mine.uid(), mine.gid()) {
                // Only root may give a file away, and a group only to a member: where
                // it may not, the output is this user's, as with any rewriting tool.
                let _ = std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid()));
            }
            // After chown, which clears the set-id bits.
            old.mode() & 0o7777
        }
        _ => match new_file {
            NewFile::Private => 0o600,
            NewFile::Umask => new_file_mode(),
        },
    };
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// The mode a new export file gets, as any tool creates one: 0666 less the process's
/// umask (the temp files it is written to are 0600).
pub fn new_file_mode() -> u32 {
    0o666 & !umask()
}

/// The process's umask: from /proc (Linux 4.7 and later), which reads it without
/// changing it; else set and put back, as a process without /proc must.
fn umask() -> u32 {
    let from_proc = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let line = s.lines().find_map(|l| l.strip_prefix("Umask:"))?;
            u32::from_str_radix(line.trim(), 8).ok()
        });
    from_proc.unwrap_or_else(|| {
        // SAFETY: umask(2) cannot fail; the old mask is put back at once.
        let old = unsafe { libc::umask(0o022) };
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        old
    })
}

/// Copy a finished temp file to a stream (file mode to stdout needs seeking while it is
/// written, so it is written to a temp file first).
pub fn copy_to<W: Write + ?Sized>(file: &mut File, out: &mut W) -> Result<()> {
    file.seek(SeekFrom::Start(0))
        .map_err(|e| WriteError::io("rewinding the temp output", e))?;
    std::io::copy(file, out).map_err(|e| WriteError::io("copying the output", e))?;
    out.flush()
        .map_err(|e| WriteError::io("flushing the output", e))?;
    Ok(())
}
