//! Which fields `perf script` prints for each kind of event: perf 6.1's defaults per
//! event type, its `-F` syntax (`comm,tid`, `+field`, `-field`, `TYPE:fields`), and its
//! check of the fields against what the samples carry (tools/perf/builtin-script.c:
//! `output[]`, `parse_output_fields`, `evsel__check_attr`).

use perfdata_core::attr::{PerfEventAttr, SampleType};
use perfdata_core::{Error, Metadata, Result};

/// One field of perf script's output, a bit of [`Fields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The command name.
    Comm = 1 << 0,
    /// The thread id.
    Tid = 1 << 1,
    /// The process id.
    Pid = 1 << 2,
    /// The sample's time.
    Time = 1 << 3,
    /// The CPU.
    Cpu = 1 << 4,
    /// The event's name.
    Event = 1 << 5,
    /// A tracepoint's fields.
    Trace = 1 << 6,
    /// The sampled address (and the callchain).
    Ip = 1 << 7,
    /// The symbol of each address.
    Sym = 1 << 8,
    /// The DSO of each address.
    Dso = 1 << 9,
    /// PERF_SAMPLE_ADDR's address.
    Addr = 1 << 10,
    /// The offset into the symbol.
    Symoff = 1 << 11,
    /// The source line of each address.
    Srcline = 1 << 12,
    /// The sample's period.
    Period = 1 << 13,
    /// PERF_SAMPLE_DATA_SRC, in hex and decoded (where the access was served).
    DataSrc = 1 << 14,
    /// PERF_SAMPLE_WEIGHT (or WEIGHT_STRUCT's first part): an access's cost.
    Weight = 1 << 15,
    /// WEIGHT_STRUCT's instruction latency.
    InsLat = 1 << 16,
    /// A synthesized event's payload (psb offset, cbr frequency), printed for
    /// PERF_TYPE_SYNTH events only.
    Synth = 1 << 17,
}

/// perf's names of the fields, in its `all_output_options` order.
const NAMES: [(&str, Field); 18] = [
    ("comm", Field::Comm),
    ("tid", Field::Tid),
    ("pid", Field::Pid),
    ("time", Field::Time),
    ("cpu", Field::Cpu),
    ("event", Field::Event),
    ("trace", Field::Trace),
    ("ip", Field::Ip),
    ("sym", Field::Sym),
    ("dso", Field::Dso),
    ("addr", Field::Addr),
    ("symoff", Field::Symoff),
    ("srcline", Field::Srcline),
    ("period", Field::Period),
    ("data_src", Field::DataSrc),
    ("weight", Field::Weight),
    ("ins_lat", Field::InsLat),
    ("synth", Field::Synth),
];

/// A set of [`Field`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fields(pub u32);

impl Fields {
    /// Whether `f` is in the set.
    pub fn has(self, f: Field) -> bool {
        self.0 & f as u32 != 0
    }
    fn with(self, f: Field) -> Fields {
        Fields(self.0 | f as u32)
    }
    fn without(self, f: Field) -> Fields {
        Fields(self.0 & !(f as u32))
    }
    fn of(list: &[Field]) -> Fields {
        list.iter().fold(Fields(0), |s, &f| s.with(f))
    }
}

/// perf's output types: the attr types below PERF_TYPE_MAX, then every other type.
pub const OUTPUT_TYPES: usize = 8;
/// perf's names of the output types in `-F TYPE:...` (`event_type()`'s inverse).
const TYPE_NAMES: [(&str, usize); 6] = [
    ("hw", 0),
    ("sw", 1),
    ("trace", 2),
    ("raw", 4),
    ("break", 5),
    ("synth", SYNTH),
];
/// perf's OUTPUT_TYPE_SYNTH: the events a trace decoder synthesizes (psb, cbr, ...).
pub const SYNTH: usize = 6;
const TRACEPOINT: usize = 2;

/// The output type of an attr type (perf's `output_type`).
pub fn output_type(attr_type: u32) -> usize {
    match attr_type {
        0..=5 => attr_type as usize,
        6 => SYNTH,
        _ => OUTPUT_TYPES - 1,
    }
}

/// The fields of one output type: perf's `output[type]`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TypeFields {
    /// What is printed.
    pub fields: Fields,
    /// Fields the user asked for (a missing sample field is then an error).
    pub user_set: Fields,
    /// Fields the user removed (`-field`).
    pub user_unset: Fields,
    /// Whether `-F` named this type (or all).
    pub user: bool,
    /// perf's `wildcard_set`: `-F` gave this type fields (by name or for all types);
    /// a type named with no fields (`hw:`) must have events.
    wildcard: bool,
    invalid: Fields,
}

/// What `-F` (or its absence) asks for, per output type.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    /// By output type.
    pub types: [TypeFields; OUTPUT_TYPES],
}

impl Default for FieldSpec {
    fn default() -> Self {
        use Field::*;
        let hw = Fields::of(&[Comm, Tid, Cpu, Time, Event, Ip, Sym, Symoff, Dso, Period]);
        // perf 6.1's raw events also print phys_addr and the page sizes, not printed
        // here (no recording of a raw event has them).
        let raw = hw.with(Addr).with(DataSrc).with(Weight).with(InsLat);
        let trace = Fields::of(&[Comm, Tid, Cpu, Time, Event, Trace]);
        let no_trace = Fields::of(&[Trace]);
        let synth = Fields::of(&[Comm, Tid, Cpu, Time, Event, Ip, Sym, Dso, Synth]);
        let entry = |fields, invalid| TypeFields {
            fields,
            invalid,
            ..Default::default()
        };
        FieldSpec {
            types: [
                entry(hw, no_trace),
                entry(hw, no_trace),
                entry(trace, Fields(0)),
                entry(hw, no_trace),
                entry(raw, no_trace),
                entry(hw, no_trace),
                entry(synth, no_trace),
                entry(hw, no_trace),
            ],
        }
    }
}

fn usage(msg: impl Into<String>) -> Error {
    Error::Select(msg.into())
}

impl FieldSpec {
    /// Apply one `-F` argument as perf 6.1's `parse_output_fields` does: `TYPE:list`
    /// sets one type's fields, a plain list every type's; a list of `+field`/`-field`
    /// changes the defaults instead of replacing them. Warnings perf prints (a field
    /// not valid for a type) are returned.
    pub fn parse(&mut self, arg: &str) -> Result<Vec<String>> {
        let mut warnings = Vec::new();
        let (ty, list) = match arg.split_once(':') {
            Some((t, rest)) => {
                let ty = TYPE_NAMES
                    .iter()
                    .find(|(n, _)| *n == t)
                    .map(|&(_, i)| i)
                    .ok_or_else(|| usage(format!("-F {arg}: invalid event type {t:?}")))?;
                (Some(ty), rest)
            }
            None => (None, arg),
        };
        if ty.is_none() && list.is_empty() {
            // perf's words: a type's list may be empty (`sw:`), all types' may not.
            return Err(usage("Cannot set fields to 'none' for all event types."));
        }
        let changes = list.starts_with('+') || list.starts_with('-');
        // perf's parse_output_fields warns when an -F replaces an earlier one's
        // fields: a named type's even for a list of changes, all types' only for a set.
        match ty {
            Some(ty) if self.types[ty].user => warnings.push(format!(
                "Overriding previous field request for {} events.",
                type_label(ty)
            )),
            None if !changes && self.types.iter().any(|t| t.user) => {
                warnings.push("Overriding previous field request for all events.".into())
            }
            _ => {}
        }
        if !changes {
            // A new set replaces the fields of the types it names.
            for (i, t) in self.types.iter_mut().enumerate() {
                if ty.is_none_or(|ty| ty == i) {
                    t.fields = Fields(0);
                    t.user_set = Fields(0);
                    t.user = true;
                    // perf's parse_output_fields: a list for all types counts as
                    // fields given; `TYPE:` alone does not until a field follows.
                    t.wildcard = ty.is_none();
                }
            }
        }
        #[derive(PartialEq)]
        enum Change {
            Default,
            Set,
            Add,
            Remove,
        }
        let mut change = Change::Default;
        for tok in list.split(',').filter(|t| !t.is_empty()) {
            let (c, name) = match tok.as_bytes()[0] {
                b'+' => (Change::Add, &tok[1..]),
                b'-' => (Change::Remove, &tok[1..]),
                _ => (Change::Set, tok),
            };
            let mixed = match c {
                Change::Set => !matches!(change, Change::Set | Change::Default),
                _ => change == Change::Set,
            };
            if mixed {
                return Err(usage(format!(
                    "-F {arg}: cannot set fields and add or remove them in one list"
                )));
            }
            change = c;
            let field = NAMES
                .iter()
                .find(|(n, _)| *n == name)
                .map(|&(_, f)| f)
                .ok_or_else(|| usage(format!("-F {arg}: invalid field {name:?}")))?;
            for (i, t) in self.types.iter_mut().enumerate() {
                if ty.is_some_and(|ty| ty != i) {
                    continue;
                }
                if t.invalid.has(field) {
                    // perf warns for a list of all types, refuses for a named one.
                    if ty.is_some() {
                        return Err(usage(format!(
                            "'{name}' not valid for {} events.",
                            type_label(i)
                        )));
                    }
                    warnings.push(format!(
                        "'{name}' not valid for {} events. Ignoring.",
                        type_label(i)
                    ));
                    continue;
                }
                t.user = true;
                t.wildcard = true;
                if ty.is_some() {
                    // perf 6.1 records the fields the user set or unset (which make a
                    // field the samples lack an error, and keep a removed ip or symbol
                    // off) only for a list of all types: a named type's field the
                    // samples lack is dropped silently.
                    t.fields = if change == Change::Remove {
                        t.fields.without(field)
                    } else {
                        t.fields.with(field)
                    };
                    continue;
                }
                if change == Change::Remove {
                    t.fields = t.fields.without(field);
                    t.user_set = t.user_set.without(field);
                    t.user_unset = t.user_unset.with(field);
                } else {
                    t.fields = t.fields.with(field);
                    t.user_set = t.user_set.with(field);
                    t.user_unset = t.user_unset.without(field);
                }
            }
        }
        Ok(warnings)
    }

    /// The fields each event of `meta` prints, as perf 6.1 settles them before the first
    /// sample: a field the samples do not carry is dropped from the defaults, and an
    /// error where the user asked for it; the first event of each type decides for the
    /// type. With callchains shown, tracepoints with callchains also print the ip,
    /// symbol, offset and DSO.
    pub fn settle(&self, meta: &Metadata, callchains: bool) -> Result<[Fields; OUTPUT_TYPES]> {
        let mut types = self.types;
        let attrs = meta.attrs();
        let stat = meta
            .feature(perfdata_core::feature::FeatureId::Stat)
            .is_some();
        let aux = allows_user_set(meta);
        for (j, t) in types.iter_mut().enumerate() {
            let Some((i, first)) = attrs
                .iter()
                .enumerate()
                // perf's find_first_output_type passes over dummy events (software
                // event 9, which carry side-band records, never samples): a type checked
                // against a dummy would lose fields its side-band lines print.
                .find(|(_, a)| {
                    !(a.attr.type_ == 1 && a.attr.config == 9) && output_type(a.attr.type_) == j
                })
            else {
                // perf's perf_session__check_output_opt: a type named with no fields
                // and no event of it is an error.
                if t.user && !t.wildcard {
                    return Err(usage(format!(
                        "{} events do not exist. Remove corresponding -F option to proceed.",
                        type_label(j)
                    )));
                }
                continue;
            };
            // perf's process_attr checks an event that came in an ATTR record (a pipe's)
            // only when it samples something: a pipe `perf stat record` wrote has none.
            let unchecked = first.ids_section.is_none() && first.attr.sample_type.is_empty();
            if t.fields.0 == 0 || stat || unchecked {
                continue;
            }
            check(t, &first.attr.sample_type, &meta.event_name(i), aux)?;
        }
        // An event that came in an ATTR record (a pipe, or a file perf inject wrote from
        // one) goes through perf's process_attr: with callchains shown, its type then
        // shows the ip and symbol of each frame unless -F removed them.
        let combined = attrs
            .iter()
            .fold(SampleType::empty(), |st, a| st | a.attr.sample_type);
        let stacks = combined.contains(SampleType::CALLCHAIN)
            || combined.contains(SampleType::BRANCH_STACK)
            || combined.contains(SampleType::REGS_USER | SampleType::STACK_USER);
        if callchains && stacks {
            for (j, t) in types.iter_mut().enumerate() {
                if attrs
                    .iter()
                    .any(|a| output_type(a.attr.type_) == j && a.ids_section.is_none())
                {
                    if !t.user_unset.has(Field::Ip) {
                        t.fields = t.fields.with(Field::Ip);
                    }
                    if !t.user_unset.has(Field::Sym) {
                        t.fields = t.fields.with(Field::Sym);
                    }
                }
            }
        }
        let tp = &mut types[TRACEPOINT];
        if callchains && !tp.user {
            let has = attrs
                .iter()
                .any(|a| a.attr.type_ == 2 && a.attr.sample_type.contains(SampleType::CALLCHAIN));
            if has {
                use Field::*;
                tp.fields = tp.fields.with(Ip).with(Sym).with(Symoff).with(Dso);
            }
        }
        Ok(types.map(|t| t.fields))
    }
}

impl FieldSpec {
    /// perf's `process_attr` for an event a trace decoder added (the
    /// script's `auxtrace` module): checked as the first event of its output type, against what
    /// `-F` asked, where `settled` holds what [`FieldSpec::settle`] left. The caller
    /// passes only events whose attr type no event before had (perf checks no other).
    pub fn check_synthesized(
        &self,
        settled: &mut [Fields; OUTPUT_TYPES],
        attr: &PerfEventAttr,
        name: &str,
        meta: &Metadata,
    ) -> Result<()> {
        if attr.sample_type.is_empty() {
            return Ok(());
        }
        let j = output_type(attr.type_);
        let mut t = self.types[j];
        t.fields = settled[j];
        check(&mut t, &attr.sample_type, name, allows_user_set(meta))?;
        settled[j] = t.fields;
        Ok(())
    }
}

/// perf's `event_type()`: how a warning names an output type.
fn type_label(i: usize) -> &'static str {
    match i {
        0 => "hardware",
        1 => "software",
        2 => "tracepoint",
        4 => "raw",
        5 => "breakpoint",
        SYNTH => "synth",
        _ => "unknown",
    }
}

/// perf's `allow_user_set`: in a recording with an AUX area trace (the AUXTRACE
/// feature) the fields its decoders may fill (ADDR, DATA_SRC, WEIGHT, CPU) are printed
/// where `-F` asks, carried by the samples or not.
fn allows_user_set(meta: &Metadata) -> bool {
    meta.feature(perfdata_core::feature::FeatureId::AuxTrace)
        .is_some()
}

/// perf's `evsel__check_attr` for the first event of a type; `aux`: [`allows_user_set`].
fn check(t: &mut TypeFields, st: &SampleType, name: &str, aux: bool) -> Result<()> {
    use Field::*;
    // perf's evsel__do_check_stype: `allow` keeps a field the user asked for.
    let check_stype =
        |t: &mut TypeFields, bit: SampleType, msg: &str, fields: &[Field], allow: bool| {
            if st.intersects(bit) {
                return Ok(());
            }
            if allow && fields.iter().any(|&f| t.user_set.has(f)) {
                return Ok(());
            }
            for &f in fields {
                if t.user_set.has(f) {
                    return Err(usage(format!(
                        "Samples for '{name}' event do not have {msg} attribute set. \
                     Cannot print '{}' field.",
                        NAMES.iter().find(|(_, g)| *g == f).map_or("", |n| n.0)
                    )));
                }
            }
            for &f in fields {
                t.fields = t.fields.without(f);
            }
            Ok(())
        };
    let need = |t: &mut TypeFields, bit, msg: &str, fields: &[Field]| {
        check_stype(t, bit, msg, fields, false)
    };
    if t.fields.has(Ip) {
        need(t, SampleType::IP, "IP", &[Ip])?;
    }
    if t.fields.has(Addr) {
        check_stype(t, SampleType::ADDR, "ADDR", &[Addr], aux)?;
    }
    if t.fields.has(DataSrc) {
        check_stype(t, SampleType::DATA_SRC, "DATA_SRC", &[DataSrc], aux)?;
    }
    if t.fields.has(Weight) {
        let weights = SampleType::WEIGHT | SampleType::WEIGHT_STRUCT;
        check_stype(t, weights, "WEIGHT", &[Weight], aux)?;
    }
    let addresses = st.intersects(SampleType::IP | SampleType::ADDR);
    if t.fields.has(Sym) && !addresses {
        return Err(usage(
            "Display of symbols requested but neither sample IP nor sample address\n\
             available. Hence, no addresses to convert to symbols.",
        ));
    }
    if t.fields.has(Symoff) && !t.fields.has(Sym) {
        return Err(usage(
            "Display of offsets requested but symbol is notselected.",
        ));
    }
    if t.fields.has(Dso) && !addresses {
        return Err(usage("Display of DSO requested but no address to convert."));
    }
    if t.fields.has(Srcline) && !t.fields.has(Ip) {
        return Err(usage(
            "Display of source line number requested but sample IP is not\n\
             selected. Hence, no address to lookup the source line number.",
        ));
    }
    if t.fields.has(Pid) || t.fields.has(Tid) {
        need(t, SampleType::TID, "TID", &[Tid, Pid])?;
    }
    if t.fields.has(Time) {
        need(t, SampleType::TIME, "TIME", &[Time])?;
    }
    if t.fields.has(Cpu) {
        check_stype(t, SampleType::CPU, "CPU", &[Cpu], aux)?;
    }
    if t.fields.has(InsLat) {
        need(t, SampleType::WEIGHT_STRUCT, "WEIGHT_STRUCT", &[InsLat])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plus_and_minus_change_the_defaults_a_list_replaces_them() {
        let mut spec = FieldSpec::default();
        spec.parse("-period,+addr").unwrap();
        let sw = spec.types[1].fields;
        assert!(!sw.has(Field::Period) && sw.has(Field::Addr) && sw.has(Field::Sym));
        let mut spec = FieldSpec::default();
        let warnings = spec.parse("comm,trace").unwrap();
        assert_eq!(spec.types[1].fields, Fields::of(&[Field::Comm]));
        assert_eq!(
            spec.types[2].fields,
            Fields::of(&[Field::Comm, Field::Trace])
        );
        assert!(warnings[0].contains("'trace' not valid for hardware events"));
        assert!(FieldSpec::default().parse("comm,+tid").is_err());
        assert!(FieldSpec::default().parse("bogus").is_err());
    }

    #[test]
    fn a_type_prefix_sets_that_type_alone() {
        let mut spec = FieldSpec::default();
        spec.parse("sw:comm,tid").unwrap();
        assert_eq!(spec.types[1].fields, Fields::of(&[Field::Comm, Field::Tid]));
        assert_eq!(spec.types[0].fields, FieldSpec::default().types[0].fields);
    }

    /// perf 6.1 (`perf script -i google-perf.data.hybrid_topology -F hw:cpu,time`
    /// prints the times alone and exits 0; `-F hw:trace` is refused with "'trace' not
    /// valid for hardware events."; `-F sw:` there says "software events do not exist.
    /// Remove corresponding -F option to proceed.").
    #[test]
    fn a_named_types_fields_are_dropped_where_missing_not_refused() {
        let mut spec = FieldSpec::default();
        spec.parse("hw:cpu,time").unwrap();
        let hw = spec.types[0];
        assert_eq!(hw.fields, Fields::of(&[Field::Cpu, Field::Time]));
        assert_eq!(hw.user_set, Fields(0));
        let mut t = hw;
        check(&mut t, &SampleType::TIME, "cycles", false).unwrap();
        assert_eq!(t.fields, Fields::of(&[Field::Time]));
        // The same list for all types refuses.
        let mut spec = FieldSpec::default();
        spec.parse("cpu,time").unwrap();
        let mut t = spec.types[0];
        let err = check(&mut t, &SampleType::TIME, "cycles", false).unwrap_err();
        assert!(err.to_string().contains("do not have CPU attribute set"));
        let err = FieldSpec::default().parse("hw:trace").unwrap_err();
        assert!(err
            .to_string()
            .contains("'trace' not valid for hardware events."));
        let mut spec = FieldSpec::default();
        spec.parse("sw:").unwrap();
        assert!(spec.types[1].user && !spec.types[1].wildcard);
        let warnings = spec.parse("sw:time").unwrap();
        assert!(spec.types[1].wildcard);
        assert_eq!(
            warnings,
            ["Overriding previous field request for software events."]
        );
        let warnings = spec.parse("time").unwrap();
        assert_eq!(
            warnings,
            ["Overriding previous field request for all events."]
        );
    }
}
