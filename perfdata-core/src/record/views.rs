//! Borrowed, zero-copy views of the side-band records' fixed fields: `ForkView::tid()`,
//! `CommView::comm()`, `Mmap2View::filename()`, read straight from a record's bytes
//! (header included) without decoding its model.
//!
//! Each view is one line of the catalogue (the registry), beside the record types'
//! rows, written with [`views!`]: its fields in order with their types; the offsets
//! follow from the sizes (worked out at compile time), so a layout is written once,
//! there, and every edit, report and selector that reads a field by its offset reads
//! it through the view. A view is checked against its record once, when it is
//! made: a record of another type, or one too short for the fixed fields, is an error
//! naming the record's offset, never a panic. Each view's offsets are checked against
//! the binrw model of its record type by the tests (`views_tests.rs`).

use binrw::Endian;

use crate::codec::{u16_at, u32_at, u64_at};
use crate::error::Result;

/// A fixed-size field type a view can read.
pub trait Word: Sized {
    /// Bytes the field takes.
    const SIZE: usize;
    /// Read at `at` of `bytes`, which holds it (a view checks the length once).
    ///
    /// # Panics
    ///
    /// When `bytes` ends before `at + SIZE`: a view never reads past what it checked.
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self;
}

impl Word for u16 {
    const SIZE: usize = 2;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u16_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

impl Word for u32 {
    const SIZE: usize = 4;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u32_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

impl Word for i32 {
    const SIZE: usize = 4;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u32::read(bytes, at, endian) as i32
    }
}

impl Word for u64 {
    const SIZE: usize = 8;
    fn read(bytes: &[u8], at: usize, endian: Endian) -> Self {
        u64_at(bytes, at, endian).expect("the view checked the record's length")
    }
}

/// What every view is: made from a record's bytes (header included), checked once.
pub trait RecordView<'a>: Sized {
    /// Bytes of the fixed fields, the 8-byte header included: a shorter record is an
    /// error.
    const LEN: usize;

    /// The view of `bytes`, a record of one of the view's types that starts at file
    /// offset `offset` (named by the error when it is not one, or too short).
    fn new(bytes: &'a [u8], endian: Endian, offset: u64) -> Result<Self>;
}

/// The bytes of a NUL-terminated string from `at` (up to the NUL, or the end).
pub(super) fn c_string(bytes: &[u8], at: usize) -> &[u8] {
    let s = bytes.get(at..).unwrap_or(&[]);
    let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
    &s[..end]
}

/// One view per line: `Name(Offsets) for [Types] { field: type, ... ; string }`. The
/// optional string after `;` is the NUL-terminated string that fills the rest of the
/// body (a COMM's name, an MMAP's path).
macro_rules! views {
    ($(
        $(#[doc = $doc:literal])*
        $view:ident($at:ident) for [$($ty:ident),+] { $($field:ident: $fty:ty),* $(; $tail:ident)? }
    )*) => {$(
        $(#[doc = $doc])*
        #[derive(Debug, Clone, Copy)]
        pub struct $view<'a> {
            bytes: &'a [u8],
            endian: Endian,
        }

        #[doc = concat!("Where the fields of [`", stringify!($view), "`] sit, in bytes from the record's start (its header included).")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $at {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub $field: usize,
            )*
            $(
                #[doc = concat!("`", stringify!($tail), "`, the string to the end of the body.")]
                pub $tail: usize,
            )?
        }

        impl $view<'_> {
            /// Where each field is.
            pub const AT: $at = views!(@at $at, 8usize, [], $($field: $fty,)* ; $($tail)?);
        }

        impl $view<'_> {
            /// The record types whose layout the view reads.
            pub const TYPES: &'static [RecordType] = &[$(RecordType::$ty),+];
        }

        impl<'a> RecordView<'a> for $view<'a> {
            const LEN: usize = 8 $(+ <$fty as Word>::SIZE)*;

            fn new(bytes: &'a [u8], endian: Endian, offset: u64) -> Result<Self> {
                check(bytes, endian, offset, Self::TYPES, Self::LEN)?;
                Ok($view { bytes, endian })
            }
        }

        impl<'a> $view<'a> {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                #[inline]
                // A mapping's `len` is a field, not the view's length.
                #[allow(clippy::len_without_is_empty)]
                pub fn $field(&self) -> $fty {
                    <$fty as Word>::read(self.bytes, Self::AT.$field, self.endian)
                }
            )*
            $(
                #[doc = concat!("`", stringify!($tail), "`: its bytes up to the NUL.")]
                pub fn $tail(&self) -> &'a [u8] {
                    c_string(self.bytes, Self::AT.$tail)
                }
            )?
        }
    )*};
    // The offsets: each field after the one before it.
    (@at $at:ident, $pos:expr, [$($done:tt)*], $field:ident: $fty:ty, $($rest:tt)*) => {
        views!(@at $at, $pos + <$fty as Word>::SIZE, [$($done)* $field: $pos,], $($rest)*)
    };
    (@at $at:ident, $pos:expr, [$($done:tt)*], ; $($tail:ident)?) => {
        $at { $($done)* $($tail: $pos)? }
    };
}
pub(super) use views;
