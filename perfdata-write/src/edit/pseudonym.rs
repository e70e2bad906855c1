//! Stable pseudonyms for the names a recording holds (comms, file paths, the hostname,
//! command-line words): a prefix of the hex SHA-1 of the salt, a 0 byte and the name.
//! The same name gets the same pseudonym in every file anonymised with one salt, so
//! profiles stay comparable; without the salt, a pseudonym cannot be checked against a
//! guessed name.

use sha1::{Digest, Sha1};

use crate::error::{Result, WriteError};

/// Hex digits of a comm's pseudonym: perf's comms are at most 15 bytes plus the NUL of
/// TASK_COMM_LEN (16).
pub const COMM_LEN: usize = 12;
/// Hex digits of the pseudonyms of words (hostname, command-line arguments).
pub const WORD_LEN: usize = 12;
/// Hex digits of a path's pseudonym, after [`PATH_DIR`].
pub const PATH_LEN: usize = 16;
/// The directory every anonymised path is put in.
pub const PATH_DIR: &str = "/anon/";

/// Path prefixes kept as they are unless told otherwise: system libraries, and the
/// names perf and the kernel give memory that is no file (`//anon`, `/dev/zero`,
/// `/anon_hugepage`, SysV shared memory). Bracketed names (`[kernel.kallsyms]`,
/// `[vdso]`, `[heap]`, modules) are always kept: they are the kernel's.
pub const DEFAULT_KEEP_PATHS: &[&str] = &[
    "/usr/lib",
    "/usr/lib64",
    "/lib",
    "/lib64",
    "//anon",
    "/dev/zero",
    "/anon_hugepage",
    "/SYSV",
];

/// The first `len` hex digits of SHA-1(salt, 0, name).
pub fn pseudonym(salt: &[u8], name: &[u8], len: usize) -> String {
    let mut h = Sha1::new();
    h.update(salt);
    h.update([0u8]);
    h.update(name);
    let digest = h.finalize();
    let mut hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    hex.truncate(len);
    hex
}

/// A random salt (16 bytes from the kernel, as hex): pseudonyms that match no other run.
pub fn random_salt() -> Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| WriteError::io("reading /dev/urandom for a salt", e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The name before its first NUL.
fn c_str(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// The kind (`anon:`, `anon_shmem:`) and name of a name a program gave its anonymous
/// memory (`prctl(PR_SET_VMA_ANON_NAME)`), as /proc/PID/maps and perf's synthesized
/// MMAPs show it: `[anon:NAME]`.
fn anon_vma_name(path: &[u8]) -> Option<(&'static str, &[u8])> {
    let inner = path
        .strip_prefix(b"[")?
        .strip_suffix(b"]")
        .unwrap_or(&path[1..]);
    ["anon:", "anon_shmem:"]
        .into_iter()
        .find_map(|kind| Some((kind, inner.strip_prefix(kind.as_bytes())?)))
}

/// Which names are kept and which get pseudonyms, and the salt they are made with.
#[derive(Debug, Clone)]
pub struct Pseudonyms {
    salt: Vec<u8>,
    keep_paths: Vec<String>,
    keep_comms: Vec<Vec<u8>>,
}

impl Pseudonyms {
    /// `keep_paths` are prefixes (whole path components: `/lib` keeps `/lib/x.so`,
    /// not `/library`); bracketed names are always kept. A salt must not be empty, a
    /// kept prefix must start with `/`, and a kept comm must fit in 15 bytes: anything
    /// else is refused here, before any output is written.
    pub fn new(salt: &str, keep_paths: Vec<String>, keep_comms: Vec<String>) -> Result<Self> {
        let bad = |what: String| Err(WriteError::unsupported(None, what));
        if salt.is_empty() {
            return bad(
                "the salt is empty: give a secret, or leave --salt out for a random one".into(),
            );
        }
        for p in &keep_paths {
            if !p.starts_with('/') && !p.starts_with('[') {
                return bad(format!("kept path prefix {p:?} must start with '/' or '['"));
            }
        }
        for c in &keep_comms {
            if c.is_empty() || c.len() > 15 || c.contains('\0') {
                return bad(format!(
                    "kept comm {c:?} cannot be a comm: 1 to 15 bytes without NUL"
                ));
            }
        }
        Ok(Pseudonyms {
            salt: salt.as_bytes().to_vec(),
            keep_paths,
            keep_comms: keep_comms.into_iter().map(String::into_bytes).collect(),
        })
    }

    /// The comm's pseudonym, `None` when it is kept (or empty, as THREAD_MAP leaves
    /// the comms it does not know). `comm` may carry NUL padding.
    pub fn comm(&self, comm: &[u8]) -> Option<String> {
        let comm = c_str(comm);
        if comm.is_empty() || self.keep_comms.iter().any(|k| k == comm) {
            return None;
        }
        Some(pseudonym(&self.salt, comm, COMM_LEN))
    }

    /// The pseudonym of a word (hostname, command-line argument); empty stays empty.
    pub fn word(&self, word: &[u8]) -> String {
        let word = c_str(word);
        if word.is_empty() {
            return String::new();
        }
        pseudonym(&self.salt, word, WORD_LEN)
    }

    /// Whether a path is under a kept prefix (or a bracketed kernel name: not a name a
    /// program gave its anonymous memory, `[anon:NAME]`).
    pub fn keeps_path(&self, path: &[u8]) -> bool {
        let path = c_str(path);
        if path.is_empty() || (path.starts_with(b"[") && anon_vma_name(path).is_none()) {
            return true;
        }
        self.keep_paths.iter().any(|p| {
            let p = p.as_bytes();
            path.starts_with(p)
                && (path.len() == p.len() || p.ends_with(b"/") || path[p.len()] == b'/')
        })
    }

    /// The path's pseudonym (`/anon/` and hex digits), `None` when it is kept. The
    /// whole path goes: a binary's directory names its owner as much as its name does.
    /// A program's name for its anonymous memory keeps its form: `[anon:` and the
    /// name's pseudonym.
    pub fn path(&self, path: &[u8]) -> Option<String> {
        if self.keeps_path(path) {
            return None;
        }
        if let Some((kind, name)) = anon_vma_name(c_str(path)) {
            return Some(format!("[{kind}{}]", self.word(name)));
        }
        Some(format!(
            "{PATH_DIR}{}",
            pseudonym(&self.salt, c_str(path), PATH_LEN)
        ))
    }

    /// A cgroup path's pseudonym; the root cgroup `/` is kept.
    pub fn cgroup(&self, path: &[u8]) -> Option<String> {
        if c_str(path) == b"/" {
            return None;
        }
        self.path(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Pseudonyms {
        let keep = DEFAULT_KEEP_PATHS.iter().map(|s| s.to_string()).collect();
        Pseudonyms::new("pepper", keep, vec!["bash".into()]).unwrap()
    }

    #[test]
    fn pseudonyms_are_sha1_prefixes() {
        // SHA-1("pepper\0secret"), from `printf 'pepper\0secret' | sha1sum`.
        assert_eq!(
            pseudonym(b"pepper", b"secret", 40),
            "4cfce894c145b78d83cea9b9fe8b9c89ed1f9933"
        );
        let n = names();
        assert_eq!(n.comm(b"secret\0\0").as_deref(), Some("4cfce894c145"));
        assert_eq!(n.comm(b"bash\0"), None);
        assert_eq!(n.comm(b"\0\0"), None);
        assert_eq!(n.word(b""), "");
        assert_eq!(n.path(b"\0"), None);
        assert_eq!(n.word(b"secret"), "4cfce894c145");
    }

    #[test]
    fn kept_paths_are_whole_components() {
        let n = names();
        for kept in [
            &b"/usr/lib/x86_64-linux-gnu/libc.so.6\0"[..],
            b"/lib",
            b"[kernel.kallsyms]_text",
            b"[vdso]",
            b"//anon",
        ] {
            assert_eq!(n.path(kept), None, "{}", String::from_utf8_lossy(kept));
        }
        // A program's name for its memory is no kernel name.
        let secret = n.word(b"zqxsecret");
        let anon = n.path(b"[anon:zqxsecret]\0").unwrap();
        assert_eq!(anon, format!("[anon:{secret}]"));
        assert_eq!(
            n.path(b"[anon_shmem:zqxsecret]").unwrap(),
            format!("[anon_shmem:{secret}]")
        );
        assert_eq!(n.path(b"[heap]"), None);
        let p = n.path(b"/library/secret\0\0").unwrap();
        assert_eq!(p, "/anon/62a6908b3baa434d");
        assert_eq!(n.cgroup(b"/\0"), None);
        assert!(n.cgroup(b"/user.slice").is_some());
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(Pseudonyms::new("", vec![], vec![]).is_err());
        assert!(Pseudonyms::new("s", vec!["usr".into()], vec![]).is_err());
        assert!(Pseudonyms::new("s", vec![], vec!["a-very-long-command".into()]).is_err());
        let a = random_salt().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, random_salt().unwrap());
    }
}
