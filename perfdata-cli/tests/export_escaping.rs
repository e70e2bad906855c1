//! Names that carry the folded format's separators: a program recorded here names its
//! thread `a;b\nfake 9999` (prctl PR_SET_NAME) and burns its time in a function whose
//! symbol is `x;y\nfake 8888` (renamed with objcopy). The text exports (folded, and the
//! flame graph drawn from it) must not let these names forge a stack or a count: `;`
//! becomes `:`, control characters `?`, and the blank before a trailing number `_`, so
//! that every line is one stack with one count and the samples of that thread and
//! function are perf's. The JSON and protobuf exports keep the names exactly.

use std::path::Path;
use std::process::Command;

use perfdata_tests::{perf_available, perf_output};

use crate::exports;
use crate::workload;

use exports::decode::{self, Folded};
use exports::export;

const COMM: &str = "a;b\nfake 9999";
const SYMBOL: &str = "x;y\nfake 8888";
/// How the folded export writes them.
const COMM_FOLDED: &str = "a:b?fake_9999";
const SYMBOL_FOLDED: &str = "x:y?fake_8888";

const SOURCE: &str = r#"
#include <sys/prctl.h>
volatile unsigned long sink;
__attribute__((noinline)) void burn(void) {
    for (unsigned long i = 0; i < 150000000UL; i++) sink += i;
}
int main(void) {
    prctl(PR_SET_NAME, "a;b\nfake 9999");
    burn();
    return 0;
}
"#;

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Build the program (its `burn` renamed to [`SYMBOL`]) and record it with call graphs.
fn record(dir: &Path) -> std::path::PathBuf {
    let (src, obj, exe) = (dir.join("evil.c"), dir.join("evil.o"), dir.join("evil"));
    std::fs::write(&src, SOURCE).unwrap();
    run(Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-c", "-o"])
        .arg(&obj)
        .arg(&src));
    run(Command::new("objcopy")
        .arg(format!("--redefine-sym=burn={SYMBOL}"))
        .arg(&obj));
    run(Command::new("gcc").arg("-o").arg(&exe).arg(&obj));
    let exe = exe.to_str().unwrap().to_string();
    let args = ["-g", "-e", "cpu-clock", "-c", "100000"];
    workload::record(dir, "evil.data", &args, &[exe.as_str()])
}

/// perf report's samples in the row whose key's first line ends with `key` (the rest of
/// the name is on the next line, as perf prints the line break).
fn perf_samples(input: &Path, sort: &str, key: &str) -> u64 {
    let args = [
        "report",
        "--stdio",
        "-n",
        "--no-children",
        "-g",
        "none",
        "--sort",
        sort,
    ];
    let out = perf_output(&args, input);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text
        .lines()
        .find(|l| !l.starts_with('#') && l.ends_with(key))
        .unwrap_or_else(|| panic!("no row {key:?} in\n{text}"));
    row.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Samples of the stacks that start with the thread `comm` and of those whose last
/// frame is `symbol`.
fn counts(folded: &Folded, comm: &str, symbol: &str) -> (u64, u64) {
    let sum = |keep: &dyn Fn(&str) -> bool| -> u64 {
        folded.iter().filter(|(k, _)| keep(k)).map(|(_, n)| n).sum()
    };
    (
        sum(&|k| k.starts_with(&format!("{comm};"))),
        sum(&|k| k.ends_with(&format!(";{symbol}"))),
    )
}

#[perfdata_oracle::needs(perf)]
#[test]
fn names_cannot_forge_stacks_or_counts() {
    assert!(perf_available());
    let dir = tempfile::tempdir().unwrap();
    let input = record(dir.path());
    let want = (
        perf_samples(&input, "comm", "a;b"),
        perf_samples(&input, "sym", "[.] x;y"),
    );
    assert!(want.1 > 100, "{want:?}");

    // Folded: one stack and one count a line, the names written as frames.
    let text = String::from_utf8(export(&input, "folded", dir.path())).unwrap();
    let mut folded = Folded::new();
    for line in text.lines() {
        let (stack, n) = line.rsplit_once(' ').expect("stack count");
        assert!(!stack.contains(char::is_control), "{line:?}");
        assert!(!line.starts_with("fake"), "a forged line: {line:?}");
        *folded.entry(stack.to_string()).or_default() += n.parse::<u64>().expect("count");
    }
    assert_eq!(counts(&folded, COMM_FOLDED, SYMBOL_FOLDED), want, "{text}");

    // The flame graph drawn from it: well-formed XML, the same stacks and counts (a leaf
    // `fake 8888` was read as a differential count), the root as wide as every sample.
    let svg = String::from_utf8(export(&input, "flamegraph", dir.path())).unwrap();
    let (drawn, width) = decode::flamegraph(&svg);
    assert_eq!(drawn, folded);
    assert_eq!(width, folded.values().sum::<u64>());

    // JSON and protobuf carry the names as they are.
    let json = |format| -> serde_json::Value {
        serde_json::from_slice(&export(&input, format, dir.path())).expect("JSON")
    };
    let speedscope = decode::speedscope(&json("speedscope"), false);
    assert_eq!(counts(&speedscope, COMM, SYMBOL), want, "{speedscope:?}");
    let firefox = decode::firefox(&json("firefox"), false);
    assert_eq!(counts(&firefox, COMM, SYMBOL), want, "{firefox:?}");
    let pprof = decode::pprof(&export(&input, "pprof", dir.path()), false);
    assert_eq!(counts(&pprof, COMM, SYMBOL), want, "{pprof:?}");
}
