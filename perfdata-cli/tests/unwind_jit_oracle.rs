//! `perf record --call-graph dwarf` of node running JavaScript (tests/jit/levels.js:
//! `hotLeaf` called from `midTwo`, `midOne` and `outerJs`) with `--perf-basic-prof
//! --interpreted-frames-native-stack`, recorded here, against perf 6.1's own unwinding
//! (libunwind), sample by sample (issue #27).
//!
//! What perf does, measured: its stacks end at the first JIT frame (code in anonymous
//! memory that `/tmp/perf-PID.map` names), for perf's `find_proc_info` fails there and
//! libunwind then stops without guessing; the callers of the JavaScript functions are
//! not in perf's stacks, so they must not be in ours. Where a frame is in node's own
//! `.text` but no FDE covers it (V8's embedded builtins, `Builtins_*`), libunwind guesses
//! the caller by the frame pointer (perfdata-report/src/unwind/frame_chain.rs); our
//! stacks through such frames must be perf's. Without node or perf the test says it
//! skips.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::Command;

use perfdata_tests::{perf_output, run_perfdata};

/// Removes the map file node wrote (named by its pid) when the test ends, however.
struct MapFile(Option<PathBuf>);

impl Drop for MapFile {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// One sample of `perf script --no-inline`'s default output: its header line and its
/// frames (the address, then the rest of the line: symbol and DSO).
struct Sample {
    head: String,
    frames: Vec<(String, String)>,
}

impl Sample {
    /// Whether frame `i` is JIT code (named by a `/tmp/perf-PID.map`).
    fn jit(&self, i: usize) -> bool {
        self.frames[i].1.contains("(/tmp/perf-")
    }

    /// The frame addresses (perf's last frame of address 0 less one, a return address
    /// read beyond the stack copy, among them: perfdata gives it too).
    fn addresses(&self) -> Vec<&str> {
        self.frames.iter().map(|f| f.0.as_str()).collect()
    }
}

/// The samples of `perf script --no-inline`'s (or perfdata's) default output.
fn samples(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    while let Some(head) = lines.next() {
        let mut frames = Vec::new();
        while let Some(l) = lines.next_if(|l| l.starts_with('\t')) {
            let (ip, rest) = l.trim().split_once(' ').unwrap_or_default();
            frames.push((ip.to_string(), rest.trim().to_string()));
        }
        out.push(Sample {
            head: head.to_string(),
            frames,
        });
    }
    out
}

#[perfdata_oracle::needs(perf, node)]
#[test]
fn node_dwarf_stacks_are_perfs_through_builtins_and_end_at_jit_code() {
    let dir = tempfile::tempdir().expect("temp dir");
    let script = perfdata_tests::workspace_root().join("perfdata-cli/tests/jit/levels.js");
    // node writes its isolate log into its working directory: the temporary one. node
    // is perf's own child, not exec'd from a shell: a process that execs keeps the maps
    // it had in perf's view, and perf's unwinding then goes wrong in ld.so and libc
    // (unwind_fork_oracle's stale maps), which is not what this test is about.
    let data = dir.path().join("node.data");
    let out = Command::new("perf")
        .current_dir(dir.path())
        .args([
            "record",
            "-q",
            "--call-graph",
            "dwarf",
            "-F",
            "999",
            "-m",
            "2048",
        ])
        .arg("-o")
        .arg(&data)
        .args(["--", "node", "--perf-basic-prof"])
        .arg("--interpreted-frames-native-stack")
        .arg(&script)
        .output()
        .expect("perf record runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without inlined frames: perf 6.1 asks addr2line for node's (a 40-second wait on
    // its debug info, where the walk takes a second); the frames' addresses are the same.
    let out = perf_output(&["script", "--no-inline"], &data);
    assert!(out.status.success(), "perf script failed");
    let perf_text = String::from_utf8_lossy(&out.stdout).into_owned();
    let _map = MapFile(perf_text.find("(/tmp/perf-").map(|i| {
        let name = &perf_text[i + 1..];
        PathBuf::from(&name[..name.find(')').expect("map file name")])
    }));
    let args: Vec<&OsStr> = vec![
        OsStr::new("script"),
        OsStr::new("--no-inline"),
        data.as_os_str(),
    ];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let perf = samples(&perf_text);
    let ours = samples(&String::from_utf8(out.stdout).expect("UTF-8"));
    assert_eq!(perf.len(), ours.len(), "samples");

    // (equal, of) over all samples, those with a JIT frame, those through a builtin.
    let (mut all, mut jit, mut builtin) = ((0, 0), (0, 0), (0, 0));
    let mut differ = Vec::new();
    for (p, o) in perf.iter().zip(&ours) {
        assert_eq!(p.head, o.head);
        // perf's stack never goes on past JIT code, and ours must not either.
        for s in [p, o] {
            let n = s.addresses().len();
            if let Some(i) = (0..n).find(|&i| s.jit(i)) {
                assert_eq!(i + 1, n, "a stack goes on past JIT code: {:?}", s.frames);
            }
        }
        let same = p.addresses() == o.addresses();
        let count = |c: &mut (u32, u32)| {
            c.0 += u32::from(same);
            c.1 += 1;
        };
        count(&mut all);
        if (0..p.frames.len()).any(|i| p.jit(i)) || (0..o.frames.len()).any(|i| o.jit(i)) {
            count(&mut jit);
        }
        // A builtin with a caller: perf found the caller by the frame-chain guess.
        let n = p.addresses().len();
        if (0..n.saturating_sub(1)).any(|i| p.frames[i].1.starts_with("Builtins_")) {
            count(&mut builtin);
        }
        if !same && differ.len() < 5 {
            differ.push(format!(
                "{}\n perf {:?}\n ours {:?}",
                p.head, p.frames, o.frames
            ));
        }
    }
    eprintln!(
        "stacks equal: {} of {} samples; with a JIT frame {} of {}; through a builtin {} of {}",
        all.0, all.1, jit.0, jit.1, builtin.0, builtin.1
    );
    let differ = differ.join("\n");
    // The hot loop is JIT code: most samples have a JIT frame.
    assert!(jit.1 * 2 > all.1, "JIT frames in {} of {}", jit.1, all.1);
    assert!(all.0 * 100 >= all.1 * 99, "{all:?}\n{differ}");
    assert!(jit.0 * 100 >= jit.1 * 99, "JIT {jit:?}\n{differ}");
    // Few samples are in node's start-up builtins (31 to 37 a run here), all perf's.
    assert!(
        builtin.1 >= 5,
        "only {} samples through a builtin",
        builtin.1
    );
    assert!(
        builtin.0 * 100 >= builtin.1 * 95,
        "builtins {builtin:?}\n{differ}"
    );
}
