//! The print format evaluated as libtraceevent evaluates it, on formats the kernel writes.

use super::print::{PrintFmt, Val};

fn render(line: &str, fields: &[(&str, Val)]) -> Option<String> {
    let lookup = |n: &str| fields.iter().find(|(f, _)| *f == n).map(|(_, v)| v.clone());
    PrintFmt::parse(line)?.render(&lookup)
}

#[test]
fn syscall_arguments_print_as_hex_of_the_cast() {
    let line = "\"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", \
                ((unsigned long)(REC->fd)), ((unsigned long)(REC->buf)), \
                ((unsigned long)(REC->count))";
    let out = render(
        line,
        &[
            ("fd", Val::Int(1)),
            ("buf", Val::Int(0x5570482fadf0)),
            ("count", Val::Int(3)),
        ],
    );
    assert_eq!(
        out.as_deref(),
        Some("fd: 0x00000001, buf: 0x5570482fadf0, count: 0x00000003")
    );
}

#[test]
fn conversions_follow_c_printf() {
    let v = |n: i64| Val::Int(n as u64);
    let one = |fmt: &str, val: Val| render(&format!("\"{fmt}\", REC->a"), &[("a", val)]);
    assert_eq!(one("%d", v(-1)).as_deref(), Some("-1"));
    assert_eq!(one("%u", v(-1)).as_deref(), Some("4294967295"));
    assert_eq!(one("%lu", v(-1)).as_deref(), Some("18446744073709551615"));
    assert_eq!(one("%5d|", v(42)).as_deref(), Some("   42|"));
    assert_eq!(one("%-5d|", v(42)).as_deref(), Some("42   |"));
    assert_eq!(one("%#x", v(255)).as_deref(), Some("0xff"));
    assert_eq!(one("%hx", v(0x12345)).as_deref(), Some("2345"));
    assert_eq!(
        one("%.3s", Val::Str("abcdef".into())).as_deref(),
        Some("abc")
    );
    assert_eq!(one("%s %%", Val::Str("x".into())).as_deref(), Some("x %"));
    // A helper that is not understood: no text rather than a wrong one.
    assert_eq!(render("\"%s\", __get_bitmask(a)", &[]), None);
    assert_eq!(
        render(
            "\"%s\", __print_symbolic(REC->a, { 1, \"one\" })",
            &[("a", v(2))]
        )
        .as_deref(),
        Some("0x2")
    );
}

#[test]
fn a_string_names_its_field_bare() {
    // sched_process_fork's format on kernel 6.x: the parent's name is `comm=`, not
    // the field's own name (perf script: `comm=sh pid=25296 child_comm=sh ...`).
    let line = r#""comm=%s pid=%d child_comm=%s child_pid=%d", __get_str(parent_comm), REC->parent_pid, __get_str(child_comm), REC->child_pid"#;
    let out = render(
        line,
        &[
            ("parent_comm", Val::Str("sh".into())),
            ("parent_pid", Val::Int(25296)),
            ("child_comm", Val::Str("worker".into())),
            ("child_pid", Val::Int(25299)),
        ],
    );
    assert_eq!(
        out.as_deref(),
        Some("comm=sh pid=25296 child_comm=worker child_pid=25299")
    );
}
