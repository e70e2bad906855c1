//! What both writers check of a record before it goes out: that a reader frames the
//! bytes written as the caller meant them, `bytes` as the record (its header.size long)
//! and `payload` as what follows it (only HEADER_TRACING_DATA and AUXTRACE have one,
//! as long as the record says). Anything else would shift every record after it, and
//! perf would read garbage or stop.

use binrw::Endian;
use perfdata_core::raw::{frame, Frame};
use perfdata_core::record::RecordType;

use crate::error::{Result, WriteError};

/// The type of the record `bytes` followed by `payload`, and how many payload bytes
/// its record says are still to come after `payload` (written with `write_payload`),
/// if a reader would frame them as one record; an error saying why not otherwise.
pub(crate) fn checked_type(
    bytes: &[u8],
    payload: &[u8],
    endian: Endian,
) -> Result<(RecordType, u64)> {
    let header = perfdata_core::raw::header_of(bytes, endian);
    let (size, ty) = (usize::from(header.size), header.record_type());
    if bytes.len() < 8 || size != bytes.len() {
        return Err(WriteError::unsupported(
            None,
            format!(
                "a record of {} bytes whose header says {size}: write header.size bytes, \
                 then the payload apart (Record::encode computes the size)",
                bytes.len()
            ),
        ));
    }
    // `frame` sees only the record: a payload it expects shows as bytes still needed.
    // `payload` may be its first part only, the rest following with `write_payload`
    // (a payload too large to hold is copied piece by piece).
    let expected = match frame(bytes, endian) {
        Frame::Complete { .. } => 0,
        Frame::Incomplete { needed } => needed.saturating_sub(bytes.len() as u64),
        Frame::Large { payload: whole, .. } => whole,
        Frame::Invalid(problem) => {
            return Err(WriteError::unsupported(
                None,
                format!("a {ty} record: {problem}"),
            ))
        }
    };
    if (payload.len() as u64) > expected {
        return Err(WriteError::unsupported(
            None,
            format!(
                "{ty} followed by {} payload bytes where it says {expected}: a reader \
                 would frame the records after it wrongly",
                payload.len()
            ),
        ));
    }
    Ok((ty, expected - payload.len() as u64))
}

/// The payload a writer still owes the record it wrote last: nothing else may be
/// written, nor the output finished, until `write_payload` has written all of it, or
/// the reader would frame what follows as that payload.
#[derive(Debug, Default)]
pub(crate) struct OwedPayload {
    /// The record's type and the bytes still to come.
    owed: Option<(RecordType, u64)>,
}

impl OwedPayload {
    /// Whether no payload is owed.
    pub fn is_settled(&self) -> bool {
        self.owed.is_none()
    }

    /// Before anything but payload is written (`what`: "a record", "the features").
    pub fn settled(&self, what: &str) -> Result<()> {
        match self.owed {
            Some((ty, left)) => Err(WriteError::unsupported(
                None,
                format!(
                    "{what} written while {left} payload bytes of the {ty} record before it                      are still to come (write_payload): a reader would frame them as its                      payload"
                ),
            )),
            None => Ok(()),
        }
    }

    /// A record went out owing `left` bytes.
    pub fn owe(&mut self, ty: RecordType, left: u64) {
        self.owed = (left > 0).then_some((ty, left));
    }

    /// `n` bytes of payload are about to go out.
    pub fn pay(&mut self, n: u64) -> Result<()> {
        let (ty, left) = self.owed.unwrap_or((RecordType::Unknown(0), 0));
        if n > left {
            return Err(WriteError::unsupported(
                None,
                format!(
                    "{n} payload bytes written where {left} were still to come{}",
                    if left > 0 {
                        format!(" for the {ty} record")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        self.owe(ty, left - n);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LE: Endian = Endian::Little;

    /// An AUXTRACE record (48 bytes) announcing `size` bytes of trace after it.
    fn auxtrace(size: u64) -> Vec<u8> {
        let mut r = vec![0u8; 48];
        r[..4].copy_from_slice(&71u32.to_le_bytes());
        r[6..8].copy_from_slice(&48u16.to_le_bytes());
        r[8..16].copy_from_slice(&size.to_le_bytes());
        r
    }

    #[test]
    fn a_payload_must_be_as_long_as_its_record_says() {
        assert_eq!(
            checked_type(&auxtrace(16), &[7; 16], LE).unwrap(),
            (RecordType::Auxtrace, 0)
        );
        // Its first part, the rest owed; more than it says, refused.
        assert_eq!(
            checked_type(&auxtrace(16), &[7; 8], LE).unwrap(),
            (RecordType::Auxtrace, 8)
        );
        let err = checked_type(&auxtrace(16), &[7; 24], LE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("AUXTRACE followed by 24 payload bytes where it says 16"),
            "{err}"
        );
        // A record without a payload takes none.
        let round = [68, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(
            checked_type(&round, &[], LE).unwrap(),
            (RecordType::FinishedRound, 0)
        );
        let err = checked_type(&round, &[1], LE).unwrap_err().to_string();
        assert!(
            err.contains("followed by 1 payload bytes where it says 0"),
            "{err}"
        );
    }

    #[test]
    fn a_record_must_be_as_long_as_its_size_says() {
        let err = checked_type(&[68, 0, 0, 0, 0, 0, 16, 0], &[], LE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a record of 8 bytes whose header says 16"),
            "{err}"
        );
        let err = checked_type(&[68, 0, 0, 0], &[], LE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("a record of 4 bytes whose header says 0"),
            "{err}"
        );
    }
}
