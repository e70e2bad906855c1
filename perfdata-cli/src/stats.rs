//! `perfdata stats`.

use std::io::Write;
use std::path::Path;

use perfdata_view::stats::Stats;

use crate::{print_warnings, CliError};

pub fn run(path: &Path, as_json: bool) -> Result<(), CliError> {
    let mut reader = perfdata_core::PerfReader::open_with(
        path,
        perfdata_core::ReadOptions::ContainersAndContents,
    )?;
    let (stats, result) = {
        let _progress = crate::progress::Progress::watch(path, reader.progress());
        Stats::collect(&mut reader)
    };
    crate::verbose::describe_input(reader.meta());
    print_warnings(reader.meta());
    result?;
    let aux = reader
        .meta()
        .features
        .contains_key(&perfdata_core::feature::FeatureId::AuxTrace);
    let mut out = std::io::stdout().lock();
    if as_json {
        perfdata_view::json::write_pretty(&mut out, &stats.to_json())?;
    } else {
        write_text(&mut out, &stats, aux)?;
    }
    Ok(())
}

/// The layout of `perf report --stats`.
fn write_text(out: &mut impl Write, stats: &Stats, aux: bool) -> std::io::Result<()> {
    let note = if aux {
        " (excludes AUX area (e.g. instruction trace) decoded / synthesized events)"
    } else {
        ""
    };
    writeln!(out, "Aggregated stats:{note}")?;
    writeln!(out, "{:>16} events: {:>10}", "TOTAL", stats.total)?;
    for (ty, n) in &stats.records() {
        let pct = 100.0 * *n as f64 / stats.total.max(1) as f64;
        writeln!(out, "{:>16} events: {:>10}  ({:4.1}%)", ty.name(), n, pct)?;
    }
    for ev in &stats.events {
        if ev.samples == 0 && ev.lost_samples == 0 {
            continue;
        }
        writeln!(out, "{} stats:", ev.name)?;
        if ev.samples > 0 {
            writeln!(out, "{:>16} events: {:>10}", "SAMPLE", ev.samples)?;
        }
        if ev.lost_samples > 0 {
            writeln!(
                out,
                "{:>16} events: {:>10}",
                "LOST_SAMPLES", ev.lost_samples
            )?;
        }
    }
    Ok(())
}
