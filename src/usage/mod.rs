//! `nerdr usage`: how much of the Claude and codex plans' 5-hour and
//! weekly windows is used, and when each resets (README.md, "Plan usage").
//!
//! Where the numbers come from, and why:
//! - **codex** writes them itself. Each turn's `event_msg` of type
//!   `token_count` in its session log (`$CODEX_HOME/sessions/YYYY/MM/DD/
//!   rollout-*.jsonl`) carries `rate_limits` `{limit_id, primary: {used_percent,
//!   window_minutes, resets_at}, secondary: {...}}`, taken from the
//!   `x-codex-primary-used-percent`, `-window-minutes` and `-reset-at`
//!   response headers (checked against codex-cli 0.171.0: its binary's
//!   strings, and a real turn whose log is `tests/fixtures/usage/
//!   codex-rollout.jsonl`). With an API key (no plan) `rate_limits` is null.
//! - **claude** keeps its limits in memory only: it reads the
//!   `anthropic-ratelimit-unified-5h-utilization`/`-reset` (and `7d`)
//!   response headers, for a claude.ai subscription only, and logs none of
//!   them. What it does hand out is the status-line command's stdin:
//!   `rate_limits: {five_hour: {used_percentage, resets_at}, seven_day:
//!   {...}}` (percent 0-100, reset in epoch seconds; checked in Claude Code
//!   2.1.197's cli). So `nerdr integration install claude --status-line`
//!   sets a `statusLine` running `nerdr hook claude-statusline`, which records them
//!   in `$XDG_STATE_HOME/nerdr/sessions/claude-limits.json` ([`claude`])
//!   and prints a short status line. It is the only source claude gives:
//!   it updates after every answer while claude runs, and says nothing when
//!   claude is not running, which the reset times below account for.
//!
//! In a sandbox nerdr's state folder is hidden (`sandbox::bwrap`), and
//! `claude-limits.json` is not bound back into it: the hook replaces the
//! file by a rename (so no reader sees half of one), which a read-only bind
//! of the file would not follow (it keeps the file it found when the
//! sandbox started, so a long run would read numbers frozen at its start),
//! and binding `sessions/` would show the rest of that folder. So inside a
//! sandbox `nerdr usage` says claude's windows are unknown and why, and a
//! sandboxed claude's status line keeps nothing (the file is not the
//! sandbox's to write). The window, which runs outside, shows them.
//!
//! Pure here: reading each file's bytes into a [`Snapshot`] (`codex`,
//! `claude`), and [`judge`], which decides what to show for each window at
//! a given time, "unknown" with its reason included. The files are found
//! and read at the edge (`read`).

pub mod claude;
pub mod codex;
pub mod read;
pub mod time;

use serde::Serialize;

/// A window's reading as the agent reported it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reading {
    /// Percent of the window's allowance used (can pass 100).
    pub used_percent: f64,
    /// When the window resets, in seconds since the epoch, if said.
    pub resets_at: Option<i64>,
}

/// What one file said, read without judging it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// When the agent reported it (seconds since the epoch), if known.
    pub observed_at: Option<i64>,
    pub five_hour: Option<Reading>,
    pub weekly: Option<Reading>,
}

/// What could be read for one agent: the file it came from and what it
/// said, or why nothing could be read (naming the file and the fault).
#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub file: Option<String>,
    pub read: Result<Snapshot, String>,
}

/// One window, judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Window {
    Known {
        used_percent: f64,
        /// Seconds since the epoch; `None` when the agent did not say.
        resets_at: Option<i64>,
    },
    Unknown {
        reason: String,
    },
}

/// One agent's plan usage, as `nerdr usage --json` prints it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgentUsage {
    pub agent: &'static str,
    /// The file the numbers came from (or would have).
    pub source: Option<String>,
    /// When the agent reported them, seconds since the epoch.
    pub observed_at: Option<i64>,
    pub five_hour: Window,
    pub weekly: Window,
}

/// The windows' lengths, to tell readings whose reset time is not given
/// apart from readings older than a whole window.
pub const FIVE_HOURS: i64 = 5 * 3600;
pub const WEEK: i64 = 7 * 86_400;

/// What to show for `agent` at `now` (seconds since the epoch): each window
/// is known only when read and still current. A reading whose reset time
/// has passed says nothing about the new window (a fresh window starts at
/// 0 %, but another turn may already have used some), so it is unknown;
/// so is one without a reset time that is older than its window. Times in
/// the reasons are in the local zone `zone` gives for each.
pub fn judge(
    agent: &'static str,
    source: Source,
    now: i64,
    zone: impl Fn(i64) -> time::Zone,
) -> AgentUsage {
    let file = source.file.clone();
    let snap = match source.read {
        Ok(s) => s,
        Err(reason) => {
            return AgentUsage {
                agent,
                source: file,
                observed_at: None,
                five_hour: Window::Unknown {
                    reason: reason.clone(),
                },
                weekly: Window::Unknown { reason },
            }
        }
    };
    let window = |r: Option<Reading>, name: &str, length: i64| {
        let Some(r) = r else {
            return Window::Unknown {
                reason: format!("{agent} did not report its {name} window"),
            };
        };
        if !r.used_percent.is_finite() || r.used_percent < 0.0 {
            return Window::Unknown {
                reason: format!("{agent} reported {} % used", r.used_percent),
            };
        }
        match (r.resets_at, snap.observed_at) {
            (Some(at), _) if at <= now => Window::Unknown {
                reason: format!(
                    "too old: the {name} window reset at {} and nothing newer was recorded{}",
                    time::local(at, &zone(at)),
                    since(agent)
                ),
            },
            (None, Some(seen)) if now - seen >= length => Window::Unknown {
                reason: format!(
                    "too old: read at {}, longer ago than the {name} window, and no reset time{}",
                    time::local(seen, &zone(seen)),
                    since(agent)
                ),
            },
            (None, None) => Window::Unknown {
                reason: format!(
                    "{agent} gave neither a reset time nor when it read the {name} window"
                ),
            },
            (resets_at, _) => Window::Known {
                used_percent: r.used_percent,
                resets_at,
            },
        }
    };
    AgentUsage {
        agent,
        source: file,
        observed_at: snap.observed_at,
        five_hour: window(snap.five_hour, "5-hour", FIVE_HOURS),
        weekly: window(snap.weekly, "weekly", WEEK),
    }
}

/// What brings newer numbers for `agent`.
fn since(agent: &str) -> &'static str {
    match agent {
        "claude" => " (claude records them through its status line while it runs)",
        _ => " (codex records them with each turn)",
    }
}

/// The compact figure the window's status line shows for a tab's agent,
/// e.g. `5h 42% wk 13%`; `None` when neither window is known (nothing is
/// shown then: the reason is `nerdr usage`'s to give).
pub fn figure(u: &AgentUsage) -> Option<String> {
    let pct = |w: &Window| match w {
        Window::Known { used_percent, .. } => Some(format!("{used_percent:.0}%")),
        Window::Unknown { .. } => None,
    };
    match (pct(&u.five_hour), pct(&u.weekly)) {
        (None, None) => None,
        (a, b) => Some(format!(
            "5h {} wk {}",
            a.as_deref().unwrap_or("?"),
            b.as_deref().unwrap_or("?")
        )),
    }
}

/// `nerdr usage`'s text for one agent at `now`, the reset times in the
/// local zone `zone` gives for each.
pub fn describe(u: &AgentUsage, now: i64, zone: impl Fn(i64) -> time::Zone) -> String {
    let mut out = format!("{}:", u.agent);
    // A file that could not be read says so once, for both windows.
    if let (Window::Unknown { reason: a }, Window::Unknown { reason: b }) =
        (&u.five_hour, &u.weekly)
    {
        if a == b {
            out.push_str(&format!(" unknown: {a}\n"));
            return out;
        }
    }
    match (&u.source, u.observed_at) {
        // Numbers read a while ago say so: claude's are as of its last run.
        (Some(f), Some(seen)) if now - seen >= 600 => out.push_str(&format!(
            " (from {f}, as of {} ago)",
            time::span(now - seen)
        )),
        (Some(f), _) => out.push_str(&format!(" (from {f})")),
        (None, _) => {}
    }
    out.push('\n');
    for (name, w) in [("5-hour", &u.five_hour), ("weekly", &u.weekly)] {
        let line = match w {
            Window::Known {
                used_percent,
                resets_at: Some(at),
            } => format!(
                "{used_percent:.0}% used, resets {} (in {})",
                time::local(*at, &zone(*at)),
                time::span(at - now)
            ),
            Window::Known {
                used_percent,
                resets_at: None,
            } => format!("{used_percent:.0}% used, reset time not given"),
            Window::Unknown { reason } => format!("unknown: {reason}"),
        };
        out.push_str(&format!("  {name:<7} {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests;
