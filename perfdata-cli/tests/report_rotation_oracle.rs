//! perf's call graph where a chain is met again after the rb-tree of a node's children
//! rotated: perf appends each sample's chain as it comes, and its lookup (inlined
//! functions by name, others by address) is not one order, so the chain can end at a
//! second node (perfdata-report/src/callgraph/appends.rs).

use perfdata_tests::perf_available;

use crate::report_graph_oracle::{compile, differs, PAGE_FAULTS_DWARF};
use crate::workload;

/// A chain met again after perf's tree of a node's children has rotated can end at
/// another node in perf, and it is not rare: in callgraph/rotation.c ten functions are
/// each met inlined, out of line and beside an out-of-line neighbour under one caller,
/// and with six rounds of calls perf has `zc` and `kd (inlined)` twice under parent.
/// perf appends each sample's chain as it comes; building each distinct chain once,
/// with the period of all its samples, differed in every view here that has parent's
/// callees as siblings (caller order, function key): the Children view, and the
/// graph under the DSO's entry with `--no-children --sort dso` in each print type
/// (the other views have no such siblings: they pass either way). Recorded from 0.1 s
/// on (`-D 100`): see rotation.c.
#[perfdata_oracle::needs(perf)]
#[test]
fn chains_met_again_after_a_rotation_land_as_in_perf() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = [
        "-O2",
        "-g",
        "-fno-toplevel-reorder",
        "-fno-optimize-sibling-calls",
    ];
    let exe = compile(dir.path(), "rotation", &flags);
    let exe = exe.to_str().expect("utf-8 path");
    let mut args = PAGE_FAULTS_DWARF.to_vec();
    args.extend(["-D", "100"]);
    let by_dso = ["--dsos", "rotation", "--no-children", "--sort", "dso", "-g"];
    let views: [&[&str]; 8] = [
        &["--dsos", "rotation"],
        &["--dsos", "rotation", "-g", "callee"],
        &["--dsos", "rotation", "-g", "fractal,0.5,caller,address"],
        &["--dsos", "rotation", "--sort", "dso"],
        &[&by_dso[..], &["caller"]].concat(),
        &[&by_dso[..], &["flat,0,caller"]].concat(),
        &[&by_dso[..], &["folded,0,caller"]].concat(),
        &[&by_dso[..], &["fractal,0.5,caller,function,count"]].concat(),
    ];
    let mut problems = Vec::new();
    for rounds in ["6", "12"] {
        let file = format!("rotation{rounds}.data");
        let input = workload::record(dir.path(), &file, &args, &[exe, rounds]);
        for view in views {
            problems.extend(differs(&input, view, view).map(|p| format!("{rounds}: {p}")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
