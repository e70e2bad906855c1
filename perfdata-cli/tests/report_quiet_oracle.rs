//! `perfdata report -q` prints what perf 6.1's `perf report --stdio -q` prints, byte for
//! byte: no `#` header lines (perf's `--quiet` leaves out every one of them, the tip
//! too) but the `# comm: NAME` lines of filters of one name (perf says those as it sets
//! the columns up), the rows, their call graphs and the blank lines between events
//! unchanged. The
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

/// Filters of one name, with and without `-q`: perf says `# comm: NAME`, `# dso:
/// NAME`, `# symbol: NAME` in the sort keys' order (comm before dso), with `-q` too,
/// and leaves those columns out unless that would be every column (perf's
/// `sort__setup_elide`: "it makes no sense to elide all of sort entries"). perfdata had
/// dso before comm, dropped the lines under `-q`, and printed no column at all where
/// every key was filtered to one name.
#[perfdata_oracle::needs(perf)]
#[test]
fn single_name_filters_are_said_as_perf_says_them() {
    assert!(perf_available());
    let input = fixtures_dir().join("file-cpu-clock.data");
    let filters: &[&[&str]] = &[
        &["--dsos", "perfdata-spin"],
        &["--comms", "perfdata-spin", "--dsos", "perfdata-spin"],
        &[
            "--comms",
            "perfdata-spin",
            "--dsos",
            "perfdata-spin",
            "--symbols",
            "handle_amd",
        ],
        &[
            "--sort",
            "dso,comm",
            "--comms",
            "perfdata-spin",
            "--dsos",
            "perfdata-spin",
        ],
        &["--sort", "sym", "--symbols", "handle_amd"],
    ];
    // perf's closing tip (`#`, `# (Tip: ...)`, `#`) is random.
    let untipped = |text: Vec<u8>| {
        let t = String::from_utf8(text).expect("UTF-8");
        let lines: Vec<&str> = t.lines().collect();
        match lines.iter().rposition(|l| l.starts_with("# (Tip:")) {
            Some(at) => lines[..at - 1].join("\n"),
            None => lines.join("\n"),
        }
    };
    let mut problems = Vec::new();
    for args in filters {
        let quiet = perf_quiet(&input, args);
        let text = String::from_utf8_lossy(&quiet).into_owned();
        assert!(text.starts_with("# "), "{args:?}: {text}");
        if ours(&[], &input, &[&["-q"], *args].concat()) != quiet {
            problems.push(format!("-q {args:?}"));
        }
        let perf = run(Command::new("perf")
            .args(["report", "--stdio", "-i"])
            .arg(&input)
            .args(*args));
        if untipped(ours(&[], &input, args)) != untipped(perf) {
            problems.push(format!("{args:?}"));
        }
    }
    assert!(problems.is_empty(), "differ: {}", problems.join(", "));
}
