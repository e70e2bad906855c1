//! Recordings made by a test: the fixture workload compiled into a temporary directory
//! (so its binary is there for symbolisation) and recorded with perf.

use std::path::{Path, PathBuf};
use std::process::Command;

use perfdata_tests::fixtures_dir;

/// Compile fixtures/workload.c as fixtures/README.md says, into `dir/spin`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_spin(dir: &Path) -> String {
    let spin = dir.join("spin");
    compile("gcc", &fixtures_dir().join("workload.c"), "-O1", &spin);
    spin.to_str().expect("utf-8 path").to_string()
}

/// Compile tests/workload/threads.c (main and a thread it starts later, both busy)
/// into `dir/threads`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_threads(dir: &Path) -> String {
    let exe = dir.join("threads");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/threads.c");
    compile_with("gcc", &src, &["-O1", "-pthread"], &exe);
    exe.to_str().expect("utf-8 path").to_string()
}

/// Compile tests/workload/anon_frames.c (x86-64: frames in a writable and an executable
/// anonymous map) into `dir/anon_frames`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_anon_frames(dir: &Path) -> String {
    let exe = dir.join("anon_frames");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/anon_frames.c");
    compile("gcc", &src, "-O1", &exe);
    exe.to_str().expect("utf-8 path").to_string()
}

/// Compile tests/srcline/hot.c (the srcline and inline tests' busy loop, whose step is
/// inlined at -O2) with `-g` and `opt` (`-O0`, `-O2`) into `dir/hot<opt>`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_hot(dir: &Path, opt: &str) -> PathBuf {
    let exe = dir.join(format!("hot{opt}"));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/hot.c");
    compile("gcc", &src, opt, &exe);
    exe
}

/// Compile tests/srcline/nested.c (work, with step inlined into it and mix into step)
/// with `-g -O2` into `dir/nested`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_nested(dir: &Path) -> PathBuf {
    let exe = dir.join("nested");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/nested.c");
    compile("gcc", &src, "-O2", &exe);
    exe
}

/// Compile tests/srcline/first_name.cpp (templates in an anonymous namespace, inlined
/// without linkage names) with `g++ -g -O2` into `dir/first_name`; None without g++.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_first_name(dir: &Path) -> Option<PathBuf> {
    Command::new("g++").arg("--version").output().ok()?;
    let exe = dir.join("first_name");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/first_name.cpp");
    compile("g++", &src, "-O2", &exe);
    Some(exe)
}

/// Compile tests/workload/labels.c (x86-64: sized functions with labels inside them)
/// with `-O1` into `dir/labels`.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_labels(dir: &Path) -> String {
    let exe = dir.join("labels");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/labels.c");
    compile("gcc", &src, "-O1", &exe);
    exe.to_str().expect("utf-8 path").to_string()
}

/// Compile tests/workload/swap.cpp (std::swap<int> hot, called: `-O0`) with
/// `g++ -g -O0` into `dir/swap`; None when g++ is not installed.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_swap(dir: &Path) -> Option<PathBuf> {
    Command::new("g++").arg("--version").output().ok()?;
    let exe = dir.join("swap");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workload/swap.cpp");
    compile("g++", &src, "-O0", &exe);
    Some(exe)
}

/// Compile tests/srcline/hot.cpp (C++ templates and references, for demangling) with
/// `g++ -g -O1` into `dir/hotpp`; None when g++ is not installed.
#[allow(dead_code)] // not every test that shares this module uses it
pub fn build_hot_cpp(dir: &Path) -> Option<PathBuf> {
    Command::new("g++").arg("--version").output().ok()?;
    let exe = dir.join("hotpp");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/srcline/hot.cpp");
    compile("g++", &src, "-O1", &exe);
    Some(exe)
}

/// `CC -g OPT -fno-omit-frame-pointer -o EXE SRC`, its exit status checked.
fn compile(cc: &str, src: &Path, opt: &str, exe: &Path) {
    compile_with(cc, src, &[opt], exe)
}

/// `CC -g FLAGS... -fno-omit-frame-pointer -o EXE SRC`, its exit status checked.
fn compile_with(cc: &str, src: &Path, flags: &[&str], exe: &Path) {
    run(Command::new(cc)
        .args(flags)
        .args(["-g", "-fno-omit-frame-pointer", "-o"])
        .arg(exe)
        .arg(src));
}

/// Run a compiler, its exit status checked (its stderr in the panic).
pub fn run(compiler: &mut Command) {
    let out = compiler.output().expect("the compiler runs");
    assert!(
        out.status.success(),
        "{compiler:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `perf record ARGS -o dir/file -- COMMAND`, its exit status checked.
pub fn record(dir: &Path, file: &str, args: &[&str], command: &[&str]) -> PathBuf {
    let out = dir.join(file);
    let st = Command::new("perf")
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(&out)
        .arg("--")
        .args(command)
        .output()
        .expect("perf record runs");
    assert!(
        st.status.success(),
        "perf record {args:?}: {}",
        String::from_utf8_lossy(&st.stderr)
    );
    out
}
