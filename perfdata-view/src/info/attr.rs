//! EVENT_DESC and GROUP_DESC: perf's `print_event_desc` with `perf_event_attr__fprintf`,
//! and `print_group_desc`.

use std::io::{self, Write};

use perfdata_core::attr::PerfEventAttr;
use perfdata_core::feature::{EventDesc, GroupDesc};
use perfdata_core::names::event_name;

use perfdata_core::text::c_str_bytes as c_str;

use super::Ctx;

/// `# event : name = NAME, , id = { 1, 2 }, type = 1, ...` per EVENT_DESC entry.
///
/// The attrs come from EVENT_DESC itself (not the attrs section), with the names recorded
/// there: perf re-reads the section to print it.
pub fn write_event_desc(out: &mut impl Write, desc: &EventDesc) -> io::Result<()> {
    for ev in &desc.events {
        out.write_all(b"# event : name = ")?;
        out.write_all(c_str(&ev.name.bytes))?;
        out.write_all(b", ")?;
        if !ev.ids.is_empty() {
            write!(out, ", id = {{")?;
            for (i, id) in ev.ids.iter().enumerate() {
                if i > 0 {
                    write!(out, ",")?;
                }
                write!(out, " {id}")?;
            }
            write!(out, " }}")?;
        }
        for (name, value) in attr_fields(&ev.attr) {
            write!(out, ", {name} = {value}")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

/// perf 6.1's `__p_sample_type` names, in its order (not bit order; TRANSACTION, bit 17,
/// is missing from its list and never printed).
const SAMPLE_TYPE: [(u32, &str); 24] = [
    (0, "IP"),
    (1, "TID"),
    (2, "TIME"),
    (3, "ADDR"),
    (4, "READ"),
    (5, "CALLCHAIN"),
    (6, "ID"),
    (7, "CPU"),
    (8, "PERIOD"),
    (9, "STREAM_ID"),
    (10, "RAW"),
    (11, "BRANCH_STACK"),
    (12, "REGS_USER"),
    (13, "STACK_USER"),
    (16, "IDENTIFIER"),
    (18, "REGS_INTR"),
    (15, "DATA_SRC"),
    (14, "WEIGHT"),
    (19, "PHYS_ADDR"),
    (20, "AUX"),
    (21, "CGROUP"),
    (22, "DATA_PAGE_SIZE"),
    (23, "CODE_PAGE_SIZE"),
    (24, "WEIGHT_STRUCT"),
];

const READ_FORMAT: [(u32, &str); 5] = [
    (0, "TOTAL_TIME_ENABLED"),
    (1, "TOTAL_TIME_RUNNING"),
    (2, "ID"),
    (3, "GROUP"),
    (4, "LOST"),
];

const BRANCH_SAMPLE_TYPE: [(u32, &str); 19] = [
    (0, "USER"),
    (1, "KERNEL"),
    (2, "HV"),
    (3, "ANY"),
    (4, "ANY_CALL"),
    (5, "ANY_RETURN"),
    (6, "IND_CALL"),
    (7, "ABORT_TX"),
    (8, "IN_TX"),
    (9, "NO_TX"),
    (10, "COND"),
    (11, "CALL_STACK"),
    (12, "IND_JUMP"),
    (13, "CALL"),
    (14, "NO_FLAGS"),
    (15, "NO_CYCLES"),
    (16, "TYPE_SAVE"),
    (17, "HW_INDEX"),
    (18, "PRIV_SAVE"),
];

/// The one-bit fields of the flag word, by bit; precise_ip (bits 15-16) is in its place.
const FLAGS: [(u32, &str); 37] = [
    (0, "disabled"),
    (1, "inherit"),
    (2, "pinned"),
    (3, "exclusive"),
    (4, "exclude_user"),
    (5, "exclude_kernel"),
    (6, "exclude_hv"),
    (7, "exclude_idle"),
    (8, "mmap"),
    (9, "comm"),
    (10, "freq"),
    (11, "inherit_stat"),
    (12, "enable_on_exec"),
    (13, "task"),
    (14, "watermark"),
    (15, "precise_ip"),
    (17, "mmap_data"),
    (18, "sample_id_all"),
    (19, "exclude_host"),
    (20, "exclude_guest"),
    (21, "exclude_callchain_kernel"),
    (22, "exclude_callchain_user"),
    (23, "mmap2"),
    (24, "comm_exec"),
    (25, "use_clockid"),
    (26, "context_switch"),
    (27, "write_backward"),
    (28, "namespaces"),
    (29, "ksymbol"),
    (30, "bpf_event"),
    (31, "aux_output"),
    (32, "cgroup"),
    (33, "text_poke"),
    (34, "build_id"),
    (35, "inherit_thread"),
    (36, "remove_on_exec"),
    (37, "sigtrap"),
];

/// `__p_bits`: the names of the set bits joined by '|'. perf writes them into a buffer
/// shared by all fields, so a value with no known bit leaves the previous field's text
/// there, and that is what gets printed: `None` means "keep the buffer".
fn bits(value: u64, names: &[(u32, &str)]) -> Option<String> {
    let set: Vec<&str> = names
        .iter()
        .filter(|(bit, _)| value & (1u64 << bit) != 0)
        .map(|(_, name)| *name)
        .collect();
    (!set.is_empty()).then(|| set.join("|"))
}

/// Any unsigned field as perf's `(uint64_t)` cast sees it.
fn num(v: impl Into<u64>) -> u64 {
    v.into()
}

/// `perf_event_attr__fprintf` of perf 6.1: every non-zero field, in its order, as
/// (name, value). Hex values print as C's `%#x` (no "0x" for 0, never printed anyway).
pub fn attr_fields(attr: &PerfEventAttr) -> Vec<(&'static str, String)> {
    let mut fields = Vec::new();
    let mut buf = String::new();
    let mut push = |name: &'static str, value: Option<String>, buf: &mut String| {
        if let Some(v) = value {
            *buf = v;
        }
        fields.push((name, buf.clone()));
    };
    macro_rules! unsigned {
        ($name:expr, $v:expr) => {
            if num($v) != 0 {
                push($name, Some(num($v).to_string()), &mut buf);
            }
        };
    }
    macro_rules! hex {
        ($name:expr, $v:expr) => {
            if num($v) != 0 {
                push($name, Some(format!("{:#x}", num($v))), &mut buf);
            }
        };
    }
    macro_rules! flags {
        ($name:expr, $v:expr, $names:expr) => {
            if $v != 0 {
                push($name, bits($v, &$names), &mut buf);
            }
        };
    }
    unsigned!("type", attr.type_);
    unsigned!("size", attr.size);
    hex!("config", attr.config);
    unsigned!("{ sample_period, sample_freq }", attr.sample_period);
    flags!("sample_type", attr.sample_type.bits(), SAMPLE_TYPE);
    flags!("read_format", attr.read_format.bits(), READ_FORMAT);
    let word = attr.flags.bits();
    for (bit, name) in FLAGS {
        let v = if name == "precise_ip" {
            u64::from(attr.precise_ip())
        } else {
            (word >> bit) & 1
        };
        unsigned!(name, v);
    }
    unsigned!("{ wakeup_events, wakeup_watermark }", attr.wakeup_events);
    unsigned!("bp_type", attr.bp_type);
    hex!("{ bp_addr, config1 }", attr.config1);
    hex!("{ bp_len, config2 }", attr.config2);
    // perf 6.1 predates config3 (attrs of 136 bytes); printed as newer perf does.
    hex!("config3", attr.config3);
    flags!(
        "branch_sample_type",
        attr.branch_sample_type.bits(),
        BRANCH_SAMPLE_TYPE
    );
    hex!("sample_regs_user", attr.sample_regs_user);
    unsigned!("sample_stack_user", attr.sample_stack_user);
    if attr.clockid != 0 {
        push("clockid", Some(attr.clockid.to_string()), &mut buf);
    }
    hex!("sample_regs_intr", attr.sample_regs_intr);
    unsigned!("aux_watermark", attr.aux_watermark);
    unsigned!("sample_max_stack", attr.sample_max_stack);
    unsigned!("aux_sample_size", attr.aux_sample_size);
    unsigned!("sig_data", attr.sig_data);
    fields
}

/// `# group: NAME{leader,member,...}` per group, with the events' names as perf knows
/// them then: the recorded ones (EVENT_DESC comes before GROUP_DESC in pipe mode too).
///
/// perf first rebuilds the groups from GROUP_DESC (`process_group_desc`): walking the
/// events in order, the next group starts at the event whose index is its leader_idx and
/// takes the following nr_members - 1 events; then it prints each leader of more than one
/// member. A group running past the last event is left without its closing "}\n".
pub fn write_group_desc(out: &mut impl Write, ctx: &Ctx, desc: &GroupDesc) -> io::Result<()> {
    let meta = ctx.meta;
    // (group name, members) for leaders, by event index.
    let mut leaders: Vec<Option<(&[u8], u32)>> = vec![None; meta.attrs().len()];
    let (mut i, mut nr) = (0usize, 0u32);
    for (idx, slot) in leaders.iter_mut().enumerate() {
        match desc.groups.get(i) {
            Some(g) if g.leader_idx as usize == idx => {
                let name = c_str(&g.name.bytes);
                // "{anon_group}" is perf's placeholder for a group without a name.
                let name: &[u8] = if name == b"{anon_group}" { b"" } else { name };
                *slot = Some((name, g.nr_members));
                nr = g.nr_members.saturating_sub(1);
                i += 1;
            }
            _ if nr > 0 => nr -= 1,
            _ => {}
        }
    }
    let mut nr = 0u32;
    for (idx, leader) in leaders.iter().enumerate() {
        let name = event_name(meta, idx);
        match leader {
            Some((group, members)) if *members > 1 => {
                out.write_all(b"# group: ")?;
                out.write_all(group)?;
                write!(out, "{{{name}")?;
                nr = members - 1;
            }
            _ if nr > 0 => {
                write!(out, ",{name}")?;
                nr -= 1;
                if nr == 0 {
                    writeln!(out, "}}")?;
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfdata_core::attr::{AttrFlags, ReadFormat, SampleType};

    #[test]
    fn fields_in_perf_order() {
        let attr = PerfEventAttr {
            type_: 1,
            config: 1,
            sample_period: 4000,
            sample_type: SampleType::IP | SampleType::TID | SampleType::IDENTIFIER,
            read_format: ReadFormat::ID | ReadFormat::LOST,
            flags: AttrFlags::DISABLED
                | AttrFlags::FREQ
                | AttrFlags::PRECISE_IP_HIGH
                | AttrFlags::SAMPLE_ID_ALL,
            sample_regs_user: 0xff0fff,
            clockid: -1,
            ..Default::default()
        };
        let text: Vec<String> = attr_fields(&attr)
            .into_iter()
            .map(|(n, v)| format!("{n} = {v}"))
            .collect();
        assert_eq!(
            text.join(", "),
            "type = 1, size = 128, config = 0x1, { sample_period, sample_freq } = 4000, \
             sample_type = IP|TID|IDENTIFIER, read_format = ID|LOST, disabled = 1, \
             freq = 1, precise_ip = 2, sample_id_all = 1, sample_regs_user = 0xff0fff, \
             clockid = -1"
        );
    }

    #[test]
    fn unknown_bits_repeat_the_previous_field_as_perf_does() {
        let attr = PerfEventAttr {
            size: 0,
            sample_period: 7,
            sample_type: SampleType::TRANSACTION,
            ..Default::default()
        };
        let f = attr_fields(&attr);
        assert_eq!(f[1], ("sample_type", "7".to_string()));
    }
}
