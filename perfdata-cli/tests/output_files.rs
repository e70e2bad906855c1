//! The files `convert` writes: their permissions, symlinked targets, a directory as the
//! output, and error messages that name the target.

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use perfdata_tests::{fixtures_dir, run_perfdata};

fn perfdata(args: &[&OsStr], stdin: Option<&[u8]>) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, stdin)
}

fn ok(out: &Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn samples(p: &Path) -> serde_json::Value {
    let out = perfdata(&["stats".as_ref(), "--json".as_ref(), p.as_os_str()], None);
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    v["records"].clone()
}

/// As perf writes its recordings (they hold paths and command lines): a new output is
/// 0600, from stdin, a directory or a file of another mode alike.
#[test]
fn outputs_from_stdin_or_a_directory_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let from_stdin = dir.path().join("stdin.data");
    let bytes = std::fs::read(fixtures_dir().join("pipe-cpu-clock.data")).unwrap();
    ok(&perfdata(
        &[
            "convert".as_ref(),
            "-".as_ref(),
            "-o".as_ref(),
            from_stdin.as_os_str(),
        ],
        Some(&bytes),
    ));
    assert_eq!(mode(&from_stdin), 0o600);

    let from_dir = dir.path().join("dir.data");
    let input = fixtures_dir().join("dir-threads.data");
    ok(&perfdata(
        &[
            "convert".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            from_dir.as_os_str(),
        ],
        None,
    ));
    assert_eq!(mode(&from_dir), 0o600);

    let input = dir.path().join("in.data");
    std::fs::copy(fixtures_dir().join("file-cpu-clock.data"), &input).unwrap();
    std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o640)).unwrap();
    let from_file = dir.path().join("file.data");
    ok(&perfdata(
        &[
            "convert".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            from_file.as_os_str(),
        ],
        None,
    ));
    assert_eq!(mode(&from_file), 0o600);
}

/// `--in-place` through a symlink rewrites the file it names and keeps the link.
#[test]
fn in_place_on_a_symlink_rewrites_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.data");
    std::fs::copy(fixtures_dir().join("file-cpu-clock.data"), &real).unwrap();
    let before = samples(&real);
    assert_eq!(before["SAMPLE"], 279);
    assert!(before.get("COMPRESSED").is_none());
    let link = dir.path().join("link.data");
    std::os::unix::fs::symlink("real.data", &link).unwrap();
    ok(&perfdata(
        &[
            "convert".as_ref(),
            "--compress".as_ref(),
            "--in-place".as_ref(),
            link.as_os_str(),
            "-o".as_ref(),
            link.as_os_str(),
        ],
        None,
    ));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_link(&link).unwrap(), Path::new("real.data"));
    let after = samples(&real);
    assert_eq!(after["SAMPLE"], 279);
    assert!(after["COMPRESSED"].as_u64().unwrap() >= 1, "{after}");
}

/// `-o DIR` is refused before the input is read: a damaged input would be reported
/// first otherwise.
#[test]
fn an_existing_directory_as_output_is_refused_first() {
    let dir = tempfile::tempdir().unwrap();
    let damaged = dir.path().join("damaged.data");
    std::fs::write(&damaged, b"PERFILE2 and then nothing a header needs").unwrap();
    let out = perfdata(
        &[
            "convert".as_ref(),
            damaged.as_os_str(),
            "-o".as_ref(),
            dir.path().as_os_str(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot write {}", dir.path().display()))
            && stderr.contains("directory"),
        "{stderr}"
    );
}

/// Errors name the output asked for, never the internal temp file.
#[test]
fn errors_name_the_target_not_the_temp_file() {
    let input = fixtures_dir().join("file-cpu-clock.data");
    let target = Path::new("/nonexistent-perfdata-dir/out.data");
    let out = perfdata(
        &[
            "convert".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            target.as_os_str(),
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&target.display().to_string()), "{stderr}");
    assert!(!stderr.contains(".perfdata-"), "{stderr}");
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}

/// An output that is the input is refused by every editing command, also when the input
/// is stdin redirected from it (`perfdata anonymize - -o x.data < x.data` replaced
/// x.data before issue #24) or a hard link to it: the file is untouched, the same inode
/// with the same bytes. `convert --in-place` still may.
#[test]
fn an_output_that_is_the_input_is_refused_also_through_stdin_or_a_hard_link() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let x = dir.path().join("x.data");
    let fixture = fixtures_dir().join("file-buildid-mmap.data");
    std::fs::copy(&fixture, &x).unwrap();
    let original = std::fs::read(&x).unwrap();
    let ino = std::fs::metadata(&x).unwrap().ino();
    let hard = dir.path().join("hard.data");
    std::fs::hard_link(&x, &hard).unwrap();
    let commands: [&[&str]; 4] = [
        &["convert", "--to-pipe"],
        &["strip", "--drop", "MMAP"],
        &["anonymize", "--salt", "s"],
        &["buildid", "remap", "--path", "/=/x/"],
    ];
    for command in commands {
        for input in [Path::new("-"), &hard] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
                .args(command)
                .arg(input)
                .arg("-o")
                .arg(&x)
                .stdin(std::fs::File::open(&x).unwrap())
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{command:?} {input:?}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("the output {} is the input", x.display())),
                "{command:?} {input:?}: {stderr}"
            );
            assert_eq!(std::fs::metadata(&x).unwrap().ino(), ino, "{command:?}");
            assert!(std::fs::read(&x).unwrap() == original, "{command:?}");
        }
    }
    // Allowed with --in-place: the conversion is read from stdin and replaces x.data.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(["convert", "--to-pipe", "--in-place", "-", "-o"])
        .arg(&x)
        .stdin(std::fs::File::open(&x).unwrap())
        .output()
        .unwrap();
    ok(&out);
    assert_ne!(std::fs::metadata(&x).unwrap().ino(), ino);
    // A pipe stream's header: the magic and a size of 16.
    let converted = std::fs::read(&x).unwrap();
    assert_eq!(&converted[..16], b"PERFILE2\x10\0\0\0\0\0\0\0");
    assert_eq!(samples(&x)["SAMPLE"], 117);
    assert_eq!(samples(&fixture)["SAMPLE"], 117);
}
