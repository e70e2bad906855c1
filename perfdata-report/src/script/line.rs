//! perf script's printf conversions, written into a reused byte buffer without
//! formatting machinery: a line costs no allocation.

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

/// Append a signed decimal right-aligned in `width` columns (C's `%Nd`).
pub(crate) fn int(buf: &mut Vec<u8>, v: i64, width: usize) {
    let mut b = itoa::Buffer::new();
    right(buf, b.format(v).as_bytes(), width);
}

/// Append a signed decimal left-aligned in `width` columns (C's `%-Nd`).
pub(crate) fn int_left(buf: &mut Vec<u8>, v: i64, width: usize) {
    let mut b = itoa::Buffer::new();
    left(buf, b.format(v).as_bytes(), width);
}

/// Append an unsigned decimal right-aligned in `width` columns (C's `%Nlu`).
pub(crate) fn uint(buf: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    right(buf, b.format(v).as_bytes(), width);
}

/// Append an unsigned decimal zero-padded to `width` digits (C's `%0Nlu`).
pub(crate) fn zeros(buf: &mut Vec<u8>, v: u64, width: usize) {
    let mut b = itoa::Buffer::new();
    let s = b.format(v).as_bytes();
    buf.resize(buf.len() + width.saturating_sub(s.len()), b'0');
    buf.extend_from_slice(s);
}

/// Append lower-case hex right-aligned in `width` columns (C's `%Nlx`).
pub(crate) fn hex(buf: &mut Vec<u8>, v: u64, width: usize) {
    let mut digits = [0u8; 16];
    let mut n = 16;
    let mut x = v;
    loop {
        n -= 1;
        digits[n] = b"0123456789abcdef"[(x & 15) as usize];
        x >>= 4;
        if x == 0 {
            break;
        }
    }
    right(buf, &digits[n..], width);
}

/// Append lower-case hex zero-padded to `width` digits (C's `%0Nx`).
pub(crate) fn zero_hex(buf: &mut Vec<u8>, v: u64, width: usize) {
    let from = buf.len();
    hex(buf, v, width);
    for b in &mut buf[from..] {
        if *b == b' ' {
            *b = b'0';
        }
    }
}

/// Append a sample time as perf script prints it: `%5lu.%09llu: ` with `--ns`, else
/// the microseconds (truncated, perf's `timestamp__scnprintf_usec`) as `%12s: `.
pub(crate) fn time(buf: &mut Vec<u8>, t: u64, ns: bool) {
    let secs = t / 1_000_000_000;
    let frac = t % 1_000_000_000;
    if ns {
        uint(buf, secs, 5);
        buf.push(b'.');
        zeros(buf, frac, 9);
    } else {
        let mut b = itoa::Buffer::new();
        let s = b.format(secs).as_bytes();
        // "secs.usecs" is the string right-aligned in 12 columns.
        buf.resize(buf.len() + 12usize.saturating_sub(s.len() + 7), b' ');
        buf.extend_from_slice(s);
        buf.push(b'.');
        zeros(buf, frac / 1000, 6);
    }
    buf.extend_from_slice(b": ");
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
    fn times_are_truncated_to_microseconds_or_printed_in_ns() {
        assert_eq!(
            with(|b| time(b, 2_059_098_355_999, false)),
            " 2059.098355: "
        );
        assert_eq!(
            with(|b| time(b, 18_429_641_018_000, false)),
            "18429.641018: "
        );
        assert_eq!(with(|b| time(b, 5_000_000_001, true)), "    5.000000001: ");
        assert_eq!(
            with(|b| time(b, 123_456_789_012_345_678, false)),
            "123456789.012345: "
        );
    }
}
