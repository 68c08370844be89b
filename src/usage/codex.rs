//! codex's plan usage from the tail of a session log (a JSON line per
//! event). The newest `event_msg` whose `payload.type` is `token_count` and
//! whose `rate_limits` is codex's own (`limit_id` `codex`, or none) wins:
//!
//! ```text
//! {"timestamp":"2026-12-03T08:25:53.259Z","type":"event_msg","payload":{"type":"token_count",
//!  "info":{...},"rate_limits":{"limit_id":"codex","primary":{"used_percent":42.5,
//!  "window_minutes":300,"resets_at":1796297873},"secondary":{...},...}}}
//! ```
//!
//! A window goes where its length says (under a day: the 5-hour one, else
//! the weekly one); without a length, primary is the 5-hour window and
//! secondary the weekly one, as codex's own status shows them.

use serde_json::Value;

use super::{time, Reading, Snapshot};

/// What the tail of one log holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// The newest rate-limit entry.
    Limits(Snapshot),
    /// No rate-limit entry; `first_bad` names the first line (counted in the
    /// tail) that was not JSON, if one was.
    Nothing { first_bad: Option<usize> },
}

/// Reads `tail`, the end of a log; `cut` says the first line may be a
/// piece of a longer one (the read began mid-file), so it is skipped.
pub fn parse_tail(tail: &str, cut: bool) -> Found {
    let mut lines: Vec<&str> = tail.lines().collect();
    if cut && !lines.is_empty() {
        lines.remove(0);
    }
    let mut first_bad = None;
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate().rev() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            // The last line may be one codex is still writing.
            if i != last {
                first_bad = Some(i + 1);
            }
            continue;
        };
        if let Some(s) = snapshot(&v) {
            return Found::Limits(s);
        }
    }
    Found::Nothing { first_bad }
}

/// The rate limits of one event line, if it is codex's own rate-limit entry.
pub fn snapshot(v: &Value) -> Option<Snapshot> {
    if v.get("type")?.as_str()? != "event_msg" {
        return None;
    }
    let payload = v.get("payload")?;
    if payload.get("type")?.as_str()? != "token_count" {
        return None;
    }
    let limits = payload.get("rate_limits")?.as_object()?;
    match limits.get("limit_id") {
        None | Some(Value::Null) => {}
        Some(Value::String(id)) if id == "codex" => {}
        Some(_) => return None,
    }
    let mut snap = Snapshot {
        observed_at: v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(time::parse_rfc3339_utc),
        ..Snapshot::default()
    };
    for (key, primary) in [("primary", true), ("secondary", false)] {
        let Some(w) = limits.get(key).filter(|w| w.is_object()) else {
            continue;
        };
        let Some(used) = w.get("used_percent").and_then(Value::as_f64) else {
            continue;
        };
        let reading = Reading {
            used_percent: used,
            resets_at: w.get("resets_at").and_then(Value::as_i64),
        };
        let five_hour = match w.get("window_minutes").and_then(Value::as_i64) {
            Some(m) => m < 24 * 60,
            None => primary,
        };
        let slot = if five_hour {
            &mut snap.five_hour
        } else {
            &mut snap.weekly
        };
        slot.get_or_insert(reading);
    }
    if snap.five_hour.is_none() && snap.weekly.is_none() {
        return None;
    }
    Some(snap)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RECORDED: &str = include_str!("../../tests/fixtures/usage/codex-rollout.jsonl");

    fn line(rate_limits: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-12-03T08:25:53.259Z","type":"event_msg","payload":{{"type":"token_count","info":null,"rate_limits":{rate_limits}}}}}"#
        )
    }

    #[test]
    fn the_recorded_log_of_a_real_turn_gives_both_windows() {
        let Found::Limits(s) = parse_tail(RECORDED, false) else {
            panic!("no limits in the recorded log");
        };
        assert_eq!(s.observed_at, Some(1_796_286_353));
        assert_eq!(
            s.five_hour,
            Some(Reading {
                used_percent: 42.5,
                resets_at: Some(1_796_297_873)
            })
        );
        assert_eq!(
            s.weekly,
            Some(Reading {
                used_percent: 13.0,
                resets_at: Some(1_796_631_953)
            })
        );
    }

    #[test]
    fn entries_are_read_by_their_shape() {
        let p = |used: f64, mins: &str, at: &str| {
            format!(r#"{{"used_percent":{used},"window_minutes":{mins},"resets_at":{at}}}"#)
        };
        let five = Some(Reading {
            used_percent: 1.0,
            resets_at: Some(10),
        });
        let week = Some(Reading {
            used_percent: 2.0,
            resets_at: None,
        });
        for (name, rl, want) in [
            (
                "by length",
                format!(
                    r#"{{"primary":{},"secondary":{}}}"#,
                    p(2.0, "10080", "null"),
                    p(1.0, "300", "10")
                ),
                Some((five, week)),
            ),
            (
                "by position",
                format!(
                    r#"{{"primary":{},"secondary":{}}}"#,
                    p(1.0, "null", "10"),
                    p(2.0, "null", "null")
                ),
                Some((five, week)),
            ),
            (
                "one window",
                format!(r#"{{"primary":{},"secondary":null}}"#, p(1.0, "300", "10")),
                Some((five, None)),
            ),
            (
                "codex's own id",
                format!(
                    r#"{{"limit_id":"codex","primary":{}}}"#,
                    p(1.0, "300", "10")
                ),
                Some((five, None)),
            ),
            (
                "another limit's id",
                format!(
                    r#"{{"limit_id":"other","primary":{}}}"#,
                    p(1.0, "300", "10")
                ),
                None,
            ),
            ("null (an API key)", "null".to_string(), None),
            (
                "no percent",
                r#"{"primary":{"window_minutes":300}}"#.to_string(),
                None,
            ),
        ] {
            let v: Value = serde_json::from_str(&line(&rl)).unwrap();
            let got = snapshot(&v).map(|s| (s.five_hour, s.weekly));
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn the_newest_entry_wins_and_bad_lines_are_named() {
        let old = line(r#"{"primary":{"used_percent":1.0,"window_minutes":300,"resets_at":5}}"#);
        let new = line(r#"{"primary":{"used_percent":9.0,"window_minutes":300,"resets_at":5}}"#);
        let other = r#"{"type":"response_item","payload":{}}"#;
        let five = |f: Found| match f {
            Found::Limits(s) => s.five_hour.map(|r| r.used_percent),
            Found::Nothing { .. } => None,
        };
        assert_eq!(
            five(parse_tail(&format!("{old}\n{new}\n{other}\n"), false)),
            Some(9.0)
        );
        // A piece of a line at the start of a cut read is not a line.
        assert_eq!(
            five(parse_tail(&format!("{new}\n{old}\n"), true)),
            Some(1.0)
        );
        // A line still being written at the end is skipped quietly.
        assert_eq!(
            five(parse_tail(&format!("{new}\n{{\"type\":\"ev"), false)),
            Some(9.0)
        );
        assert_eq!(
            parse_tail(&format!("{other}\nnot json\n{other}\n"), false),
            Found::Nothing { first_bad: Some(2) }
        );
        assert_eq!(parse_tail(other, false), Found::Nothing { first_bad: None });
    }
}
