//! perf script's printf conversions, written into a reused byte buffer without
//! formatting machinery: a line costs no allocation.

use super::fields::{Field, Fields};

/// Append `s` right-aligned in `width` columns (C's `%Ns`).
pub(crate) fn right(buf: &mut Vec<u8>, s: &[u8], width: usize) {
    buf.resize(buf.len() + width.saturating_sub(s.len()), b' ');
    buf.extend_from_slice(s);
}

/// Append `s` left-aligned in `width` columns (C's `%-Ns`).
pub(crate) fn left(buf: &mut Vec<u8>, s: &[u8], width: usize) {
    buf.extend_from_slice(s);
    buf.resize(buf.len() + width.saturating_sub(s.len()), b' ');
}

/// Bytes `b` repeated `n` times (n at most 16) in the low bytes of a word.
#[inline(always)]
fn fill(b: u8, n: usize) -> u128 {
    if n == 0 {
        0
    } else {
        (u128::from_ne_bytes([b; 16])) >> (128 - 8 * n)
    }
}

/// The eight decimal digits of `v` (below 10^8, leading zeros included), as digit
/// values 0 to 9, the first in the low byte: each step splits every lane in two at
/// once (4 + 4 digits, then 2 + 2, then 1 + 1), multiplying by a reciprocal.
#[inline(always)]
fn eight_digits(v: u32) -> u64 {
    let v = u64::from(v);
    let x = (v / 10_000) | ((v % 10_000) << 32);
    // /100 of each 32-bit lane below 10,000: (x * 5243) >> 19.
    let hi = ((x * 5243) >> 19) & 0x0000_007f_0000_007f;
    let x = hi | ((x - hi * 100) << 16);
    // /10 of each 16-bit lane below 100: (x * 103) >> 10.
    let hi = ((x * 103) >> 10) & 0x000f_000f_000f_000f;
    hi | ((x - hi * 10) << 8)
}

/// The sixteen hex digits of `v` as digit values 0 to 15, the first in the low byte
/// of the word.
#[inline(always)]
fn sixteen_nibbles(v: u64) -> u128 {
    // Each 32-bit half's nibbles spread one to a byte, last digit in the low byte.
    let spread = |h: u64| {
        let h = (h | (h << 16)) & 0x0000_ffff_0000_ffff;
        let h = (h | (h << 8)) & 0x00ff_00ff_00ff_00ff;
        ((h | (h << 4)) & 0x0f0f_0f0f_0f0f_0f0f).swap_bytes()
    };
    u128::from(spread(v >> 32)) | (u128::from(spread(v & 0xffff_ffff)) << 64)
}

/// Digit values (one a byte) as their ASCII digits, `0-9a-f`.
#[inline(always)]
fn ascii(w: u128) -> u128 {
    const ONES: u128 = u128::from_ne_bytes([1; 16]);
    // 1 in each byte of a digit above 9.
    let letters = ((w + 6 * ONES) >> 4) & ONES;
    w + b'0' as u128 * ONES + letters * (b'a' - b'0' - 10) as u128
}

/// The digits of `v` in base `radix` (10 or 16), the first in the low byte of the word
/// (its bytes little-endian are the text), and how many; None past 16 digits.
///
/// The text is built in a register, all digits at once, and stored whole: digits
/// written to memory one by one and then copied with a wider load stall the copy until
/// each store lands (with itoa's buffer, a call to memcpy per field and padding by
/// memset, most of the listing's 8% in memmove), and a loop of a division per digit
/// cost as much (a sample line has about 37 digits).
#[inline(always)]
fn digits(v: u64, radix: u64) -> Option<(u128, usize)> {
    let (w, n) = if radix == 16 {
        let n = (64 - v.leading_zeros() as usize).div_ceil(4).max(1);
        (sixteen_nibbles(v) >> (8 * (16 - n)), n)
    } else if v < 100_000_000 {
        let w = eight_digits(v as u32);
        let lead = ((w.trailing_zeros() / 8) as usize).min(7);
        (u128::from(w >> (8 * lead)), 8 - lead)
    } else if v < 10_000_000_000_000_000 {
        let (high, low) = (v / 100_000_000, (v % 100_000_000) as u32);
        let w = eight_digits(high as u32);
        let lead = ((w.trailing_zeros() / 8) as usize).min(7);
        let n = 8 - lead;
        let w = u128::from(w >> (8 * lead)) | (u128::from(eight_digits(low)) << (8 * n));
        (w, n + 8)
    } else {
        return None;
    };
    // The bytes past the digits are zero digits now: cleared, for padding put there.
    let mask = u128::MAX >> (8 * (16 - n));
    Some((ascii(w) & mask, n))
}

/// Append the low `n` bytes of `w` (n at most 16): one 16-byte store, cut back.
#[inline(always)]
fn put(buf: &mut Vec<u8>, w: u128, n: usize) {
    let len = buf.len();
    buf.extend_from_slice(&w.to_le_bytes());
    buf.truncate(len + n);
}

/// A printf conversion of an integer: `radix` 10 or 16, `sign` put first (the value
/// is its magnitude), padded to `width` with `pad` on the left, or with spaces on the
/// right when `left`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Conversion {
    radix: u64,
    sign: bool,
    width: usize,
    pad: u8,
    left: bool,
}

/// `v` as `c` converts it, as a word and its length; None past 16 bytes.
#[inline(always)]
fn word(v: u64, c: Conversion) -> Option<(u128, usize)> {
    let Conversion {
        radix,
        sign,
        width,
        pad,
        left,
    } = c;
    let (mut w, mut n) = match digits(v, radix) {
        Some(d) if width <= 16 && d.1 + usize::from(sign) <= 16 => d,
        _ => return None,
    };
    if sign {
        w = (w << 8) | u128::from(b'-');
        n += 1;
    }
    let more = width.saturating_sub(n);
    if more > 0 {
        if left {
            w |= fill(b' ', more) << (8 * n);
        } else {
            w = (w << (8 * more)) | fill(pad, more);
        }
    }
    Some((w, n + more))
}

/// Append `v` as `radix`, `sign`, `width`, `pad` and `left` say ([`Conversion`]).
#[inline(always)]
fn number(buf: &mut Vec<u8>, v: u64, radix: u64, sign: bool, width: usize, pad: u8, left: bool) {
    let c = Conversion {
        radix,
        sign,
        width,
        pad,
        left,
    };
    match word(v, c) {
        Some((w, n)) => put(buf, w, n),
        // Wider than a word: through the formatter, rare.
        None => number_long(buf, v, c),
    }
}

/// The texts of the last two decimals a [`Memo`] wrote, kept: a listing's pids, tids,
/// periods and seconds repeat from line to line, and making the digits of four numbers
/// a line was 15% of the cycles. Two, as samples in time order alternate between the
/// CPUs and so between their threads (and CPU numbers): with one text kept, the digits
/// were made again for most lines of a two-process recording.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Memo {
    /// The text written last, then the one before it.
    kept: [Kept; 2],
}

/// A text a [`Memo`] keeps: its value and conversion, its bytes and length.
#[derive(Debug, Default, Clone, Copy)]
struct Kept {
    key: Option<(u64, Conversion)>,
    w: u128,
    n: usize,
}

impl Memo {
    #[inline]
    fn number(&mut self, buf: &mut Vec<u8>, v: u64, sign: bool, width: usize, left: bool) {
        let c = Conversion {
            radix: 10,
            sign,
            width,
            pad: b' ',
            left,
        };
        self.converted(buf, v, c);
    }

    #[inline]
    fn converted(&mut self, buf: &mut Vec<u8>, v: u64, c: Conversion) {
        let key = Some((v, c));
        if self.kept[0].key != key {
            if self.kept[1].key == key {
                self.kept.swap(0, 1);
            } else {
                match word(v, c) {
                    Some((w, n)) => {
                        self.kept[1] = self.kept[0];
                        self.kept[0] = Kept { key, w, n };
                    }
                    None => return number_long(buf, v, c),
                }
            }
        }
        put(buf, self.kept[0].w, self.kept[0].n);
    }

    /// [`int`], remembered.
    pub(crate) fn int(&mut self, buf: &mut Vec<u8>, v: i64, width: usize) {
        self.number(buf, v.unsigned_abs(), v < 0, width, false);
    }

    /// [`int_left`], remembered.
    pub(crate) fn int_left(&mut self, buf: &mut Vec<u8>, v: i64, width: usize) {
        self.number(buf, v.unsigned_abs(), v < 0, width, true);
    }

    /// [`uint`], remembered.
    pub(crate) fn uint(&mut self, buf: &mut Vec<u8>, v: u64, width: usize) {
        self.number(buf, v, false, width, false);
    }

    /// [`zeros`], remembered.
    pub(crate) fn zeros(&mut self, buf: &mut Vec<u8>, v: u64, width: usize) {
        let c = Conversion {
            radix: 10,
            sign: false,
            width,
            pad: b'0',
            left: false,
        };
        self.converted(buf, v, c);
    }
}

/// The numbers of a line's start that repeat, each with its [`Memo`].
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Memos {
    pub(crate) pid: Memo,
    pub(crate) tid: Memo,
    pub(crate) secs: Memo,
    pub(crate) period: Memo,
    pub(crate) cpu: Memo,
}

/// [`number`] of more than 15 digits or wider than 16 columns.
#[cold]
fn number_long(buf: &mut Vec<u8>, v: u64, c: Conversion) {
    let text = match (c.radix, c.sign) {
        (16, _) => format!("{v:x}"),
        (_, true) => format!("-{v}"),
        _ => format!("{v}"),
    };
    if c.left {
        self::left(buf, text.as_bytes(), c.width);
    } else {
        buf.resize(buf.len() + c.width.saturating_sub(text.len()), c.pad);
        buf.extend_from_slice(text.as_bytes());
    }
}

/// Append a signed decimal right-aligned in `width` columns (C's `%Nd`).
pub(crate) fn int(buf: &mut Vec<u8>, v: i64, width: usize) {
    number(buf, v.unsigned_abs(), 10, v < 0, width, b' ', false);
}

/// Append a signed decimal left-aligned in `width` columns (C's `%-Nd`).
pub(crate) fn int_left(buf: &mut Vec<u8>, v: i64, width: usize) {
    number(buf, v.unsigned_abs(), 10, v < 0, width, b' ', true);
}

/// Append an unsigned decimal right-aligned in `width` columns (C's `%Nlu`).
pub(crate) fn uint(buf: &mut Vec<u8>, v: u64, width: usize) {
    number(buf, v, 10, false, width, b' ', false);
}

/// Append an unsigned decimal zero-padded to `width` digits (C's `%0Nlu`).
#[inline]
pub(crate) fn zeros(buf: &mut Vec<u8>, v: u64, width: usize) {
    // A time's fraction, six or nine digits a line: a value of exactly `width` digits
    // (zeros included) is the low digits of eight_digits, with no length to find. A
    // 10^8 pair of eight makes up to sixteen.
    const ONES: u128 = u128::from_ne_bytes([1; 16]);
    // 10^width, from a table (a power found by multiplying, once a line, showed).
    const POW10: [u64; 17] = {
        let mut p = [1u64; 17];
        let mut i = 1;
        while i < 17 {
            p[i] = p[i - 1] * 10;
            i += 1;
        }
        p
    };
    if (1..=8).contains(&width) && v < POW10[width] {
        // Up to eight digits (the microseconds' six): one eight_digits, not two.
        let w = u128::from(eight_digits(v as u32) >> (8 * (8 - width)));
        put(buf, w + u128::from(b'0') * ONES, width);
    } else if (9..=16).contains(&width) && v < POW10[width] {
        let (high, low) = (v / 100_000_000, (v % 100_000_000) as u32);
        let w = u128::from(eight_digits(high as u32)) | (u128::from(eight_digits(low)) << 64);
        let w = (w >> (8 * (16 - width))) + u128::from(b'0') * ONES;
        put(buf, w, width);
    } else {
        number(buf, v, 10, false, width, b'0', false);
    }
}

/// Append lower-case hex right-aligned in `width` columns (C's `%Nlx`).
pub(crate) fn hex(buf: &mut Vec<u8>, v: u64, width: usize) {
    number(buf, v, 16, false, width, b' ', false);
}

/// Append lower-case hex zero-padded to `width` digits (C's `%0Nx`).
pub(crate) fn zero_hex(buf: &mut Vec<u8>, v: u64, width: usize) {
    number(buf, v, 16, false, width, b'0', false);
}

/// Append a sample time as perf script prints it: `%5lu.%09llu: ` with `--ns`, else
/// the microseconds (truncated, perf's `timestamp__scnprintf_usec`) as `%12s: `.
/// `secs_memo` keeps the seconds' text.
pub(crate) fn time(buf: &mut Vec<u8>, t: u64, ns: bool, secs_memo: &mut Memo) {
    let secs = t / 1_000_000_000;
    let frac = t % 1_000_000_000;
    if ns {
        secs_memo.uint(buf, secs, 5);
        buf.push(b'.');
        zeros(buf, frac, 9);
    } else {
        // "secs.usecs" is the string right-aligned in 12 columns.
        secs_memo.uint(buf, secs, 5);
        buf.push(b'.');
        zeros(buf, frac / 1000, 6);
    }
    buf.extend_from_slice(b": ");
}

/// The start of a line as perf's `perf_sample__fprintf_start` writes it, samples and
/// side-band records alike: comm, pid/tid, CPU and time as the fields `f` ask (the comm
/// unpadded when callchains follow).
#[allow(clippy::too_many_arguments)]
pub(super) fn start(
    buf: &mut Vec<u8>,
    memos: &mut Memos,
    f: Fields,
    chain: bool,
    ns: bool,
    comm: &str,
    pid: i32,
    tid: i32,
    cpu: u32,
    time: u64,
) {
    if f.has(Field::Comm) {
        if f.has(Field::Ip) && chain {
            buf.extend_from_slice(comm.as_bytes());
        } else {
            right(buf, comm.as_bytes(), 16);
        }
        buf.push(b' ');
    }
    match (f.has(Field::Pid), f.has(Field::Tid)) {
        (true, true) => {
            memos.pid.int(buf, pid.into(), 5);
            buf.push(b'/');
            memos.tid.int_left(buf, tid.into(), 5);
            buf.push(b' ');
        }
        (true, false) | (false, true) => {
            let id = if f.has(Field::Pid) { pid } else { tid };
            memos.pid.int(buf, id.into(), 5);
            buf.push(b' ');
        }
        _ => {}
    }
    if f.has(Field::Cpu) {
        buf.push(b'[');
        // perf's `%03d` of the u32: -1 is `-01`.
        if cpu == u32::MAX {
            buf.extend_from_slice(b"-01");
        } else {
            memos.cpu.zeros(buf, cpu.into(), 3);
        }
        buf.extend_from_slice(b"] ");
    }
    if f.has(Field::Time) {
        self::time(buf, time, ns, &mut memos.secs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut b = Vec::new();
        f(&mut b);
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn conversions_as_printf_gives_them() {
        assert_eq!(with(|b| right(b, b"sh", 16)), format!("{:>16}", "sh"));
        assert_eq!(with(|b| int(b, 6742, 5)), " 6742");
        assert_eq!(with(|b| int(b, -1, 5)), "   -1");
        assert_eq!(with(|b| int_left(b, 42, 5)), "42   ");
        assert_eq!(with(|b| uint(b, 100000, 10)), "    100000");
        assert_eq!(with(|b| hex(b, 0xffffffff81c3cf99, 16)), "ffffffff81c3cf99");
        assert_eq!(with(|b| hex(b, 0x1155, 16)), "            1155");
        assert_eq!(with(|b| hex(b, 0, 16)), "               0");
        assert_eq!(with(|b| zeros(b, 7, 3)), "007");
        assert_eq!(with(|b| zero_hex(b, 0xf, 2)), "0f");
        assert_eq!(with(|b| zero_hex(b, 0xfe, 2)), "fe");
        assert_eq!(with(|b| zero_hex(b, 0x103, 2)), "103");
    }

    #[test]
    fn numbers_of_every_length_are_what_printf_gives() {
        // Each digit count and width, both signs, against std's formatter (C's printf
        // conversions, checked against perf's text above).
        let mut values = vec![0u64, 1, 9, 10, u64::MAX, u64::MAX / 3];
        for p in 1..20 {
            values.extend([10u64.pow(p) - 1, 10u64.pow(p), 10u64.pow(p) + 7]);
        }
        for p in 1..16 {
            values.extend([
                16u64.pow(p) - 1,
                16u64.pow(p),
                0xfedc_ba98_7654_3210 >> (4 * p),
            ]);
        }
        // And spread values, every digit value in every place.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            values.extend([x, x >> 11, x >> 23, x >> 37, x >> 50]);
        }
        // One memo through them all, each value twice: it gives back only its own key's
        // text.
        let mut memo = Memo::default();
        for &v in &values {
            for w in [0usize, 1, 2, 3, 5, 6, 9, 10, 12, 15, 16, 17, 24] {
                for _ in 0..2 {
                    let i = v as i64;
                    assert_eq!(with(|b| memo.uint(b, v, w)), format!("{v:>w$}"), "{v} {w}");
                    assert_eq!(with(|b| memo.int(b, i, w)), format!("{i:>w$}"), "{i} {w}");
                    assert_eq!(with(|b| memo.int_left(b, i, w)), format!("{i:<w$}"));
                }
                assert_eq!(with(|b| uint(b, v, w)), format!("{v:>w$}"), "{v} {w}");
                assert_eq!(with(|b| zeros(b, v, w)), format!("{v:0>w$}"), "{v} {w}");
                for _ in 0..2 {
                    assert_eq!(with(|b| memo.zeros(b, v, w)), format!("{v:0>w$}"));
                }
                assert_eq!(with(|b| hex(b, v, w)), format!("{v:>w$x}"), "{v} {w}");
                assert_eq!(with(|b| zero_hex(b, v, w)), format!("{v:0>w$x}"), "{v} {w}");
                let i = v as i64;
                assert_eq!(with(|b| int(b, i, w)), format!("{i:>w$}"), "{i} {w}");
                assert_eq!(with(|b| int_left(b, i, w)), format!("{i:<w$}"), "{i} {w}");
            }
        }
        // Values alternating and coming back (two threads on two CPUs, a third now
        // and then), each kept text given back only for its own value and width.
        let mut memo = Memo::default();
        for (k, &v) in values.iter().enumerate().take(3000) {
            let back = values[k / 2];
            for (v, w) in [(v, 5), (back, 5), (v, 5), (back, 6), (v, 5), (v, 6)] {
                assert_eq!(with(|b| memo.uint(b, v, w)), format!("{v:>w$}"), "{v} {w}");
            }
        }
        // Appended after what the buffer held.
        let mut b = b"x".to_vec();
        hex(&mut b, 0xffff_ffff_8157_a701, 16);
        uint(&mut b, 10000, 10);
        assert_eq!(b, b"xffffffff8157a701     10000");
    }

    #[test]
    fn times_are_truncated_to_microseconds_or_printed_in_ns() {
        assert_eq!(
            with(|b| time(b, 2_059_098_355_999, false, &mut Memo::default())),
            " 2059.098355: "
        );
        assert_eq!(
            with(|b| time(b, 18_429_641_018_000, false, &mut Memo::default())),
            "18429.641018: "
        );
        assert_eq!(
            with(|b| time(b, 5_000_000_001, true, &mut Memo::default())),
            "    5.000000001: "
        );
        assert_eq!(
            with(|b| time(b, 123_456_789_012_345_678, false, &mut Memo::default())),
            "123456789.012345: "
        );
    }
}
