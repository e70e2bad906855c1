//! Readers of the export formats and perf script's stacks, for the export oracle tests.
// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

pub mod decode;
pub mod firefox;
pub mod schema;
pub mod script;

use std::ffi::OsStr;
use std::path::Path;

use perfdata_tests::{name, run_perfdata};

/// `perfdata export PATH --format FORMAT -o DIR/NAME.FORMAT`: the output's bytes, which
/// must not be empty.
pub fn export(path: &Path, format: &str, dir: &Path) -> Vec<u8> {
    export_with(path, format, dir, &[])
}

/// [`export`] with more options (`--inline`).
pub fn export_with(path: &Path, format: &str, dir: &Path, extra: &[&str]) -> Vec<u8> {
    let out_file = dir.join(format!("{}.{format}", name(path)));
    let mut args: Vec<&OsStr> = vec![
        OsStr::new("export"),
        path.as_os_str(),
        OsStr::new("--format"),
        OsStr::new(format),
        OsStr::new("-o"),
        out_file.as_os_str(),
    ];
    args.extend(extra.iter().map(OsStr::new));
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "export --format {format} {}: {}",
        name(path),
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&out_file).expect("output written");
    assert!(
        !bytes.is_empty(),
        "{format} output of {} is empty",
        name(path)
    );
    bytes
}

/// `export --format folded` of `path` as line -> count.
pub fn folded(path: &Path, dir: &Path) -> std::collections::BTreeMap<String, u64> {
    String::from_utf8(export(path, "folded", dir))
        .expect("UTF-8")
        .lines()
        .map(|l| {
            let (stack, n) = l.rsplit_once(' ').expect("stack count");
            (stack.to_string(), n.parse().expect("count"))
        })
        .collect()
}
