//! `perfdata synth --dso-dir` against perf 6.1: the DSOs are real ELF files with a
//! symbol table, so `perf report --sort comm,pid,dso,sym` shows exactly the samples per
//! command, thread, DSO and function the spec asked for, and `perf script -F ip,sym`
//! names every frame of the call tree.

use crate::synth_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use perfdata_synth::{Stop, Workload, WorkloadSpec};
use perfdata_tests::perf_available;
use synth_support::*;

type Key = (String, i32, String, String);
type Counts = BTreeMap<Key, u64>;

/// `perf report --sort comm,pid,dso,sym -n --show-total-period`: the cell per (comm,
/// tid, DSO name, symbol).
fn symbol_counts(path: &Path) -> BTreeMap<Key, Cell> {
    let mut counts = BTreeMap::new();
    // 21.50%  43  4300000  synth1  10003:synth1  libsynth0.so  [.] synth0_fn1
    for f in report_rows(path, "comm,pid,dso,sym", 8) {
        assert_eq!(f[6], "[.]", "a user-space symbol: {f:?}");
        let key = (f[3].clone(), pid_of(&f[4]), f[5].clone(), f[7].clone());
        assert!(
            counts.insert(key, Cell::of_row(&f)).is_none(),
            "one row per key: {f:?}"
        );
    }
    counts
}

/// A temp dir with a `dsos` directory in it, and that directory's path.
fn dirs() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let dso_dir = dir.path().join("dsos");
    std::fs::create_dir(&dso_dir).unwrap();
    (dir, dso_dir)
}

/// [`hand_spec`] as JSON with its DSOs in `dso_dir`: by hand, 1000 samples over a
/// total weight of 10 x 5 give each (thread, function) cell 20 x its weight, so a
/// thread of weight w has 20w in each function of DSO 0, 60w in DSO 1's first and
/// none in its second (weight 0).
#[perfdata_oracle::needs(perf)]
#[test]
fn report_shows_the_samples_per_function_of_the_hand_weights() {
    assert!(perf_available());
    let (dir, dso_dir) = dirs();
    let mut expected = Counts::new();
    for (i, w) in [1u64, 2, 3, 4].into_iter().enumerate() {
        let (comm, tid) = (format!("synth{}", i / 2), 10_000 + i as i32);
        for (dso, sym, n) in [
            ("libsynth0.so", "synth0_fn0", 20 * w),
            ("libsynth0.so", "synth0_fn1", 20 * w),
            ("libsynth1.so", "synth1_fn0", 60 * w),
        ] {
            expected.insert((comm.clone(), tid, dso.into(), sym.into()), n);
        }
    }
    assert_eq!(expected.values().sum::<u64>(), 1000);
    let json = r#"{"seed": 3, "processes": 2, "threads_per_process": 2, "dsos": 2,
        "functions_per_dso": 2, "samples": 1000, "events": "task-clock",
        "thread_weights": [1, 2, 3, 4], "function_weights": [1, 1, 3, 0]}"#;
    let path = synth_spec(
        dir.path(),
        "hand",
        json,
        &["--dso-dir", dso_dir.to_str().unwrap()],
    );
    // The default period, 100,000 ns, in every sample.
    assert_eq!(symbol_counts(&path), cells(&expected, 100_000));
}

/// The spec of the seeded test, as the command line builds it.
fn seeded_spec(dso_dir: &Path) -> WorkloadSpec {
    WorkloadSpec {
        seed: 11,
        processes: 3,
        threads_per_process: 2,
        dsos: 3,
        functions_per_dso: 5,
        stop: Stop::Samples(3000),
        callchain_depth: 4,
        dso_dir: Some(dso_dir.to_path_buf()),
        ..Default::default()
    }
}

const SEEDED: &[&str] = &[
    "--seed",
    "11",
    "--processes",
    "3",
    "--threads-per-process",
    "2",
    "--dsos",
    "3",
    "--functions",
    "5",
    "--samples",
    "3000",
    "--callchain",
    "4",
];

#[perfdata_oracle::needs(perf)]
#[test]
fn report_matches_the_seeded_plan_per_function_in_every_container() {
    assert!(perf_available());
    let (dir, dso_dir) = dirs();
    let workload = Workload::new(seeded_spec(&dso_dir)).unwrap();
    // The samples per (thread, function), spread here from the model's weights.
    let mut counts = Counts::new();
    for ((t, f), n) in spread(&workload, 3000).into_iter().filter(|(_, n)| *n > 0) {
        let (thread, dso) = (&workload.threads[t], workload.functions[f].dso as usize);
        let dso = basename(&workload.dsos[dso].path);
        counts.insert(
            (
                thread.comm.clone(),
                thread.tid,
                dso,
                workload.function_name(f),
            ),
            n,
        );
    }
    assert_eq!(counts.values().sum::<u64>(), 3000);
    // 6 threads x 15 functions; a cell of a small weight may round to none.
    assert!((80..=90).contains(&counts.len()), "{}", counts.len());
    // The default period, 100,000 ns, in every sample.
    let expected = cells(&counts, 100_000);
    let dso_arg = dso_dir.to_str().unwrap();
    for (name, extra) in [
        ("file", &[][..]),
        ("big-zstd", &["--endian", "big", "--compress"][..]),
        ("dir", &["--dir"][..]),
        ("no-build-ids", &["--no-build-ids"][..]),
    ] {
        let args = [SEEDED, &["--dso-dir", dso_arg], extra].concat();
        let path = synth(dir.path(), name, &args);
        assert_eq!(symbol_counts(&path), expected, "{name}");
    }
    // The files the trace names are the ones written, with the build ids it lists.
    let path = dir.path().join("file");
    let out = perf_clean(&["buildid-list"], &path);
    let mut listed: Vec<&str> = out.lines().collect();
    listed.sort();
    let hex = |id: &[u8; 20]| id.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut want: Vec<String> = workload
        .dsos
        .iter()
        .map(|d| format!("{} {}", hex(&d.build_id), d.path))
        .collect();
    want.sort();
    assert_eq!(listed, want);
    // perf reads the same build id from each ELF file's note.
    for d in &workload.dsos {
        let file = perf_clean(&["buildid-list"], Path::new(&d.path));
        assert_eq!(file.trim(), hex(&d.build_id), "{}", d.path);
    }
}

/// Every frame of every callchain, as `perf script -F ip,sym` prints it: the ip as an
/// address in the DSO file and the name of the function the model put it in.
#[perfdata_oracle::needs(perf)]
#[test]
fn script_names_the_call_tree_frames() {
    assert!(perf_available());
    let (dir, dso_dir) = dirs();
    let path = synth(
        dir.path(),
        "cc",
        &[SEEDED, &["--dso-dir", dso_dir.to_str().unwrap()]].concat(),
    );
    let workload = Workload::new(seeded_spec(&dso_dir)).unwrap();
    let frame = |ip: u64| {
        let g = workload
            .functions
            .iter()
            .position(|f| (f.start..f.start + f.size).contains(&ip))
            .expect("every frame is inside a function");
        let d = &workload.dsos[workload.functions[g].dso as usize];
        format!("{:x} {}", ip - d.addr + d.pgoff, workload.function_name(g))
    };
    let expected: Vec<Vec<String>> = callchains(&path)
        .iter()
        .map(|ips| ips.iter().map(|&ip| frame(ip)).collect())
        .collect();
    assert_eq!(expected.len(), 3000);
    assert!(expected.iter().any(|c| c.len() == 4));
    let got = script_callchains(&path, "ip,sym");
    assert_eq!(got.len(), expected.len());
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(g, e, "sample {i}");
    }
}
