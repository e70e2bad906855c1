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
                verbose: None,
                callchain: None,
                created: (0, 0),
                depth: None,
            })
            .collect(),
        filtered: Vec::new(),
        unfiltered_period: period,
        children: false,
    }
}

/// The tables' keys.
const KEYS: [SortKey; 2] = [SortKey::Dso, SortKey::Sym];

/// A recording of `tables` whose one event is cpu-clock.
fn recording(tables: &[EventTable]) -> Recording<'_> {
    Recording {
        tables,
        events: &[(1, 0)],
        names: &[],
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
    let d = diff(&refs, &KEYS, view);
    let paths: Vec<String> = (0..tables.len()).map(|i| format!("{i}.data")).collect();
    let mut out = Vec::new();
    write_stdio(&mut out, &d, &paths, &KEYS, elided, view, false).expect("written");
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
    let d = diff(
        &[recording(&base), recording(&new)],
        &KEYS,
        &DiffView::default(),
    );
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
        // Tied (|30|, baseline 50): a named symbol before an address, as perf's
        // `sort__sym_sort` orders them (`cmp_null`), not by the cells' text.
        [
            ("[.] f", vec![Some(50), Some(20)], Some(-30)),
            ("[.] 0x0000000000001000", vec![Some(50), Some(80)], Some(30)),
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

#[test]
fn delta_sorts_by_the_change_and_delta_abs_by_its_size() {
    // f: -30 points, g: +10 (the baselines tie at 50).
    let base = vec![table(100, &[("[.] f", 50), ("[.] g", 50)])];
    let new = vec![table(100, &[("[.] f", 20), ("[.] g", 60)])];
    let order = |compute| {
        let view = DiffView {
            compute,
            ..DiffView::default()
        };
        let t = text(&[base.clone(), new.clone()], &view, &[]);
        rows(&t)
            .iter()
            .map(|l| l.rsplit(' ').next().unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(order(Compute::DeltaAbs), ["f", "g"]);
    assert_eq!(order(Compute::Delta), ["g", "f"]);
}

#[test]
fn an_unresolved_symbol_widens_the_dso_column_to_an_address() {
    // perf's hists__set_unres_dso_col_len: "Shared Object" (13) becomes 16 wide.
    let base = vec![table(100, &[("[.] 0x0000000000001000", 100)])];
    let t = text(&[base.clone(), base], &DiffView::default(), &[]);
    let rule = t.lines().nth(3).expect("rule");
    assert_eq!(
        rule,
        format!(
            "# ........  .........  {}  {}",
            ".".repeat(16),
            ".".repeat(22)
        )
    );
}

#[test]
fn a_formula_is_cut_one_short_of_perfs_widest_column() {
    // (123456789 * -9223372036854775807) - (123456789 * -9223372036854775807): 71
    // characters, cut to 69 by perf's scnprintf into MAX_COL_WIDTH (70) bytes.
    let view = DiffView {
        compute: Compute::WeightedDiff(-i64::MAX, -i64::MAX),
        formula: true,
        ..DiffView::default()
    };
    let t = text(
        &[
            vec![table(123456789, &[("[.] f", 123456789)])],
            vec![table(123456789, &[("[.] f", 123456789)])],
        ],
        &view,
        &[],
    );
    let f = "(123456789 * -9223372036854775807) - (123456789 * -922337203685477580";
    assert_eq!(f.len(), 69);
    let row = rows(&t).into_iter().next().expect("a row");
    assert!(row.contains(&format!("  {f:>70}  a.out")), "{row}");
}

#[test]
fn a_baseline_event_without_samples_is_printed_without_rows() {
    // perf diff prints every event of the baseline's evlist (dummy:HG of a
    // system-wide recording), the others' events paired by attr type and config.
    let base = vec![table(100, &[("[.] f", 100)])];
    let names = ["cpu-clock".to_string(), "dummy:HG".to_string()];
    let base_rec = Recording {
        tables: &base,
        events: &[(1, 0), (1, 9)],
        names: &names,
    };
    let d = diff(&[base_rec, recording(&base)], &KEYS, &DiffView::default());
    let events: Vec<_> = d.iter().map(|e| (e.event.as_str(), e.rows.len())).collect();
    assert_eq!(events, [("cpu-clock", 1), ("dummy:HG", 0)]);
}

#[test]
fn a_symbol_not_last_is_padded_to_its_column() {
    let t = |tables: &[Vec<EventTable>]| {
        let refs: Vec<Recording> = tables.iter().map(|t| recording(t)).collect();
        let keys = [SortKey::Sym, SortKey::Dso];
        let d = diff(&refs, &keys, &DiffView::default());
        let mut out = Vec::new();
        let paths = ["0.data".to_string(), "1.data".to_string()];
        write_stdio(&mut out, &d, &paths, &keys, &[], &DiffView::default(), true).expect("written");
        String::from_utf8(out).expect("UTF-8")
    };
    let mut base = table(100, &[("[.] f", 60), ("[.] main_loop", 40)]);
    for r in &mut base.rows {
        r.cells.reverse();
    }
    let text = t(&[vec![base.clone()], vec![base]]);
    // "Symbol" is 6 wide, "[.] main_loop" 13: f's cell is padded to 13.
    assert!(text.contains("  [.] f          a.out"), "{text}");
}

#[test]
fn entries_a_filter_hides_are_paired_but_not_printed() {
    // perf's hists__match pairs every entry, filtered or not: f, hidden in the new
    // recording (its first sample was another thread's), still has its delta, and
    // g, hidden in the baseline, is neither printed nor a dummy.
    let base = vec![{
        let mut t = table(100, &[("[.] f", 60)]);
        t.filtered = table(100, &[("[.] g", 40)]).rows;
        t
    }];
    let new = vec![{
        let mut t = table(100, &[("[.] g", 50)]);
        t.filtered = table(100, &[("[.] f", 50)]).rows;
        t
    }];
    let t = text(&[base.clone(), new.clone()], &DiffView::default(), &[]);
    assert_eq!(rows(&t), ["    60.00%    -10.00%  a.out          [.] f"]);
    // -b sums the baseline again over the entries it keeps, the hidden g among them
    // (absolute percentages), or the shown ones alone (relative).
    let view = DiffView {
        baseline_only: true,
        ..DiffView::default()
    };
    let d = diff(&[recording(&base), recording(&new)], &KEYS, &view);
    assert_eq!(d[0].totals[0], 100);
    let relative = DiffView {
        relative: true,
        ..view
    };
    let d = diff(&[recording(&base), recording(&new)], &KEYS, &relative);
    assert_eq!(d[0].totals[0], 60);
}

#[test]
fn percents_of_nothing_print_as_cs_printf_prints_them() {
    // perf's period_percent divides unguarded: a recording a filter left nothing has
    // infinite percents, nothing of nothing is NaN (x86's, negative).
    let nothing = percent(0, 0);
    assert_eq!(text::c_float(percent(5, 0), true), "+inf");
    assert_eq!(text::c_float(-percent(5, 0), true), "-inf");
    assert_eq!(text::c_float(-f64::NAN, true), "-nan");
    assert_eq!(text::c_float(f64::NAN, false), "nan");
    assert_eq!(text::c_float(-0.001, true), "-0.00");
    assert_eq!(text::c_float(12.345, false), "12.35");
    assert!(nothing.is_nan());
    // A NaN goes after the numbers, ties with a NaN.
    assert_eq!(Compute::DeltaAbs.order(nothing, 1.0), Ordering::Greater);
    assert_eq!(Compute::Delta.order(nothing, nothing), Ordering::Equal);
}

#[test]
fn relative_values_are_of_the_samples_no_filter_hid() {
    // The new recording: 100 in all, 40 of them kept by the filter (its f entry, 20,
    // is hidden but counted in its own right). perf's compute_delta takes each
    // recording's total_non_filtered_period: f is 20/40 = 50% there, 60/60 = 100% in
    // the baseline.
    let base = vec![table(60, &[("[.] f", 60)])];
    let new = vec![{
        let mut t = table(20, &[("[.] g", 20)]);
        t.filtered = table(20, &[("[.] f", 20)]).rows;
        t.unfiltered_period = 40;
        t
    }];
    let view = DiffView {
        relative: true,
        ..DiffView::default()
    };
    let d = diff(&[recording(&base), recording(&new)], &KEYS, &view);
    let f = d[0].rows.iter().find(|r| r.cells[1] == "[.] f").expect("f");
    assert_eq!(f.values[0].map(|v| v.round() as i64), Some(-50));
    assert_eq!(d[0].totals, [60, 40]);
}
