use super::*;
use crate::model::{Row, SortKey};

fn table(period: u64, rows: &[(&str, u64)]) -> EventTable {
    EventTable {
        event: "cpu-clock".into(),
        index: 0,
        group_size: 1,
        members: Vec::new(),
        samples: rows.len() as u64,
        period,
        rows: rows
            .iter()
            .map(|(sym, p)| Row {
                cells: vec!["a.out".into(), (*sym).into()],
                samples: 1,
                period: *p,
                percent: 0.0,
                children: None,
                members: Vec::new(),
                comm_len: 0,
                callchain: None,
                created: (0, 0),
                depth: None,
            })
            .collect(),
        children: false,
    }
}

/// A recording of `tables` whose one event is cpu-clock.
fn recording(tables: &[EventTable]) -> Recording<'_> {
    Recording {
        tables,
        events: &[(1, 0)],
    }
}

/// Three recordings: f and g in the baseline, f and h in the second, g and h in the
/// third (each of 100).
fn three() -> [Vec<EventTable>; 3] {
    [
        vec![table(100, &[("[.] f", 60), ("[.] g", 40)])],
        vec![table(100, &[("[.] f", 30), ("[.] h", 70)])],
        vec![table(100, &[("[.] g", 50), ("[.] h", 50)])],
    ]
}

fn text(tables: &[Vec<EventTable>], view: &DiffView, elided: &[SortKey]) -> String {
    let refs: Vec<Recording> = tables.iter().map(|t| recording(t)).collect();
    let d = diff(&refs, view);
    let paths: Vec<String> = (0..tables.len()).map(|i| format!("{i}.data")).collect();
    let mut out = Vec::new();
    let keys = [SortKey::Dso, SortKey::Sym];
    write_stdio(&mut out, &d, &paths, &keys, elided, view, false).expect("written");
    String::from_utf8(out).expect("UTF-8")
}

/// The rows of a text, its lines that are not comments.
fn rows(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with('#')).collect()
}

#[test]
fn computations_parse_as_perfs_option() {
    assert_eq!("delta-abs".parse(), Ok(Compute::DeltaAbs));
    assert_eq!("wdiff:1,2".parse(), Ok(Compute::WeightedDiff(1, 2)));
    assert!("wdiff:0,2".parse::<Compute>().is_err());
    assert!("wdiff".parse::<Compute>().is_err());
    assert!("delta:x".parse::<Compute>().is_err());
}

#[test]
fn unresolved_addresses_of_a_dso_are_one_row_named_by_the_lowest() {
    let base = table(
        100,
        &[
            ("[.] f", 50),
            ("[.] 0x0000000000002000", 30),
            ("[.] 0x0000000000001000", 20),
        ],
    );
    let new = table(100, &[("[.] f", 20), ("[.] 0x0000000000000500", 80)]);
    let (base, new) = ([base], [new]);
    let d = diff(&[recording(&base), recording(&new)], &DiffView::default());
    let rows: Vec<_> = d[0]
        .rows
        .iter()
        .map(|r| {
            (
                r.cells[1].as_str(),
                r.periods.clone(),
                r.values[0].map(|v| v.round() as i64),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("[.] 0x0000000000001000", vec![Some(50), Some(80)], Some(30)),
            ("[.] f", vec![Some(50), Some(20)], Some(-30)),
        ]
    );
}

#[test]
fn three_recordings_print_as_perf_diff_prints_them() {
    let t = text(&three(), &DiffView::default(), &[]);
    let expected = "\
# Event 'cpu-clock'
#
# Data files:
#  [0] 0.data (Baseline)
#  [1] 1.data 
#  [2] 2.data 
#
# Baseline/0  Delta Abs/1  Delta Abs/2  Shared Object  Symbol
# ..........  ...........  ...........  .............  ......
#
                  +70.00%      +50.00%  a.out          [.] h
      60.00%      -30.00%               a.out          [.] f
      40.00%                   +10.00%  a.out          [.] g
";
    assert_eq!(t, expected);
}

#[test]
fn the_order_option_sorts_by_that_recordings_column() {
    let view = DiffView {
        order: 2,
        ..DiffView::default()
    };
    let t = text(&three(), &view, &[]);
    let syms: Vec<&str> = rows(&t).iter().map(|l| &l[l.len() - 1..]).collect();
    // By the third recording's |delta|: h (50), g (10); f has none there.
    assert_eq!(syms, ["h", "g", "f"]);
    // Order 0: the baseline's period first, rows it lacks last.
    let view = DiffView {
        order: 0,
        ..DiffView::default()
    };
    let t = text(&three(), &view, &[]);
    let syms: Vec<&str> = rows(&t).iter().map(|l| &l[l.len() - 1..]).collect();
    assert_eq!(syms, ["f", "g", "h"]);
}

#[test]
fn weights_of_three_recordings_keep_perfs_fourteen_digits() {
    let view = DiffView {
        compute: Compute::WeightedDiff(1, 2),
        ..DiffView::default()
    };
    let t = text(&three(), &view, &[]);
    // The column is 15 wide ("Weighted diff/1"); perf prints the value in 14 and pads
    // after it; a row the baseline lacks says N/A, right-aligned, and sorts after the
    // rows of values of the second recording, before those the second one lacks.
    assert_eq!(
        rows(&t),
        [
            "      60.00%               0                    a.out          [.] f",
            "                          N/A              N/A  a.out          [.] h",
            "      40.00%                               60   a.out          [.] g",
        ]
    );
}

#[test]
fn periods_and_formulas_are_columns_of_each_recording() {
    let view = DiffView {
        period: true,
        formula: true,
        ..DiffView::default()
    };
    // The second recording's total is 200 (rows outside these two).
    let [base, mut new, _] = three();
    new[0].period = 200;
    let t = text(&[base, new], &view, &[]);
    let header = t.lines().nth(2).expect("header");
    assert_eq!(
        header
            .split("  ")
            .filter(|s| !s.is_empty())
            .map(str::trim)
            .collect::<Vec<_>>(),
        [
            "# Baseline",
            "Base period",
            "Delta Abs",
            "Formula",
            "Period",
            "Shared Object",
            "Symbol"
        ]
    );
    let f = rows(&t)
        .into_iter()
        .find(|l| l.ends_with("[.] f"))
        .expect("row of f");
    assert!(f.contains("(30 * 100 / 200) - (60 * 100 / 100)"), "{f}");
    let h = rows(&t)
        .into_iter()
        .find(|l| l.ends_with("[.] h"))
        .expect("row of h");
    // A dummy's base period is 0, its formula against 0.
    assert!(h.contains("(70 * 100 / 200) - (0 * 100 / 100)"), "{h}");
    assert!(
        h.starts_with(&format!("  {}  {:>14}", " ".repeat(8), 0)),
        "{h}"
    );
}

#[test]
fn baseline_only_keeps_matched_rows_and_sums_the_baseline_again() {
    let view = DiffView {
        baseline_only: true,
        ..DiffView::default()
    };
    let t = text(&three()[..2], &view, &[]);
    // g is dropped (no other recording has it), h too (the baseline lacks it); f's
    // Baseline is of the 60 kept, its delta of the whole.
    assert_eq!(rows(&t), ["   100.00%    -30.00%  a.out          [.] f"]);
}

#[test]
fn an_elided_key_is_left_out_unless_every_key_is() {
    let t = text(&three()[..2], &DiffView::default(), &[SortKey::Dso]);
    assert!(t.contains("# Baseline  Delta Abs  Symbol\n"), "{t}");
    let t = text(
        &three()[..2],
        &DiffView::default(),
        &[SortKey::Dso, SortKey::Sym],
    );
    assert!(t.contains("Shared Object  Symbol"), "{t}");
}
