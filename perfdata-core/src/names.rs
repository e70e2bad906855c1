//! Event names as perf prints them (`evsel__name`): the recorded name when the file has
//! one (EVENT_DESC, EVENT_UPDATE), else one derived from the attr's type and config plus
//! perf's modifier suffix (":u", ":ppp", ":HG", ...).

use crate::attr::{AttrFlags, PerfEventAttr};
use crate::meta::Metadata;

const HW: [&str; 10] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
];

const SW: [&str; 12] = [
    "cpu-clock",
    "task-clock",
    "page-faults",
    "context-switches",
    "cpu-migrations",
    "minor-faults",
    "major-faults",
    "alignment-faults",
    "emulation-faults",
    "dummy",
    "bpf-output",
    "cgroup-switches",
];

const HW_CACHE: [&str; 7] = [
    "L1-dcache",
    "L1-icache",
    "LLC",
    "dTLB",
    "iTLB",
    "branch",
    "node",
];
const HW_CACHE_OP: [&str; 3] = ["load", "store", "prefetch"];
const HW_CACHE_RESULT: [&str; 2] = ["refs", "misses"];

impl Metadata {
    /// The name of event `idx` as perf prints it: the recorded name (EVENT_DESC,
    /// EVENT_UPDATE) when there is one, else one derived from its attr; `event{idx}`
    /// for an index with no event.
    pub fn event_name(&self, idx: usize) -> String {
        event_name(self, idx)
    }
}

/// The name of event `idx` of `meta`.
pub fn event_name(meta: &Metadata, idx: usize) -> String {
    match meta.attrs().get(idx) {
        Some(ev) => match &ev.name {
            Some(name) => name.clone(),
            None => attr_name(&ev.attr, meta),
        },
        None => format!("event{idx}"),
    }
}

/// A name derived from the attr alone, as perf derives one.
pub fn attr_name(attr: &PerfEventAttr, meta: &Metadata) -> String {
    let base = match attr.type_ {
        0 => HW
            .get(attr.config as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("unknown-hardware:{:#x}", attr.config)),
        1 => SW
            .get(attr.config as usize)
            .map(|s| s.to_string())
            .unwrap_or_else(|| format!("unknown-software:{:#x}", attr.config)),
        2 => tracepoint_name(attr.config, meta)
            .unwrap_or_else(|| format!("unknown tracepoint:{}", attr.config)),
        3 => hw_cache_name(attr.config),
        4 => format!("raw {:#x}", attr.config),
        5 => format!("mem:{:#x}", attr.config1),
        // perf's evsel__name: a type it has no name for gets no modifiers either.
        t => return format!("unknown attr type: {t}"),
    };
    let modifiers = modifiers(attr);
    if modifiers.is_empty() {
        base
    } else {
        format!("{base}:{modifiers}")
    }
}

fn hw_cache_name(config: u64) -> String {
    let (ty, op, res) = (
        (config & 0xff) as usize,
        ((config >> 8) & 0xff) as usize,
        ((config >> 16) & 0xff) as usize,
    );
    match (
        HW_CACHE.get(ty),
        HW_CACHE_OP.get(op),
        HW_CACHE_RESULT.get(res),
    ) {
        (Some(t), Some(o), Some(r)) => format!("{t}-{o}s-{r}"),
        _ => format!("invalid-cache:{config:#x}"),
    }
}

/// perf's `evsel__add_modifiers`.
fn modifiers(attr: &PerfEventAttr) -> String {
    let f = attr.flags;
    let mut out = String::new();
    let mut exclude_guest_default = false;
    let has = |flag: AttrFlags| f.contains(flag);
    if has(AttrFlags::EXCLUDE_KERNEL) || has(AttrFlags::EXCLUDE_USER) || has(AttrFlags::EXCLUDE_HV)
    {
        if !has(AttrFlags::EXCLUDE_KERNEL) {
            out.push('k');
        }
        if !has(AttrFlags::EXCLUDE_USER) {
            out.push('u');
        }
        if !has(AttrFlags::EXCLUDE_HV) {
            out.push('h');
        }
        exclude_guest_default = true;
    }
    let precise = attr.precise_ip() as usize;
    if precise > 0 {
        out.push_str(&"ppp"[..precise.min(3)]);
        exclude_guest_default = true;
    }
    if has(AttrFlags::EXCLUDE_HOST) || has(AttrFlags::EXCLUDE_GUEST) == exclude_guest_default {
        if !has(AttrFlags::EXCLUDE_HOST) {
            out.push('H');
        }
        if !has(AttrFlags::EXCLUDE_GUEST) {
            out.push('G');
        }
    }
    out
}

/// "system:name" of tracepoint `id`, from the event formats in the tracing data.
fn tracepoint_name(id: u64, meta: &Metadata) -> Option<String> {
    let blob = crate::tracing::tracing_blob(meta)?;
    crate::tracing::tracepoint_name(blob, id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers_follow_perf() {
        let mut a = PerfEventAttr {
            type_: 0,
            config: 0,
            ..Default::default()
        };
        a.flags = AttrFlags::EXCLUDE_GUEST;
        assert_eq!(modifiers(&a), "");
        a.flags = AttrFlags::EXCLUDE_GUEST | AttrFlags::PRECISE_IP_LOW | AttrFlags::PRECISE_IP_HIGH;
        // perf 6.1: precise_ip makes exclude_guest the default, and a default
        // exclude_guest prints the host/guest letters.
        assert_eq!(modifiers(&a), "pppH");
        a.flags = AttrFlags::EXCLUDE_KERNEL | AttrFlags::EXCLUDE_HV;
        assert_eq!(modifiers(&a), "u");
        a.flags = AttrFlags::EXCLUDE_KERNEL | AttrFlags::EXCLUDE_HV | AttrFlags::EXCLUDE_GUEST;
        assert_eq!(modifiers(&a), "uH");
        assert_eq!(hw_cache_name(0x10000), "L1-dcache-loads-misses");
    }
}
