//! `perfdata report -q` prints what perf 6.1's `perf report --stdio -q` prints, byte for
//! byte: no `#` header lines (perf's `--quiet` leaves out every one of them, the tip
//! too), the rows, their call graphs and the blank lines between events unchanged. The
//! views compared are ones without rows of equal overhead (perf orders those by its
//! tree; report_text_oracle and report_graph_oracle compare them as sets).

use std::path::Path;
use std::process::Command;

use perfdata_tests::{fixtures_dir, perf_available};

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn perf_quiet(input: &Path, args: &[&str]) -> Vec<u8> {
    run(Command::new("perf")
        .args(["report", "--stdio", "-q", "-i"])
        .arg(input)
        .args(args))
}

fn ours(before: &[&str], input: &Path, after: &[&str]) -> Vec<u8> {
    run(Command::new(env!("CARGO_BIN_EXE_perfdata"))
        .args(before)
        .arg("report")
        .arg(input)
        .args(after))
}

#[perfdata_oracle::needs(perf)]
#[test]
fn quiet_reports_equal_perfs_to_the_byte() {
    assert!(perf_available());
    let views: &[(&str, &[&str])] = &[
        ("file-cpu-clock.data", &["--sort", "comm,dso"]),
        ("file-cpu-clock.data", &["--percent-limit", "5"]),
        ("file-multi-event.data", &["--sort", "dso"]),
        ("file-multi-event.data", &["-n", "--sort", "comm,dso"]),
        ("file-callgraph-fp.data", &["--percent-limit", "5"]),
        (
            "file-callgraph-fp.data",
            &["--no-children", "--sort", "comm,dso"],
        ),
        ("file-group.data", &["--percent-limit", "5"]),
        ("pipe-cpu-clock.data", &["--sort", "dso"]),
        ("file-tracepoint.data", &["--sort", "dso"]),
        ("anon-secret.data", &["--percent-limit", "5"]),
        ("file-system-wide.data", &["--sort", "comm,dso"]),
    ];
    let mut problems = Vec::new();
    for (file, args) in views {
        let input = fixtures_dir().join(file);
        let perf = perf_quiet(&input, args);
        // perf's quiet text still has its rows (the comparison is not of two nothings).
        assert!(perf.windows(3).any(|w| w == b"%  "), "{file} {args:?}");
        let after = [&["-q"][..], args].concat();
        for mine in [ours(&[], &input, &after), ours(&["-q"], &input, args)] {
            if mine != perf {
                problems.push(format!(
                    "{file} {args:?}:\nperf:\n{}\nours:\n{}",
                    String::from_utf8_lossy(&perf),
                    String::from_utf8_lossy(&mine)
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
