//! The time-order queue's memory budget as `PERFDATA_QUEUE_BYTES` gives it
//! ([`super::ReplayOptions::queue_bytes`]).

/// The `PERFDATA_QUEUE_BYTES` environment variable as a number of bytes: `Ok(None)` where
/// it is not set, `Err` with its text where it is not a number of bytes. A number may end
/// in `K`, `M` or `G` (powers of 1024, as perf's `--mmap-pages` sizes; `KB`, `KiB` and
/// lower case too): `1M` was silently the default before, which hid the mistake.
pub fn queue_bytes_env() -> Result<Option<usize>, String> {
    match std::env::var("PERFDATA_QUEUE_BYTES") {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => Err(v.to_string_lossy().into_owned()),
        Ok(v) => parse_bytes(&v).map(Some).ok_or(v),
    }
}

/// `text` as a number of bytes, with an optional `K`/`M`/`G` suffix ([`queue_bytes_env`]).
pub(super) fn parse_bytes(text: &str) -> Option<usize> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let unit = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, shift) = match unit.as_bytes().last()? {
        b'k' => (&unit[..unit.len() - 1], 10),
        b'm' => (&unit[..unit.len() - 1], 20),
        b'g' => (&unit[..unit.len() - 1], 30),
        // A bare `B`/`iB` suffix is bytes; `1iB` is no one's spelling but harmless.
        _ => (unit, 0),
    };
    let n: usize = digits.trim_end().parse().ok()?;
    n.checked_mul(1usize << shift)
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(parse_bytes("0"), Some(0));
        assert_eq!(parse_bytes(" 1048576\n"), Some(1 << 20));
        assert_eq!(parse_bytes("700"), Some(700));
        assert_eq!(parse_bytes("64K"), Some(64 << 10));
        assert_eq!(parse_bytes("64kb"), Some(64 << 10));
        assert_eq!(parse_bytes("1M"), Some(1 << 20));
        assert_eq!(parse_bytes("1 MiB"), Some(1 << 20));
        assert_eq!(parse_bytes("2g"), Some(2 << 30));
        assert_eq!(parse_bytes("512B"), Some(512));
    }

    #[test]
    fn what_is_not_a_size() {
        for bad in [
            "",
            "M",
            "1.5M",
            "-1",
            "1T",
            "lots",
            "1MM",
            "18446744073709551615K",
        ] {
            assert_eq!(parse_bytes(bad), None, "{bad:?}");
        }
    }
}
