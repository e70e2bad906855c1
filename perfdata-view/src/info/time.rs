//! Calendar formatting without a time-zone database: perf formats times with `ctime` and
//! `localtime_r` in the local zone; perfdata always formats them in UTC, which is what
//! perf prints when run with `TZ=UTC`.

/// Broken-down UTC time of `secs` seconds since the epoch.
struct Tm {
    year: i64,
    month: u32, // 1..=12
    day: u32,   // 1..=31
    hour: u32,
    min: u32,
    sec: u32,
    weekday: u32, // 0 = Sunday
}

fn gmtime(secs: i64) -> Tm {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(days);
    Tm {
        year,
        month,
        day,
        hour: rem / 3600,
        min: rem / 60 % 60,
        sec: rem % 60,
        // 1970-01-01 was a Thursday.
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

/// Howard Hinnant's `civil_from_days`: the proleptic Gregorian date of a day number.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// C's `ctime` without its newline: "Sun Nov 22 05:42:42 2026".
pub fn ctime(secs: i64) -> String {
    let t = gmtime(secs);
    format!(
        "{} {}{:3} {:02}:{:02}:{:02} {}",
        DAYS[t.weekday as usize],
        MONTHS[(t.month - 1) as usize],
        t.day,
        t.hour,
        t.min,
        t.sec,
        t.year
    )
}

/// `strftime("%F %T")`: "2026-11-22 05:18:43".
pub fn date_time(secs: i64) -> String {
    let t = gmtime(secs);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.min, t.sec
    )
}

/// RFC 3339 in UTC, for JSON: "2026-11-22T05:42:42Z".
pub fn rfc3339(secs: i64) -> String {
    date_time(secs).replace(' ', "T") + "Z"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_glibc_in_utc() {
        assert_eq!(ctime(0), "Thu Jan  1 00:00:00 1970");
        // perf's "captured on" for the fixtures (TZ=UTC).
        assert_eq!(ctime(1_795_324_962), "Sun Nov 22 05:22:42 2026");
        assert_eq!(date_time(1_795_324_723), "2026-11-22 05:18:43");
        assert_eq!(date_time(1_762_878_703), "2025-11-11 16:31:43");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(ctime(-1), "Wed Dec 31 23:59:59 1969");
    }
}
