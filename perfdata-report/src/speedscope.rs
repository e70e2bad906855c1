//! speedscope's file format (<https://www.speedscope.app/file-format-schema.json>): one
//! sampled profile per track (event, process, thread and name), its samples in time
//! order, each a stack of indices into the shared frames, root first, weighted by its
//! period; frames are named as `perf script` names them, with the DSO as their file.

use std::collections::HashMap;
use std::io::{self, Write};

use serde::Serialize;

use crate::process::Dso;
use crate::stacks::Stacks;

/// The schema every speedscope file names.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared<'a>,
    profiles: Vec<Profile>,
    name: &'a str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<FrameOut<'a>>,
}

#[derive(Serialize, PartialEq, Eq, Hash, Clone, Copy)]
struct FrameOut<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
}

#[derive(Serialize)]
struct Profile {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Vec<Vec<usize>>,
    weights: Vec<u64>,
}

/// The weight unit of an event's period: software clocks count nanoseconds.
fn unit_of(event: &str) -> &'static str {
    match event {
        "cpu-clock" | "task-clock" => "nanoseconds",
        _ => "none",
    }
}

/// Write `stacks` as a speedscope file named `name`; `dsos` names each frame's file.
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
    let ids: Vec<usize> = stacks
        .frames
        .iter()
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
    let profiles = stacks
        .tracks()
        .iter()
        .map(|(track, members)| {
            let samples: Vec<Vec<usize>> = members
                .iter()
                .map(|&i| stacks.samples[i].frames.iter().map(|&f| ids[f]).collect())
                .collect();
            let weights: Vec<u64> = members.iter().map(|&i| stacks.samples[i].period).collect();
            Profile {
                kind: "sampled",
                name: stacks.track_name(track),
                unit: unit_of(&stacks.event_names[track.event]),
                start_value: 0,
                end_value: weights.iter().sum(),
                samples,
                weights,
            }
        })
        .collect();
    let file = File {
        schema: SCHEMA,
        shared: Shared { frames },
        profiles,
        name,
        active_profile_index: 0,
        exporter: format!("perfdata {}", env!("CARGO_PKG_VERSION")),
    };
    serde_json::to_writer(&mut *out, &file)?;
    writeln!(out)
}
