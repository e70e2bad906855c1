//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>): one
//! sampled profile per track (event, process, thread and name), its samples in time
//! order, each a stack of indices into the shared frames, root first, weighted by its
//! period; frames are named as `perf script` names them, with the DSO as their file.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::process::Dso;
use crate::stacks::{Detail, Stacks};

/// The schema every speedscope file names.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize, PartialEq, Eq, Hash, Clone, Copy)]
struct FrameOut<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

/// What a sampled profile says before its samples (the JSON members in this order).
#[derive(Serialize)]
struct ProfileHead<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
}

/// The weight unit of an event's period: software clocks count nanoseconds.
fn unit_of(event: &str) -> &'static str {
    if crate::model::is_clock(event) {
        "nanoseconds"
    } else {
        "none"
    }
}

/// Write `stacks` as a speedscope file named `name`; `dsos` names each frame's file.
/// `stacks` must have been collected for [`Detail::Samples`]: each profile's samples and
/// weights are read back from disk, track by track.
pub fn write_speedscope(
    out: &mut dyn Write,
    stacks: &Stacks,
    dsos: &[Dso],
    name: &str,
) -> io::Result<()> {
    // speedscope frames are (name, file): addresses without a symbol in one DSO merge,
    // as they do in perf script's output.
    let mut frames: Vec<FrameOut> = Vec::new();
    let mut index: HashMap<FrameOut, usize> = HashMap::new();
    stacks.require(Detail::Samples, "speedscope")?;
    let ids: Vec<usize> = stacks
        .frames()
        .map(|f| {
            let key = FrameOut {
                name: f.name(),
                file: f.dso.map(|d| dsos[d].long_name.as_str()),
            };
            *index.entry(key).or_insert_with(|| {
                frames.push(key);
                frames.len() - 1
            })
        })
        .collect();
    let tracks = stacks.tracks();
    // Each track's samples in the recording's order.
    let samples = stacks.track_samples(&tracks, |_| 0)?;
    out.write_all(b"{\"$schema\":")?;
    json(out, SCHEMA)?;
    out.write_all(b",\"shared\":{\"frames\":")?;
    json(out, &frames)?;
    out.write_all(b"},\"profiles\":[")?;
    for (i, t) in tracks.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        let head = ProfileHead {
            kind: "sampled",
            name: &stacks.track_name(t.track),
            unit: unit_of(&stacks.event_names[t.track.event]),
            start_value: 0,
            end_value: t.period,
        };
        let head = serde_json::to_vec(&head)?;
        // The head's members, then the samples and weights in place of its closing brace.
        out.write_all(&head[..head.len() - 1])?;
        out.write_all(b",\"samples\":[")?;
        samples.write_column(out, i, |out, row| {
            out.write_all(b"[")?;
            for (j, f) in stacks.frames_of(row.stack).into_iter().enumerate() {
                if j > 0 {
                    out.write_all(b",")?;
                }
                out.write_all(itoa::Buffer::new().format(ids[f]).as_bytes())?;
            }
            out.write_all(b"]")
        })?;
        out.write_all(b"],\"weights\":[")?;
        samples.write_column(out, i, |out, row| {
            out.write_all(itoa::Buffer::new().format(row.period).as_bytes())
        })?;
        out.write_all(b"]}")?;
    }
    out.write_all(b"],\"name\":")?;
    json(out, name)?;
    out.write_all(b",\"activeProfileIndex\":0,\"exporter\":")?;
    json(out, &format!("perfdata {}", env!("CARGO_PKG_VERSION")))?;
    out.write_all(b"}")?;
    writeln!(out)
}

/// `value` as serde_json writes it.
fn json<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> io::Result<()> {
    serde_json::to_writer(out, value).map_err(io::Error::from)
}
