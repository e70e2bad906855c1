//! perfdata-write: turn perfdata-core models back into perf.data files.
