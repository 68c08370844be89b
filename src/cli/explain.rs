//! `nerdr explain TAB [--json]`: why nerdr thinks the tab's agent is in its
//! state: since when, the rules in force, what set it (a rule and its
//! file, a report, an escape sequence, a quiet period) and the lines the
//! rule matched. For people writing screen rules.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ExplainTab;
use crate::protocol::printable;
use crate::protocol::replies::Explained;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// One JSON object: tab, agent, state, agent_state, agent_state_since, rules, cause, lines, warning
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let e = client::call(ExplainTab {
        tab: args.tab,
        folder: folder.scope()?,
    })?;
    if args.json {
        println!("{}", crate::printable::json(&e)?);
    } else {
        print!("{}", text(&e));
    }
    Ok(ExitCode::SUCCESS)
}

/// The reply in words. Every field is escaped ([`printable`]): the cause
/// quotes what the agent wrote (its OSC 7501 payload) and the lines are its
/// screen, and neither may move the person's cursor or reach their
/// terminal as a control (CR, BS, SO, a C1 CSI).
fn text(e: &Explained) -> String {
    let p = |s: &str| printable(s);
    let (tab, agent) = (p(&e.tab), p(&e.agent));
    let mut out = match (&e.agent_state, &e.agent_state_since) {
        (Some(s), Some(since)) => {
            format!("tab {tab} ({agent}): {} since {}\n", p(s), p(since))
        }
        (Some(s), None) => format!("tab {tab} ({agent}): {}\n", p(s)),
        (None, _) => format!("tab {tab} ({agent}): {}\n", p(&e.state)),
    };
    let rules = e.rules.as_deref().unwrap_or("none");
    out.push_str(&format!("rules: {}\n", p(rules)));
    if !e.cause.is_empty() {
        out.push_str(&format!("cause: {}\n", p(&e.cause)));
    }
    if !e.lines.is_empty() {
        out.push_str("matched:\n");
        for l in &e.lines {
            out.push_str(&format!("  | {}\n", p(l)));
        }
    }
    if let Some(w) = &e.warning {
        out.push_str(&format!("warning: {}\n", p(w)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_the_rule_and_its_lines() {
        let e = Explained {
            tab: "ab12".into(),
            agent: "claude".into(),
            state: "running".into(),
            agent_state: Some("blocked".into()),
            agent_state_since: Some("2026-12-01T18:41:38.123Z".into()),
            rules: Some("claude (built-in)".into()),
            cause: "rule \"permission prompt\" (built-in claude.toml)".into(),
            lines: vec!["Do you want to proceed?".into(), "❯ 1. Yes".into()],
            warning: None,
        };
        assert_eq!(
            text(&e),
            "tab ab12 (claude): blocked since 2026-12-01T18:41:38.123Z\n\
             rules: claude (built-in)\n\
             cause: rule \"permission prompt\" (built-in claude.toml)\n\
             matched:\n  | Do you want to proceed?\n  | ❯ 1. Yes\n"
        );
        let exited = Explained {
            state: "exited".into(),
            agent_state: None,
            agent_state_since: None,
            cause: "the program exited".into(),
            lines: vec![],
            warning: Some("screen rules not used: x".into()),
            ..e
        };
        assert_eq!(
            text(&exited),
            "tab ab12 (claude): exited\nrules: claude (built-in)\ncause: the program exited\n\
             warning: screen rules not used: x\n"
        );
        // What the agent wrote reaches the person's terminal escaped.
        let evil = Explained {
            cause: "osc 7501 state=blocked:x=\u{e}\r\u{8}\u{9b}2J".into(),
            lines: vec!["a\u{9b}2Jb\u{202e}c".into()],
            warning: None,
            ..exited.clone()
        };
        let shown = text(&evil);
        assert!(
            !shown
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{shown:?}"
        );
        assert!(
            shown.contains("cause: osc 7501 state=blocked:x=\\u{e}\\r"),
            "{shown}"
        );
    }
}
