//! `perfdata export --format parquet`: recordings into Parquet tables (the work is in
//! perfdata_report::export::parquet), in a build with the cargo feature `parquet`.

#[cfg(feature = "parquet")]
use perfdata_report::export::parquet::{inputs, Added, ParquetExport};

use super::ExportArgs;
use crate::CliError;

/// A build without the feature refuses `--format parquet`, saying how to get it.
#[cfg(not(feature = "parquet"))]
pub fn run(_: &ExportArgs) -> Result<(), CliError> {
    Err(CliError::Usage(
        "this perfdata was built without the Parquet export: build it with the cargo \
         feature `parquet` (`cargo install --path perfdata-cli --features parquet`, or \
         `cargo run --release --features parquet -- export ...`)"
            .into(),
    ))
}

/// Export every recording `a` names into the directory `-o` names. A recording that
/// cannot be read is said and skipped, the others written; the command then fails.
#[cfg(feature = "parquet")]
pub fn run(a: &ExportArgs) -> Result<(), CliError> {
    if a.inline || a.diff.is_some() {
        return Err(CliError::Usage(
            "--inline and --diff are not for --format parquet".into(),
        ));
    }
    if a.output.as_os_str() == "-" {
        return Err(CliError::Usage(
            "--format parquet writes a directory of tables: -o names it, not standard output"
                .into(),
        ));
    }
    let given = a.inputs();
    if given.iter().any(|p| p.as_os_str() == "-") {
        return Err(CliError::Usage(
            "--format parquet reads recordings from files (its recording ids hash them), \
             not standard input"
                .into(),
        ));
    }
    let paths = inputs::expand(&given)
        .map_err(|e| perfdata_core::Error::io("the inputs".to_string(), e))?;
    crate::alloc::return_large_blocks();
    let mut export = ParquetExport::new(a.output.clone())
        .symfs(a.symfs.clone())
        .unwind(a.unwind.on())
        .partition(a.partition.unwrap_or_default())
        .begin()?;
    let cancel = crate::interrupt::cancel();
    let mut failed = None;
    let (mut written, mut samples) = (0u64, 0u64);
    for path in &paths {
        if cancel.is_cancelled() {
            break;
        }
        let added = perfdata_core::PerfReader::open(path)
            .map_err(CliError::from)
            .and_then(|reader| {
                let _progress = crate::progress::Progress::watch(path, reader.progress());
                Ok(export.add(path, reader)?)
            });
        // Each recording's warnings and error name it: it is one of many.
        match added {
            Ok(Added::Written(w)) => {
                crate::unwinding::tell_about(path, &w.unwind);
                w.warnings.iter().for_each(|w| crate::warn_about(path, w));
                crate::verbose::say(
                    1,
                    format!(
                        "{}: recording {}, {} samples, {} distinct stacks, {}",
                        path.display(),
                        w.id,
                        w.samples,
                        w.stacks,
                        w.part.display()
                    ),
                );
                written += 1;
                samples += w.samples;
            }
            Ok(Added::AlreadyThere(id)) => crate::warn(format!(
                "{}: recording {id} is in {} already: skipped",
                path.display(),
                a.output.display()
            )),
            Err(e) => {
                let e = e.about(path);
                crate::warn(format_args!("{e}: skipped"));
                failed = Some(e);
            }
        }
    }
    for left in export.leftovers() {
        crate::warn(format!(
            "{}: samples an interrupted export left, with no stacks and no recordings row \
             (a query of the samples table alone counts them): export that recording into \
             {} again, or delete the file",
            left.display(),
            a.output.display()
        ));
    }
    for temp in export.temp_leftovers() {
        let old = if temp.to_string_lossy().ends_with(".parquet") {
            " (its name ends in .parquet, as an older perfdata named them: DuckDB's \
             read_parquet('**/*.parquet') fails on it)"
        } else {
            ""
        };
        crate::warn(format!(
            "{}: the temporary file of a part an export killed while writing left{old}: \
             delete it if no export into {} is running",
            temp.display(),
            a.output.display()
        ));
    }
    export.finish()?;
    crate::verbose::say(
        1,
        format!(
            "{written} recordings, {samples} samples written to {}",
            a.output.display()
        ),
    );
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
