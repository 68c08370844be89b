//! The two clocks agent states are told by, as numbers and text: the
//! monotonic clock a hook stamps its report with (so the core can drop a
//! report that arrives after a newer one) and the wall clock's RFC 3339
//! form in `nerdr tabs --json`.
//!
//! The RFC 3339 text is the few lines of the civil-from-days algorithm
//! (Howard Hinnant's) rather than a date crate: nerdr formats one kind of
//! timestamp, UTC with milliseconds, and never parses one.

use std::time::{SystemTime, UNIX_EPOCH};

/// CLOCK_MONOTONIC in nanoseconds: the same clock for every process of the
/// machine (a hook in a tab and the core), which no one can set.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always
    // exists, so the call cannot fail on a supported kernel.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    debug_assert_eq!(rc, 0);
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// `secs` since the epoch as RFC 3339 in UTC, to the second:
/// `2026-12-01T18:41:38Z`.
pub fn rfc3339_seconds(secs: u64) -> String {
    let millis = rfc3339_millis(UNIX_EPOCH + std::time::Duration::from_secs(secs));
    // The milliseconds of a whole second are `.000`.
    format!("{}Z", millis.trim_end_matches(".000Z"))
}

/// `t` as RFC 3339 in UTC with milliseconds: `2026-12-01T18:41:38.123Z`.
/// A time before 1970 (a clock set wrong) shows as the epoch.
pub fn rfc3339_millis(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, day) = crate::calendar::civil(days as i64);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        d.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc_with_millis() {
        let at = |secs: u64, millis: u64| {
            UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis)
        };
        // (seconds since the epoch, millis, text); each checked with
        // `date -u -d @SECS`.
        let rows = [
            (0, 0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, 5, "2000-02-29T00:00:00.005Z"),
            (951_868_799, 999, "2000-02-29T23:59:59.999Z"),
            (1_709_251_199, 0, "2024-02-29T23:59:59.000Z"),
            (1_796_150_498, 123, "2026-12-01T18:41:38.123Z"),
            (4_107_542_400, 0, "2100-03-01T00:00:00.000Z"),
        ];
        for (secs, millis, want) in rows {
            assert_eq!(rfc3339_millis(at(secs, millis)), want, "{secs}");
        }
        assert_eq!(
            rfc3339_millis(UNIX_EPOCH - Duration::from_secs(5)),
            "1970-01-01T00:00:00.000Z"
        );
    }

    /// A switch's time as `nerdr tabs --json` gives it (a newcomer found
    /// `1796230739` beside RFC 3339 times); checked with `date -u -d @SECS`.
    #[test]
    fn seconds_are_rfc3339_utc_to_the_second() {
        for (secs, want) in [
            (0, "1970-01-01T00:00:00Z"),
            (1_796_230_739, "2026-12-02T16:58:59Z"),
        ] {
            assert_eq!(rfc3339_seconds(secs), want, "{secs}");
        }
    }

    #[test]
    fn the_monotonic_clock_goes_forward() {
        let a = monotonic_ns();
        std::thread::sleep(Duration::from_millis(2));
        let b = monotonic_ns();
        assert!(b > a && b - a >= 2_000_000, "{a} {b}");
    }
}
