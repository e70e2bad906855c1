//! The events perf synthesizes from an AUX area trace, as far as `perf script` checks its
//! fields against them.
//!
//! When perf script meets an AUXTRACE_INFO record, the trace's decoder (cs-etm.c,
//! intel-pt.c, ...) adds the events its samples will come as (a `branches` event for
//! perf script's default `--itrace=ce`) to the event list, and builtin-script.c's
//! `process_attr` checks the fields `-F` asked for against each new event, as it checked
//! the recorded ones: a field the event does not carry that the user named stops the
//! listing there (`Samples for 'branches:u' event do not have TIME attribute set`).
//! perfdata does not decode these traces; it makes the same events so that the same
//! views are refused.

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
/// order it adds them; none for a trace kind not modelled here (Intel PT, SPE, ...) or
/// without its trace event among the recorded `events`.
pub fn synthesized_events(info: &AuxtraceInfo, events: &[EventAttr]) -> Vec<PerfEventAttr> {
    match info.type_ {
        CS_ETM => cs_etm_events(info, events).into_iter().collect(),
        _ => Vec::new(),
    }
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
        let b = &events[0];
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
        let b = &synthesized_events(&etm_info(8), &recorded)[0];
        assert!(b.sample_type.contains(SampleType::TIME));
        // Another PMU's trace, or another kind of trace: nothing made.
        assert!(synthesized_events(&etm_info(9), &recorded).is_empty());
        let mut pt = etm_info(8);
        pt.type_ = 1;
        assert!(synthesized_events(&pt, &recorded).is_empty());
    }
}
