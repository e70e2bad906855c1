//! `perfdata export --inline` on a recording of tests/srcline/hot.c built here with
//! `-g -O2`, whose hot step `mix()` is inlined into `work()`: perf 6.1 does not show
//! these inlined frames (its `perf script --inline` prints `work` alone), so the
//! independent answer is binutils' `addr2line -i -f` on the same binary. Every pprof
//! location with more than one line must list, innermost first, the functions and lines
//! addr2line gives for its address, and the folded export must have `work;mix` stacks.

use std::collections::BTreeMap;
use std::process::Command;

use perfdata_tests::perf_available;

use crate::exports;
use crate::workload;

use exports::decode::{fields, gunzip, int, messages, string_table};

/// (file offset, [(function, line)] innermost first) of every location with inlined
/// lines in a mapping of file `exe` (others, ld.so's say, are not this test's binary):
/// its address as pprof reads it, `address - memory_start + file_offset`.
fn inlined_locations(gz: &[u8], exe: &str) -> Vec<(u64, Vec<(String, u64)>)> {
    let raw = gunzip(gz);
    let top = fields(&raw);
    let strings = string_table(&top);
    let functions: BTreeMap<u64, String> = messages(&top, 5)
        .iter()
        .map(|m| {
            let f = fields(m);
            (int(&f, 1), strings[int(&f, 2) as usize].clone())
        })
        .collect();
    let mappings: BTreeMap<u64, (String, u64, u64)> = messages(&top, 3)
        .iter()
        .map(|m| {
            let f = fields(m);
            let file = strings[int(&f, 5) as usize].clone();
            (int(&f, 1), (file, int(&f, 2), int(&f, 4)))
        })
        .collect();
    messages(&top, 4)
        .iter()
        .filter_map(|m| {
            let f = fields(m);
            let (file, start, offset) = mappings.get(&int(&f, 2))?;
            if file != exe {
                return None;
            }
            let lines: Vec<(String, u64)> = messages(&f, 4)
                .iter()
                .map(|l| {
                    let l = fields(l);
                    (functions[&int(&l, 1)].clone(), int(&l, 2))
                })
                .collect();
            (lines.len() > 1).then(|| (int(&f, 3) - start + offset, lines))
        })
        .collect()
}

/// binutils' `addr2line -i -f -e EXE ADDR`: (function, line) innermost first.
fn binutils_frames(exe: &std::path::Path, addr: u64) -> Vec<(String, u64)> {
    let out = Command::new("addr2line")
        .arg("-i")
        .arg("-f")
        .arg("-e")
        .arg(exe)
        .arg(format!("{addr:x}"))
        .output()
        .expect("addr2line runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let lines: Vec<&str> = text.lines().collect();
    lines
        .chunks(2)
        .map(|c| {
            let line = c[1].rsplit(':').next().unwrap_or("0");
            let line = line.split_whitespace().next().unwrap_or("0");
            (c[0].to_string(), line.parse().unwrap_or(0))
        })
        .collect()
}

#[perfdata_oracle::needs(perf, addr2line)]
#[test]
fn inlined_frames_match_binutils_addr2line() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_hot(dir.path(), "-O2");
    let data = workload::record(
        dir.path(),
        "hot.data",
        &["-e", "task-clock", "-c", "100000"],
        &[exe.to_str().expect("utf-8 path"), "200"],
    );
    let pprof = exports::export_with(&data, "pprof", dir.path(), &["--inline"]);
    let locations = inlined_locations(&pprof, exe.to_str().expect("utf-8 path"));
    assert!(!locations.is_empty(), "no location with inlined lines");
    let mut in_work = 0;
    for (addr, lines) in &locations {
        // The executable's text is at its file offset: file offsets are its virtual
        // addresses.
        assert_eq!(
            lines,
            &binutils_frames(&exe, *addr),
            "location at {addr:#x}"
        );
        // Besides mix in work, main's inlined cpu_ms gets a sample now and then (the
        // test failed so under load, its frames equal to binutils' all the same).
        if lines.last().map(|l| l.0.as_str()) == Some("work") {
            assert_eq!(lines.first().map(|l| l.0.as_str()), Some("mix"));
            in_work += 1;
        } else {
            let names: Vec<&str> = lines.iter().map(|l| l.0.as_str()).collect();
            assert_eq!(names, ["cpu_ms", "main"], "location at {addr:#x}");
        }
    }
    assert!(in_work > 0, "no location of mix inlined in work");
    let folded = String::from_utf8(exports::export_with(
        &data,
        "folded",
        dir.path(),
        &["--inline"],
    ))
    .expect("utf-8");
    let inlined: u64 = folded
        .lines()
        .filter(|l| l.contains(";work;mix "))
        .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
        .sum();
    assert!(inlined > 100, "{folded}");
    eprintln!(
        "{} locations with inlined lines checked; {inlined} samples in work;mix",
        locations.len()
    );
}
