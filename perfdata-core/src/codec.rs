//! Encoding and decoding binrw models to and from byte slices.

use std::io::Cursor;

use binrw::{BinRead, BinWrite, Endian};

use crate::error::{Error, Result};

/// Encode `value` in `endian` into a new buffer.
///
/// Writing into a `Vec` cannot fail for lack of space, but a model's own write checks
/// can (a count that no longer fits its field after an edit): that is an
/// [`Error::Encode`](crate::Error::Encode) naming the model's type, never a panic.
pub fn encode<T>(value: &T, endian: Endian, args: T::Args<'_>) -> Result<Vec<u8>>
where
    T: BinWrite,
{
    let mut cursor = Cursor::new(Vec::new());
    value
        .write_options(&mut cursor, endian, args)
        .map_err(|e| Error::encode(type_name::<T>(), &e))?;
    Ok(cursor.into_inner())
}

/// A type's name without its module path (`perfdata_core::feature::EventDesc` is
/// `EventDesc`), for error messages.
fn type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base)
}

/// Decode a `T` from the start of `bytes`; `offset` is where `bytes` sits in the file and
/// `context` names what is being read, both for the error message.
pub fn decode<'a, T>(
    bytes: &[u8],
    endian: Endian,
    args: T::Args<'a>,
    offset: u64,
    context: &str,
) -> Result<T>
where
    T: BinRead,
{
    decode_prefix(bytes, endian, args, offset, context).map(|(value, _)| value)
}

/// Decode a `T` and report how many bytes of `bytes` it used.
pub fn decode_prefix<'a, T>(
    bytes: &[u8],
    endian: Endian,
    args: T::Args<'a>,
    offset: u64,
    context: &str,
) -> Result<(T, usize)>
where
    T: BinRead,
{
    decode_prefix_lazy(bytes, endian, args, offset, &|| context.to_string())
}

/// [`decode_prefix`] naming what was read only when it fails: for per-record paths,
/// where building the name up front would allocate for every record.
pub fn decode_prefix_lazy<'a, T>(
    bytes: &[u8],
    endian: Endian,
    args: T::Args<'a>,
    offset: u64,
    context: &dyn Fn() -> String,
) -> Result<(T, usize)>
where
    T: BinRead,
{
    let mut cursor = Cursor::new(bytes);
    let value = T::read_options(&mut cursor, endian, args)
        .map_err(|e| Error::decode(offset, context(), e))?;
    Ok((value, cursor.position() as usize))
}

/// Read a u16/u32/u64 at `pos` of `bytes` in `endian` (the raw layer's field access).
#[inline]
pub fn u64_at(bytes: &[u8], pos: usize, endian: Endian) -> Option<u64> {
    let b: [u8; 8] = bytes.get(pos..pos + 8)?.try_into().ok()?;
    Some(match endian {
        Endian::Little => u64::from_le_bytes(b),
        Endian::Big => u64::from_be_bytes(b),
    })
}

/// See [`u64_at`].
#[inline]
pub fn u32_at(bytes: &[u8], pos: usize, endian: Endian) -> Option<u32> {
    let b: [u8; 4] = bytes.get(pos..pos + 4)?.try_into().ok()?;
    Some(match endian {
        Endian::Little => u32::from_le_bytes(b),
        Endian::Big => u32::from_be_bytes(b),
    })
}

/// See [`u64_at`].
#[inline]
pub fn u16_at(bytes: &[u8], pos: usize, endian: Endian) -> Option<u16> {
    let b: [u8; 2] = bytes.get(pos..pos + 2)?.try_into().ok()?;
    Some(match endian {
        Endian::Little => u16::from_le_bytes(b),
        Endian::Big => u16::from_be_bytes(b),
    })
}
