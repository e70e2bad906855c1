//! What both writers check of a record before it goes out: that a reader frames the
//! bytes written as the caller meant them, `bytes` as the record (its header.size long)
//! and `payload` as what follows it (only HEADER_TRACING_DATA and AUXTRACE have one,
//! as long as the record says). Anything else would shift every record after it, and
//! perf would read garbage or stop.

use binrw::Endian;
use perfdata_core::raw::{frame, Frame};
use perfdata_core::record::RecordType;
use perfdata_core::{u16_at, u32_at};

use crate::error::{Result, WriteError};

/// The type of the record `bytes` followed by `payload`, if a reader would frame them
/// as one record with that payload; an error saying why not otherwise.
pub(crate) fn checked_type(bytes: &[u8], payload: &[u8], endian: Endian) -> Result<RecordType> {
    let size = u16_at(bytes, 6, endian).unwrap_or(0) as usize;
    let ty = RecordType::from_u32(u32_at(bytes, 0, endian).unwrap_or(0));
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
    let expected = match frame(bytes, endian) {
        Frame::Complete { .. } => 0,
        Frame::Incomplete { needed } => needed.saturating_sub(bytes.len() as u64),
        // A payload too large to hold: this is its first piece, the rest follows
        // (`write_payload`).
        Frame::Large { payload: whole, .. } if payload.len() as u64 <= whole => {
            return Ok(ty);
        }
        Frame::Large { payload: whole, .. } => whole,
        Frame::Invalid(problem) => {
            return Err(WriteError::unsupported(
                None,
                format!("a {ty} record: {problem}"),
            ))
        }
    };
    if expected != payload.len() as u64 {
        return Err(WriteError::unsupported(
            None,
            format!(
                "{ty} followed by {} payload bytes where it says {expected}: a reader \
                 would frame the records after it wrongly",
                payload.len()
            ),
        ));
    }
    Ok(ty)
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
            RecordType::Auxtrace
        );
        let err = checked_type(&auxtrace(16), &[7; 8], LE)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("AUXTRACE followed by 8 payload bytes where it says 16"),
            "{err}"
        );
        // A record without a payload takes none.
        let round = [68, 0, 0, 0, 0, 0, 8, 0];
        assert_eq!(
            checked_type(&round, &[], LE).unwrap(),
            RecordType::FinishedRound
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
