//! The recordings an export is given: files, perf.data directories (`perf record
//! --threads`), directories of recordings, and globs the shell left alone.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// perf.data's magics (file mode, pipe mode, either byte order, and the old `PERFFILE`).
const MAGICS: [&[u8; 8]; 4] = [b"PERFILE2", b"2ELIFREP", b"PERFFILE", b"ELIFFREP"];

/// Whether `path` starts as a recording does.
fn is_recording(path: &Path) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| MAGICS.iter().any(|m| **m == head))
}

/// A perf.data directory: perf record --threads writes `data` and `data.N` in one.
fn is_perf_data_dir(path: &Path) -> bool {
    path.join("data").is_file()
}

/// Whether `name` matches `pattern` (`*` any run, `?` one character, no escapes).
fn matches(pattern: &[char], name: &[char]) -> bool {
    match (pattern.first(), name.first()) {
        (None, None) => true,
        (Some('*'), _) => {
            matches(&pattern[1..], name) || (!name.is_empty() && matches(pattern, &name[1..]))
        }
        (Some('?'), Some(_)) => matches(&pattern[1..], &name[1..]),
        (Some(p), Some(n)) if p == n => matches(&pattern[1..], &name[1..]),
        _ => false,
    }
}

/// The recordings `args` name, each once, in the order given (a directory's and a
/// glob's sorted by name): a file as it is (even one that is not a recording: its
/// reading says why); a perf.data directory as one recording; another directory as the
/// recordings in it (files that start with a perf.data magic, and perf.data
/// directories, not looked into further); a path that does not exist but has `*` or `?`
/// in its last component as the recordings that match it. Hidden entries are skipped.
pub fn expand(args: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let add = |p: PathBuf, out: &mut Vec<PathBuf>| {
        if !out.contains(&p) {
            out.push(p);
        }
    };
    for arg in args {
        let name = arg.file_name().map(|n| n.to_string_lossy().into_owned());
        let wild = name.as_deref().is_some_and(|n| n.contains(['*', '?']));
        if arg.is_dir() && !is_perf_data_dir(arg) {
            for p in listing(arg, None)? {
                add(p, &mut out);
            }
        } else if wild && !arg.exists() {
            let dir = match arg.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let found = listing(dir, name.as_deref())?;
            if found.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::NotFound,
                    format!("no recording matches {}", arg.display()),
                ));
            }
            for p in found {
                add(p, &mut out);
            }
        } else {
            add(arg.clone(), &mut out);
        }
    }
    Ok(out)
}

/// The recordings in `dir` (whose names match `pattern`, if given), sorted by name.
fn listing(dir: &Path, pattern: Option<&str>) -> io::Result<Vec<PathBuf>> {
    let pattern: Option<Vec<char>> = pattern.map(|p| p.chars().collect());
    let mut out = Vec::new();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    for e in entries {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let chars: Vec<char> = name.chars().collect();
        if pattern.as_ref().is_some_and(|p| !matches(p, &chars)) {
            continue;
        }
        let path = e.path();
        if (path.is_dir() && is_perf_data_dir(&path)) || (path.is_file() && is_recording(&path)) {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::matches;

    fn m(p: &str, n: &str) -> bool {
        matches(
            &p.chars().collect::<Vec<_>>(),
            &n.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn globs_match_as_the_shell_does() {
        assert!(m("*.data", "perf.data"));
        assert!(m("perf.data.*", "perf.data.2026112606"));
        assert!(!m("perf.data.*", "perf.data"));
        assert!(m("host-?.data", "host-1.data"));
        assert!(!m("host-?.data", "host-10.data"));
        assert!(m("*", ""));
    }
}
