use super::*;

const NOW: i64 = 1_796_286_354;

fn reading(used: f64, resets_at: Option<i64>) -> Option<Reading> {
    Some(Reading {
        used_percent: used,
        resets_at,
    })
}

fn source(observed_at: Option<i64>, five: Option<Reading>, week: Option<Reading>) -> Source {
    Source {
        file: Some("/f".into()),
        read: Ok(Snapshot {
            observed_at,
            five_hour: five,
            weekly: week,
        }),
    }
}

fn utc(_: i64) -> time::Zone {
    time::Zone::at_offset(0)
}

fn unknown_saying(w: &Window, says: &str) -> bool {
    matches!(w, Window::Unknown { reason } if reason.contains(says))
}

#[test]
fn each_window_is_known_only_while_current() {
    let seen = Some(NOW - 60);
    for (name, five, want_known, says) in [
        ("resets later", reading(42.0, Some(NOW + 60)), true, ""),
        (
            "reset already",
            reading(42.0, Some(NOW - 1)),
            false,
            "too old: the 5-hour window reset at",
        ),
        (
            "resets this very second",
            reading(42.0, Some(NOW)),
            false,
            "too old",
        ),
        (
            "no reset time, read recently",
            reading(42.0, None),
            true,
            "",
        ),
        (
            "not reported",
            None,
            false,
            "claude did not report its 5-hour window",
        ),
        (
            "a negative percent",
            reading(-3.0, Some(NOW + 60)),
            false,
            "reported -3 % used",
        ),
        (
            "not a number",
            reading(f64::NAN, Some(NOW + 60)),
            false,
            "reported NaN % used",
        ),
    ] {
        let u = judge("claude", source(seen, five, None), NOW, utc);
        if want_known {
            assert!(matches!(u.five_hour, Window::Known { .. }), "{name}: {u:?}");
        } else {
            assert!(unknown_saying(&u.five_hour, says), "{name}: {u:?}");
        }
    }
}

#[test]
fn a_reading_without_a_reset_time_ages_out_after_its_window() {
    for (name, seen, length_passed) in [
        ("an hour ago", Some(NOW - 3600), false),
        ("five hours ago", Some(NOW - FIVE_HOURS), true),
        ("a week ago", Some(NOW - WEEK), true),
    ] {
        let u = judge(
            "codex",
            source(seen, reading(1.0, None), reading(2.0, None)),
            NOW,
            utc,
        );
        assert_eq!(
            unknown_saying(&u.five_hour, "longer ago than the 5-hour window"),
            length_passed,
            "{name}: {u:?}"
        );
        // The weekly window outlives five hours.
        assert_eq!(
            matches!(u.weekly, Window::Known { .. }),
            seen.unwrap() > NOW - WEEK,
            "{name}: {u:?}"
        );
    }
    let neither = judge("codex", source(None, reading(1.0, None), None), NOW, utc);
    assert!(unknown_saying(
        &neither.five_hour,
        "neither a reset time nor"
    ));
}

#[test]
fn a_file_that_cannot_be_read_makes_both_windows_unknown_with_its_reason() {
    let u = judge(
        "codex",
        Source {
            file: Some("/x".into()),
            read: Err("/x: line 3 is not JSON".into()),
        },
        NOW,
        utc,
    );
    for w in [&u.five_hour, &u.weekly] {
        assert!(unknown_saying(w, "/x: line 3 is not JSON"), "{u:?}");
    }
    assert_eq!(u.source.as_deref(), Some("/x"));
    assert_eq!(
        describe(&u, NOW, |_| time::Zone::at_offset(0)),
        "codex: unknown: /x: line 3 is not JSON\n"
    );
    assert_eq!(figure(&u), None);
}

#[test]
fn the_figure_shows_what_is_known() {
    let u = |five, week| judge("claude", source(Some(NOW), five, week), NOW, utc);
    let later = Some(NOW + 60);
    for (five, week, want) in [
        (
            reading(42.4, later),
            reading(13.0, later),
            Some("5h 42% wk 13%"),
        ),
        (reading(42.4, later), None, Some("5h 42% wk ?")),
        (None, reading(100.0, later), Some("5h ? wk 100%")),
        (reading(42.0, Some(NOW - 5)), None, None),
        (None, None, None),
    ] {
        assert_eq!(figure(&u(five, week)).as_deref(), want);
    }
}

#[test]
fn the_text_gives_local_reset_times_and_how_long_until_them() {
    let u = judge(
        "codex",
        source(
            Some(NOW),
            reading(42.5, Some(NOW + 3 * 3600 + 12 * 60)),
            reading(13.0, None),
        ),
        NOW,
        utc,
    );
    let old = judge(
        "claude",
        source(Some(NOW - 7300), reading(1.0, Some(NOW + 60)), None),
        NOW,
        utc,
    );
    assert!(
        describe(&old, NOW, |_| time::Zone::at_offset(0))
            .starts_with("claude: (from /f, as of 2h 1m ago)\n"),
        "{}",
        describe(&old, NOW, |_| time::Zone::at_offset(0))
    );
    let text = describe(&u, NOW, |_| time::Zone {
        offset: 3600,
        name: "CET".into(),
    });
    assert_eq!(
        text,
        "codex: (from /f)\n  \
         5-hour  42% used, resets 2026-12-03 12:37 CET (in 3h 12m)\n  \
         weekly  13% used, reset time not given\n"
    );
}

#[test]
fn the_json_form_is_stable() {
    let u = judge(
        "claude",
        source(Some(NOW), reading(42.5, Some(NOW + 60)), None),
        NOW,
        utc,
    );
    assert_eq!(
        serde_json::to_value(&u).unwrap(),
        serde_json::json!({
            "agent": "claude", "source": "/f", "observed_at": NOW,
            "five_hour": {"state": "known", "used_percent": 42.5, "resets_at": NOW + 60},
            "weekly": {"state": "unknown", "reason": "claude did not report its weekly window"},
        })
    );
}

/// Every time `nerdr usage` prints is local and names its zone, the
/// reasons' too (they once said UTC while the resets said local time).
#[test]
fn every_time_shown_is_local_and_names_its_zone() {
    let cet = |_| time::Zone {
        offset: 3600,
        name: "CET".into(),
    };
    let reset = judge(
        "codex",
        source(Some(NOW - 60), reading(1.0, Some(NOW - 60)), None),
        NOW,
        cet,
    );
    let aged = judge(
        "codex",
        source(Some(NOW - FIVE_HOURS), reading(1.0, None), None),
        NOW,
        cet,
    );
    for (what, w, want) in [
        ("reset", &reset.five_hour, "reset at 2026-12-03 09:24 CET "),
        ("aged", &aged.five_hour, "read at 2026-12-03 04:25 CET, "),
    ] {
        assert!(unknown_saying(w, want), "{what}: {w:?}");
    }
}
