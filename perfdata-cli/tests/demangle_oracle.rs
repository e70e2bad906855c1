//! C++ names as perf 6.1 prints them. perf demangles with binutils' libiberty and no
//! options (`DMGL_NO_OPTS`), as `c++filt -p -i` does; perfdata with cpp_demangle
//! (vendor/cpp_demangle, patched: its PATCHES.md) and libiberty's style on top
//! (perfdata-report's `libiberty` module).
//!
//! - Every `_Z` symbol of libstdc++, node and g++'s cc1plus, demangled here and by
//!   `c++filt -p -i`, where those are installed (ignored without c++filt or nm): none
//!   differ (before the vendored patches: libstdc++ 79 of 5,866 (transaction clones),
//!   node 120 of 78,865 (26 not parsed at all), cc1plus 126 of 29,266 (55 not parsed)).
//! - Live: a g++ -O0 program hot in `std::swap<int>` (whose mangled name 0.4.5 could not
//!   parse), recorded with perf, and `perfdata report` and `perfdata script` equal to
//!   perf's.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use perfdata_report::symtab::demangle;
use perfdata_tests::{perf_available, perf_output, run_perfdata};

use crate::report_text;
use crate::workload;

/// The C++ names (`_Z...`) `nm` lists in `path`'s dynamic and static symbol tables
/// (perf names both), each once, without version suffixes (c++filt cuts a word at
/// `@`, libiberty's call in perf does not see one).
fn cxx_names(path: &str) -> Vec<String> {
    let mut names = Vec::new();
    for table in [&["-D"][..], &[]] {
        let nm = Command::new("nm")
            .args(table)
            .args(["--defined-only", "--without-symbol-versions", path])
            .output()
            .expect("nm runs");
        let text = String::from_utf8_lossy(&nm.stdout);
        names.extend(
            text.lines()
                .filter_map(|l| l.split_whitespace().nth(2))
                .filter(|n| n.starts_with("_Z"))
                .map(str::to_string),
        );
    }
    names.sort_unstable();
    names.dedup();
    names
}

/// `c++filt -p -i`'s text for each of `names`, a line each.
fn cxxfilt(names: &[String]) -> Vec<String> {
    let mut filt = Command::new("c++filt")
        .args(["-p", "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("c++filt runs");
    let input = names.join("\n") + "\n";
    let mut stdin = filt.stdin.take().expect("c++filt's stdin");
    let writer = std::thread::spawn(move || {
        std::io::Write::write_all(&mut stdin, input.as_bytes()).expect("c++filt reads")
    });
    let out = filt.wait_with_output().expect("c++filt ends");
    writer.join().expect("writer");
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert_eq!(lines.len(), names.len(), "c++filt prints a line a name");
    lines
}

/// Demangle every C++ name of `path` here and with c++filt, and fail with the names
/// that differ (those cpp_demangle cannot parse counted apart), if any: none did with
/// binutils 2.40 (Debian 12), libstdc++ 6.0.30, node 20 and GCC 12.
fn demangles_as_cxxfilt(path: &str) {
    let names = cxx_names(path);
    assert!(names.len() > 1000, "{path} has {} C++ names", names.len());
    let filtered = cxxfilt(&names);
    let mut unparsed = 0;
    let differ: Vec<String> = names
        .iter()
        .zip(&filtered)
        .filter_map(|(name, filt)| {
            let ours = demangle(name);
            if ours == *filt {
                return None;
            }
            unparsed += usize::from(ours == *name);
            Some(format!("{name}\n  ours {ours}\n  filt {filt}"))
        })
        .collect();
    eprintln!(
        "{path}: {} of {} differ from c++filt ({unparsed} not parsed)",
        differ.len(),
        names.len()
    );
    assert!(
        differ.is_empty(),
        "{path}: {} of {} names differ from c++filt -p -i, {unparsed} of them not parsed:\n{}",
        differ.len(),
        names.len(),
        differ[..differ.len().min(20)].join("\n")
    );
}

#[perfdata_oracle::needs(cxxfilt, nm)]
#[test]
fn libstdcxx_names_demangle_as_cxxfilt() {
    let lib = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";
    if !Path::new(lib).exists() {
        eprintln!("SKIPPED: no {lib}");
        return;
    }
    demangles_as_cxxfilt(lib);
}

#[perfdata_oracle::needs(cxxfilt, nm, node)]
#[test]
fn node_names_demangle_as_cxxfilt() {
    let out = Command::new("sh")
        .args(["-c", "command -v node"])
        .output()
        .expect("sh runs");
    let node = String::from_utf8_lossy(&out.stdout).trim().to_string();
    demangles_as_cxxfilt(&node);
}

/// g++'s own compiler: GCC's SFINAE names with a type after `sr` of every form
/// (`srN...E`, `srSt...`, the old `sr15poly_int_traitsIS3_E7is_poly`).
#[perfdata_oracle::needs(cxxfilt, nm, gxx)]
#[test]
fn cc1plus_names_demangle_as_cxxfilt() {
    let out = Command::new("g++")
        .arg("-print-prog-name=cc1plus")
        .output()
        .expect("g++ runs");
    let cc1plus = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !Path::new(&cc1plus).is_absolute() {
        eprintln!("SKIPPED: g++ does not say where cc1plus is ({cc1plus})");
        return;
    }
    demangles_as_cxxfilt(&cc1plus);
}

/// The report's entry lines (`#` header and blank lines aside).
fn entries(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect()
}

#[perfdata_oracle::needs(perf, gxx)]
#[test]
fn swap_int_is_named_as_perf_names_it() {
    assert!(perf_available());
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = workload::build_swap(dir.path()).expect("g++ builds the swap workload");
    let exe = exe.to_str().expect("utf-8 path");
    let args = ["-q", "-e", "task-clock", "-c", "100000"];
    let data = workload::record(dir.path(), "swap.data", &args, &[exe, "200"]);

    let perf = report_text::perf_stdio(&data, &["--sort", "sym"]);
    let ours = report_text::perfdata_report(&data, &["--sort", "sym"]);
    assert_eq!(entries(&ours), entries(&perf));
    let swap_row = entries(&perf)
        .into_iter()
        .find(|l| l.ends_with("[.] std::swap<int>"));
    assert!(swap_row.is_some(), "perf's rows:\n{perf}");

    let out = perf_output(&["script"], &data);
    assert!(out.status.success(), "perf script");
    let perf_script = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = [OsStr::new("script"), data.as_os_str()];
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &all, None);
    assert!(out.status.success(), "perfdata script");
    let our_script = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        perf_script.contains(" std::swap<int>+0x"),
        "perf script names std::swap<int>"
    );
    let (p, o): (Vec<&str>, Vec<&str>) =
        (perf_script.lines().collect(), our_script.lines().collect());
    let first = p.iter().zip(&o).position(|(a, b)| a != b);
    assert!(
        first.is_none() && p.len() == o.len(),
        "perf script and perfdata script differ at line {first:?}: {:?} / {:?}",
        first.map(|i| p[i]),
        first.map(|i| o[i])
    );
}
