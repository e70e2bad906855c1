//! `--dsos` of two names against perf 6.1 live, byte for byte: with a DSO filter perf
//! leaves the Shared Object column as wide as the names it prints, even where an
//! unresolved symbol is among the rows (`hists__set_unres_dso_col_len` does nothing
//! when `symbol_conf.dso_list` is set). Seen on a new C++ `-g` recording: perfdata
//! made the column 16 wide, an address's width, and every row differed.

use perfdata_tests::{fixtures_dir, perf_available};

use crate::report_graph_oracle::differs;

#[perfdata_oracle::needs(perf)]
#[test]
fn two_dsos_keep_the_dso_column_as_wide_as_their_names() {
    assert!(perf_available());
    let mut problems = Vec::new();
    for (f, dsos) in [
        ("file-callgraph-fp.data", "libc.so.6,perfdata-spin"),
        ("anon-secret.data", "libc.so.6,zqxsecretworker"),
    ] {
        let input = fixtures_dir().join(f);
        for view in [&["--dsos", dsos][..], &["--no-children", "--dsos", dsos]] {
            problems.extend(differs(&input, view, view));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
