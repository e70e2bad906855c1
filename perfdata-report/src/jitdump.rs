//! JIT code named from a jitdump file (`jit-PID.dump`, perf's
//! tools/perf/Documentation/jitdump-specification.txt), as `perf inject --jit` names it:
//! a JIT that writes one (node `--perf-prof`, the JVM's and .NET's agents, QEMU, ...) maps
//! the file into its process as a marker, so the recording has an MMAP of it; perf inject
//! then reads the file and adds, for each function the JIT loaded or moved, an MMAP2 of
//! `DIR/jitted-PID-INDEX.so` (an ELF it writes holding the one function) at the load's
//! time. The replay does the same without writing any file: each load becomes a map of a
//! DSO of that name whose one symbol is the function (see
//! [`crate::process::Machine::process_jit_code`]), so report and the exports print perf's
//! rows of the injected recording.
//!
//! The file is read as it is found at the marker's path (or under `--symfs`), records
//! checked against the file's size; the function names are kept, the code is not.

use std::io::{BufReader, Read};
use std::path::Path;

/// The jitdump header's magic, `JiTD`, as the writing machine stores a u32.
const MAGIC: u32 = 0x4A69_5444;
/// JIT_CODE_LOAD: a function's code was loaded.
const CODE_LOAD: u32 = 0;
/// JIT_CODE_MOVE: a function's code moved.
const CODE_MOVE: u32 = 1;
/// JIT_CODE_UNWINDING_INFO: the next load's unwinding tables (their mapped size counts
/// into its map, as perf inject maps them after the code).
const UNWINDING_INFO: u32 = 4;
/// JITDUMP_FLAGS_ARCH_TIMESTAMP: the times are the CPU's timestamp counter, not the
/// recording's clock (perf converts them with the TIME_CONV record; not done here).
const ARCH_TIMESTAMP: u64 = 1;
/// Where perf's generated ELF puts the code (`GEN_ELF_TEXT_OFFSET`: after the ELF header
/// and one program header, rounded to 16): the map's pgoff, and the symbol's address.
pub const TEXT_OFFSET: u64 = 0x80;
/// Longest function name kept; perf's generated ELF takes any, but a name longer than
/// this is no name (a damaged record).
const NAME_MAX: usize = 64 * 1024;

/// One function the JIT loaded or moved: the map perf inject adds for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitCode {
    /// The record's time (the recording's clock when the JIT used perf's).
    pub time: u64,
    /// The process that loaded it (the DSO is named after the marker's).
    pub pid: i32,
    /// The thread that loaded it.
    pub tid: i32,
    /// The code's first address.
    pub start: u64,
    /// The map's length: the code, and the unwinding tables mapped after it.
    pub len: u64,
    /// The code's size (the symbol's).
    pub code_size: u64,
    /// The DSO's path: `DIR/jitted-PID-INDEX.so`, DIR the dump's directory.
    pub dso: String,
    /// The function's name, as the JIT wrote it.
    pub name: String,
}

/// The pid a jitdump marker's path names, when `filename` (an MMAP's) is one: its base
/// name is `jit-PID.dump` with PID the mapping process's, as perf's `jit_detect` asks.
pub fn marker_pid(filename: &str, pid: i32) -> Option<i32> {
    let base = filename.rsplit('/').next()?;
    let n: i32 = base
        .strip_prefix("jit-")?
        .strip_suffix(".dump")?
        .parse()
        .ok()?;
    (n == pid).then_some(n)
}

pub use crate::files::locate;

/// Read the functions of the jitdump at `path` (found for the marker `filename` of
/// process `pid`), in file order, and what went wrong, said as a warning: a file that
/// cannot be read or is no jitdump gives no function; damage after the header ends the
/// reading, the functions before it kept. Memory grows with the functions (their names),
/// not with the code.
pub fn read(path: &Path, filename: &str, pid: i32) -> (Vec<JitCode>, Option<String>) {
    match read_file(path, filename, pid) {
        Ok(read) => read,
        Err(e) => (
            Vec::new(),
            Some(format!("jitdump not read, its JIT code unnamed: {e}")),
        ),
    }
}

fn read_file(
    path: &Path,
    filename: &str,
    pid: i32,
) -> Result<(Vec<JitCode>, Option<String>), String> {
    let io = |e: std::io::Error| format!("{}: {e}", path.display());
    let file = crate::files::open_regular(path)
        .ok_or_else(|| format!("{}: not a readable regular file", path.display()))?;
    let size = file.metadata().map_err(io)?.len();
    let mut r = Reader {
        inner: BufReader::new(file),
        offset: 0,
        size,
        swap: false,
        path,
    };
    let header = r.bytes(40)?;
    let magic = u32::from_ne_bytes(header[0..4].try_into().unwrap_or_default());
    r.swap = match magic {
        MAGIC => false,
        m if m.swap_bytes() == MAGIC => true,
        _ => return Err(r.damaged(0, format!("not a jitdump (magic {magic:#x})"))),
    };
    let total = u64::from(r.u32_of(&header[8..12]));
    let flags = r.u64_of(&header[32..40]);
    if total < 40 {
        return Err(r.damaged(8, format!("header size {total} is below 40")));
    }
    r.skip(total - 40)?;
    let dir = filename.rsplit_once('/').map_or(".", |(d, _)| d);
    let dso = |index: u64| format!("{dir}/jitted-{pid}-{index}.so");
    let mut codes = Vec::new();
    let mut mapped_after = 0u64;
    let damage = loop {
        if r.offset == r.size {
            break None;
        }
        let at = r.offset;
        let prefix = match r.bytes(16) {
            Ok(p) => p,
            Err(e) => break Some(e),
        };
        let (id, total, time) = (
            r.u32_of(&prefix[0..4]),
            u64::from(r.u32_of(&prefix[4..8])),
            r.u64_of(&prefix[8..16]),
        );
        if total < 16 || total > r.size - at {
            break Some(r.damaged(at, format!("record size {total}")));
        }
        // The fixed fields and the name; the code after it is skipped, not read.
        let keep = (total - 16).min(48 + NAME_MAX as u64);
        let body = match r
            .bytes(keep)
            .and_then(|b| r.skip(total - 16 - keep).map(|()| b))
        {
            Ok(b) => b,
            Err(e) => break Some(e),
        };
        match id {
            CODE_LOAD if body.len() >= 40 => {
                let code_size = r.u64_of(&body[24..32]);
                let index = r.u64_of(&body[32..40]);
                let name = &body[40..];
                let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
                let name = String::from_utf8_lossy(&name[..end.min(NAME_MAX)]).into_owned();
                let len = if mapped_after > 0 {
                    code_size.next_multiple_of(8).saturating_add(mapped_after)
                } else {
                    code_size
                };
                mapped_after = 0;
                codes.push(JitCode {
                    time,
                    pid: r.u32_of(&body[0..4]) as i32,
                    tid: r.u32_of(&body[4..8]) as i32,
                    start: r.u64_of(&body[16..24]),
                    len,
                    code_size,
                    dso: dso(index),
                    name,
                });
            }
            CODE_MOVE if body.len() >= 48 => {
                // perf inject maps the moved code again, under the same file.
                let index = r.u64_of(&body[40..48]);
                let code_size = r.u64_of(&body[32..40]);
                let name = codes
                    .iter()
                    .rev()
                    .find(|c| c.dso == dso(index))
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                codes.push(JitCode {
                    time,
                    pid: r.u32_of(&body[0..4]) as i32,
                    tid: r.u32_of(&body[4..8]) as i32,
                    start: r.u64_of(&body[24..32]),
                    len: code_size,
                    code_size,
                    dso: dso(index),
                    name,
                });
            }
            UNWINDING_INFO if body.len() >= 24 => mapped_after = r.u64_of(&body[16..24]),
            _ => {}
        }
    };
    let arch_time = (flags & ARCH_TIMESTAMP != 0).then(|| {
        format!(
            "{}: its times are the CPU's timestamp counter, not converted: the functions may \
             be named at the wrong moments",
            path.display()
        )
    });
    Ok((codes, damage.or(arch_time)))
}

/// The file, read forward, its offset and size known.
struct Reader<'p> {
    inner: BufReader<std::fs::File>,
    offset: u64,
    size: u64,
    swap: bool,
    path: &'p Path,
}

impl Reader<'_> {
    /// The message of damage at `offset`.
    fn damaged(&self, offset: u64, what: String) -> String {
        format!(
            "{}: at byte offset {offset}: {what}; the functions after it are unnamed",
            self.path.display()
        )
    }

    /// `n` bytes, which the file must hold (checked against its size before allocating).
    fn bytes(&mut self, n: u64) -> Result<Vec<u8>, String> {
        if n > self.size.saturating_sub(self.offset) {
            return Err(self.damaged(self.offset, format!("{n} bytes past the end")));
        }
        let mut buf = vec![0; n as usize];
        self.inner
            .read_exact(&mut buf)
            .map_err(|e| self.damaged(self.offset, e.to_string()))?;
        self.offset += n;
        Ok(buf)
    }

    fn skip(&mut self, n: u64) -> Result<(), String> {
        if n > self.size.saturating_sub(self.offset) {
            return Err(self.damaged(self.offset, format!("{n} bytes past the end")));
        }
        let copied = std::io::copy(&mut (&mut self.inner).take(n), &mut std::io::sink())
            .map_err(|e| self.damaged(self.offset, e.to_string()))?;
        self.offset += copied;
        Ok(())
    }

    fn u32_of(&self, b: &[u8]) -> u32 {
        let v = u32::from_ne_bytes(b.try_into().unwrap_or_default());
        if self.swap {
            v.swap_bytes()
        } else {
            v
        }
    }

    fn u64_of(&self, b: &[u8]) -> u64 {
        let v = u64::from_ne_bytes(b.try_into().unwrap_or_default());
        if self.swap {
            v.swap_bytes()
        } else {
            v
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Vec<u8> {
        let mut h = Vec::new();
        for v in [MAGIC, 1, 40, 62, 0, 7] {
            h.extend(v.to_ne_bytes());
        }
        h.extend(5u64.to_ne_bytes());
        h.extend(0u64.to_ne_bytes());
        h
    }

    fn record(id: u32, time: u64, body: &[u8]) -> Vec<u8> {
        let mut r = Vec::new();
        r.extend(id.to_ne_bytes());
        r.extend((16 + body.len() as u32).to_ne_bytes());
        r.extend(time.to_ne_bytes());
        r.extend(body);
        r
    }

    fn load(addr: u64, size: u64, index: u64, name: &str) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend(7u32.to_ne_bytes());
        b.extend(8u32.to_ne_bytes());
        for v in [addr, addr, size, index] {
            b.extend(v.to_ne_bytes());
        }
        b.extend(name.as_bytes());
        b.push(0);
        b.extend(vec![0xcc; size as usize]);
        b
    }

    fn read_bytes(bytes: &[u8]) -> (Vec<JitCode>, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("jit-7.dump");
        std::fs::write(&path, bytes).unwrap();
        read(&path, "/tmp/x/jit-7.dump", 7)
    }

    #[test]
    fn loads_moves_and_unwinding_tables_become_maps_as_perf_inject_makes_them() {
        let mut f = header();
        f.extend(record(0, 10, &load(0x1000, 0x13, 3, "JS:*hot")));
        let mut unwinding = Vec::new();
        for v in [16u64, 8, 0x40] {
            unwinding.extend(v.to_ne_bytes());
        }
        f.extend(record(UNWINDING_INFO, 11, &unwinding));
        f.extend(record(0, 12, &load(0x2000, 0x10, 4, "_ZN3foo3barEv")));
        let mut mv = Vec::new();
        mv.extend(7u32.to_ne_bytes());
        mv.extend(9u32.to_ne_bytes());
        for v in [0x1000u64, 0x1000, 0x3000, 0x13, 3] {
            mv.extend(v.to_ne_bytes());
        }
        f.extend(record(CODE_MOVE, 13, &mv));
        let (codes, warning) = read_bytes(&f);
        assert_eq!(warning, None);
        let got: Vec<_> = codes
            .iter()
            .map(|c| {
                (
                    c.time,
                    c.tid,
                    c.start,
                    c.len,
                    c.code_size,
                    c.dso.as_str(),
                    c.name.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (10, 8, 0x1000, 0x13, 0x13, "/tmp/x/jitted-7-3.so", "JS:*hot"),
                // The unwinding tables are mapped after the code, 8-aligned.
                (
                    12,
                    8,
                    0x2000,
                    0x50,
                    0x10,
                    "/tmp/x/jitted-7-4.so",
                    "_ZN3foo3barEv"
                ),
                (13, 9, 0x3000, 0x13, 0x13, "/tmp/x/jitted-7-3.so", "JS:*hot"),
            ]
        );
    }

    #[test]
    fn damage_keeps_what_came_before_and_says_where() {
        let mut f = header();
        f.extend(record(0, 10, &load(0x1000, 0x13, 3, "first")));
        let at = f.len();
        // A record claiming 4 GiB: no allocation of it, the reading ends there.
        let mut bad = record(0, 11, &load(0x2000, 0x10, 4, "second"));
        bad[4..8].copy_from_slice(&u32::MAX.to_ne_bytes());
        f.extend(bad);
        let (codes, warning) = read_bytes(&f);
        assert_eq!(codes.len(), 1);
        let warning = warning.unwrap();
        assert!(warning.contains(&format!("byte offset {at}")), "{warning}");
        // Not a jitdump at all, and a file cut inside its header.
        let (codes, warning) = read_bytes(b"not a jitdump, not at all: 40 bytes long");
        assert!(codes.is_empty() && warning.unwrap().contains("not a jitdump"));
        let (codes, warning) = read_bytes(&header()[..20]);
        assert!(codes.is_empty() && warning.unwrap().contains("past the end"));
    }

    #[test]
    fn markers_are_jit_pid_dump_of_their_own_process() {
        assert_eq!(marker_pid("/tmp/d/jit-42.dump", 42), Some(42));
        assert_eq!(marker_pid("jit-42.dump", 42), Some(42));
        assert_eq!(marker_pid("/tmp/d/jit-42.dump", 43), None);
        assert_eq!(marker_pid("/tmp/d/jit-42.dumpx", 42), None);
        assert_eq!(marker_pid("/tmp/d/xjit-42.dump", 42), None);
    }
}
