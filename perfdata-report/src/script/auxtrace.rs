//! The events perf synthesizes from an AUX area trace, as far as `perf script` checks its
//! fields against them.
//!
//! When perf script meets an AUXTRACE_INFO record, the trace's decoder (cs-etm.c,
//! intel-pt.c, ...) adds the events its samples will come as (a `branches` event for
//! perf script's default `--itrace=ce`) to the event list, and builtin-script.c's
//! `process_attr` checks the fields `-F` asked for against each new event, as it checked
//! the recorded ones: a field the event does not carry that the user named stops the
//! listing there (`Samples for 'branches:u' event do not have TIME attribute set`).
//! perfdata makes the same events so that the same views are refused; an Intel PT
//! trace's samples are then printed as these events (`intel_pt` decodes it).

use perfdata_core::attr::{AttrFlags, PerfEventAttr, SampleType};
use perfdata_core::record::AuxtraceInfo;
use perfdata_core::EventAttr;

/// PERF_AUXTRACE_CS_ETM: a CoreSight ETM trace.
const CS_ETM: u32 = 3;
/// The AUXTRACE_INFO word holding the ETM PMU's type (high half) and the CPU count.
const CS_PMU_TYPE_CPUS: usize = 1;
/// ETM_OPT_TS: the ETM config bit asking for timestamps in the trace.
const ETM_OPT_TS: u32 = 28;
/// PERF_COUNT_HW_BRANCH_INSTRUCTIONS, the config of the `branches` event.
const HW_BRANCH_INSTRUCTIONS: u64 = 4;
/// PERF_COUNT_HW_INSTRUCTIONS, the config of Intel PT's `transactions` event.
const HW_INSTRUCTIONS: u64 = 1;
/// PERF_TYPE_SYNTH: the type of perf's synthesized events (psb, cbr, ...).
pub const TYPE_SYNTH: u32 = 6;
/// Intel PT's PERF_SYNTH_INTEL_* configs (util/event.h), by the names perf gives them.
pub mod synth_config {
    /// `ptwrite`.
    pub const PTWRITE: u64 = 1;
    /// `mwait`.
    pub const MWAIT: u64 = 2;
    /// `pwre`.
    pub const PWRE: u64 = 3;
    /// `exstop`.
    pub const EXSTOP: u64 = 4;
    /// `pwrx`.
    pub const PWRX: u64 = 5;
    /// `cbr`.
    pub const CBR: u64 = 6;
    /// `psb`.
    pub const PSB: u64 = 7;
    /// `evt`.
    pub const EVT: u64 = 8;
}
/// INTEL_PT_CFG_PWR_EVT_EN: the intel_pt config bit of power events.
const PT_PWR_EVT_EN: u64 = 1 << 4;
/// INTEL_PT_CFG_EVT_EN: the intel_pt config bit of Event Trace.
const PT_EVT_EN: u64 = 1 << 31;

/// An event a trace decoder adds: its attr and the name perf gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthEvent {
    /// The attr.
    pub attr: PerfEventAttr,
    /// perf's name for it (`intel_pt_set_event_name`); None: named from the attr.
    pub name: Option<&'static str>,
}

/// perf's PERF_SAMPLE_MASK (util/event.h): the sample fields a synthesized event keeps
/// of its trace event's.
fn sample_mask() -> SampleType {
    SampleType::IP
        | SampleType::TID
        | SampleType::TIME
        | SampleType::ADDR
        | SampleType::ID
        | SampleType::STREAM_ID
        | SampleType::CPU
        | SampleType::PERIOD
        | SampleType::IDENTIFIER
}

/// The events perf 6.1's perf script synthesizes for the trace `info` describes, in the
/// order it adds them; none for a trace kind not modelled here (SPE, ...) or without its
/// trace event among the recorded `events`.
pub fn synthesized_events(info: &AuxtraceInfo, events: &[EventAttr]) -> Vec<SynthEvent> {
    match info.type_ {
        CS_ETM => cs_etm_events(info, events)
            .into_iter()
            .map(|attr| SynthEvent { attr, name: None })
            .collect(),
        crate::intel_pt::info::AUXTRACE_TYPE => intel_pt_events(info, events),
        _ => Vec::new(),
    }
}

/// intel-pt.c's `intel_pt_synth_events` under perf script's default itrace options
/// (`itrace_synth_opts__set_default` with no sampling: branches (calls), transactions,
/// ptwrites, power and other events): `branches` and `transactions` (hardware events,
/// the second without PERIOD), then the PERF_TYPE_SYNTH events with RAW: `ptwrite`,
/// `cbr`, `psb`, with power-event tracing `mwait`, `pwre`, `exstop`, `pwrx`, and with
/// Event Trace `evt`. perf adds `iflag` too where the PMU's caps say event_trace; the
/// caps are not read here.
fn intel_pt_events(info: &AuxtraceInfo, events: &[EventAttr]) -> Vec<SynthEvent> {
    let Some(pt) = crate::intel_pt::info::IntelPtInfo::from_priv(&info.priv_) else {
        return Vec::new();
    };
    let Some(evsel) = events.iter().find(|a| a.attr.type_ == pt.pmu_type) else {
        return Vec::new();
    };
    let evsel = &evsel.attr;
    // intel_pt_timeless_decoding: no time conversion, or an intel_pt event without TIME
    // or without TSC packets.
    let timeless = pt.tc.time_mult == 0
        || events
            .iter()
            .filter(|a| a.attr.type_ == pt.pmu_type)
            .any(|a| {
                !a.attr.sample_type.contains(SampleType::TIME)
                    || (pt.tsc_bit != 0 && a.attr.config & pt.tsc_bit == 0)
            });
    let mut sample_type =
        (evsel.sample_type & sample_mask()) | SampleType::IP | SampleType::TID | SampleType::PERIOD;
    if timeless {
        sample_type.remove(SampleType::TIME);
    } else {
        sample_type.insert(SampleType::TIME);
    }
    if !pt.per_cpu_mmaps {
        sample_type.remove(SampleType::CPU);
    }
    let copied = AttrFlags::EXCLUDE_USER
        | AttrFlags::EXCLUDE_KERNEL
        | AttrFlags::EXCLUDE_HV
        | AttrFlags::EXCLUDE_HOST
        | AttrFlags::EXCLUDE_GUEST
        | AttrFlags::SAMPLE_ID_ALL;
    let base = PerfEventAttr {
        type_: 0,
        sample_period: 1,
        read_format: evsel.read_format,
        flags: evsel.flags & copied,
        ..Default::default()
    };
    let event = |type_, config, sample_type, name| SynthEvent {
        attr: PerfEventAttr {
            type_,
            config,
            sample_type,
            ..base.clone()
        },
        name: Some(name),
    };
    let mut out = vec![event(
        0,
        HW_BRANCH_INSTRUCTIONS,
        sample_type | SampleType::ADDR,
        "branches",
    )];
    sample_type.remove(SampleType::PERIOD);
    out.push(event(0, HW_INSTRUCTIONS, sample_type, "transactions"));
    sample_type.insert(SampleType::RAW);
    use synth_config as c;
    let mut synth = vec![(c::PTWRITE, "ptwrite"), (c::CBR, "cbr"), (c::PSB, "psb")];
    if evsel.config & PT_PWR_EVT_EN != 0 {
        synth.extend([
            (c::MWAIT, "mwait"),
            (c::PWRE, "pwre"),
            (c::EXSTOP, "exstop"),
            (c::PWRX, "pwrx"),
        ]);
    }
    if evsel.config & PT_EVT_EN != 0 {
        synth.push((c::EVT, "evt"));
    }
    out.extend(
        synth
            .into_iter()
            .map(|(config, name)| event(TYPE_SYNTH, config, sample_type, name)),
    );
    out
}

/// cs-etm.c's `cs_etm__synth_events` under perf script's default `--itrace=ce`: one
/// `branches` event (calls), with the trace event's sample fields, IP, TID, PERIOD and
/// ADDR, and TIME only where the trace was recorded with timestamps
/// (`cs_etm__setup_timeless_decoding`: the ETM event's config bit ETM_OPT_TS).
fn cs_etm_events(info: &AuxtraceInfo, events: &[EventAttr]) -> Option<PerfEventAttr> {
    let pmu_type = (*info.priv_.get(CS_PMU_TYPE_CPUS)? >> 32) as u32;
    let etm = &events.iter().find(|a| a.attr.type_ == pmu_type)?.attr;
    let timeless = etm.config & (1 << ETM_OPT_TS) == 0;
    let mut sample_type = (etm.sample_type & sample_mask())
        | SampleType::IP
        | SampleType::TID
        | SampleType::PERIOD
        | SampleType::ADDR;
    if timeless {
        sample_type.remove(SampleType::TIME);
    } else {
        sample_type.insert(SampleType::TIME);
    }
    let copied = AttrFlags::EXCLUDE_USER
        | AttrFlags::EXCLUDE_KERNEL
        | AttrFlags::EXCLUDE_HV
        | AttrFlags::EXCLUDE_HOST
        | AttrFlags::EXCLUDE_GUEST
        | AttrFlags::SAMPLE_ID_ALL;
    Some(PerfEventAttr {
        type_: 0,
        config: HW_BRANCH_INSTRUCTIONS,
        sample_period: 1,
        sample_type,
        read_format: etm.read_format,
        flags: etm.flags & copied,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn etm_info(pmu_type: u64) -> AuxtraceInfo {
        AuxtraceInfo {
            type_: CS_ETM,
            reserved: 0,
            priv_: vec![1, (pmu_type << 32) | 4, 0],
        }
    }

    fn event(attr: &PerfEventAttr) -> EventAttr {
        EventAttr {
            attr: attr.clone(),
            ids: vec![1],
            ids_section: None,
            name: None,
        }
    }

    #[test]
    fn an_etm_trace_without_timestamps_gives_a_branches_event_without_time() {
        let mut etm = PerfEventAttr {
            type_: 8,
            config: 0x4000,
            sample_type: SampleType::IP
                | SampleType::TID
                | SampleType::TIME
                | SampleType::CPU
                | SampleType::RAW,
            flags: AttrFlags::EXCLUDE_KERNEL | AttrFlags::EXCLUDE_HV | AttrFlags::DISABLED,
            ..Default::default()
        };
        let events = synthesized_events(&etm_info(8), &[event(&etm)]);
        assert_eq!(events.len(), 1);
        let b = &events[0].attr;
        assert_eq!((b.type_, b.config), (0, 4));
        assert_eq!(
            b.sample_type,
            SampleType::IP
                | SampleType::TID
                | SampleType::CPU
                | SampleType::PERIOD
                | SampleType::ADDR
        );
        assert_eq!(b.flags, AttrFlags::EXCLUDE_KERNEL | AttrFlags::EXCLUDE_HV);

        // With ETM_OPT_TS the trace has times, and so has the event.
        etm.config |= 1 << ETM_OPT_TS;
        let recorded = [event(&etm)];
        let b = &synthesized_events(&etm_info(8), &recorded)[0].attr;
        assert!(b.sample_type.contains(SampleType::TIME));
        // Another PMU's trace, or another kind of trace: nothing made.
        assert!(synthesized_events(&etm_info(9), &recorded).is_empty());
        let mut pt = etm_info(8);
        pt.type_ = 1;
        assert!(synthesized_events(&pt, &recorded).is_empty());
    }

    #[test]
    fn an_intel_pt_trace_gives_perfs_events_in_its_order() {
        // AUXTRACE_INFO words: PMU type 8, time_mult 1, TSC bit 0x400, per-CPU mmaps.
        let mut priv_ = vec![8, 10, 1, 0, 1, 0x400, 0, 2, 0, 1];
        let info = AuxtraceInfo {
            type_: 1,
            reserved: 0,
            priv_: priv_.clone(),
        };
        let pt = PerfEventAttr {
            type_: 8,
            config: 0x400,
            sample_type: SampleType::IP
                | SampleType::TID
                | SampleType::TIME
                | SampleType::CPU
                | SampleType::IDENTIFIER,
            flags: AttrFlags::SAMPLE_ID_ALL | AttrFlags::DISABLED,
            ..Default::default()
        };
        let events = synthesized_events(&info, &[event(&pt)]);
        let names: Vec<_> = events.iter().map(|e| e.name.unwrap()).collect();
        assert_eq!(names, ["branches", "transactions", "ptwrite", "cbr", "psb"]);
        let common = SampleType::IP
            | SampleType::TID
            | SampleType::TIME
            | SampleType::CPU
            | SampleType::IDENTIFIER;
        let b = &events[0].attr;
        assert_eq!((b.type_, b.config, b.sample_period), (0, 4, 1));
        assert_eq!(
            b.sample_type,
            common | SampleType::PERIOD | SampleType::ADDR
        );
        assert_eq!(b.flags, AttrFlags::SAMPLE_ID_ALL);
        assert_eq!(events[1].attr.sample_type, common);
        let psb = &events[4].attr;
        assert_eq!((psb.type_, psb.config), (TYPE_SYNTH, synth_config::PSB));
        assert_eq!(psb.sample_type, common | SampleType::RAW);
        // Per-thread mmaps: no CPU; no TSC packets: no time.
        priv_[9] = 0;
        let info = AuxtraceInfo { priv_, ..info };
        let no_tsc = PerfEventAttr { config: 0, ..pt };
        let b = &synthesized_events(&info, &[event(&no_tsc)])[0].attr;
        assert!(!b.sample_type.contains(SampleType::CPU));
        assert!(!b.sample_type.contains(SampleType::TIME));
    }
}
