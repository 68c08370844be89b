//! claude's plan usage: what its status-line command gets on stdin, and
//! `claude-limits.json`, where `nerdr hook claude-statusline` keeps it.
//!
//! Claude Code (2.1.197) gives the command a JSON object with, for a
//! claude.ai plan once a reply has carried the headers,
//! `"rate_limits": {"five_hour": {"used_percentage": 42.0, "resets_at":
//! 1796297873}, "seven_day": {...}}` (percent 0-100, epoch seconds).
//! The file keeps those numbers and when they were seen:
//!
//! ```text
//! {"version":1,"observed_at":1796286354,
//!  "five_hour":{"used_percent":42.0,"resets_at":1796297873},
//!  "seven_day":{"used_percent":13.0,"resets_at":1796631953}}
//! ```
//!
//! The file is read in a sandbox too (bound read-only), so it is validated
//! here: at most [`MAX_FILE`] bytes, this shape, numbers in range.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Reading, Snapshot};

/// The most bytes the file is read as (it holds about 150).
pub const MAX_FILE: u64 = 16 * 1024;
/// The file's name in `$XDG_STATE_HOME/nerdr/sessions/`.
pub const FILE_NAME: &str = "claude-limits.json";

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Window {
    pub used_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
}

/// `claude-limits.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limits {
    pub version: u32,
    pub observed_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub five_hour: Option<Window>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seven_day: Option<Window>,
}

/// The limits in a status-line payload seen at `now`; `None` when it has
/// none (no plan, or no reply yet), so the file keeps what it had.
pub fn from_statusline(payload: &Value, now: i64) -> Option<Limits> {
    let rl = payload.get("rate_limits")?;
    let window = |key: &str| {
        let w = rl.get(key)?;
        let used = w.get("used_percentage")?.as_f64()?;
        let resets_at = match w.get("resets_at") {
            Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
            Some(Value::String(s)) => s.parse().ok(),
            _ => None,
        };
        Some(Window {
            used_percent: used,
            resets_at,
        })
    };
    let limits = Limits {
        version: 1,
        observed_at: now,
        five_hour: window("five_hour"),
        seven_day: window("seven_day"),
    };
    (limits.five_hour.is_some() || limits.seven_day.is_some()).then_some(limits)
}

/// The file's bytes (already capped at [`MAX_FILE`] + 1) as a snapshot, or
/// what is wrong with them.
pub fn parse(bytes: &[u8]) -> Result<Snapshot, String> {
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "larger than {MAX_FILE} bytes, so not one nerdr wrote"
        ));
    }
    let l: Limits =
        serde_json::from_slice(bytes).map_err(|e| format!("not nerdr's limits file ({e})"))?;
    if l.version != 1 {
        return Err(format!(
            "version {} (this nerdr reads version 1)",
            l.version
        ));
    }
    let reading = |w: Option<Window>, key: &str| -> Result<Option<Reading>, String> {
        let Some(w) = w else { return Ok(None) };
        if !w.used_percent.is_finite() || !(0.0..=1000.0).contains(&w.used_percent) {
            return Err(format!("{key}.used_percent is {}", w.used_percent));
        }
        Ok(Some(Reading {
            used_percent: w.used_percent,
            resets_at: w.resets_at,
        }))
    };
    Ok(Snapshot {
        observed_at: Some(l.observed_at),
        five_hour: reading(l.five_hour, "five_hour")?,
        weekly: reading(l.seven_day, "seven_day")?,
    })
}

/// The short status line claude shows under its prompt: the model and the
/// windows' use, e.g. `Opus · 5h 42% · wk 13%` (the model alone without
/// limits).
pub fn status_text(payload: &Value, limits: Option<&Limits>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = payload
        .pointer("/model/display_name")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty())
    {
        parts.push(m.chars().filter(|c| !c.is_control()).take(40).collect());
    }
    if let Some(l) = limits {
        for (name, w) in [("5h", l.five_hour), ("wk", l.seven_day)] {
            if let Some(w) = w {
                parts.push(format!("{name} {:.0}%", w.used_percent));
            }
        }
    }
    parts.join(" · ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_statusline_payload_gives_its_limits() {
        let p = json!({"model": {"display_name": "Opus"}, "rate_limits": {
            "five_hour": {"used_percentage": 42.0, "resets_at": 1_796_297_873},
            "seven_day": {"used_percentage": 13.5, "resets_at": 1_796_631_953}}});
        let l = from_statusline(&p, 100).unwrap();
        assert_eq!(l.observed_at, 100);
        assert_eq!(
            l.five_hour,
            Some(Window {
                used_percent: 42.0,
                resets_at: Some(1_796_297_873)
            })
        );
        assert_eq!(l.seven_day.unwrap().used_percent, 13.5);
        assert_eq!(status_text(&p, Some(&l)), "Opus · 5h 42% · wk 14%");
        for (name, p) in [
            ("no rate_limits (an API key)", json!({"model": {}})),
            ("empty", json!({"rate_limits": {}})),
            (
                "no percent",
                json!({"rate_limits": {"five_hour": {"resets_at": 1}}}),
            ),
        ] {
            assert_eq!(from_statusline(&p, 1), None, "{name}");
        }
        let one = from_statusline(
            &json!({"rate_limits": {"seven_day": {"used_percentage": 1, "resets_at": "7"}}}),
            1,
        )
        .unwrap();
        assert_eq!(
            (one.five_hour, one.seven_day.unwrap().resets_at),
            (None, Some(7))
        );
    }

    #[test]
    fn the_file_is_read_only_in_its_own_shape() {
        let good =
            br#"{"version":1,"observed_at":5,"five_hour":{"used_percent":42.0,"resets_at":9}}"#;
        let s = parse(good).unwrap();
        assert_eq!(s.observed_at, Some(5));
        assert_eq!(s.five_hour.unwrap().resets_at, Some(9));
        assert_eq!(s.weekly, None);
        let big = vec![b' '; MAX_FILE as usize + 1];
        for (name, bytes, says) in [
            ("not JSON", &b"{nope"[..], "not nerdr's limits file"),
            ("empty", b"", "not nerdr's limits file"),
            (
                "another version",
                br#"{"version":2,"observed_at":5}"#,
                "version 2",
            ),
            (
                "a stranger's key",
                br#"{"version":1,"observed_at":5,"five_hour":{"used_percent":1,"x":1}}"#,
                "not nerdr's limits file",
            ),
            (
                "a negative percent",
                br#"{"version":1,"observed_at":5,"five_hour":{"used_percent":-1}}"#,
                "five_hour.used_percent is -1",
            ),
            ("too large", &big[..], "larger than"),
        ] {
            let e = parse(bytes).unwrap_err();
            assert!(e.contains(says), "{name}: {e}");
        }
    }
}
