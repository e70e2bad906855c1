//! Recordings that stop early: a stream cut inside a record (`head -c`, a full disk, a
//! killed writer), a file-mode recording whose `perf record` never finished (killed by
//! the OOM killer, a closed terminal) and a finished file cut short. All keep every whole
//! record they hold, with a warning that says where they stop and what is lost; perf 6.1
//! reads the first and cannot open the others.

use crate::error::{Error, Problem};
use crate::header::FileHeader;

/// The warning for a source that ends inside a record (`e` names the record and
/// where it starts).
pub(crate) fn truncation_warning(e: &Error) -> String {
    match e {
        Error::Format {
            context,
            problem: Problem::Truncated { needed, available },
            ..
        } => {
            let held = if *available < 8 {
                format!("{available} bytes of its 8-byte header")
            } else {
                format!("{available} of its {needed} bytes")
            };
            format!(
                "the input ends inside a {context} ({held}): truncated there; the whole \
                 records before it are kept"
            )
        }
        other => format!("{other}; the whole records before it are kept"),
    }
}

/// Whether `e`, met at the end of a source that may stop early, is a record cut short.
pub(crate) fn is_truncation(e: &Error) -> bool {
    matches!(e.problem(), Some(Problem::Truncated { .. }))
}

/// The file offset of the header's `data.size` field.
const DATA_SIZE_FIELD: u64 = 48;

/// A file-mode file whose data section does not hold what its header says: the header
/// says it is empty while records follow it (perf writes the data size and the features
/// only when `perf record` ends: the recording was killed), or it runs past the end of
/// the file (a copy stopped early, a full disk). The data section is taken to the end of
/// the file, where the reader keeps every whole record, and the features, which the
/// bitmap flags but which would follow the data, are dropped. Returns the warning (at
/// the data size field), or `None` when the data section is where the header says.
pub(crate) fn take_unfinished_data(
    header: &mut FileHeader,
    file_len: u64,
) -> Option<(u64, String)> {
    let data = header.data;
    if data.offset == 0 || data.offset >= file_len {
        return None;
    }
    let cut = data
        .offset
        .checked_add(data.size)
        .is_none_or(|end| end > file_len);
    if data.size != 0 && !cut {
        return None;
    }
    header.data.size = file_len - data.offset;
    let flagged = header.features.as_ref().map_or(0, |f| f.count());
    if let Some(f) = header.features.as_mut() {
        f.words = [0; 4];
    }
    let read = format!(
        "its records are read to the end of the file ({} bytes from offset {})",
        header.data.size, data.offset
    );
    let message = if cut {
        format!(
            "the file ends at byte {file_len}, inside its data section (said to be {} bytes \
             at offset {}): it was cut short (a copy stopped early? a full disk?); {read}; \
             the {} bytes of data past the end and the {flagged} features it flagged are \
             lost",
            data.size,
            data.offset,
            data.size - header.data.size
        )
    } else {
        format!(
            "the header's data size is 0: this recording did not finish (was perf record \
             killed?); {read}, and the {flagged} features it flagged are lost (perf writes \
             them last)"
        )
    };
    Some((DATA_SIZE_FIELD, message))
}
