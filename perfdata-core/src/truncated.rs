//! Recordings that stop early: a stream cut inside a record (`head -c`, a full disk, a
//! killed writer) and a file-mode recording whose `perf record` never finished (killed
//! by the OOM killer, a closed terminal). Both keep every whole record they hold, with a
//! warning that says where they stop and what is lost; perf 6.1 reads the first and
//! cannot open the second at all.

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

/// A file whose header says its data section is empty while records follow it: perf
/// writes the data size and the features only when `perf record` ends. The data
/// section is taken to the end of the file and the features, which the bitmap flags but
/// were never written, are dropped. Returns the warning (at the data size field), or
/// `None` for a finished file.
pub(crate) fn take_unfinished_data(
    header: &mut FileHeader,
    file_len: u64,
) -> Option<(u64, String)> {
    let data = &mut header.data;
    if data.size != 0 || data.offset == 0 || data.offset >= file_len {
        return None;
    }
    data.size = file_len - data.offset;
    let flagged = header.features.as_ref().map_or(0, |f| f.count());
    if let Some(f) = header.features.as_mut() {
        f.words = [0; 4];
    }
    Some((
        DATA_SIZE_FIELD,
        format!(
            "the header's data size is 0: this recording did not finish (was perf record \
             killed?); its records are read to the end of the file ({} bytes from offset \
             {}), and the {flagged} features it flagged are lost (perf writes them last)",
            data.size, data.offset
        ),
    ))
}
