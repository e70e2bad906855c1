//! A deterministic mutator of perf.data recordings: the damage that reaches `anonymize`
//! from a disk, a copy or a hostile sender. Besides flipped bits and bytes it aims at
//! the fields that frame what follows them: record types (to 0, to numbers past perf's,
//! to simpleperf's), record sizes (one off, eight off, halved, doubled), the header's
//! data section, the feature bitmap and the feature index, compressed records' sizes; and
//! it cuts, inserts, deletes, zeroes and duplicates. Little-endian recordings only (the
//! fixtures are).

/// SplitMix64: the same mutants for the same seed on every machine.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[self.below(from.len())]
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn put(b: &mut [u8], at: usize, bytes: &[u8]) {
    if let Some(dst) = b.get_mut(at..at + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// Where a recording's parts are, as far as its bytes still say.
#[derive(Debug, Default)]
struct Layout {
    pipe: bool,
    /// The data section (file mode), or the records after the pipe header.
    data: (usize, usize),
    /// The top-level records: offset and length (payload included).
    records: Vec<(usize, usize)>,
    /// File mode: the feature index's offset and entry count.
    index: Option<(usize, usize)>,
}

/// Record types whose payload follows `header.size`: HEADER_TRACING_DATA (u32 size)
/// and AUXTRACE (u64 size).
fn payload_len(b: &[u8], at: usize, ty: u32) -> usize {
    match ty {
        66 => u32_at(b, at + 8).unwrap_or(0) as usize,
        71 => u64_at(b, at + 8).map_or(0, |n| n.min(usize::MAX as u64 / 2) as usize),
        _ => 0,
    }
}

fn layout(b: &[u8]) -> Layout {
    let mut l = Layout::default();
    if b.len() < 16 {
        return l;
    }
    l.pipe = u64_at(b, 8) == Some(16);
    l.data = if l.pipe {
        (16, b.len())
    } else {
        let off = u64_at(b, 40).unwrap_or(0) as usize;
        let size = u64_at(b, 48).unwrap_or(0) as usize;
        (off.min(b.len()), off.saturating_add(size).min(b.len()))
    };
    if !l.pipe && b.len() >= 104 {
        let bits: u32 = b[72..104].iter().map(|x| x.count_ones()).sum();
        l.index = Some((l.data.1, bits as usize));
    }
    let mut at = l.data.0;
    while at + 8 <= l.data.1 && l.records.len() < 100_000 {
        let ty = u32_at(b, at).unwrap_or(0);
        let size = u16_at(b, at + 6).unwrap_or(0) as usize;
        if size < 8 {
            break;
        }
        let len = size.saturating_add(payload_len(b, at, ty));
        if at + len > l.data.1 {
            break;
        }
        l.records.push((at, len));
        at += len;
    }
    l
}

/// A value near `v` or one that sizes and counts hold in damaged files.
fn interesting(rng: &mut Rng, v: u64, max: u64) -> u64 {
    let deltas: [i64; 8] = [1, -1, 8, -8, 16, -16, 4, -4];
    let x = match rng.below(6) {
        0 | 1 => v.wrapping_add_signed(rng.pick(&deltas)),
        2 => rng.pick(&[0, 1, 7, 8, 9, 64, 0x7f, 0x80, 0xff]),
        3 => max,
        4 => v.wrapping_mul(2),
        _ => v / 2,
    };
    x & max
}

fn mutate_record_header(b: &mut [u8], l: &Layout, rng: &mut Rng, only_type: Option<u32>) -> String {
    let candidates: Vec<(usize, usize)> = match only_type {
        Some(t) => l
            .records
            .iter()
            .copied()
            .filter(|&(at, _)| u32_at(b, at) == Some(t))
            .collect(),
        None => l.records.clone(),
    };
    if candidates.is_empty() {
        return flip_bit(b, rng);
    }
    let (at, _) = rng.pick(&candidates);
    let field = if only_type.is_some() { 1 } else { rng.below(3) };
    match field {
        0 => {
            let ty = match rng.below(5) {
                0 => 0,
                1 => 87 + rng.below(40) as u32,
                2 => 32768 + rng.below(30) as u32,
                // Any type perf defines, the kernel's or its own.
                3 => {
                    let n = rng.below(22 + 23) as u32;
                    if n < 22 {
                        1 + n
                    } else {
                        64 + n - 22
                    }
                }
                _ => rng.next() as u32,
            };
            put(b, at, &ty.to_le_bytes());
            format!("record at {at}: type {ty}")
        }
        1 => {
            let size = u16_at(b, at + 6).unwrap_or(0);
            let new = interesting(rng, u64::from(size), 0xffff) as u16;
            put(b, at + 6, &new.to_le_bytes());
            format!("record at {at}: size {size} -> {new}")
        }
        _ => {
            let misc = rng.next() as u16;
            put(b, at + 4, &misc.to_le_bytes());
            format!("record at {at}: misc {misc:#x}")
        }
    }
}

fn flip_bit(b: &mut [u8], rng: &mut Rng) -> String {
    if b.is_empty() {
        return "nothing to flip".into();
    }
    let at = rng.below(b.len());
    let bit = rng.below(8);
    b[at] ^= 1 << bit;
    format!("bit {bit} of byte {at}")
}

fn header_field(b: &mut [u8], l: &Layout, rng: &mut Rng) -> String {
    if l.pipe || b.len() < 104 {
        return flip_bit(b, rng);
    }
    // data.size most often: the mechanism that moves records into features and back.
    let at = rng.pick(&[48, 48, 48, 40, 16, 24, 32, 56, 64]);
    let v = u64_at(b, at).unwrap_or(0);
    let new = if at == 48 && rng.below(4) == 0 {
        // A record's length more or less, or the whole file.
        let rec = l.records.get(rng.below(l.records.len())).map_or(8, |r| r.1) as u64;
        rng.pick(&[v.wrapping_add(rec), v.wrapping_sub(rec), b.len() as u64, 0])
    } else {
        interesting(rng, v, u64::MAX)
    };
    put(b, at, &new.to_le_bytes());
    format!("header field {at}: {v} -> {new}")
}

fn feature_bits(b: &mut [u8], rng: &mut Rng) -> String {
    if b.len() < 104 || u64_at(b, 8) == Some(16) {
        return flip_bit(b, rng);
    }
    if rng.below(3) == 0 {
        let at = 72 + rng.below(5);
        let v = rng.next() as u8;
        b[at] = v;
        return format!("feature bitmap byte {at} = {v:#x}");
    }
    let bit = match rng.below(4) {
        0 => 128 + rng.below(16),
        _ => rng.below(40),
    };
    b[72 + bit / 8] ^= 1 << (bit % 8);
    format!("feature bit {bit} flipped")
}

fn feature_index(b: &mut [u8], l: &Layout, rng: &mut Rng) -> String {
    let Some((at, n)) = l.index.filter(|&(at, n)| n > 0 && at + n * 16 <= b.len()) else {
        return flip_bit(b, rng);
    };
    let i = rng.below(n);
    let entry = at + i * 16;
    if rng.below(4) == 0 && n > 1 {
        let j = rng.below(n);
        let (x, y) = (entry, at + j * 16);
        let a = b[x..x + 16].to_vec();
        let c = b[y..y + 16].to_vec();
        put(b, x, &c);
        put(b, y, &a);
        return format!("feature index entries {i} and {j} swapped");
    }
    let field = entry + 8 * rng.below(2);
    let v = u64_at(b, field).unwrap_or(0);
    let new = interesting(rng, v, u64::MAX);
    put(b, field, &new.to_le_bytes());
    format!(
        "feature index entry {i} field {}: {v} -> {new}",
        (field - entry) / 8
    )
}

/// A byte inside a feature section (file mode) or a HEADER_FEATURE record (pipe).
fn feature_bytes(b: &mut [u8], l: &Layout, rng: &mut Rng) -> String {
    let ranges: Vec<(usize, usize)> = match l.index {
        Some((at, n)) if !l.pipe => (0..n)
            .filter_map(|i| {
                let off = u64_at(b, at + i * 16)? as usize;
                let size = u64_at(b, at + i * 16 + 8)? as usize;
                (size > 0 && off.checked_add(size)? <= b.len()).then_some((off, size))
            })
            .collect(),
        _ => l
            .records
            .iter()
            .copied()
            .filter(|&(r, _)| u32_at(b, r) == Some(80))
            .map(|(r, len)| (r + 8, len - 8))
            .collect(),
    };
    if ranges.is_empty() {
        return flip_bit(b, rng);
    }
    let (off, size) = rng.pick(&ranges);
    let at = off + rng.below(size);
    if rng.below(2) == 0 {
        b[at] ^= 1 << rng.below(8);
    } else {
        b[at] = rng.pick(&[0u8, 0xff, 0x7f, 0x80, 1]);
    }
    format!("feature byte {at}")
}

/// A word at an aligned offset set to an interesting value.
fn word(b: &mut [u8], rng: &mut Rng) -> String {
    let width = rng.pick(&[2usize, 4, 8]);
    if b.len() < width {
        return flip_bit(b, rng);
    }
    let at = rng.below(b.len() / width) * width;
    let v = u64_at(b, at).unwrap_or(0);
    let new = interesting(rng, v, u64::MAX >> (64 - 8 * width));
    put(b, at, &new.to_le_bytes()[..width]);
    format!("{width}-byte word at {at} -> {new:#x}")
}

fn splice(b: &mut Vec<u8>, l: &Layout, rng: &mut Rng) -> String {
    if b.is_empty() {
        return "empty".into();
    }
    let at = rng.below(b.len());
    let n = 1 + rng.below(16);
    match rng.below(5) {
        0 => {
            b.truncate(at);
            format!("cut at {at}")
        }
        1 => {
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            b.splice(at..at, bytes);
            format!("{n} random bytes inserted at {at}")
        }
        2 => {
            let end = (at + n).min(b.len());
            b.drain(at..end);
            format!("bytes {at}..{end} deleted")
        }
        3 => {
            let n = 1 + rng.below(64);
            let end = (at + n).min(b.len());
            b[at..end].fill(0);
            format!("bytes {at}..{end} zeroed")
        }
        _ => duplicate_record(b, l, rng),
    }
}

/// A whole record inserted again after itself; a file's data size and feature offsets
/// follow, so that only the record stream changes.
fn duplicate_record(b: &mut Vec<u8>, l: &Layout, rng: &mut Rng) -> String {
    if l.records.is_empty() {
        return flip_bit(b, rng);
    }
    let (at, len) = rng.pick(&l.records);
    let copy = b[at..at + len].to_vec();
    b.splice(at + len..at + len, copy);
    if let (false, Some((index, n))) = (l.pipe, l.index) {
        let size = u64_at(b, 48).unwrap_or(0);
        put(b, 48, &size.wrapping_add(len as u64).to_le_bytes());
        for i in 0..n {
            let e = index + len + i * 16;
            if let Some(off) = u64_at(b, e) {
                put(b, e, &off.wrapping_add(len as u64).to_le_bytes());
            }
        }
    }
    format!("record at {at} ({len} bytes) duplicated")
}

/// Integer types a string field is declared as: C's, the kernel's and perf's.
const INT_TYPES: [&str; 14] = [
    "long",
    "int",
    "short",
    "u64",
    "__u64",
    "s64",
    "u32",
    "s32",
    "u16",
    "u8",
    "pid_t",
    "unsigned long",
    "unsigned int",
    "size_t",
];

/// The tracing data's string fields (`field:char NAME[N];`, `field:__data_loc char[]
/// NAME;`): where each declaration starts and ends (at its `;`).
fn string_fields(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = b[at..].windows(6).position(|w| w == b"field:") {
        let start = at + i + 6;
        at = start;
        let rest = &b[start..b.len().min(start + 80)];
        let Some(end) = rest.iter().position(|&c| c == b';' || c == b'\n') else {
            continue;
        };
        if rest[end] == b';'
            && (rest.starts_with(b"char ") || rest.starts_with(b"__data_loc char[]"))
        {
            out.push((start, start + end));
        }
    }
    out
}

/// A string field of the tracing data declared as numbers (`char prev_comm[16]` as
/// `long prev_comm[2]`, `__u64 prev_comm`, `int prev_comm[8]`): a type of the same or
/// another size, one number or an array, sometimes renamed, sometimes with its size
/// changed; padded with spaces so that nothing moves. `None` when the input has no
/// tracing data.
fn retype(b: &mut [u8], rng: &mut Rng) -> Option<String> {
    let fields = string_fields(b);
    if fields.is_empty() {
        return None;
    }
    let (start, end) = rng.pick(&fields);
    let old = String::from_utf8_lossy(&b[start..end]).into_owned();
    let last = old.split_whitespace().last()?;
    let mut name = last.split('[').next()?.to_string();
    if rng.below(4) == 0 {
        name.pop();
        name.push('x');
    }
    let bounds = ["", "", "[1]", "[2]", "[4]", "[8]", "[16]", "[]"];
    let mut new = String::new();
    for _ in 0..8 {
        let ty = rng.pick(&INT_TYPES);
        new = if old.starts_with("__data_loc") && rng.below(2) == 0 {
            format!("__data_loc {ty}[] {name}")
        } else {
            format!("{ty} {name}{}", rng.pick(&bounds))
        };
        if new.len() <= old.len() {
            break;
        }
    }
    if new.len() > old.len() {
        return None;
    }
    let padded = format!("{new:<width$}", width = old.len());
    b[start..end].copy_from_slice(padded.as_bytes());
    let mut what = format!("{old:?} declared {new:?}");
    // The size field, as wide as it was.
    if rng.below(3) == 0 {
        let tail = &b[end..b.len().min(end + 40)];
        if let Some(i) = tail.windows(5).position(|w| w == b"size:") {
            let at = end + i + 5;
            let width = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
            let size = rng.pick(&[1u32, 2, 4, 8, 16, 32]);
            let text = format!("{size:0width$}");
            if width > 0 && text.len() == width {
                b[at..at + width].copy_from_slice(text.as_bytes());
                what.push_str(&format!(", size {text}"));
            }
        }
    }
    Some(what)
}

/// A mutant of `input`: one to three mutations; returns the bytes and what was done.
/// Half the mutants of a recording with tracing data first have a string field of its
/// formats declared as numbers (half of these nothing else), drawn from a generator of
/// their own so that the other mutations are the ones an earlier mutator made.
pub fn mutant(input: &[u8], rng: &mut Rng) -> (Vec<u8>, Vec<String>) {
    let mut b = input.to_vec();
    let mut done = Vec::new();
    let mut types = Rng::new(rng.0 ^ 0x7479_7065_7479_7065);
    if types.below(2) == 0 {
        if let Some(what) = retype(&mut b, &mut types) {
            done.push(what);
            if types.below(2) == 0 {
                return (b, done);
            }
        }
    }
    for _ in 0..1 + rng.below(3) {
        let l = layout(&b);
        let what = match rng.below(14) {
            0 => flip_bit(&mut b, rng),
            1 => word(&mut b, rng),
            2 | 3 => mutate_record_header(&mut b, &l, rng, None),
            4 => mutate_record_header(&mut b, &l, rng, Some(81)),
            5 | 6 => header_field(&mut b, &l, rng),
            7 => feature_bits(&mut b, rng),
            8 => feature_index(&mut b, &l, rng),
            9 => feature_bytes(&mut b, &l, rng),
            10 | 11 => splice(&mut b, &l, rng),
            12 => duplicate_record(&mut b, &l, rng),
            _ => {
                let at = rng.below(b.len().max(1));
                if let Some(x) = b.get_mut(at) {
                    *x = rng.next() as u8;
                }
                format!("byte {at} randomised")
            }
        };
        done.push(what);
    }
    (b, done)
}

#[test]
fn the_mutator_finds_the_records_and_the_features() {
    let input = std::fs::read(perfdata_tests::fixtures_dir().join("anon-secret.data")).unwrap();
    let l = layout(&input);
    // perf report --stats: 313 records; 18 feature bits in the fixture README.
    assert_eq!(l.records.len(), 313);
    assert!(l.index.is_some_and(|(_, n)| n >= 18), "{:?}", l.index);
    let pipe =
        std::fs::read(perfdata_tests::fixtures_dir().join("anon/secret-pipe-z.data")).unwrap();
    let l = layout(&pipe);
    assert!(l.pipe && l.records.len() > 20);
    assert_eq!(l.records.last().map(|r| r.0 + r.1), Some(pipe.len()));
    // The tracing data's six string fields, and a retype that moves nothing.
    let tp = std::fs::read(perfdata_tests::fixtures_dir().join("anon/secret-tp.data")).unwrap();
    assert_eq!(string_fields(&tp).len(), 6);
    assert!(string_fields(&input).is_empty());
    let mut rng = Rng::new(3);
    let (mut kinds, mut b) = (std::collections::BTreeSet::new(), tp.clone());
    for _ in 0..50 {
        b.copy_from_slice(&tp);
        let what = retype(&mut b, &mut rng).unwrap();
        assert_eq!(b.len(), tp.len());
        assert_eq!(string_fields(&b).len(), 5, "{what}");
        kinds.insert(what.split(" declared ").nth(1).unwrap().contains('['));
    }
    assert_eq!(kinds.len(), 2, "arrays and single numbers");
    // The same seed gives the same mutant.
    let a = mutant(&input, &mut Rng::new(7));
    let b = mutant(&input, &mut Rng::new(7));
    assert_eq!(a, b);
    assert_ne!(a.0, input);
}
