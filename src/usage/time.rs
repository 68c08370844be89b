//! Times as `nerdr usage` shows them: in local time, the zone named
//! ("2026-12-03 11:37 CET"), a reset with how long until it ("3h 12m"),
//! and the RFC 3339 stamps codex writes. Pure: the local zone is given
//! ([`zone_at`] reads it, at the edge).

fn minutes(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = crate::calendar::civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// The local time zone at one instant: its UTC offset and its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// Seconds east of UTC.
    pub offset: i64,
    /// The zone's abbreviation (`CET`, `UTC`, `+03`), or the offset
    /// (`UTC+05:30`) where the C library gives none.
    pub name: String,
}

impl Zone {
    /// A zone known only by its offset.
    pub fn at_offset(offset: i64) -> Zone {
        let name = if offset == 0 {
            "UTC".to_string()
        } else {
            let (sign, abs) = if offset < 0 {
                ('-', -offset)
            } else {
                ('+', offset)
            };
            format!("UTC{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60)
        };
        Zone { offset, name }
    }
}

/// `secs` in zone `zone`, labelled: `2026-12-03 12:37 CET`.
pub fn local(secs: i64, zone: &Zone) -> String {
    format!("{} {}", minutes(secs + zone.offset), zone.name)
}

/// How long `secs` is, to the minute and at most two units: `3h 12m`,
/// `4d 2h`, `12m`; under a minute is `<1m`.
pub fn span(secs: i64) -> String {
    let m = secs.max(0) / 60;
    let (d, h, m) = (m / 1440, m % 1440 / 60, m % 60);
    match (d, h, m) {
        (0, 0, 0) => "<1m".into(),
        (0, 0, m) => format!("{m}m"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// Seconds since the epoch of an RFC 3339 UTC stamp as codex writes them
/// (`2026-12-03T08:25:53.259Z`); `None` for any other form.
pub fn parse_rfc3339_utc(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 20 || !s.ends_with('Z') || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<u32>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let days = crate::calendar::days_from_civil(i64::from(y), mo, d);
    Some(days * 86_400 + i64::from(h * 3600 + mi * 60 + se))
}

/// The local zone at `secs` (UTC when it cannot be told): the C library's
/// `localtime_r`, which reads `TZ` and the zone files.
pub fn zone_at(secs: i64) -> Zone {
    let t: libc::time_t = secs as libc::time_t;
    let mut tm = std::mem::MaybeUninit::<libc::tm>::zeroed();
    // SAFETY: `t` and `tm` are valid for the call; localtime_r writes only
    // `tm` and returns null on failure, checked before `tm` is read.
    let done = unsafe { libc::localtime_r(&t, tm.as_mut_ptr()) };
    if done.is_null() {
        return Zone::at_offset(0);
    }
    // SAFETY: localtime_r succeeded, so it initialised `tm`.
    let tm = unsafe { tm.assume_init() };
    #[allow(clippy::useless_conversion)] // `c_long` is i32 on 32-bit targets
    let offset = i64::from(tm.tm_gmtoff);
    // SAFETY: a non-null `tm_zone` from localtime_r points at a
    // NUL-terminated string the C library keeps for the process's life.
    let name = (!tm.tm_zone.is_null())
        .then(|| unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) })
        .map(|c| c.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_graphic()));
    match name {
        Some(name) => Zone { offset, name },
        None => Zone::at_offset(offset),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_read_as_a_person_says_them() {
        for (secs, want) in [
            (-5, "<1m"),
            (59, "<1m"),
            (60, "1m"),
            (3 * 3600 + 12 * 60 + 59, "3h 12m"),
            (4 * 86_400 + 2 * 3600 + 30, "4d 2h"),
        ] {
            assert_eq!(span(secs), want, "{secs}");
        }
    }

    #[test]
    fn codex_stamps_parse_and_others_do_not() {
        assert_eq!(
            parse_rfc3339_utc("2026-12-03T08:25:53.259Z"),
            Some(1_796_286_353)
        );
        assert_eq!(parse_rfc3339_utc("1970-01-01T00:00:00Z"), Some(0));
        for bad in [
            "2026-12-03 08:25:53Z",
            "2026-12-03T08:25:53+01:00",
            "",
            "2026-13-03T08:25:53Z",
        ] {
            assert_eq!(parse_rfc3339_utc(bad), None, "{bad}");
        }
    }

    #[test]
    fn times_print_in_the_local_zone_and_name_it() {
        let cet = Zone {
            offset: 3600,
            name: "CET".into(),
        };
        for (secs, zone, want) in [
            (1_796_297_873, Zone::at_offset(0), "2026-12-03 11:37 UTC"),
            (1_796_297_873, cet, "2026-12-03 12:37 CET"),
            (0, Zone::at_offset(-3600), "1969-12-31 23:00 UTC-01:00"),
            (
                0,
                Zone::at_offset(5 * 3600 + 1800),
                "1970-01-01 05:30 UTC+05:30",
            ),
        ] {
            assert_eq!(local(secs, &zone), want);
        }
    }
}
