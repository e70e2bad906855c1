//! Tally's tables on the fixtures.

use super::*;

#[test]
fn sort_keys_by_perfs_names() {
    assert_eq!(
        SortKey::parse_list("comm,dso,sym").unwrap(),
        [SortKey::Comm, SortKey::Dso, SortKey::Sym]
    );
    assert_eq!(
        SortKey::parse_list("pid, symbol").unwrap(),
        [SortKey::Pid, SortKey::Sym]
    );
    assert!(SortKey::parse_list("comm,bogus").is_err());
    // A key named again is dropped, as perf's sort_dimension__add skips a taken one.
    assert_eq!(
        SortKey::parse_list("sym,dso,symbol").unwrap(),
        [SortKey::Sym, SortKey::Dso]
    );
}

/// `sh -c 'hot'` filtered to the child: the child's one `sh` sample (before its exec)
/// has the key of the shell's earlier `sh` samples, so perf adds it to the shell's
/// filtered hist entry; it is neither a row nor in the relative base.
#[test]
fn a_sample_joins_the_earlier_entry_of_its_name_from_another_thread() {
    use crate::symbolize::SymbolOptions;
    use perfdata_core::record::ForkExit;

    let mut m = Machine::new();
    m.process_comm(10, 10, "sh", false);
    let mut samples = Vec::new();
    let mut sample = |m: &mut Machine, pid: i32, period: u64| {
        let ip = m.resolve(pid, pid, 0x1000, false);
        samples.push(ResolvedSample {
            event: 0,
            pid,
            tid: pid,
            cpu: Some(0),
            time: None,
            period,
            ip,
            callchain: Vec::new(),
            unwound: 0,
            lbr: false,
        });
    };
    sample(&mut m, 10, 1);
    let fork = ForkExit {
        pid: 11,
        ppid: 10,
        tid: 11,
        ptid: 10,
        time: 1,
    };
    m.process_fork(&fork, true);
    sample(&mut m, 11, 10);
    m.process_comm(11, 11, "hot", true);
    sample(&mut m, 11, 100);
    let filter = SampleFilter {
        pids: vec![(11, 11)],
        percentage: Percentage::Relative,
        ..SampleFilter::default()
    };
    let mut tally = Tally::with_filter(&[SortKey::Comm, SortKey::Sym], filter);
    for s in &samples {
        tally.count(&m, s);
    }
    let replay = crate::stacks::testing::replay(m, "task-clock");
    let tables = tally.tables(
        &replay,
        &mut Symbolizer::new(SymbolOptions::default()),
        &mut Vec::new(),
    );
    let rows: Vec<_> = tables[0].rows.iter().map(|r| &r.cells[0]).collect();
    assert_eq!(rows, ["hot"]);
    assert_eq!((tables[0].samples, tables[0].period), (1, 100));
    assert_eq!(tables[0].rows[0].percent, 100.0);
}

/// `perf record ./spin`: samples of the child before its exec are `perf-exec`'s. perf
/// sets the Command column's width by the rows' threads' last names (`spin`, so the
/// header's 7) and cuts `perf-exec` to it (`perf-ex`).
#[test]
fn the_command_column_is_as_wide_as_the_threads_last_names() {
    use crate::symbolize::SymbolOptions;

    let mut m = Machine::new();
    m.process_comm(11, 11, "perf-exec", false);
    let mut samples = Vec::new();
    let mut sample = |m: &mut Machine, period: u64| {
        let ip = m.resolve(11, 11, 0x1000, false);
        samples.push(ResolvedSample {
            event: 0,
            pid: 11,
            tid: 11,
            cpu: Some(0),
            time: None,
            period,
            ip,
            callchain: Vec::new(),
            unwound: 0,
            lbr: false,
        });
    };
    sample(&mut m, 1);
    m.process_comm(11, 11, "spin", true);
    sample(&mut m, 100);
    let mut tally = Tally::new(&[SortKey::Comm]);
    for s in &samples {
        tally.count(&m, s);
    }
    let replay = crate::stacks::testing::replay(m, "task-clock");
    let tables = tally.tables(
        &replay,
        &mut Symbolizer::new(SymbolOptions::default()),
        &mut Vec::new(),
    );
    let rows: Vec<_> = tables[0]
        .rows
        .iter()
        .map(|r| (&r.cells[0], r.comm_len))
        .collect();
    assert_eq!(
        rows,
        [(&"spin".to_string(), 4), (&"perf-exec".to_string(), 4)]
    );
    let mut out = Vec::new();
    let preamble = crate::text::Preamble::default();
    let view = crate::text::View::default();
    crate::text::write_stdio(&mut out, &tables, &[SortKey::Comm], view, &preamble).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("# Overhead  Command\n# ........  .......\n"),
        "{text}"
    );
    assert!(text.contains("   0.99%  perf-ex\n"), "{text}");
}
