//! `perfdata buildid list` and `buildid remap` against perf 6.1: the list must be what
//! `perf buildid-list -i` prints for every input perf reads cleanly; after a remap perf
//! must list the new ids and paths, and `perf script -F ip,dso` show the new paths; a
//! remap that changes nothing gives the input's bytes back (or identity `convert`'s).

use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

use crate::common;
use common::perf_run;
use perfdata_tests::{all_inputs, fixtures_dir, name, perf_available, run_perfdata};

/// `perf ARGS -i input`: (stdout, whether perf read it cleanly).
fn perf(args: &[&str], input: &Path) -> (String, bool) {
    let run = perf_run(args, input);
    let clean = run.clean();
    (run.stdout, clean)
}

/// perf's output, which must be clean and non-empty.
fn perf_ok(args: &[&str], input: &Path) -> String {
    let (out, clean) = perf(args, input);
    assert!(clean, "perf {args:?} -i {} failed", input.display());
    assert!(!out.trim().is_empty(), "perf {args:?} printed nothing");
    out
}

fn perfdata(args: &[&OsStr]) -> Output {
    run_perfdata(env!("CARGO_BIN_EXE_perfdata"), args, None)
}

fn remap(input: &Path, out: &Path, args: &[&str]) -> Output {
    let mut all = vec![
        OsStr::new("buildid"),
        OsStr::new("remap"),
        input.as_os_str(),
        OsStr::new("-o"),
        out.as_os_str(),
    ];
    all.extend(args.iter().map(OsStr::new));
    perfdata(&all)
}

#[perfdata_oracle::needs(perf)]
#[test]
fn list_is_what_perf_lists() {
    assert!(perf_available());
    let (mut compared, mut skipped) = (0, Vec::new());
    for input in all_inputs() {
        let (expected, clean) = perf(&["buildid-list"], &input);
        if !clean {
            // perf 6.1 cannot read it (compressed pipes, old formats): no oracle.
            skipped.push(name(&input));
            continue;
        }
        let out = perfdata(&[OsStr::new("buildid"), OsStr::new("list"), input.as_os_str()]);
        assert!(out.status.success(), "{}", name(&input));
        let got = String::from_utf8_lossy(&out.stdout);
        assert_eq!(got, expected, "{}", name(&input));
        compared += usize::from(!expected.trim().is_empty());
    }
    eprintln!("compared {compared} non-empty lists; perf failed on {skipped:?}");
    // Every fixture but the three perf 6.1 cannot read lists something.
    assert!(compared >= 20, "only {compared} lists compared");
}

/// The first build id and path `perf buildid-list` prints for a user binary.
fn user_binary(listing: &str) -> (String, String) {
    listing
        .lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(id, path)| !id.is_empty() && path.starts_with("/tmp/"))
        .map(|(id, path)| (id.to_string(), path.to_string()))
        .expect("a build id for /tmp/perfdata-spin")
}

#[perfdata_oracle::needs(perf)]
#[test]
fn remapped_ids_and_paths_are_what_perf_sees() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let new_id = "0123456789abcdef0123456789abcdef01234567";
    // The BUILD_ID feature, MMAP2 build ids, HEADER_BUILD_ID records of a pipe.
    for file in [
        "file-cpu-clock.data",
        "file-buildid-mmap.data",
        "pipe-inject.data",
    ] {
        let input = fixtures_dir().join(file);
        let before = perf_ok(&["buildid-list"], &input);
        let (old_id, path) = user_binary(&before);
        let out = dir.path().join(file);
        let map = format!("{old_id}={new_id}");
        let res = remap(
            &input,
            &out,
            &["--map", &map, "--path", "/tmp/=/opt/moved/"],
        );
        assert!(
            res.status.success(),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
        // The same remap on the owned tree, written back: the same bytes.
        let on_tree = dir.path().join(format!("tree-{file}"));
        remap_tree(&input, &on_tree, &map, "/tmp/=/opt/moved/");
        assert!(
            std::fs::read(&on_tree).unwrap() == std::fs::read(&out).unwrap(),
            "{file}: the tree's remap differs from the stream's"
        );
        let new_path = path.replacen("/tmp/", "/opt/moved/", 1);
        let expected = before.replace(&format!("{old_id} {path}"), &format!("{new_id} {new_path}"));
        assert_ne!(expected, before);
        let script_in = perf_ok(&["script", "-F", "ip,dso"], &input);
        assert!(script_in.contains(&format!("({path})")));
        for out in [&out, &on_tree] {
            assert_eq!(perf_ok(&["buildid-list"], out), expected, "{file}");
            // Samples now point at the new path.
            let script_out = perf_ok(&["script", "-F", "ip,dso"], out);
            assert_eq!(
                script_out,
                script_in.replace(&format!("({path})"), &format!("({new_path})")),
                "{file}"
            );
        }
    }
}

/// `buildid remap --map MAP --path PATH` done on the owned tree (read with the records
/// inside compressed records) and written back through `perfdata_write::TreeSource`.
fn remap_tree(input: &Path, out: &Path, map: &str, path: &str) -> u64 {
    use perfdata_write::edit::{parse_id_pair, parse_path_pair, Remap};
    use perfdata_write::{Conversion, Sink, TreeSource};
    let read = perfdata_core::ReadOptions::Contents;
    let mut tree = perfdata_core::PerfData::read_with(input, read).unwrap();
    let mut remap = Remap::new(
        vec![parse_id_pair(map).unwrap()],
        vec![parse_path_pair(path).unwrap()],
    );
    remap.apply(&mut tree).unwrap();
    Conversion::new(TreeSource::new(&tree))
        .write(Sink::path(out).unwrap())
        .unwrap();
    remap.changed
}

#[test]
fn a_remap_that_changes_nothing_gives_the_input_back() {
    let dir = tempfile::tempdir().unwrap();
    let (mut identical, mut as_convert, mut tree_only) = (0, 0, 0);
    for input in all_inputs() {
        let out = dir.path().join("same.data");
        if !remap(&input, &out, &["--map", "00=11"]).status.success() {
            continue; // not a recording, or a corrupt one: the reader tests cover those
        }
        let b = std::fs::read(&out).unwrap();
        // The tree's remap matches nothing either.
        let on_tree = dir.path().join("tree.data");
        assert_eq!(remap_tree(&input, &on_tree, "00=11", "/no/such/=/x/"), 0);
        let t = std::fs::read(&on_tree).unwrap();
        // A directory becomes one file: only convert's output compares.
        if input.is_file() && std::fs::read(&input).unwrap() == b {
            identical += 1;
            assert!(t == b, "{}: the tree's differs", name(&input));
            continue;
        }
        // Where identity `convert` changes the bytes (layouts perf would not write),
        // remap gives what convert gives.
        let conv = dir.path().join("convert.data");
        let res = perfdata(&[
            OsStr::new("convert"),
            input.as_os_str(),
            OsStr::new("-o"),
            conv.as_os_str(),
        ]);
        assert!(res.status.success());
        let c = std::fs::read(&conv).unwrap();
        // The tree gives what identity convert gives, compressed records included: it
        // writes back the compressed records it was read from.
        assert!(
            t == c,
            "{}: the tree's differs from convert's",
            name(&input)
        );
        if c == b {
            as_convert += 1;
            continue;
        }
        // The stream compresses the records inside compressed records again.
        let stats = perfdata(&[OsStr::new("stats"), input.as_os_str()]);
        let text = String::from_utf8_lossy(&stats.stdout);
        assert!(text.contains("COMPRESSED"), "{} changed", name(&input));
        tree_only += usize::from(input.is_file() && std::fs::read(&input).unwrap() == t);
    }
    eprintln!(
        "{identical} byte-identical, {as_convert} as identity convert, \
         {tree_only} compressed ones byte-identical on the tree only"
    );
    assert!(identical >= 20, "only {identical} identical");
    // The three compressed fixtures at least.
    assert!(
        tree_only >= 3,
        "only {tree_only} compressed inputs identical on the tree"
    );
}

#[test]
fn bad_maps_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixtures_dir().join("file-cpu-clock.data");
    let map_file = dir.path().join("map.txt");
    std::fs::write(&map_file, "aa bb\nnot-hex cc\n").unwrap();
    let map_file = map_file.to_str().unwrap().to_string();
    let cases: [(&[&str], &str); 5] = [
        (&["--map", "aabb"], "expected OLD=NEW"),
        (&["--map", "xx=aa"], "not hex"),
        (&["--map", "aa=bbb"], "hex digits"),
        (&["--map-file", &map_file], "line 2"),
        (&[], "nothing to remap"),
    ];
    for (args, message) in cases {
        let out = dir.path().join("out.data");
        let res = remap(&input, &out, args);
        let stderr = String::from_utf8_lossy(&res.stderr);
        assert!(!res.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!out.exists());
    }
}

#[test]
fn list_as_json_has_the_same_entries() {
    let input = fixtures_dir().join("strip-multi.data");
    let text = perfdata(&[OsStr::new("buildid"), OsStr::new("list"), input.as_os_str()]);
    let json = perfdata(&[
        OsStr::new("buildid"),
        OsStr::new("list"),
        input.as_os_str(),
        OsStr::new("--json"),
    ]);
    assert!(text.status.success() && json.status.success());
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&json.stdout).unwrap();
    let lines: Vec<String> = entries
        .iter()
        .map(|e| {
            format!(
                "{:<40} {}",
                e["build_id"].as_str().unwrap(),
                e["path"].as_str().unwrap()
            )
        })
        .collect();
    let text = String::from_utf8_lossy(&text.stdout);
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines, text.lines().collect::<Vec<_>>());
}
