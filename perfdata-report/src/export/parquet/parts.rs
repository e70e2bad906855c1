//! The files of an export directory: each table a folder of part files, each part
//! written under a hidden temporary name and renamed into place when complete (an export
//! cut short leaves no part that a reader would take), never over an existing one.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::Int64Type;
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::{ArrowWriter, ProjectionMask};
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use perfdata_write::output::interrupt::TempPathGuard;
use tempfile::NamedTempFile;

use super::schema::SCHEMA_VERSION;
use super::stack_set::IdSpool;
use crate::export::{PARQUET_TEMP_PREFIX, PARQUET_TEMP_SUFFIX};

/// The rows of a row group: a part file is written one row group at a time, so that
/// memory holds at most this many rows (encoded) of it.
pub const ROW_GROUP: usize = 64 * 1024;

/// An error of the Parquet or Arrow writers as an I/O error.
pub fn other(e: impl std::error::Error + Send + Sync + 'static) -> io::Error {
    io::Error::other(e)
}

/// One part file being written.
pub struct Part {
    writer: ArrowWriter<BufWriter<File>>,
    temp: NamedTempFile,
    path: PathBuf,
    /// The temporary file, removed by an interrupt's handler (dropped after `temp`).
    _guard: TempPathGuard,
}

impl Part {
    /// A part of `table` to be `path` (its folder made if missing).
    pub fn create(path: PathBuf, table: &str, schema: SchemaRef) -> io::Result<Part> {
        let dir = path.parent().expect("a part file is in a folder");
        std::fs::create_dir_all(dir)?;
        let temp = tempfile::Builder::new()
            .prefix(PARQUET_TEMP_PREFIX)
            .suffix(PARQUET_TEMP_SUFFIX)
            .tempfile_in(dir)?;
        let meta = |k: &str, v: &str| KeyValue::new(k.to_string(), v.to_string());
        let props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).map_err(other)?))
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .set_key_value_metadata(Some(vec![
                meta("schema_version", SCHEMA_VERSION),
                meta("perfdata.table", table),
                meta("perfdata.version", env!("CARGO_PKG_VERSION")),
            ]))
            .build();
        let out = BufWriter::with_capacity(1 << 20, temp.reopen()?);
        let writer = ArrowWriter::try_new(out, schema, Some(props)).map_err(other)?;
        let _guard = TempPathGuard::new(temp.path());
        Ok(Part {
            writer,
            temp,
            path,
            _guard,
        })
    }

    /// Write a batch of rows (a row group is flushed each [`ROW_GROUP`] rows).
    pub fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        self.writer.write(batch).map_err(other)
    }

    /// [`Part::commit`] under another name in the same folder.
    pub fn commit_as(mut self, name: &str) -> io::Result<PathBuf> {
        self.path.set_file_name(name);
        self.commit()
    }

    /// Finish the file (the last row group, the footer) and give it its name; an
    /// existing file of that name is an error, never replaced.
    pub fn commit(self) -> io::Result<PathBuf> {
        self.commit_over(None)
    }

    /// [`Part::commit`], but over `leftover` if that is the file's name: a part an
    /// interrupted export left without its recordings row, of the same recording.
    pub fn commit_over(self, leftover: Option<&Path>) -> io::Result<PathBuf> {
        let out = self.writer.into_inner().map_err(other)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        // Readable by the engines' users as any new file is (a temp file is 0600).
        use std::os::unix::fs::PermissionsExt;
        let mode = perfdata_write::output::new_file_mode();
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        file.sync_all()?;
        if leftover == Some(self.path.as_path()) {
            self.temp.persist(&self.path).map_err(|e| e.error)?;
        } else {
            self.temp
                .persist_noclobber(&self.path)
                .map_err(|e| e.error)?;
        }
        Ok(self.path)
    }
}

/// The samples parts under `dir` by recording id (from their names, `part-<id>.parquet`).
pub fn samples_parts(dir: &Path) -> io::Result<std::collections::HashMap<String, PathBuf>> {
    Ok(part_files(dir)?
        .into_iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let id = name
                .strip_prefix("part-")?
                .strip_suffix(".parquet")?
                .to_string();
            Some((id, p))
        })
        .collect())
}

/// The Parquet files under `dir` (recursively, as readers glob `**/*.parquet`), not
/// the hidden temporary ones of an export under way.
pub fn part_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    files_under(dir, |name| {
        !name.starts_with('.') && name.ends_with(".parquet")
    })
}

/// The temporary part files under `dir` (recursively) that an export killed while
/// writing left, or that one running now writes: this perfdata's names
/// (`.tmp-*.parquet.partial`) and those of the versions before it (`.tmp-*.parquet`,
/// which DuckDB's `**/*.parquet` takes, and refuses).
pub fn temp_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    files_under(dir, |name| {
        name.starts_with(PARQUET_TEMP_PREFIX)
            && (name.ends_with(PARQUET_TEMP_SUFFIX) || name.ends_with(".parquet"))
    })
}

/// The files under `dir` (recursively, hidden folders not) whose names `keep` takes,
/// sorted; none if `dir` is missing.
fn files_under(dir: &Path, keep: impl Fn(&str) -> bool) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        for e in entries {
            let e = e?;
            let name = e.file_name();
            let name = name.to_string_lossy();
            if e.file_type()?.is_dir() {
                if !name.starts_with('.') {
                    todo.push(e.path());
                }
            } else if keep(&name) {
                out.push(e.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Call `each` with every value of column `column` in the part files under `dir` (its
/// array and the row): the ids an earlier export wrote, so that this one adds to them
/// without clashing.
pub fn each_value(
    dir: &Path,
    column: &str,
    mut each: impl FnMut(&arrow_array::ArrayRef, usize) -> io::Result<()>,
) -> io::Result<()> {
    for path in part_files(dir)? {
        let named =
            |e: parquet::errors::ParquetError| io::Error::other(format!("{}: {e}", path.display()));
        let builder =
            ParquetRecordBatchReaderBuilder::try_new(File::open(&path)?).map_err(named)?;
        let Some(at) = builder
            .schema()
            .fields()
            .iter()
            .position(|f| f.name() == column)
        else {
            return Err(io::Error::other(format!(
                "{}: no column {column:?} (not a part file of this schema)",
                path.display()
            )));
        };
        let mask = ProjectionMask::roots(builder.parquet_schema(), [at]);
        for batch in builder.with_projection(mask).build().map_err(named)? {
            let batch = batch.map_err(other)?;
            let col = batch.column(0);
            for i in 0..col.len() {
                each(col, i)?;
            }
        }
    }
    Ok(())
}

/// Refuse a directory holding a part of another schema version than this one writes:
/// an append would mix the two in one table (the stack ids and the `symbol` text differ
/// between versions), and readers glob every part of a table as one. The error names
/// the file, its version and the perfdata that wrote it.
pub fn check_versions(dir: &Path) -> io::Result<()> {
    for table in ["recordings", "stacks", "samples"] {
        for path in part_files(&dir.join(table))? {
            let named = |e: parquet::errors::ParquetError| {
                io::Error::other(format!("{}: {e}", path.display()))
            };
            let builder =
                ParquetRecordBatchReaderBuilder::try_new(File::open(&path)?).map_err(named)?;
            let kv = builder.metadata().file_metadata().key_value_metadata();
            let value = |key: &str| {
                kv.into_iter()
                    .flatten()
                    .find(|m| m.key == key)
                    .and_then(|m| m.value.clone())
            };
            let version = value("schema_version");
            if version.as_deref() == Some(SCHEMA_VERSION) {
                continue;
            }
            let by =
                value("perfdata.version").map_or(String::new(), |v| format!(" by perfdata {v}"));
            let msg = match version {
                Some(v) => format!(
                    "{} was written with schema version {v}{by}, and this perfdata writes \
                     version {SCHEMA_VERSION}: an append would mix them in one table; export \
                     into another folder (or all the recordings again into a new one)",
                    path.display()
                ),
                None => format!(
                    "{} has no schema_version: not a part of a perfdata export; export into \
                     another folder",
                    path.display()
                ),
            };
            return Err(io::Error::new(io::ErrorKind::InvalidData, msg));
        }
    }
    Ok(())
}

/// The stack ids of the part files under `dir`, spooled (there may be many).
pub fn stack_ids(dir: &Path) -> io::Result<crate::spool::Records> {
    let mut ids = IdSpool::new()?;
    each_value(dir, "stack_id", |c, i| {
        ids.push(c.as_primitive::<Int64Type>().value(i))
    })?;
    ids.finish()
}

/// The recording ids of the part files under `dir`.
pub fn recording_ids(dir: &Path) -> io::Result<HashSet<String>> {
    let mut ids = HashSet::new();
    each_value(dir, "recording", |c, i| {
        ids.insert(c.as_string::<i32>().value(i).to_string());
        Ok(())
    })?;
    Ok(ids)
}

/// A Hive-style partition folder's value: what a path cannot hold, `%XX` escaped as
/// Hive escapes it; none, Hive's default partition.
pub fn partition_value(v: Option<&str>) -> String {
    let Some(v) = v.filter(|v| !v.is_empty()) else {
        return "__HIVE_DEFAULT_PARTITION__".into();
    };
    let mut out = String::with_capacity(v.len());
    for b in v.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.starts_with('.') {
        out.replace_range(..1, "%2E");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::partition_value;

    #[test]
    fn partition_values_are_one_folder() {
        assert_eq!(partition_value(Some("web-1.example")), "web-1.example");
        assert_eq!(partition_value(Some("a/b=c")), "a%2Fb%3Dc");
        assert_eq!(partition_value(Some("..")), "%2E.");
        assert_eq!(partition_value(None), "__HIVE_DEFAULT_PARTITION__");
    }
}
