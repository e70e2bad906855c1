//! What [`Anonymize`](super::Anonymize) did: what it renamed, what it zeroed and what
//! it dropped, each named, for the summary and the warnings.

use std::collections::BTreeMap;

use perfdata_core::feature::FeatureId;

/// What [`Anonymize`](super::Anonymize) did, for a summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnonymizeCounts {
    /// Records whose names were replaced.
    pub renamed_records: u64,
    /// Features rewritten (HOSTNAME, CMDLINE, BUILD_ID, TRACING_DATA, BPF_PROG_INFO).
    pub features: Vec<FeatureId>,
    /// Samples whose RAW payload was rebuilt from its tracepoint's format: numbers
    /// kept, strings renamed, the rest zeroed.
    pub raw_rebuilt: u64,
    /// Samples whose RAW payload was zeroed past the common fields (no format for it).
    pub raw_zeroed: u64,
    /// The fields left zero in the RAW payloads rebuilt, by event: their names (arrays
    /// of numbers, which may be a string's bytes, and numbers whose names say they hold
    /// a name, such as pointers to one) and in how many payloads.
    pub raw_fields_zeroed: BTreeMap<String, (Vec<String>, u64)>,
    /// Samples whose user stack was zeroed.
    pub stack_zeroed: u64,
    /// Samples whose user or interrupt registers were zeroed.
    pub regs_zeroed: u64,
    /// Samples whose AUX data was zeroed.
    pub aux_zeroed: u64,
    /// AUXTRACE records whose trace data was zeroed.
    pub auxtrace_zeroed: u64,
    /// The bytes of AUXTRACE trace data zeroed.
    pub auxtrace_bytes: u64,
    /// Other contents zeroed by choice, by what they were ("callchain entries that are
    /// no code address"): how many.
    pub zeroed: BTreeMap<String, u64>,
    /// Bytes zeroed or left out because they could not be vouched for (past a
    /// record's or a feature's layout), by where they were: how many times.
    pub unvouched: BTreeMap<String, u64>,
    /// Records left out, by type (perf's name) and why: how many.
    pub dropped_records: BTreeMap<(String, String), u64>,
    /// Features left out, each with why.
    pub dropped_features: Vec<(FeatureId, String)>,
}

impl AnonymizeCounts {
    pub(super) fn zero(&mut self, what: &str, n: u64) {
        if n > 0 {
            *self.zeroed.entry(what.to_string()).or_default() += n;
        }
    }

    pub(super) fn raw_fields(&mut self, event: &str, fields: &[String]) {
        if fields.is_empty() {
            return;
        }
        let e = self
            .raw_fields_zeroed
            .entry(event.to_string())
            .or_insert_with(|| (fields.to_vec(), 0));
        e.1 += 1;
    }

    pub(super) fn unvouched(&mut self, what: &str) {
        *self.unvouched.entry(what.to_string()).or_default() += 1;
    }

    pub(super) fn drop_record(&mut self, ty: &str, why: &str) {
        *self
            .dropped_records
            .entry((ty.to_string(), why.to_string()))
            .or_default() += 1;
    }

    pub(super) fn drop_feature(&mut self, id: FeatureId, why: &str) {
        if !self.dropped_features.iter().any(|(f, _)| *f == id) {
            self.dropped_features.push((id, why.to_string()));
        }
    }

    pub(super) fn rewrote(&mut self, id: FeatureId) {
        if !self.features.contains(&id) {
            self.features.push(id);
        }
    }

    /// One line for each kind of record and feature left out and each kind of bytes
    /// zeroed because they could not be vouched for: what, how many, why.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for ((ty, why), n) in &self.dropped_records {
            let s = if *n == 1 { "" } else { "s" };
            out.push(format!("anonymize dropped {n} {ty} record{s}: {why}"));
        }
        for (id, why) in &self.dropped_features {
            out.push(format!("anonymize dropped feature {id}: {why}"));
        }
        for (event, (fields, n)) in &self.raw_fields_zeroed {
            let s = if *n == 1 { "" } else { "s" };
            out.push(format!(
                "anonymize zeroed in {n} RAW payload{s} of {event} the fields that may hold \
                 text (arrays, numbers named as names): {}; --keep-raw keeps them",
                fields.join(", ")
            ));
        }
        for (what, n) in &self.unvouched {
            out.push(format!(
                "anonymize zeroed {what} ({n} times): not understood"
            ));
        }
        out
    }
}
