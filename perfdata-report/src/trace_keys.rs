//! perf report's `trace` sort key: a tracepoint sample's fields printed as perf prints
//! them (`tep_print_event`'s info, the text perf script prints after the event name),
//! each distinct text numbered once.

use perfdata_view::tracing::TraceEvents;

use crate::keys::Traces;

/// What names the samples' trace texts: the recording's tracepoint formats, each
/// event's tracepoint id, and the texts seen so far.
#[derive(Debug)]
pub(crate) struct TraceKeys {
    formats: Option<TraceEvents>,
    /// By event index: the tracepoint id (the attr's config) of a tracepoint event.
    tracepoints: Vec<Option<u64>>,
    texts: Traces,
}

impl TraceKeys {
    /// For a recording whose metadata before its first record is `meta`.
    pub(crate) fn new(meta: &perfdata_core::Metadata) -> TraceKeys {
        let tracepoints: Vec<Option<u64>> = meta
            .attrs()
            .iter()
            .map(|a| (a.attr.type_ == TRACEPOINT).then_some(a.attr.config))
            .collect();
        let formats = tracepoints
            .iter()
            .any(Option::is_some)
            .then(|| perfdata_core::tracing::tracing_blob(meta).and_then(TraceEvents::parse))
            .flatten();
        TraceKeys {
            formats,
            tracepoints,
            texts: Traces::default(),
        }
    }

    /// The number of the text of a sample of event `event` with RAW payload `raw`;
    /// `None` where there is none (perf's "N/A": an event that is not a tracepoint).
    pub(crate) fn id(&mut self, event: usize, raw: Option<&[u8]>) -> Option<u32> {
        let id = self.tracepoints.get(event).copied().flatten()?;
        let text = self.formats.as_ref()?.text(id, raw?)?;
        Some(self.texts.id(text))
    }

    /// The texts, numbered.
    pub(crate) fn into_texts(self) -> Traces {
        self.texts
    }
}

/// perf's PERF_TYPE_TRACEPOINT.
const TRACEPOINT: u32 = 2;

/// Whether every event of `meta` is a tracepoint (there being one at least): perf 6.1
/// then sorts by `trace` unless told otherwise (`get_default_sort_order`). A pipe's
/// events are not known when perf chooses, so it keeps `comm,dso,sym` there.
pub(crate) fn all_tracepoints(meta: &perfdata_core::Metadata) -> bool {
    let attrs = meta.attrs();
    !attrs.is_empty() && attrs.iter().all(|a| a.attr.type_ == TRACEPOINT)
}
