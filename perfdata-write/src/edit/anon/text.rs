//! Strings anonymize writes: renamed ones in place of the input's, and the ones it keeps
//! (perf's and the kernel's vocabulary: event, PMU and CPU names, cpu lists) only when
//! they are NUL-terminated printable text of their kind, their padding zeroed (the
//! kernel and perf leave stale bytes after the NUL: the end of a longer name written
//! there before).

use perfdata_core::feature::PerfString;
use perfdata_core::record::PaddedString;

use super::Fate;

/// The text before the first NUL; `None` when there is no NUL: a field cut short or
/// read from the wrong place, since perf and the kernel always terminate their strings.
pub(super) fn c_text(bytes: &[u8]) -> Option<&[u8]> {
    bytes.iter().position(|&b| b == 0).map(|n| &bytes[..n])
}

/// Zero what follows the first NUL.
pub(super) fn zero_padding(bytes: &mut [u8]) {
    if let Some(n) = bytes.iter().position(|&b| b == 0) {
        bytes[n..].fill(0);
    }
}

/// Printable ASCII, the only text perf's own strings hold.
pub(super) fn printable(text: &[u8]) -> bool {
    text.iter().all(|&b| (0x20..0x7f).contains(&b))
}

/// A file's path or a kernel name (`[kernel.kallsyms]`): a `/` or `[` first, and no
/// control characters (UTF-8 names are paths too).
pub(super) fn path_like(text: &[u8]) -> bool {
    matches!(text.first(), Some(b'/' | b'[')) && text.iter().all(|&b| b >= 0x20 && b != 0x7f)
}

/// A kernel release or perf version: a digit first, then letters, digits and `.-+_~`
/// (`6.1.0-13-amd64`, `4.14.117-perf+`, `6.1.187`). A hostname or a path read from the
/// wrong section (a feature bitmap with a bit cleared hands each section to the next
/// feature) is neither.
pub(super) fn release(text: &[u8]) -> bool {
    text.first().is_some_and(u8::is_ascii_digit)
        && text
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b".-+_~".contains(&b))
}

/// `uname -m` of the machines perf runs on.
pub(super) fn arch(text: &[u8]) -> bool {
    const ARCHES: &[&str] = &[
        "x86_64",
        "i386",
        "i486",
        "i586",
        "i686",
        "aarch64",
        "arm64",
        "arm",
        "armv5tel",
        "armv5tejl",
        "armv6l",
        "armv7l",
        "armv8l",
        "ppc",
        "ppc64",
        "ppc64le",
        "powerpc",
        "s390",
        "s390x",
        "mips",
        "mips64",
        "mipsel",
        "mips64el",
        "riscv32",
        "riscv64",
        "sparc",
        "sparc64",
        "loongarch64",
        "sh4",
        "parisc",
        "parisc64",
        "ia64",
        "alpha",
        "m68k",
        "csky",
        "arc",
        "xtensa",
        "microblaze",
    ];
    ARCHES.iter().any(|a| a.as_bytes() == text)
}

/// A CPU id as perf writes them: a vendor and numbers (`GenuineIntel,6,158,10`,
/// `IBM,8561,...`) or a hex register (`0x00000000410fd083`, `004e1202`).
pub(super) fn cpuid(text: &[u8]) -> bool {
    let hex = text.strip_prefix(b"0x").unwrap_or(text);
    text.contains(&b',') || (!hex.is_empty() && hex.iter().all(u8::is_ascii_hexdigit))
}

/// A cpu list (`0-3,8`), as sysfs prints them.
pub(super) fn cpu_list(text: &[u8]) -> bool {
    text.iter()
        .all(|&b| b.is_ascii_digit() || b == b',' || b == b'-')
}

/// A cpu mask (`00000000,0000000f`).
pub(super) fn cpu_mask(text: &[u8]) -> bool {
    text.iter()
        .all(|&b| b.is_ascii_hexdigit() || b == b',' || b == b'x')
}

/// Any printable text: event, group, PMU and capability names, CPU descriptions.
pub(super) fn any(text: &[u8]) -> bool {
    printable(text)
}

/// Keep a perf string whose text `valid` accepts, its padding zeroed.
pub(super) fn keep_string(s: &mut PerfString, valid: fn(&[u8]) -> bool) -> Fate {
    match c_text(&s.bytes) {
        // Empty says nothing (perf 4.14 left VERSION so).
        Some(text) if text.is_empty() || (printable(text) && valid(text)) => {
            zero_padding(&mut s.bytes);
            Fate::Write
        }
        Some(_) => Fate::unvouched("a string that is not what the field holds"),
        None => Fate::unvouched("a string without its NUL"),
    }
}

/// [`keep_string`] of each string, until one is refused.
pub(super) fn keep_strings<'a>(
    strings: impl IntoIterator<Item = &'a mut PerfString>,
    valid: fn(&[u8]) -> bool,
) -> Fate {
    for s in strings {
        let fate = keep_string(s, valid);
        if !matches!(fate, Fate::Write) {
            return fate;
        }
    }
    Fate::Write
}

/// A record's string renamed by `new` (which says `None` to keep it, padding zeroed);
/// whether it was renamed. A name without its NUL is refused: the record was not laid
/// out as its type says (its sample_id trailer read from the name, say).
pub(super) fn rename(
    field: &mut PaddedString,
    new: impl FnOnce(&[u8]) -> Option<String>,
) -> Result<bool, Fate> {
    let Some(text) = c_text(&field.bytes) else {
        return Err(Fate::unvouched("a name without its NUL"));
    };
    match new(text) {
        Some(n) => {
            *field = PaddedString::new(&n);
            Ok(true)
        }
        None => {
            zero_padding(&mut field.bytes);
            Ok(false)
        }
    }
}

/// A fixed-size NUL-padded name (THREAD_MAP's comm, BPF's program name) renamed by
/// `new`, cut to leave room for its NUL; whether it changed.
pub(super) fn rename_fixed(field: &mut [u8], new: impl FnOnce(&[u8]) -> Option<String>) -> bool {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    match new(&field[..end]) {
        Some(n) => {
            let n = n.as_bytes();
            let len = n.len().min(field.len().saturating_sub(1));
            field.fill(0);
            field[..len].copy_from_slice(&n[..len]);
            true
        }
        None => {
            field[end..].fill(0);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_strings_are_their_kind_of_text() {
        assert!(release(b"6.1.0-13-amd64") && release(b"4.14.117-perf+"));
        assert!(!release(b"zqxsecrethost") && !release(b"/tmp/x") && !release(b""));
        assert!(arch(b"x86_64") && !arch(b"zqxsecrethost"));
        assert!(cpuid(b"AuthenticAMD,26,2,1") && cpuid(b"0x00000000410fd083"));
        assert!(!cpuid(b"zqxsecrethost"));
        assert!(cpu_list(b"0-3,8") && !cpu_list(b"zqx"));
        assert!(cpu_mask(b"00000000,0000000f") && !cpu_mask(b"zqx"));
        let mut s = PerfString {
            bytes: b"x86_64\0stale".to_vec(),
        };
        assert!(matches!(keep_string(&mut s, arch), Fate::Write));
        assert_eq!(s.bytes, b"x86_64\0\0\0\0\0\0");
        let mut s = PerfString {
            bytes: b"x86_64".to_vec(),
        };
        assert!(matches!(keep_string(&mut s, arch), Fate::Unvouched(_)));
    }

    #[test]
    fn renamed_fixed_names_keep_their_room() {
        let mut comm = *b"zqxsecretnap\0\0\0\0";
        assert!(rename_fixed(&mut comm, |_| Some(
            "0123456789abcdef0".into()
        )));
        assert_eq!(&comm, b"0123456789abcde\0");
        let mut comm = *b"sh\0stale\0\0\0\0\0\0\0\0";
        assert!(!rename_fixed(&mut comm, |_| None));
        assert_eq!(&comm, b"sh\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    }
}
