//! Where a synthetic trace goes: a [`Sink`] (a file put in place atomically, stdout, a
//! device or FIFO written in place) in file or pipe mode, as conversions write, or a
//! perf.data directory built under a temp name and renamed into place when complete.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use perfdata_write::convert::{SinkWriter, Target};
use perfdata_write::error::{Result, WriteError};
use perfdata_write::Sink;

use crate::{SynthTarget, SynthWriter, TraceSpec, Workload};

/// An AUXTRACE record written after the workload (`perfdata synth --aux-payload`).
#[derive(Debug, Clone, Copy)]
pub struct AuxPayload {
    /// Bytes of payload.
    pub len: u64,
    /// The seed its bytes are made from.
    pub seed: u64,
}

/// Write `workload` (then `aux`, if given) into `sink` in `target`'s mode: a file-mode
/// trace seeks (on a stream it is built in a temp file first, as a conversion's is), a
/// pipe-mode one streams. Returns the samples written.
///
/// ```
/// use perfdata_synth::{write_to, SynthSpec};
/// use perfdata_write::{convert::Target, Sink};
/// # let dir = tempfile::tempdir()?; let out = dir.path().join("synth.data");
/// let spec = SynthSpec { samples: 100, ..SynthSpec::default() };
/// let (workload, trace) = spec.build()?;
/// let samples = write_to(&workload, trace, None, Sink::path(&out)?, Target::File)?;
/// assert_eq!(samples, 100);
/// assert!(perfdata_core::PerfReader::open(&out).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_to(
    workload: &Workload,
    trace: TraceSpec,
    aux: Option<AuxPayload>,
    sink: Sink<'_>,
    target: Target,
) -> Result<u64> {
    let (samples, _bytes) = sink.write_with(target, |w| match w {
        SinkWriter::Seek(w, _) => write_all(workload, aux, SynthWriter::file(w, trace)?),
        SinkWriter::Stream(w) => write_all(workload, aux, SynthWriter::pipe(w, trace)?),
    })?;
    Ok(samples)
}

/// Write `workload` (then `aux`, if given) as a perf.data directory at `output` (which
/// must not exist). The directory is built under a temp name beside it and renamed into
/// place only when complete, as files are: an interrupted or failed run leaves nothing
/// at `output`. Returns the samples written.
pub fn write_dir(
    workload: &Workload,
    trace: TraceSpec,
    aux: Option<AuxPayload>,
    output: &Path,
) -> Result<u64> {
    let failed = |what: &str| {
        let what = format!("{what} {}", output.display());
        move |e| WriteError::io(what, e)
    };
    // A symlink is a path that exists, dangling or not (rename would not replace it).
    if output.symlink_metadata().is_ok() {
        let e = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
        return Err(failed("cannot write the directory")(e));
    }
    let parent = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let tmp = tempfile::Builder::new()
        .prefix(".perfdata-")
        .tempdir_in(parent)
        .map_err(failed("cannot make a directory beside"))?;
    let samples = write_all(workload, aux, SynthWriter::dir(tmp.path(), trace)?)?;
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755))
        .map_err(failed("cannot set the permissions of"))?;
    let built = tmp.keep();
    if let Err(e) = std::fs::rename(&built, output) {
        // Kept for the rename only: a failed run leaves no temp directory.
        let _ = std::fs::remove_dir_all(&built);
        return Err(failed("cannot rename into")(e));
    }
    Ok(samples)
}

/// The workload, then the AUXTRACE, then the features: the samples written.
fn write_all<T: SynthTarget>(
    workload: &Workload,
    aux: Option<AuxPayload>,
    mut writer: SynthWriter<T>,
) -> Result<u64> {
    let samples = workload.write(&mut writer)?;
    if let Some(aux) = aux {
        writer.auxtrace(aux.len, aux.seed)?;
    }
    writer.finish()?;
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SynthSpec;

    /// A dangling symlink at the output is a path that exists: refused, the symlink
    /// kept, and no temp directory left beside it (`exists()` follows the link, and the
    /// rename then failed with the temp directory already kept).
    #[test]
    fn a_directory_is_not_written_over_a_dangling_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out.data");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &out).unwrap();
        let spec = SynthSpec {
            samples: 10,
            ..SynthSpec::default()
        };
        let (workload, trace) = spec.build().unwrap();
        let err = write_dir(&workload, trace, None, &out).unwrap_err();
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["out.data"], "{err}");
        assert!(err.to_string().contains("exists"), "{err}");
        assert!(out.symlink_metadata().unwrap().file_type().is_symlink());
    }
}
