//! `nerdr usage` with the real claude and codex in nerdr tabs, offline
//! against the fake model, which sends the rate-limit headers the CLIs
//! read from a real plan's replies: claude (with an OAuth token, as on a
//! claude.ai plan) hands the limits to the status-line command `nerdr
//! integration install claude` set, and codex writes them into its
//! session log. Then `nerdr usage --json` shows the numbers the server
//! sent.

use std::time::Duration;

use serde_json::Value;

use crate::suites::agent_states::{claude_home, codex_home, ClaudeDialogs, CodexDialogs};
use crate::suites::agent_turns::Turns;
use crate::support::poll;

/// A turn and the status line's run after it, or codex's log write.
const WAIT: Duration = Duration::from_secs(150);

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

/// Says hello in a new tab, then waits until `nerdr usage --json` knows
/// the agent's 5-hour window; returns that agent's entry.
fn usage_after_a_turn(t: &Turns) -> Value {
    let tab = t.start();
    if t.agent == "claude" {
        // Its status line stands where the idle footer would be: the
        // prompt box says it is ready.
        t.wait_screen(&tab, "the prompt", WAIT, |s| {
            s.lines().any(|l| l.starts_with("❯"))
        });
    } else {
        t.wait_idle(&tab);
    }
    t.prompt(&tab, "hello USAGE-CHECK");
    let mut last = Value::Null;
    let known = poll(WAIT, || {
        let out = t.nerdr(&["usage", "--json"]);
        let Ok(all) = serde_json::from_slice::<Value>(&out.stdout) else {
            return false;
        };
        last = all["agents"]
            .as_array()
            .and_then(|a| a.iter().find(|u| u["agent"] == t.agent).cloned())
            .unwrap_or(Value::Null);
        last["five_hour"]["state"] == "known"
    });
    assert!(
        known,
        "{}: nerdr usage never knew its 5-hour window: {last}\nscreen:\n{}\nthe fake model's log:\n{}",
        t.agent,
        t.screen(&tab),
        t.model.dump()
    );
    last
}

#[test]
fn claudes_status_line_keeps_the_limits_its_replies_carried() {
    let Some(t) = Turns::setup_with_hooks("claude", |url, home| {
        let mut h = claude_home(url, home, ClaudeDialogs::none());
        // A claude.ai login (an OAuth token), the only one for which claude
        // reads the plan's limits.
        h.env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
        h.env.push((
            "CLAUDE_CODE_OAUTH_TOKEN".into(),
            "sk-ant-oat01-nerdr-test".into(),
        ));
        h
    }) else {
        return;
    };
    t.ok(&["integration", "install", "claude", "--status-line"]);
    let (five, week) = (now() + 3 * 3600, now() + 4 * 86_400);
    t.model.send_headers(&[
        ("anthropic-ratelimit-unified-status", "allowed".into()),
        ("anthropic-ratelimit-unified-5h-utilization", "0.42".into()),
        ("anthropic-ratelimit-unified-5h-reset", five.to_string()),
        ("anthropic-ratelimit-unified-7d-utilization", "0.13".into()),
        ("anthropic-ratelimit-unified-7d-reset", week.to_string()),
    ]);
    let u = usage_after_a_turn(&t);
    assert_eq!(u["five_hour"]["used_percent"], 42.0, "{u}");
    assert_eq!(u["five_hour"]["resets_at"], five, "{u}");
    assert_eq!(u["weekly"]["used_percent"], 13.0, "{u}");
    assert_eq!(u["weekly"]["resets_at"], week, "{u}");
    assert!(
        u["source"]
            .as_str()
            .is_some_and(|s| s.ends_with("nerdr/sessions/claude-limits.json")),
        "{u}"
    );
}

#[test]
fn codexs_session_log_gives_the_limits_its_replies_carried() {
    let Some(t) = Turns::setup_with_hooks("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), CodexDialogs::NONE)
    }) else {
        return;
    };
    let (five, week) = (now() + 3 * 3600, now() + 4 * 86_400);
    t.model.send_headers(&[
        ("x-codex-primary-used-percent", "42.5".into()),
        ("x-codex-primary-window-minutes", "300".into()),
        ("x-codex-primary-reset-at", five.to_string()),
        ("x-codex-secondary-used-percent", "13".into()),
        ("x-codex-secondary-window-minutes", "10080".into()),
        ("x-codex-secondary-reset-at", week.to_string()),
    ]);
    let u = usage_after_a_turn(&t);
    assert_eq!(u["five_hour"]["used_percent"], 42.5, "{u}");
    assert_eq!(u["five_hour"]["resets_at"], five, "{u}");
    assert_eq!(u["weekly"]["used_percent"], 13.0, "{u}");
    assert_eq!(u["weekly"]["resets_at"], week, "{u}");
}
