//! `--symfs DIR` moves the build-id cache too: perf 6.1's `symbol__config_symfs` takes
//! `DIR/.debug` as the cache, not `$HOME/.debug`. Before, perfdata script and report
//! under a symfs named frames from `$HOME/.debug` where perf prints `[unknown]`, and
//! left unnamed those the symfs's own cache names.

use std::path::Path;
use std::process::Command;

use perfdata_tests::perf_available;

/// `perf script` (or perfdata's) `-F ip,sym,dso --symfs symfs` of `input`, HOME `home`.
fn script(perf: bool, input: &Path, symfs: &Path, home: &Path) -> String {
    let mut cmd = if perf {
        let mut c = Command::new("perf");
        c.args(["script", "-i"]);
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfdata"));
        c.arg("script");
        c
    };
    let out = cmd
        .arg(input)
        .args(["-F", "ip,sym,dso", "--symfs"])
        .arg(symfs)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Cache `binary` (build id `id`, hex) as perf's build-id cache lays it out: `elf`, and
/// `debug` where this machine has the binary's debug file.
fn cache(debug: &Path, binary: &Path, id: &str) {
    let dir = debug.join(".build-id").join(&id[..2]).join(&id[2..]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(binary, dir.join("elf")).unwrap();
    let debuginfo = format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
    if Path::new(&debuginfo).is_file() {
        std::fs::copy(&debuginfo, dir.join("debug")).unwrap();
    }
}

fn unnamed(script: &str) -> usize {
    script.matches("[unknown] (/").count()
}

#[perfdata_oracle::needs(perf)]
#[test]
fn a_symfs_reads_its_own_build_id_cache_not_homes() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("sh.data");
    let st = Command::new("perf")
        .args(["record", "-N", "-q", "-o"])
        .arg(&data)
        .args(["--", "sh", "-c", "for i in $(seq 3000); do :; done"])
        .status()
        .unwrap();
    assert!(st.success());
    // Every user DSO with a build id, cached in HOME's .debug.
    let list = Command::new("perf")
        .args(["buildid-list", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    let (home, symfs) = (dir.path().join("home"), dir.path().join("symfs"));
    for line in String::from_utf8(list.stdout).unwrap().lines() {
        let Some((id, path)) = line.split_once(' ') else {
            continue;
        };
        if path.starts_with('/') && Path::new(path).is_file() {
            cache(&home.join(".debug"), Path::new(path), id);
        }
    }
    std::fs::create_dir_all(&symfs).unwrap();
    let apart = script(true, &data, &symfs, &home);
    assert_eq!(script(false, &data, &symfs, &home), apart);
    // The same cache under the symfs: perf names more frames, and perfdata the same.
    std::fs::rename(home.join(".debug"), symfs.join(".debug")).unwrap();
    let under = script(true, &data, &symfs, &home);
    assert!(unnamed(&under) < unnamed(&apart), "{apart}\n{under}");
    assert_eq!(script(false, &data, &symfs, &home), under);
}
