//! Borrowed, zero-copy views of the side-band records' fixed fields: `ForkView::tid()`,
//! `CommView::comm()`, `Mmap2View::filename()`, read straight from a record's bytes
//! (header included) without decoding its model.
//!
//! A side-band record's layout is written once, with [`layouts!`], beside its kind's
//! other models (kernel.rs, user.rs, stat.rs): its fields in order with their types,
//! and the facts edits need (see [`super::Facts`]). From that one description come the
//! binrw model (the owned type that reads and writes the record), the view (its fixed
//! fields read in place, offsets worked out at compile time from the sizes) and the
//! facts the catalogue row of each type it lays out states, with offsets taken from
//! the view: a field added to the description is in all three, and no field of the
//! model can be missing from the view. Every edit, report and selector that reads a
//! field by its offset reads it through the view. A view is checked against its
//! record once, when it is made: a record of another type, or one too short for the
//! fixed fields, is an error naming the record's offset, never a panic.

use binrw::Endian;

use super::types::RecordType;
use crate::codec::{u16_at, u32_at, u64_at};
use crate::error::{Error, Problem, Result};

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
pub(crate) fn c_string(bytes: &[u8], at: usize) -> &[u8] {
    crate::text::c_str_bytes(bytes.get(at..).unwrap_or(&[]))
}

/// Check `bytes` for a view of `types` needing `len` bytes: the record's type must be
/// one of them and its bytes at least that long.
pub(crate) fn check(
    bytes: &[u8],
    endian: Endian,
    offset: u64,
    types: &[RecordType],
    len: usize,
) -> Result<()> {
    let ty = RecordType::from_u32(u32_at(bytes, 0, endian).unwrap_or(0));
    let context = || format!("record {ty}");
    if !types.contains(&ty) {
        let names: Vec<String> = types.iter().map(|t| t.name()).collect();
        return Err(Error::format(
            offset,
            context(),
            Problem::Invalid(format!("read as {}", names.join(" or "))),
        ));
    }
    if bytes.len() < len {
        return Err(Error::format(
            offset,
            context(),
            Problem::RecordTooSmall {
                size: bytes.len() as u64,
                min: len as u64,
            },
        ));
    }
    Ok(())
}

/// One layout per item, each giving a binrw model, its view and its facts:
///
/// ```text
/// #[binrw]
/// /// Docs and attributes of the model (derives, `#[br(import(..))]`).
/// #[derive(...)]
/// pub struct Model {
///     /// Each fixed field, with its attributes: in the model and in the view.
///     pub pid: i32,
///     /// An address (a start, length or file offset of a mapping): an address fact,
///     /// and an address in the model's JSON.
///     pub addr: u64 = address,
///     /// A field the view reads as several words (MMAP2's device and inode, whose
///     /// model is an enum by misc) lists them after its type.
///     pub id: Mmap2Id { maj: u32, min: u32, ino: u64, ino_generation: u64 },
/// } text {
///     /// The NUL-terminated string that fills the rest of the body, with what it
///     /// names (a [`super::StringKind`]): in the model, the view and the facts.
///     pub name: PaddedString = Comm,
/// } rest(numbers) {
///     /// Or: what follows the fixed fields and is not fixed (arrays with a count,
///     /// READ's values laid out by read_format): in the model only. It says what it
///     /// holds, for the facts: `numbers` only, or `other` (names or bytes an edit must
///     /// handle by name), which makes the record's facts [`Facts::OTHER`](super::Facts::OTHER).
///     pub links: Vec<NamespaceLink>,
/// }
/// /// Docs of the view.
/// view ModelView(ModelAt) for [RecordTypes], facts(task(Thread pid tid));
/// ```
///
/// Each item starts with the model's `#[binrw]`, passed on as written rather than added
/// by the macro: binrw names some of its generated locals with the attribute's span and
/// some with the fields', and an attribute from the macro's own text would not see
/// those (a `parse_with` field after a `temp` one then reads the other's value).
///
/// `facts(...)` says which fields name the task (`task(Thread pid tid)`,
/// `task(Process pid tid)`, or `task(trailer)` for the sample_id trailer's); with the
/// fields marked `= address` and the text's kind, that is every fact: every other fixed
/// field is a number. `facts(other)` says the record holds more than
/// that (a payload, nested names), which edits handle by name.
macro_rules! layouts {
    ($(
        $pound:tt $binrw:tt
        $(#[$($attr:tt)*])*
        $vis:vis struct $name:ident {
            $(
                $(#[$($fattr:tt)*])* $fvis:vis $field:ident: $fty:ident $(= $mark:ident)?
                $({ $($sub:ident: $subty:ident),* $(,)? })?
            ),* $(,)?
        }
        $(text {
            $(#[$($tattr:tt)*])* $tvis:vis $text:ident: $tty:ty = $kind:ident $(,)?
        })?
        $(rest($restkind:ident) { $($rest:tt)* })?
        $(#[doc = $vdoc:literal])*
        view $view:ident($at:ident) for [$($ty:ident),+], facts($($facts:tt)*);
    )*) => {$(
        layouts!(@model [$pound $binrw $(#[$($attr)*])* $vis struct $name] []
            [$($(#[$($fattr)*])* $fvis $field: $fty $(= $mark)?,)*]
            // The text, then the rest as written: the rest is the model's alone.
            [$($(#[$($tattr)*])* $tvis $text: $tty,)? $($($rest)*)?]);

        impl $name {
            /// Its catalogue rows take their facts from it (see the registry).
            // Read only by a row that would name facts of its own, which then fails.
            #[allow(dead_code)]
            pub(crate) const HAS_LAYOUT: bool = true;

            /// The facts its layout states (see [`Facts`](crate::record::Facts)).
            pub(crate) const FACTS: $crate::record::facts::Facts =
                layouts!(@facts $view, ($($text $kind)?)
                    [$($(layouts!(@address $view, $field, $mark),)?)*] [$($restkind)?]
                    $($facts)*);

            /// Its string fields, each with what it names (see
            /// [`RecordBody::strings_mut`](crate::record::RecordBody::strings_mut)).
            pub(crate) fn strings_mut(
                &mut self,
            ) -> Vec<($crate::record::facts::StringKind, &mut $crate::record::PaddedString)> {
                vec![$(($crate::record::facts::StringKind::$kind, &mut self.$text))?]
            }
        }

        layouts!(@flat ($name, [$($vdoc)*], $view, $at, [$($ty),+], ($($text)?)) []
            [$($field: $fty $({ $($sub: $subty),* })?,)*]);
    )*};

    // The model's fields: an address says so in its JSON form.
    (@model $head:tt [$($done:tt)*]
        [$(#[$($a:tt)*])* $v:vis $f:ident: $t:ident = address, $($more:tt)*] $tail:tt) => {
        layouts!(@model $head
            [$($done)* #[serde(serialize_with = "crate::mark::address")] $(#[$($a)*])* $v $f: $t,]
            [$($more)*] $tail);
    };
    (@model $head:tt [$($done:tt)*]
        [$(#[$($a:tt)*])* $v:vis $f:ident: $t:ident, $($more:tt)*] $tail:tt) => {
        layouts!(@model $head [$($done)* $(#[$($a)*])* $v $f: $t,] [$($more)*] $tail);
    };
    (@model [$($head:tt)*] [$($done:tt)*] [] [$($tail:tt)*]) => {
        $($head)* { $($done)* $($tail)* }
    };
    (@address $view:ident, $field:ident, address) => {
        $view::AT.$field
    };

    // The view's fields: each fixed field, or the words it lists.
    (@flat $args:tt [$($done:tt)*] [$field:ident: $fty:ty { $($sub:ident: $subty:ty),* }, $($more:tt)*]) => {
        layouts!(@flat $args [$($done)* $($sub: $subty,)*] [$($more)*]);
    };
    (@flat $args:tt [$($done:tt)*] [$field:ident: $fty:ty, $($more:tt)*]) => {
        layouts!(@flat $args [$($done)* $field: $fty,] [$($more)*]);
    };
    (@flat $args:tt [$($done:tt)*] []) => {
        layouts!(@view $args $($done)*);
    };

    (@view ($name:ident, [$($vdoc:literal)*], $view:ident, $at:ident, [$($ty:ident),+], ($($text:ident)?))
        $($field:ident: $fty:ty,)*) => {
        $(#[doc = $vdoc])*
        #[doc = ""]
        #[doc = concat!("The fixed fields of a [`", stringify!($name), "`] record, read in place from its bytes (header included): see [`RecordView`](crate::record::RecordView).")]
        #[derive(Debug, Clone, Copy)]
        pub struct $view<'a> {
            bytes: &'a [u8],
            endian: ::binrw::Endian,
        }

        #[doc = concat!("Where the fields of [`", stringify!($view), "`] sit, in bytes from the record's start (its header included).")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $at {
            $(
                #[doc = concat!("`", stringify!($field), "`.")]
                pub $field: usize,
            )*
            $(
                #[doc = concat!("`", stringify!($text), "`, the string to the end of the body.")]
                pub $text: usize,
            )?
        }

        impl $view<'_> {
            /// Where each field is.
            pub const AT: $at = layouts!(@at $at, 8usize, [], $($field: $fty,)* ; $($text)?);

            /// The record types whose layout the view reads.
            pub const TYPES: &'static [$crate::record::types::RecordType] =
                &[$($crate::record::types::RecordType::$ty),+];
        }

        impl<'a> $crate::record::views::RecordView<'a> for $view<'a> {
            const LEN: usize = 8 $(+ <$fty as $crate::record::views::Word>::SIZE)*;

            fn new(bytes: &'a [u8], endian: ::binrw::Endian, offset: u64) -> $crate::error::Result<Self> {
                $crate::record::views::check(bytes, endian, offset, Self::TYPES, Self::LEN)?;
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
                    <$fty as $crate::record::views::Word>::read(self.bytes, Self::AT.$field, self.endian)
                }
            )*
            $(
                #[doc = concat!("`", stringify!($text), "`: its bytes up to the NUL.")]
                pub fn $text(&self) -> &'a [u8] {
                    $crate::record::views::c_string(self.bytes, Self::AT.$text)
                }
            )?
        }
    };

    // The offsets: each field after the one before it.
    (@at $at:ident, $pos:expr, [$($done:tt)*], $field:ident: $fty:ty, $($rest:tt)*) => {
        layouts!(@at $at, $pos + <$fty as $crate::record::views::Word>::SIZE, [$($done)* $field: $pos,], $($rest)*)
    };
    (@at $at:ident, $pos:expr, [$($done:tt)*], ; $($text:ident)?) => {
        $at { $($done)* $($text: $pos)? }
    };

    // The facts, with the view's offsets.
    // A rest that holds more than numbers (nested names, a feature's bytes): the
    // record is "other" whatever else the item says, and edits handle it by name.
    (@facts $view:ident, $text:tt $addresses:tt [other] $($facts:tt)*) => {
        $crate::record::facts::Facts::OTHER
    };
    (@facts $view:ident, $text:tt $addresses:tt [$(numbers)?] other) => {
        $crate::record::facts::Facts::OTHER
    };
    // A rest can only claim `numbers` or `other`: any other word matches no rule.
    (@facts $view:ident, ($($text:ident $kind:ident)?) [$($address:expr,)*] [$(numbers)?]
        $(task($($task:tt)*))?) => {
        $crate::record::facts::Facts {
            task: layouts!(@task $view, $($($task)*)?),
            strings: &[$($crate::record::facts::StringField {
                at: $view::AT.$text,
                kind: $crate::record::facts::StringKind::$kind,
            })?],
            addresses: &[$($address),*],
            content: $crate::record::facts::Content::Listed,
        }
    };
    (@task $view:ident,) => { $crate::record::facts::TaskFacts::None };
    (@task $view:ident, trailer) => { $crate::record::facts::TaskFacts::Trailer };
    (@task $view:ident, $scope:ident $pid:ident $tid:ident) => {
        $crate::record::facts::TaskFacts::Fields {
            pid: $view::AT.$pid,
            tid: $view::AT.$tid,
            scope: $crate::record::facts::TaskScope::$scope,
        }
    };
}
pub(super) use layouts;
