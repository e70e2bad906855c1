//! Independent readers of the export formats, each folding what it reads back to
//! `[event;]comm;outer;...;leaf` stacks with sample counts: a hand-written protobuf
//! decoder for pprof (after the system's gzip), serde_json for speedscope and the Firefox
//! Profiler, and the SVG's `<title>` and `fg:` attributes for the flame graph.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Stacks with counts.
pub type Folded = BTreeMap<String, u64>;

fn add(folded: &mut Folded, parts: &[&str], n: u64) {
    if n > 0 {
        *folded.entry(parts.join(";")).or_insert(0) += n;
    }
}

/// Split a track's title (`comm pid/tid[ event]`) into (comm, event).
fn track(name: &str, multi: bool) -> (String, Option<String>) {
    let (rest, event) = if multi {
        let (rest, ev) = name.rsplit_once(' ').expect("event in the title");
        (rest, Some(ev.to_string()))
    } else {
        (name, None)
    };
    let (comm, ids) = rest.rsplit_once(' ').expect("pid/tid in the title");
    assert!(ids.contains('/'), "{name}");
    (comm.to_string(), event)
}

// ---- pprof ----

/// One field of a protobuf message: its number and its value (varint, or bytes).
pub enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

fn varint(buf: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = buf[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return v;
        }
    }
    panic!("varint too long");
}

pub fn fields(buf: &[u8]) -> Vec<(u64, Field<'_>)> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < buf.len() {
        let key = varint(buf, &mut at);
        let field = match key & 7 {
            0 => Field::Varint(varint(buf, &mut at)),
            2 => {
                let len = varint(buf, &mut at) as usize;
                at += len;
                Field::Bytes(&buf[at - len..at])
            }
            1 => {
                at += 8;
                Field::Bytes(&buf[at - 8..at])
            }
            5 => {
                at += 4;
                Field::Bytes(&buf[at - 4..at])
            }
            w => panic!("wire type {w}"),
        };
        out.push((key >> 3, field));
    }
    out
}

/// A repeated integer field, packed or not.
fn ints(fs: &[(u64, Field<'_>)], number: u64) -> Vec<u64> {
    let mut v = Vec::new();
    for (n, f) in fs {
        match f {
            _ if *n != number => {}
            Field::Varint(x) => v.push(*x),
            Field::Bytes(b) => {
                let mut at = 0;
                while at < b.len() {
                    v.push(varint(b, &mut at));
                }
            }
        }
    }
    v
}

pub fn int(fs: &[(u64, Field<'_>)], number: u64) -> u64 {
    ints(fs, number).last().copied().unwrap_or(0)
}

pub fn messages<'a>(fs: &[(u64, Field<'a>)], number: u64) -> Vec<&'a [u8]> {
    fs.iter()
        .filter_map(|(n, f)| match f {
            Field::Bytes(b) if *n == number => Some(*b),
            _ => None,
        })
        .collect()
}

/// A profile's string table (field 6), as strings.
pub fn string_table(top: &[(u64, Field<'_>)]) -> Vec<String> {
    messages(top, 6)
        .iter()
        .map(|b| String::from_utf8(b.to_vec()).expect("utf-8"))
        .collect()
}

pub fn gunzip(gz: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = gz.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&data));
    let out = child.wait_with_output().expect("gzip finishes");
    writer.join().expect("writer").expect("gzip reads");
    assert!(out.status.success(), "gzip -dc failed");
    out.stdout
}

/// Fold a gzipped profile.proto: per sample, one stack per sample type `<event>_samples`
/// it counts in, named by its `comm` label and its locations' functions (a location
/// without lines is `[unknown]`; inlined lines, callers last, outermost first).
/// A profile's string table, the names of its sample types and each function's name (by
/// id).
struct Names {
    strings: Vec<String>,
    types: Vec<String>,
    functions: BTreeMap<u64, u64>,
}

impl Names {
    fn of(top: &[(u64, Field<'_>)]) -> Names {
        let strings = string_table(top);
        assert_eq!(strings.first().map(String::as_str), Some(""), "string 0");
        let types = messages(top, 1)
            .iter()
            .map(|m| strings[int(&fields(m), 1) as usize].clone())
            .collect();
        let functions = messages(top, 5)
            .iter()
            .map(|m| {
                let f = fields(m);
                (int(&f, 1), int(&f, 2))
            })
            .collect();
        Names {
            strings,
            types,
            functions,
        }
    }

    fn string(&self, i: u64) -> &str {
        &self.strings[i as usize]
    }

    fn function(&self, id: u64) -> &str {
        self.string(self.functions[&id])
    }
}

pub fn pprof(gz: &[u8], multi: bool) -> Folded {
    let raw = gunzip(gz);
    let top = fields(&raw);
    let names = Names::of(&top);
    let (s, types) = (|i: u64| names.string(i), &names.types);
    let locations: BTreeMap<u64, Vec<&str>> = messages(&top, 4)
        .iter()
        .map(|m| {
            let f = fields(m);
            let mut functions: Vec<&str> = messages(&f, 4)
                .iter()
                .map(|l| names.function(int(&fields(l), 1)))
                .collect();
            if functions.is_empty() {
                functions.push("[unknown]");
            }
            functions.reverse();
            (int(&f, 1), functions)
        })
        .collect();
    let mut folded = Folded::new();
    for m in messages(&top, 2) {
        let f = fields(m);
        let comm = messages(&f, 3)
            .iter()
            .map(|l| fields(l))
            .find(|l| s(int(l, 1)) == "comm")
            .map(|l| s(int(&l, 2)))
            .expect("comm label");
        let mut frames: Vec<&str> = Vec::new();
        for id in ints(&f, 1).iter().rev() {
            frames.extend(&locations[id]);
        }
        for (value, ty) in ints(&f, 2).into_iter().zip(types) {
            let Some(event) = ty.strip_suffix("_samples") else {
                continue;
            };
            let mut parts = Vec::new();
            if multi {
                parts.push(event);
            }
            parts.push(comm);
            parts.extend(&frames);
            add(&mut folded, &parts, value);
        }
    }
    folded
}

/// Per event, the values of sample type `<event>_samples` (`kind` `samples`) or of the
/// period type after it (`kind` `period`: `<event>_period`, or `cpu` for a clock) of a
/// gzipped profile.proto summed by the function of each sample's leaf location (its
/// outermost line: the address's own function), and under `""` the event's total.
/// Samples whose leaf location has no line (no symbol) count in the total alone; events
/// without samples are left out.
pub fn pprof_leaf_values(gz: &[u8], kind: &str) -> BTreeMap<String, BTreeMap<String, u64>> {
    let raw = gunzip(gz);
    let top = fields(&raw);
    let names = Names::of(&top);
    let types = &names.types;
    let leaf_function: BTreeMap<u64, Option<&str>> = messages(&top, 4)
        .iter()
        .map(|m| {
            let f = fields(m);
            let lines = messages(&f, 4);
            let own = lines.last().map(|l| names.function(int(&fields(l), 1)));
            (int(&f, 1), own)
        })
        .collect();
    let mut out: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    for m in messages(&top, 2) {
        let f = fields(m);
        let leaf = ints(&f, 1).first().and_then(|id| leaf_function[id]);
        for (i, value) in ints(&f, 2).into_iter().enumerate() {
            // Two types per event, `<event>_samples` first.
            let first = if kind == "samples" {
                i
            } else {
                i.wrapping_sub(1)
            };
            if i % 2 != usize::from(kind != "samples") {
                continue;
            }
            let Some(event) = types[first].strip_suffix("_samples") else {
                continue;
            };
            // A sample counts for its own event; the others' values are 0.
            if value == 0 {
                continue;
            }
            let per = out.entry(event.to_string()).or_default();
            *per.entry(String::new()).or_insert(0) += value;
            if let Some(function) = leaf {
                *per.entry(function.to_string()).or_insert(0) += value;
            }
        }
    }
    out
}

// ---- speedscope ----

/// Fold a speedscope file, which must validate against speedscope's schema: every
/// sampled profile's samples, one each, the profile's
/// title giving comm (and event); the weights must add up to endValue - startValue.
pub fn speedscope(doc: &Value, multi: bool) -> Folded {
    let errors = super::schema::validate(&super::schema::speedscope_schema(), doc);
    assert!(errors.is_empty(), "speedscope schema: {errors:?}");
    assert_eq!(
        doc["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames: Vec<&str> = doc["shared"]["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["name"].as_str().expect("frame name"))
        .collect();
    let mut folded = Folded::new();
    for p in doc["profiles"].as_array().expect("profiles") {
        assert_eq!(p["type"], "sampled");
        let (comm, event) = track(p["name"].as_str().expect("name"), multi);
        let samples = p["samples"].as_array().expect("samples");
        let weights = p["weights"].as_array().expect("weights");
        assert_eq!(samples.len(), weights.len());
        let total: u64 = weights.iter().map(|w| w.as_u64().expect("weight")).sum();
        let span = p["endValue"].as_u64().expect("end") - p["startValue"].as_u64().expect("start");
        assert_eq!(total, span, "weights vs endValue - startValue");
        for stack in samples {
            let mut parts: Vec<&str> = event.iter().map(String::as_str).collect();
            parts.push(&comm);
            parts.extend(
                stack
                    .as_array()
                    .expect("stack")
                    .iter()
                    .map(|i| frames[i.as_u64().expect("index") as usize]),
            );
            add(&mut folded, &parts, 1);
        }
    }
    folded
}

// ---- Firefox Profiler ----

fn column<'a>(table: &'a Value, name: &str) -> &'a Vec<Value> {
    table[name]
        .as_array()
        .unwrap_or_else(|| panic!("column {name}"))
}

fn index(v: &Value) -> usize {
    v.as_u64().expect("index") as usize
}

/// Fold a processed Firefox profile, which must pass the Firefox Profiler's definitions
/// (its types' schema and the invariants of tests/exports/firefox.rs): every thread's
/// samples (weight each, 1 when the weights are null), each stack walked through
/// stackTable prefixes to the root, frames named by frameTable.func -> funcTable.name ->
/// the thread's stringArray (an address without a symbol, `[unknown] in` its DSO, as
/// perf script's `[unknown]`).
pub fn firefox(doc: &Value, multi: bool) -> Folded {
    let errors = super::firefox::check(doc);
    assert!(
        errors.is_empty(),
        "Firefox Profiler's definitions: {errors:#?}"
    );
    assert!(doc["meta"]["version"].as_u64().is_some(), "meta.version");
    let mut folded = Folded::new();
    for t in doc["threads"].as_array().expect("threads") {
        let (comm, event) = track(t["name"].as_str().expect("name"), multi);
        let strings = t["stringArray"].as_array().expect("stringArray");
        let (stack_t, frame_t, func_t) = (&t["stackTable"], &t["frameTable"], &t["funcTable"]);
        let (prefix, frame) = (column(stack_t, "prefix"), column(stack_t, "frame"));
        let (func, names) = (column(frame_t, "func"), column(func_t, "name"));
        let name = |frame_idx: usize| {
            let name = strings[index(&names[index(&func[frame_idx])])]
                .as_str()
                .expect("string");
            if name.starts_with("[unknown] in ") {
                "[unknown]"
            } else {
                name
            }
        };
        let samples = &t["samples"];
        let stacks = column(samples, "stack");
        assert_eq!(
            samples["length"].as_u64(),
            Some(stacks.len() as u64),
            "samples.length"
        );
        assert_eq!(column(samples, "timeDeltas").len(), stacks.len());
        let weights = samples["weight"].as_array();
        for (i, st) in stacks.iter().enumerate() {
            let mut frames = Vec::new();
            let mut at = st.as_u64().map(|x| x as usize);
            while let Some(s) = at {
                frames.push(name(index(&frame[s])));
                at = prefix[s].as_u64().map(|x| x as usize);
            }
            frames.reverse();
            let mut parts: Vec<&str> = event.iter().map(String::as_str).collect();
            parts.push(&comm);
            parts.extend(frames);
            let n = weights.map_or(1, |w| w[i].as_u64().expect("weight"));
            add(&mut folded, &parts, n);
        }
    }
    folded
}

// ---- flame graph ----

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let at = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("{name} in {tag}"));
    let rest = &tag[at + name.len() + 3..];
    &rest[..rest.find('"').expect("closing quote")]
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The SVG parses as XML (quick-xml, end names checked, every attribute read): one
/// `svg` root element, every element closed.
fn well_formed_svg(svg: &str) {
    use quick_xml::events::Event;
    assert!(svg.trim_start().starts_with("<?xml"), "an XML declaration");
    let mut reader = quick_xml::Reader::from_str(svg);
    reader.config_mut().check_end_names = true;
    let (mut depth, mut roots, mut elements) = (0usize, Vec::new(), 0);
    loop {
        let event = reader
            .read_event()
            .unwrap_or_else(|e| panic!("SVG at byte {}: {e}", reader.buffer_position()));
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            Event::End(_) => {
                depth -= 1;
                (None, false)
            }
            Event::Eof => break,
            _ => (None, false),
        };
        if let Some(e) = start {
            for a in e.attributes() {
                a.unwrap_or_else(|err| panic!("attribute at {}: {err}", reader.buffer_position()));
            }
            if depth == 0 {
                roots.push(String::from_utf8_lossy(e.name().as_ref()).into_owned());
            }
            elements += 1;
            if !empty {
                depth += 1;
            }
        }
    }
    assert_eq!(depth, 0, "unclosed elements");
    assert_eq!(roots, ["svg"], "one svg root");
    assert!(elements > 3, "{elements} elements");
}

/// One drawn frame: its name, level (0 = the root `all`), first sample and width.
struct Box {
    name: String,
    y: i64,
    x: u64,
    w: u64,
}

/// Fold an SVG flame graph: each frame's `<title>` gives its name and sample count,
/// which must equal its `fg:w`; frames one row up (y one row less) inside its
/// `[fg:x, fg:x + fg:w)` are its callees, and what they leave of its width is the count
/// of the stack ending there. Returns the stacks and the root's width.
pub fn flamegraph(svg: &str) -> (Folded, u64) {
    well_formed_svg(svg);
    let mut boxes = Vec::new();
    for g in svg.split("<g><title>").skip(1) {
        let (title, rest) = g.split_once("</title>").expect("title ends");
        let rect = &rest[rest.find("<rect").expect("rect")..];
        let rect = &rect[..rect.find("/>").expect("rect ends")];
        let title = unescape(title);
        let (name, count) = title.rsplit_once(" (").expect("count in title");
        let count: u64 = count
            .split(' ')
            .next()
            .expect("count")
            .replace(',', "")
            .parse()
            .expect("count");
        let b = Box {
            name: name.to_string(),
            y: attr(rect, "y").parse().expect("y"),
            x: attr(rect, "fg:x").parse().expect("fg:x"),
            w: attr(rect, "fg:w").parse().expect("fg:w"),
        };
        assert_eq!(b.w, count, "title vs width of {}", b.name);
        boxes.push(b);
    }
    // Rows from the bottom (the root, largest y) up.
    let mut ys: Vec<i64> = boxes.iter().map(|b| b.y).collect();
    ys.sort_unstable();
    ys.dedup();
    ys.reverse();
    let level = |y: i64| ys.iter().position(|&v| v == y).expect("row");
    let roots: Vec<&Box> = boxes.iter().filter(|b| level(b.y) == 0).collect();
    assert_eq!(roots.len(), 1, "one root");
    assert_eq!(roots[0].name, "all");
    let total = roots[0].w;
    let mut folded = Folded::new();
    fn walk(
        boxes: &[Box],
        level: &dyn Fn(i64) -> usize,
        node: &Box,
        path: &mut Vec<String>,
        out: &mut Folded,
    ) {
        let l = level(node.y);
        let children: Vec<&Box> = boxes
            .iter()
            .filter(|c| level(c.y) == l + 1 && c.x >= node.x && c.x + c.w <= node.x + node.w)
            .collect();
        let inner: u64 = children.iter().map(|c| c.w).sum();
        assert!(inner <= node.w, "children wider than {}", node.name);
        if l > 0 {
            path.push(node.name.clone());
            if node.w > inner {
                *out.entry(path.join(";")).or_insert(0) += node.w - inner;
            }
        }
        for c in children {
            walk(boxes, level, c, path, out);
        }
        if l > 0 {
            path.pop();
        }
    }
    walk(&boxes, &level, roots[0], &mut Vec::new(), &mut folded);
    (folded, total)
}
