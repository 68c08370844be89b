//! The plan-usage figure at the end of the status line, for the shown
//! tab's agent when it is claude or codex and its numbers are known
//! (`5h 42% wk 13%`; `crate::usage::figure`).
//!
//! Idle costs nothing: there is no timer. The files are read only when the
//! window paints anyway (output, a key, a tab switch), when the shown
//! agent changed or the figure is older than [`FRESH`], and then on a
//! blocking thread, not the window's loop: its answer comes back as an
//! event, and the next paint shows it. So a window left alone keeps the
//! figure of its last paint until something happens in it.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::protocol::api::{TabInfo, TabKind};

/// How long a figure is shown before the next paint reads the files again.
pub const FRESH: Duration = Duration::from_secs(60);

/// An answer from the reading thread: the agent and its figure.
pub type Answer = (&'static str, Option<String>);

#[derive(Default)]
pub struct UsageFigure {
    /// The last answer, and when it was asked for.
    shown: Option<(&'static str, Option<String>, Instant)>,
    /// An agent whose files are being read.
    reading: Option<&'static str>,
    /// Where the reading thread answers; none in tests without a loop.
    pub tx: Option<mpsc::UnboundedSender<Answer>>,
    /// Not shown: the window shows another host's agents, and the files
    /// are this machine's.
    pub off: bool,
}

/// Which plan a tab's agent has figures for: claude's or codex's, by the
/// config's name of its agent.
pub fn plan_of(t: &TabInfo) -> Option<&'static str> {
    plan_of_agent(t.kind, &t.agent)
}

fn plan_of_agent(kind: TabKind, agent: &str) -> Option<&'static str> {
    if kind != TabKind::Agent {
        return None;
    }
    match agent {
        "claude" => Some("claude"),
        "codex" => Some("codex"),
        _ => None,
    }
}

impl UsageFigure {
    /// The figure to show for `agent` now, asking for a fresh one when it
    /// is missing or old.
    pub fn for_agent(&mut self, agent: Option<&'static str>, now: Instant) -> Option<String> {
        let agent = agent.filter(|_| !self.off)?;
        match &self.shown {
            Some((a, fig, at)) if *a == agent => {
                let fig = fig.clone();
                if now.duration_since(*at) >= FRESH {
                    self.ask(agent);
                }
                fig
            }
            _ => {
                self.ask(agent);
                None
            }
        }
    }

    fn ask(&mut self, agent: &'static str) {
        if self.reading.is_some() {
            return;
        }
        let Some(tx) = self.tx.clone() else {
            return;
        };
        self.reading = Some(agent);
        // Blocking file reads, off the window's loop.
        std::thread::spawn(move || {
            let u = crate::usage::read::one(agent, crate::usage::read::now());
            let _ = tx.send((agent, crate::usage::figure(&u)));
        });
    }

    /// The reading thread's answer.
    pub fn got(&mut self, (agent, figure): Answer, now: Instant) {
        self.reading = None;
        self.shown = Some((agent, figure, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_shown_for_its_own_agent_only() {
        let mut u = UsageFigure::default();
        let t0 = Instant::now();
        assert_eq!(u.for_agent(Some("codex"), t0), None);
        u.got(("codex", Some("5h 1% wk 2%".into())), t0);
        assert_eq!(
            u.for_agent(Some("codex"), t0).as_deref(),
            Some("5h 1% wk 2%")
        );
        // Another agent's tab: not codex's numbers.
        assert_eq!(u.for_agent(Some("claude"), t0), None);
        assert_eq!(u.for_agent(None, t0), None);
        // An old figure stays until the new one comes.
        assert_eq!(
            u.for_agent(Some("codex"), t0 + FRESH).as_deref(),
            Some("5h 1% wk 2%")
        );
    }

    fn tab(id: &str, agent: &str) -> TabInfo {
        serde_json::from_value(serde_json::json!({
            "id": id, "agent": agent, "folder": "/a", "command": [agent], "sandboxed": false,
            "state": "running", "pid": null, "exit_code": null,
        }))
        .unwrap()
    }

    /// The shown codex tab's figure comes before the help hint; a shell's
    /// tab shows none, and switching to it asks for nothing.
    #[test]
    fn the_status_line_shows_the_shown_agents_figure() {
        let (mut w, _rx) = super::super::test_window();
        let (tx, mut answers) = mpsc::unbounded_channel();
        w.usage.tx = Some(tx);
        w.on_tabs(vec![tab("c", "codex"), tab("s", "sh")]);
        w.view.redraw("c", 23, 80);
        assert_eq!(w.normal_note(), "C-b ? help");
        // The read happens on a thread of its own; its answer is an event.
        let asked = answers.blocking_recv().unwrap();
        assert_eq!(asked.0, "codex");
        w.usage
            .got(("codex", Some("5h 42% wk 13%".into())), Instant::now());
        assert_eq!(w.normal_note(), "5h 42% wk 13% | C-b ? help");
        w.view.redraw("s", 23, 80);
        assert_eq!(w.normal_note(), "C-b ? help");
        assert!(answers.try_recv().is_err(), "a shell's tab asked for usage");
    }

    #[test]
    fn only_claude_and_codex_agent_tabs_have_a_plan() {
        assert_eq!(plan_of_agent(TabKind::Agent, "claude"), Some("claude"));
        assert_eq!(plan_of_agent(TabKind::Agent, "codex"), Some("codex"));
        assert_eq!(plan_of_agent(TabKind::Agent, "gemini"), None);
        assert_eq!(plan_of_agent(TabKind::Terminal, "codex"), None);
    }
}
