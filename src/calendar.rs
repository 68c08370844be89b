//! Days since 1970-01-01 and civil (proleptic Gregorian) dates, both ways:
//! Howard Hinnant's algorithms. Written here because nerdr needs only
//! these two pure functions (RFC 3339 stamps in UTC, local times for
//! `nerdr usage`), not a date-time crate's zone database. A leaf module.

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A civil date to days since 1970-01-01 (the inverse of [`civil`]).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_and_days_convert_both_ways() {
        for (days, date) in [
            (0, (1970, 1, 1)),
            (-1, (1969, 12, 31)),
            (11_016, (2000, 2, 29)),
            (20_790, (2026, 12, 3)),
        ] {
            assert_eq!(super::civil(days), date, "{days}");
            assert_eq!(
                super::days_from_civil(date.0, date.1, date.2),
                days,
                "{date:?}"
            );
        }
    }
}
