//! RAW tracepoint payloads whose format declares a string as numbers (issue #24, the
//! outside attack's second round): `secret-tp.data`'s sched_switch and sched_wakeup
//! comms, `char prev_comm[16]` declared `long prev_comm[2]`, `__u64 prev_comm` and the
//! like, which perf prints as numbers made of the comm's bytes. None may be left, and
//! the numbers of the payloads stay.

use perfdata_core::{PerfReader, ReadOptions};

use super::tests::{anonymize_bytes, expanded, fixture, holds, names, raws};
use super::*;

/// `secret-tp.data` with each of its `char NAME[16];` declarations (sched_switch's
/// prev_comm and next_comm, sched_wakeup's comm) replaced by `decl(NAME)`, padded to
/// the same length so that nothing moves.
fn retyped(decl: impl Fn(&str) -> String) -> Vec<u8> {
    let mut b = std::fs::read(fixture("anon/secret-tp.data")).unwrap();
    for name in ["prev_comm", "next_comm", "comm"] {
        let old = format!("char {name}[16];");
        let mut new = decl(name);
        assert!(new.len() <= old.len(), "{new}");
        new.push_str(&" ".repeat(old.len() - new.len()));
        let at = b
            .windows(old.len())
            .position(|w| w == old.as_bytes())
            .unwrap_or_else(|| panic!("{old}"));
        b[at..at + old.len()].copy_from_slice(new.as_bytes());
    }
    b
}

/// The sched_switch payloads of the output (68 bytes), as (prev_pid, prev_prio,
/// prev_state, next_pid, next_prio).
fn switch_numbers(out: Vec<u8>) -> Vec<(u32, u32, u64, u32, u32)> {
    let mut r = PerfReader::from_vec(out, ReadOptions::Contents).unwrap();
    let le_u32 = |p: &[u8], at| u32::from_le_bytes(p[at..at + 4].try_into().unwrap());
    raws(&mut r)
        .iter()
        .filter(|p| p.len() == 68)
        .map(|p| {
            let state = u64::from_le_bytes(p[32..40].try_into().unwrap());
            (
                le_u32(p, 24),
                le_u32(p, 28),
                state,
                le_u32(p, 56),
                le_u32(p, 60),
            )
        })
        .collect()
}

#[test]
fn strings_declared_as_numbers_keep_no_name() {
    let input = std::fs::read(fixture("anon/secret-tp.data")).unwrap();
    let anon = || Anonymize::new(names(), false);
    let (out, c) = anonymize_bytes(input.clone(), anon()).unwrap();
    let want = switch_numbers(out);
    assert_eq!(want.len(), 13);
    assert_eq!(c.raw_fields_zeroed, Default::default(), "none with chars");
    // Arrays of 8-, 4-, 2- and 1-byte numbers in the 16 bytes (with perf's size
    // field, 16, whatever the element), and single numbers.
    let arrays = [
        "long {}[2];",
        "int {}[4];",
        "u64 {}[2];",
        "__u64 {}[2];",
        "pid_t {}[8];",
        "short {}[2];",
        "u8 {}[16];",
    ];
    let scalars = ["__u64 {};", "s64 {};", "long {};", "int {};"];
    for (decl, scalar) in arrays
        .iter()
        .map(|d| (d, false))
        .chain(scalars.iter().map(|d| (d, true)))
    {
        let b = retyped(|name| decl.replace("{}", name));
        assert!(holds(&b, "zqxsecretworker") && holds(&b, "zqxotherhelper"));
        let (out, c) = anonymize_bytes(b.clone(), anon()).unwrap();
        assert!(!holds(&out, "zqx"), "{decl}: {:?}", c.warnings());
        assert!(!holds(&expanded(&out), "zqx"), "{decl}");
        // Every sched_switch payload rebuilt, its numbers kept.
        assert_eq!(switch_numbers(out), want, "{decl}");
        let zeroed = c.raw_fields_zeroed.get("sched:sched_switch");
        match scalar {
            // One number said to hold a name: zero, and named.
            true => {
                let fields = vec!["prev_comm".to_string(), "next_comm".to_string()];
                assert_eq!(zeroed, Some(&(fields, 13)), "{decl}");
                let w = c.warnings().join("\n");
                assert!(w.contains("of sched:sched_switch the fields"), "{w}");
            }
            // An array named as a name: the pseudonym in its room.
            false => assert_eq!(zeroed, None, "{decl}"),
        }
    }
    // Renamed as well: an array of numbers, zero whatever its name.
    let b = retyped(|name| format!("long {}x[2];", &name[..name.len() - 1]));
    let (out, c) = anonymize_bytes(b, anon()).unwrap();
    assert!(!holds(&out, "zqx"), "{:?}", c.warnings());
    assert_eq!(switch_numbers(out), want);
    let fields = vec!["prev_comx".to_string(), "next_comx".to_string()];
    assert_eq!(c.raw_fields_zeroed["sched:sched_switch"], (fields, 13));
    assert_eq!(c.raw_fields_zeroed["sched:sched_wakeup"].0, ["comx"]);
}

#[test]
fn a_format_that_lays_out_no_payload_fails_strict() {
    // prev_comm declared one 8-byte number in the 16 bytes perf sized it: no layout,
    // the payload zeroed past its common fields; strict fails on it.
    let mut b = std::fs::read(fixture("anon/secret-tp.data")).unwrap();
    let old = b"char prev_comm[16];\toffset:8;\tsize:16;";
    let new = b"__u64 prev_comm;\toffset:8;\tsize:8;    ";
    let at = b.windows(old.len()).position(|w| w == old).unwrap();
    b[at..at + old.len()].copy_from_slice(new);
    let anon = Anonymize::new(names(), false);
    let (out, c) = anonymize_bytes(b.clone(), anon).unwrap();
    assert!(!holds(&out, "zqx"));
    assert_eq!(c.raw_zeroed, 13, "{:?}", c.warnings());
    let strict = Anonymize::new(names(), false).strict(true);
    let e = anonymize_bytes(b, strict).unwrap_err().to_string();
    assert!(
        e.contains("record SAMPLE: its RAW payload: its event's format does not lay out"),
        "{e}"
    );
}
