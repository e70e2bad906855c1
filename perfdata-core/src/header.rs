//! The file header (`perf_file_header`) and the pipe header.
//!
//! perf writes its magic as the u64 0x32454c4946524550 in the producer's byte order, so
//! "PERFILE2" means a little-endian producer and "2ELIFREP" a big-endian one. The legacy
//! "PERFFILE" magic (version 1) carries no byte-order mark; as perf does, the order is
//! found from a size field that must match a known value.

use binrw::{binrw, BinRead, Endian};
use serde::Serialize;

use crate::error::{Error, Problem, Result};
use crate::feature::FeatureId;

/// Size of the pipe header: `{magic, size}`.
pub const PIPE_HEADER_SIZE: u64 = 16;
/// Size of the version-2 file header with its 256-bit feature bitmap.
pub const FILE_HEADER_SIZE: u64 = 104;
/// Size of the oldest file header: no feature bitmap.
pub const FILE_HEADER_SIZE_NO_FEATURES: u64 = 72;

const MAGIC2_LE: [u8; 8] = *b"PERFILE2";
const MAGIC2_BE: [u8; 8] = *b"2ELIFREP";
const MAGIC1: [u8; 8] = *b"PERFFILE";

/// The perf_event_attr sizes perf's version-1 reader accepts (VER0 to VER4); their value
/// plus 16 is what `attr_size` of a version-1 file must be.
const V1_ATTR_SIZES: [u64; 5] = [64, 72, 80, 96, 104];

/// Which magic a file starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Magic {
    /// "PERFILE2" or "2ELIFREP": version 2, the byte order is in the magic.
    V2,
    /// "PERFFILE": version 1, the byte order was inferred from a size.
    V1,
}

impl Magic {
    /// The 8 bytes of this magic as a producer of `endian` writes them.
    pub fn bytes(self, endian: Endian) -> [u8; 8] {
        match (self, endian) {
            (Magic::V1, _) => MAGIC1,
            (Magic::V2, Endian::Little) => MAGIC2_LE,
            (Magic::V2, Endian::Big) => MAGIC2_BE,
        }
    }
}

/// `struct perf_file_section`: where a piece of the file is.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash, Serialize)]
pub struct FileSection {
    /// File offset of the section.
    pub offset: u64,
    /// Its size in bytes.
    pub size: u64,
}

impl FileSection {
    /// Offset one past the last byte (saturating: a corrupt size cannot wrap around).
    pub fn end(&self) -> u64 {
        self.offset.saturating_add(self.size)
    }
}

/// The 256-bit `adds_features` bitmap, as the four u64 words stored in the file.
///
/// Bit n is bit n % 64 of word n / 64 in the producer's byte order. The words are kept as
/// read so that writing them back gives the same bytes; [`FeatureBitmap::effective`]
/// applies perf's rules for old big-endian producers.
#[binrw]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct FeatureBitmap {
    /// The bitmap's four words, as stored.
    pub words: [u64; 4],
}

impl FeatureBitmap {
    /// Whether feature bit `bit` is set in the stored words.
    pub fn is_set(&self, bit: u32) -> bool {
        bit < 256 && self.words[(bit / 64) as usize] & (1u64 << (bit % 64)) != 0
    }

    /// Set or clear feature bit `bit`.
    pub fn set(&mut self, bit: u32, on: bool) {
        if bit >= 256 {
            return;
        }
        let word = &mut self.words[(bit / 64) as usize];
        if on {
            *word |= 1u64 << (bit % 64);
        } else {
            *word &= !(1u64 << (bit % 64));
        }
    }

    /// The set bits, ascending: the order of the feature index.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..256u32).filter(move |&b| self.is_set(b))
    }

    /// Number of set bits: the number of entries in the feature index.
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// The bitmap as perf interprets it.
    ///
    /// For a byte-swapped (big-endian) producer perf cannot know whether the bitmap was
    /// written as 64-bit or 32-bit `unsigned long`s: it tries the 64-bit reading, then the
    /// 32-bit one, and if neither has HOSTNAME set (forced on since perf 3.x) it assumes an
    /// old file whose only feature is BUILD_ID.
    pub fn effective(&self, endian: Endian) -> FeatureBitmap {
        if endian == Endian::Little || self.is_set(FeatureId::HOSTNAME) {
            return *self;
        }
        // 32-bit unsigned longs: each u64 word read big-endian holds two 32-bit words in
        // the wrong order.
        let swapped = FeatureBitmap {
            words: self.words.map(|w| w.rotate_left(32)),
        };
        if swapped.is_set(FeatureId::HOSTNAME) {
            return swapped;
        }
        let mut only_build_id = FeatureBitmap::default();
        only_build_id.set(FeatureId::BUILD_ID, true);
        only_build_id
    }
}

/// `struct perf_file_header`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileHeader {
    /// "PERFILE2", "2ELIFREP" or "PERFFILE", as stored.
    #[serde(serialize_with = "crate::mark::c_string")]
    pub magic: [u8; 8],
    /// Header size: 104, or 72 for the oldest files without a feature bitmap.
    pub size: u64,
    /// Size of one entry of the attrs section: perf_event_attr plus its ids section.
    pub attr_size: u64,
    /// The attrs section: `attr_size` bytes per event.
    pub attrs: FileSection,
    /// The data section: the records.
    pub data: FileSection,
    /// Old perf (3.x) wrote `{u64 id; char name[64]}` entries here; {0, 0} since.
    pub event_types: FileSection,
    /// The features bitmap (absent from headers too short to hold it).
    #[br(if(size >= FILE_HEADER_SIZE))]
    pub features: Option<FeatureBitmap>,
}

impl FileHeader {
    /// Which magic this header has.
    pub fn magic_kind(&self) -> Magic {
        if self.magic == MAGIC1 {
            Magic::V1
        } else {
            Magic::V2
        }
    }

    /// Where the feature index starts: perf derives it from the data section.
    pub fn feature_index_offset(&self) -> u64 {
        self.data.end()
    }

    /// The feature bits perf would act on.
    pub fn feature_bits(&self, endian: Endian) -> FeatureBitmap {
        self.features
            .map(|f| f.effective(endian))
            .unwrap_or_default()
    }
}

/// What the first bytes of an input say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Container {
    /// A seekable file with a header, attrs, data and features.
    File,
    /// A stream: a 16-byte header, then records only.
    Pipe,
}

/// The result of looking at the first 16 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    /// The magic read.
    pub magic: Magic,
    /// The byte order the magic says.
    pub endian: Endian,
    /// File or pipe mode, with the header that mode has.
    pub container: Container,
    /// The header's size field.
    pub header_size: u64,
}

/// Identify magic, byte order and container from the first 16 bytes of an input.
///
/// For version-1 pipe streams the order comes from the size (16) and for version-1 files
/// from `attr_size`, which is at bytes 16..24: `first24` must hold them for files.
pub fn probe(first: &[u8]) -> Result<Probe> {
    if first.len() < 16 {
        return Err(Error::truncated(
            0,
            "file header (magic and size)",
            16,
            first.len() as u64,
        ));
    }
    let magic: [u8; 8] = first[0..8].try_into().expect("8 bytes");
    let size_le = u64::from_le_bytes(first[8..16].try_into().expect("8 bytes"));
    let size_be = u64::from_be_bytes(first[8..16].try_into().expect("8 bytes"));
    let (magic_kind, endian) = match magic {
        MAGIC2_LE => (Magic::V2, Endian::Little),
        MAGIC2_BE => (Magic::V2, Endian::Big),
        MAGIC1 => {
            let endian = v1_endian(first, size_le, size_be)?;
            (Magic::V1, endian)
        }
        other => return Err(Error::format(0, "file magic", Problem::BadMagic(other))),
    };
    let header_size = match endian {
        Endian::Little => size_le,
        Endian::Big => size_be,
    };
    let container = if header_size == PIPE_HEADER_SIZE {
        Container::Pipe
    } else if header_size == FILE_HEADER_SIZE || header_size == FILE_HEADER_SIZE_NO_FEATURES {
        Container::File
    } else {
        return Err(Error::format(
            8,
            "file header size",
            Problem::Invalid(format!(
                "header size {header_size} is none of 16 (pipe), 72 or 104 (file)"
            )),
        ));
    };
    Ok(Probe {
        magic: magic_kind,
        endian,
        container,
        header_size,
    })
}

/// perf's `try_all_pipe_abis` / `try_all_file_abis` for the version-1 magic.
fn v1_endian(first: &[u8], size_le: u64, size_be: u64) -> Result<Endian> {
    if size_le == PIPE_HEADER_SIZE {
        return Ok(Endian::Little);
    }
    if size_be == PIPE_HEADER_SIZE {
        return Ok(Endian::Big);
    }
    if first.len() < 24 {
        return Err(Error::truncated(
            16,
            "version-1 file header attr_size",
            8,
            first.len().saturating_sub(16) as u64,
        ));
    }
    let attr_size: [u8; 8] = first[16..24].try_into().expect("8 bytes");
    let known = |v: u64| V1_ATTR_SIZES.iter().any(|s| s + 16 == v);
    if known(u64::from_le_bytes(attr_size)) {
        Ok(Endian::Little)
    } else if known(u64::from_be_bytes(attr_size)) {
        Ok(Endian::Big)
    } else {
        Err(Error::format(
            16,
            "version-1 file header attr_size",
            Problem::Invalid(
                "PERFFILE magic but attr_size matches no known perf_event_attr size, \
                 so the byte order cannot be determined"
                    .into(),
            ),
        ))
    }
}

/// Parse the file header from the start of a file.
pub fn read_file_header(bytes: &[u8]) -> Result<(Probe, FileHeader)> {
    let probe = probe(bytes)?;
    if probe.container != Container::File {
        return Err(Error::format(
            8,
            "file header",
            Problem::Invalid("this is a pipe stream, not a file-mode header".into()),
        ));
    }
    if (bytes.len() as u64) < probe.header_size {
        return Err(Error::truncated(
            0,
            "file header",
            probe.header_size,
            bytes.len() as u64,
        ));
    }
    let mut cursor = std::io::Cursor::new(&bytes[..probe.header_size as usize]);
    let header = FileHeader::read_options(&mut cursor, probe.endian, ())
        .map_err(|e| Error::decode(0, "file header", e))?;
    Ok((probe, header))
}

/// One entry of the old event_types section: `{u64 event_id; char name[64]}`.
#[binrw]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EventType {
    /// The event's id (an attr's config).
    pub event_id: u64,
    /// Its name, NUL-padded.
    #[serde(serialize_with = "crate::mark::c_string")]
    pub name: [u8; 64],
}

impl EventType {
    /// Size of one entry in the file.
    pub const SIZE: u64 = 72;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_recognises_both_orders_and_pipe() {
        let mut le = b"PERFILE2".to_vec();
        le.extend_from_slice(&104u64.to_le_bytes());
        let p = probe(&le).unwrap();
        assert_eq!((p.endian, p.container), (Endian::Little, Container::File));

        let mut be = b"2ELIFREP".to_vec();
        be.extend_from_slice(&16u64.to_be_bytes());
        let p = probe(&be).unwrap();
        assert_eq!((p.endian, p.container), (Endian::Big, Container::Pipe));
    }

    #[test]
    fn probe_v1_uses_attr_size() {
        let mut v1 = b"PERFFILE".to_vec();
        v1.extend_from_slice(&104u64.to_be_bytes());
        v1.extend_from_slice(&88u64.to_be_bytes());
        let p = probe(&v1).unwrap();
        assert_eq!((p.magic, p.endian), (Magic::V1, Endian::Big));
    }

    #[test]
    fn probe_rejects_other_magic_at_offset_zero() {
        let e = probe(b"ELF\x7fxxxxxxxxxxxxxxxx").unwrap_err();
        assert_eq!(e.offset(), Some(0));
        assert!(matches!(e.problem(), Some(Problem::BadMagic(_))));
    }

    #[test]
    fn big_endian_32bit_bitmap_is_unswapped_like_perf() {
        // HOSTNAME (bit 3) written by a 32-bit big-endian producer lands in the high
        // half of the first u64 when read as a big-endian u64.
        let bm = FeatureBitmap {
            words: [1u64 << (32 + 3), 0, 0, 0],
        };
        let eff = bm.effective(Endian::Big);
        assert!(eff.is_set(3));
        assert_eq!(eff.count(), 1);
        let old = FeatureBitmap { words: [0; 4] };
        let eff = old.effective(Endian::Big);
        assert!(eff.is_set(FeatureId::BUILD_ID) && eff.count() == 1);
    }
}
