//! perf's `DSO_BINARY_TYPE__DEBUGLINK`: a stripped binary's `.gnu_debuglink` section names
//! the file that kept its symbols and DWARF (`objcopy --only-keep-debug` then
//! `--add-gnu-debuglink`), and perf 6.1 looks for that name in a few places beside the
//! binary (tools/perf/util/dso.c, `dso__read_binary_type_filename`; the section is read
//! by `filename__read_debuglink` in symbol-elf.c).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

/// What a `.gnu_debuglink` section holds: the debug file's name, NUL, zero padding to a
/// multiple of 4 bytes, then the CRC32 of the debug file in the binary's byte order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DebugLink {
    /// The debug file's name as written, usually a bare file name (`hot.debug`).
    pub name: OsString,
    /// The CRC32 of the debug file; None when the section ends before it. perf 6.1 reads
    /// only the name and never checks the CRC, so neither do we; the build id is what
    /// tells a wrong debug file.
    pub crc: Option<u32>,
}

/// Parse the contents of a `.gnu_debuglink` section. None, never a panic, when there is
/// no name or it is not NUL-terminated within the section (perf's `strncpy` would read
/// past the section's end there).
pub fn parse(data: &[u8], little_endian: bool) -> Option<DebugLink> {
    let nul = data.iter().position(|&b| b == 0)?;
    if nul == 0 {
        return None;
    }
    let crc_at = (nul + 1).next_multiple_of(4);
    let crc = data.get(crc_at..crc_at.checked_add(4)?).map(|b| {
        let b = [b[0], b[1], b[2], b[3]];
        if little_endian {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        }
    });
    Some(DebugLink {
        name: OsStr::from_bytes(&data[..nul]).to_os_string(),
        crc,
    })
}

/// The `.gnu_debuglink` of the ELF file at `binary`; only the headers and that section
/// are read, since binaries can be hundreds of megabytes.
pub fn read(binary: &Path) -> Option<DebugLink> {
    let file = crate::files::open_regular(binary)?;
    let cache = object::ReadCache::new(file);
    let elf = object::File::parse(&cache).ok()?;
    let section = elf.section_by_name(".gnu_debuglink")?;
    parse(section.data().ok()?, elf.is_little_endian())
}

/// Where perf 6.1 looks for debug file `name` of the binary at `binary` (already under
/// --symfs), in its order (dso.c's `debuglink_paths`): the name as it is (relative to the
/// current directory, or absolute), `DIR/name`, `DIR/.debug/name`, and
/// `/usr/lib/debug` + `DIR/name`. DIR is the binary's directory with the --symfs prefix,
/// so the last is not under --symfs but under /usr/lib/debug followed by the whole
/// prefixed directory, as perf's `snprintf("/usr/lib/debug%s/%s", dso_dir, symfile)`
/// makes it. Built as strings, not `Path::join`, so an absolute name is appended as perf
/// appends it instead of replacing the directory.
pub fn paths(binary: &Path, name: &OsStr) -> [PathBuf; 4] {
    let bytes = binary.as_os_str().as_bytes();
    let dir = OsStr::from_bytes(&bytes[..bytes.iter().rposition(|&b| b == b'/').unwrap_or(0)]);
    let cat = |parts: &[&OsStr]| -> PathBuf {
        let mut s = OsString::new();
        parts.iter().for_each(|p| s.push(p));
        PathBuf::from(s)
    };
    let slash = OsStr::new("/");
    [
        PathBuf::from(name),
        cat(&[dir, slash, name]),
        cat(&[dir, OsStr::new("/.debug/"), name]),
        cat(&[OsStr::new("/usr/lib/debug"), dir, slash, name]),
    ]
}

/// perf's DEBUGLINK candidate of the binary at `binary` (under --symfs): the first of
/// [`paths`] that is a regular file, when the binary is one and has a `.gnu_debuglink`.
/// Whether its build id matches is checked by the caller, as for every candidate.
pub fn find(binary: &Path) -> Option<PathBuf> {
    if !binary.is_file() {
        return None;
    }
    let link = read(binary)?;
    paths(binary, &link.name).into_iter().find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The section objcopy writes: name, NUL, padding to 4, CRC.
    fn section(name: &str, crc: u32, little: bool) -> Vec<u8> {
        let mut s = name.as_bytes().to_vec();
        s.resize((s.len() + 1).next_multiple_of(4), 0);
        s.extend(if little {
            crc.to_le_bytes()
        } else {
            crc.to_be_bytes()
        });
        s
    }

    #[test]
    fn parses_name_padding_and_crc() {
        for name in ["hot.debug", "abc", "abcd", "a"] {
            for little in [true, false] {
                let got = parse(&section(name, 0x1234_5678, little), little).expect(name);
                assert_eq!(got.name, OsString::from(name));
                assert_eq!(got.crc, Some(0x1234_5678), "{name} little={little}");
            }
        }
    }

    #[test]
    fn truncated_or_garbage_sections_give_no_name_and_no_panic() {
        let full = section("hot.debug", 7, true);
        // Cut anywhere before the NUL: no name.
        for cut in 0..="hot.debug".len() {
            assert_eq!(parse(&full[..cut], true), None, "cut at {cut}");
        }
        // Cut inside the padding or the CRC: the name (all perf reads), no CRC.
        for cut in "hot.debug".len() + 1..full.len() {
            let got = parse(&full[..cut], true).expect("name");
            assert_eq!((got.name.to_str(), got.crc), (Some("hot.debug"), None));
        }
        assert_eq!(parse(&[0, 0, 0, 0, 1, 2, 3, 4], true), None, "empty name");
        assert_eq!(parse(&[0xff; 64], true), None, "no NUL");
        assert_eq!(parse(&[], false), None);
    }

    #[test]
    fn paths_follow_perfs_debuglink_paths() {
        let got = paths(Path::new("/sysroot/usr/bin/hot"), OsStr::new("hot.debug"));
        assert_eq!(
            got.map(|p| p.display().to_string()),
            [
                "hot.debug",
                "/sysroot/usr/bin/hot.debug",
                "/sysroot/usr/bin/.debug/hot.debug",
                "/usr/lib/debug/sysroot/usr/bin/hot.debug",
            ]
        );
        // An absolute name is appended, as perf's snprintf does.
        let got = paths(Path::new("/bin/x"), OsStr::new("/d/x.debug"));
        assert_eq!(got[0], Path::new("/d/x.debug"));
        assert_eq!(got[1], Path::new("/bin//d/x.debug"));
    }

    #[test]
    fn a_missing_binary_or_one_without_the_section_has_no_candidate() {
        assert_eq!(find(Path::new("/nonexistent/binary")), None);
        // This test binary is not stripped, so it has no .gnu_debuglink.
        let me = std::env::current_exe().expect("test binary");
        assert_eq!(read(&me), None);
        assert_eq!(find(&me), None);
    }
}
