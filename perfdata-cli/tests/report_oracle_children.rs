//! `perfdata report --children` against `perf report --stdio -n --children -g none` of
//! perf 6.1, run live, on frame-pointer callchain recordings (the fixture and the
//! fixture workload and tests/srcline/hot.c recorded here with `-g`): every row perf
//! shows with a Children percentage above 0.1% must be ours with the same cells, self
//! sample count, and Children and Self percentages as perf prints them (two decimals),
//! and every row of ours above 0.1% must be perf's.
//!
//! Rows of addresses without a symbol are left out on both sides: for a callchain entry
//! perf prints the absolute address (`[.] 0x000055cfaafbe143`, `0000000000000000` for
//! 0, whose `%#llx` has no `0x`) with the mode of its last map lookup (`[k]` for a user
//! address in no map), where perfdata prints the DSO-relative address as in self rows.

use std::path::Path;

use perfdata_tests::{fixtures_dir, name, perf_available};

use crate::report_rows;
use crate::workload;

use report_rows::{our_children_rows, perf_children_rows, resolved};

fn compare(path: &Path, sort: &str) -> Result<usize, String> {
    let perf = resolved(perf_children_rows(path, sort));
    let ours = resolved(our_children_rows(path, sort));
    if perf.keys().ne(ours.keys()) {
        return Err(format!(
            "events: perf {:?}, ours {:?}",
            perf.keys(),
            ours.keys()
        ));
    }
    let two = |v: &[f64]| v.iter().map(|p| format!("{p:.2}")).collect::<Vec<_>>();
    let mut problems = Vec::new();
    let mut compared = 0;
    for (ev, rows) in &perf {
        for (cells, (pcts, n, period)) in rows.iter().filter(|(_, (p, _, _))| p[0] > 0.1) {
            compared += 1;
            match ours[ev].get(cells) {
                Some((mine, m, q)) if m == n && q == period && two(mine) == two(pcts) => {}
                got => problems.push(format!(
                    "  {cells:?}: perf {pcts:?} {n} {period}, ours {got:?}"
                )),
            }
        }
        for (cells, (mine, _, _)) in &ours[ev] {
            if mine[0] > 0.1 && !rows.contains_key(cells) {
                problems.push(format!("  {cells:?}: ours {mine:?}, not in perf"));
            }
        }
    }
    if problems.is_empty() {
        Ok(compared)
    } else {
        Err(problems.join("\n"))
    }
}

#[perfdata_oracle::needs(perf)]
#[test]
fn children_match_perf_report() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let spin = workload::build_spin(dir.path());
    let hot = workload::build_hot(dir.path(), "-O2");
    let inputs = [
        fixtures_dir().join("file-callgraph-fp.data"),
        workload::record(
            dir.path(),
            "spin-g.data",
            &["-g", "-e", "cpu-clock", "-c", "100000"],
            &[&spin],
        ),
        workload::record(
            dir.path(),
            "hot-g.data",
            &["-g", "-e", "task-clock", "-c", "100000"],
            &[hot.to_str().expect("utf-8 path"), "200"],
        ),
    ];
    let mut failures = Vec::new();
    let mut compared = 0;
    for input in &inputs {
        for sort in ["comm,dso,sym", "sym"] {
            match compare(input, sort) {
                Ok(n) => compared += n,
                Err(e) => failures.push(format!("{} --sort {sort}:\n{e}", name(input))),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 20, "{compared} rows compared");
    eprintln!("{compared} rows compared over {} inputs", inputs.len());
}
