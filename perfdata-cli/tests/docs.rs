//! Help that stands alone: every command's `--help` ends with examples that use it; the
//! shell completions name every command and are valid scripts (bash -n, and zsh -n or
//! fish -n where installed); the man page has the main page and a section per command.

use std::ffi::OsStr;
use std::process::Command;

use perfdata_tests::run_perfdata;

/// Every command of the binary.
const COMMANDS: &[&str] = &[
    "info",
    "stats",
    "dump",
    "check",
    "convert",
    "synth",
    "merge",
    "strip",
    "buildid",
    "anonymize",
    "unwind",
    "report",
    "script",
    "diff",
    "export",
    "flamegraph",
    "completions",
    "manpage",
    "help-json",
];

fn perfdata(args: &[&str]) -> String {
    let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
    let out = run_perfdata(env!("CARGO_BIN_EXE_perfdata"), &args, None);
    assert!(
        out.status.success(),
        "perfdata {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn the_command_list_is_the_binarys() {
    let help = perfdata(&["--help"]);
    let listed: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert_eq!(listed, COMMANDS);
}

#[test]
fn every_command_help_ends_with_its_examples() {
    for cmd in COMMANDS {
        let help = perfdata(&[cmd, "--help"]);
        let (_, examples) = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{cmd} --help has no examples:\n{help}"));
        let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(!lines.is_empty(), "{cmd}");
        for l in lines {
            assert!(
                l.trim_start().starts_with(&format!("perfdata {cmd}")),
                "{cmd} example does not run {cmd}: {l}"
            );
        }
    }
}

/// Whether `shell -n` accepts `script` (None when the shell is not installed).
fn syntax_ok(shell: &str, script: &str) -> Option<bool> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script");
    std::fs::write(&path, script).unwrap();
    let out = Command::new(shell).arg("-n").arg(&path).output().ok()?;
    if !out.status.success() {
        eprintln!("{shell} -n: {}", String::from_utf8_lossy(&out.stderr));
    }
    Some(out.status.success())
}

#[test]
fn completions_name_every_command_and_parse() {
    for shell in ["bash", "zsh", "fish"] {
        let script = perfdata(&["completions", shell]);
        for cmd in COMMANDS {
            assert!(script.contains(cmd), "{shell} completions lack {cmd}");
        }
        // Options of a command too: dump's --no-decompress.
        assert!(script.contains("no-decompress"), "{shell}");
        match syntax_ok(shell, &script) {
            Some(ok) => assert!(ok, "{shell} -n rejects the completions"),
            None => assert_ne!(shell, "bash", "bash is installed"),
        }
    }
    let out = run_perfdata(
        env!("CARGO_BIN_EXE_perfdata"),
        &[OsStr::new("completions"), OsStr::new("tcsh")],
        None,
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unknown shell is a usage error"
    );
}

#[test]
fn man_page_has_every_command_with_options_and_examples() {
    let page = perfdata(&["manpage"]);
    assert!(
        page.starts_with(".ie") || page.contains(".TH perfdata"),
        "{page:.200}"
    );
    assert!(page.contains(".TH perfdata"), "title");
    for cmd in COMMANDS {
        let title = format!(".SH \"PERFDATA {}\"", cmd.to_uppercase());
        let (_, section) = page
            .split_once(&title)
            .unwrap_or_else(|| panic!("no section {title}"));
        let section = section.split("\n.SH ").next().unwrap();
        assert!(section.contains("Usage: perfdata"), "{cmd}: {section}");
        assert!(section.contains("Examples:"), "{cmd}: {section}");
    }
    // man renders it (where man is installed): the dump section's option reads as text.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("perfdata.1");
    std::fs::write(&path, &page).unwrap();
    if let Ok(out) = Command::new("man")
        .arg("-l")
        .arg(&path)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100")
        .output()
    {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("--no-decompress"), "{text}");
    }
}
