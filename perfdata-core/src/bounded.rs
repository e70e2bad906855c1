//! binrw parse helpers that never allocate more than the input holds.
//!
//! binrw's own `count` reserves a `Vec`'s capacity from the count it is given, so a
//! corrupt u32 length would ask for gigabytes (or panic) before a byte is read. Every
//! variable-length field in perfdata's models goes through these helpers instead: each
//! checks the count against the bytes left in the stream first. The streams are cursors
//! over slices, so measuring what is left is a pair of cheap seeks.

use std::io::{Read, Seek, SeekFrom};

use binrw::{BinRead, BinResult, Endian};

/// Bytes left between the stream position and its end.
pub fn remaining<R: Seek>(reader: &mut R) -> BinResult<u64> {
    let pos = reader.stream_position()?;
    let end = reader.seek(SeekFrom::End(0))?;
    reader.seek(SeekFrom::Start(pos))?;
    Ok(end.saturating_sub(pos))
}

fn too_large(pos: u64, what: &str, needed: u64, left: u64) -> binrw::Error {
    binrw::Error::AssertFail {
        pos,
        message: format!("{what} needs {needed} bytes but only {left} remain"),
    }
}

/// Check that `count` elements of at least `min_size` bytes each can fit in what is left.
pub fn check_fits<R: Seek>(reader: &mut R, what: &str, count: u64, min_size: u64) -> BinResult<()> {
    let left = remaining(reader)?;
    let needed = count.saturating_mul(min_size);
    if needed > left {
        let pos = reader.stream_position()?;
        return Err(too_large(pos, what, needed, left));
    }
    Ok(())
}

/// `count` bytes, as a `Vec<u8>`.
pub fn bytes<R: Read + Seek>(reader: &mut R, _: Endian, (count,): (usize,)) -> BinResult<Vec<u8>> {
    check_fits(reader, "byte array", count as u64, 1)?;
    let mut out = vec![0u8; count];
    reader.read_exact(&mut out)?;
    Ok(out)
}

/// Every byte up to the end of the stream.
pub fn rest<R: Read + Seek>(reader: &mut R, _: Endian, _: ()) -> BinResult<Vec<u8>> {
    let left = remaining(reader)?;
    let mut out = vec![0u8; left as usize];
    reader.read_exact(&mut out)?;
    Ok(out)
}

/// As many u64 as fit in what is left (bytes past the last whole word stay unread).
pub fn words_to_end<R: Read + Seek>(reader: &mut R, endian: Endian, _: ()) -> BinResult<Vec<u64>> {
    let n = remaining(reader)? / 8;
    vec(reader, endian, (n as usize, 8))
}

/// `count` values of `T` (which takes no arguments), each at least `min_size` bytes.
pub fn vec<R, T>(
    reader: &mut R,
    endian: Endian,
    (count, min_size): (usize, u64),
) -> BinResult<Vec<T>>
where
    R: Read + Seek,
    for<'a> T: BinRead<Args<'a> = ()>,
{
    vec_with(reader, endian, (count, min_size, ()))
}

/// `count` values of `T`, each read with a clone of `args` and at least `min_size` bytes.
pub fn vec_with<R, T, A>(
    reader: &mut R,
    endian: Endian,
    (count, min_size, args): (usize, u64, A),
) -> BinResult<Vec<T>>
where
    R: Read + Seek,
    A: Clone,
    for<'a> T: BinRead<Args<'a> = A>,
{
    check_fits(reader, "array", count as u64, min_size.max(1))?;
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        out.push(T::read_options(reader, endian, args.clone())?);
    }
    Ok(out)
}

/// A `T` when at least `min` bytes are left, else `None` (an optional trailing part whose
/// presence only the record size tells).
pub fn optional<R, T>(reader: &mut R, endian: Endian, (min,): (u64,)) -> BinResult<Option<T>>
where
    R: Read + Seek,
    for<'a> T: BinRead<Args<'a> = ()>,
{
    if remaining(reader)? < min.max(1) {
        return Ok(None);
    }
    Ok(Some(T::read_options(reader, endian, ())?))
}

/// `count` values of `T` (each at least `min_size` bytes) when `count` is not zero and they
/// all fit in what is left, else `None`.
pub fn optional_vec<R, T>(
    reader: &mut R,
    endian: Endian,
    (count, min_size): (usize, u64),
) -> BinResult<Option<Vec<T>>>
where
    R: Read + Seek,
    for<'a> T: BinRead<Args<'a> = ()>,
{
    let needed = (count as u64).saturating_mul(min_size.max(1));
    if count == 0 || remaining(reader)? < needed {
        return Ok(None);
    }
    vec(reader, endian, (count, min_size)).map(Some)
}

/// `count` bytes when `count` is `Some`, else every byte up to the end of the stream.
pub fn bytes_or_rest<R: Read + Seek>(
    reader: &mut R,
    endian: Endian,
    (count,): (Option<usize>,),
) -> BinResult<Vec<u8>> {
    match count {
        Some(n) => bytes(reader, endian, (n,)),
        None => rest(reader, endian, ()),
    }
}

/// Values of `T`, each read with a clone of `args`, while at least `min_size` bytes are
/// left. Fewer bytes than that are left unread: writers pad some sections (perf 6.12's
/// pipe-mode features to 8 bytes), and those bytes belong to whoever reads after.
///
/// A value that reads no bytes at all is an error rather than an endless loop.
pub fn while_fits<R, T, A>(
    reader: &mut R,
    endian: Endian,
    (min_size, args): (u64, A),
) -> BinResult<Vec<T>>
where
    R: Read + Seek,
    A: Clone,
    for<'a> T: BinRead<Args<'a> = A>,
{
    let min_size = min_size.max(1);
    let mut out = Vec::new();
    while remaining(reader)? >= min_size {
        let pos = reader.stream_position()?;
        out.push(T::read_options(reader, endian, args.clone())?);
        if reader.stream_position()? == pos {
            return Err(binrw::Error::AssertFail {
                pos,
                message: "a value of a list read no bytes".into(),
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn huge_count_is_an_error_not_an_allocation() {
        let mut c = Cursor::new(vec![0u8; 16]);
        assert!(bytes(&mut c, Endian::Little, (usize::MAX,)).is_err());
        let r: BinResult<Vec<u64>> = vec(&mut c, Endian::Little, (1 << 40, 8));
        assert!(r.is_err());
        let ok: Vec<u64> = vec(&mut c, Endian::Little, (2, 8)).unwrap();
        assert_eq!(ok, vec![0, 0]);
    }

    #[test]
    fn optional_parts_follow_the_remaining_length() {
        let mut c = Cursor::new(vec![1u8, 0, 0, 0, 0, 0, 0, 0, 9]);
        let a: Option<u64> = optional(&mut c, Endian::Little, (8,)).unwrap();
        assert_eq!(a, Some(1));
        let b: Option<u64> = optional(&mut c, Endian::Little, (8,)).unwrap();
        assert_eq!(b, None);
        assert_eq!(c.position(), 8);
        let v: Option<Vec<u64>> = optional_vec(&mut c, Endian::Little, (1, 8)).unwrap();
        assert_eq!(v, None);
        assert_eq!(
            bytes_or_rest(&mut c, Endian::Little, (None,)).unwrap(),
            vec![9]
        );
        let mut c = Cursor::new(vec![0u8; 16]);
        let v: Option<Vec<u64>> = optional_vec(&mut c, Endian::Little, (2, 8)).unwrap();
        assert_eq!(v, Some(vec![0, 0]));
        assert!(bytes_or_rest(&mut c, Endian::Little, (Some(1),)).is_err());
    }

    #[test]
    fn while_fits_leaves_a_short_tail_unread() {
        let mut c = Cursor::new(vec![1, 0, 0, 0, 2, 0, 0, 0, 9, 9]);
        let v: Vec<u32> = while_fits(&mut c, Endian::Little, (4, ())).unwrap();
        assert_eq!(v, vec![1, 2]);
        assert_eq!(c.position(), 8);
    }
}
