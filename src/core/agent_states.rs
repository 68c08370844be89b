//! Agent states in the core (docs/ARCHITECTURE.md, "Agent states"): each
//! agent tab's `detect::Tracker`, fed under the state lock by the tab's
//! output, its hooks' reports and the windows that show it, and looked at
//! again by one timer task that sleeps until the earliest deadline a
//! tracker asks for, and not at all while none asks (an idle core never
//! wakes). A change updates the session's windows, wakes `nerdr wait`, and
//! tells the person (`crate::alerts`) when a tab no window shows becomes
//! blocked or done. States are not saved: a change writes no `tabs.json`.
//!
//! The rules are loaded at launch, at the edge (`detection::load_rules`,
//! through [`Core::rules_for`]).

use std::path::Path;
use std::time::{Instant, SystemTime};

use super::bell_lists::{self, OnBell};
use super::detection::{load_rules, LoadedRules};
use super::not_found::no_tab;
use super::state::State;
use super::Core;
use crate::detect::{Change, RuleSet, ScreenView};
use crate::protocol::api::{AgentState, ApiError, TabKind, TabState};
use crate::protocol::replies::Explained;

/// The rules in force, in words: `claude (built-in)`, `my (FILE)`.
pub fn rules_in_words(rules: &RuleSet) -> String {
    match &rules.file {
        Some(f) => format!("{} ({})", rules.name, f.display()),
        None => format!("{} (built-in)", rules.name),
    }
}

/// The line a person's terminal shows for a tab that needs them.
pub fn attention_text(agent: &str, tab: &str, to: AgentState) -> String {
    match to {
        AgentState::Blocked => format!("{agent} in tab {tab} needs you"),
        AgentState::Done => format!("{agent} in tab {tab} is done"),
        other => format!("{agent} in tab {tab} is {}", other.as_str()),
    }
}

impl Core {
    /// The rules for a launch's agent, read off the async workers and the
    /// state lock.
    pub(super) async fn rules_for(&self, detect: &str) -> LoadedRules {
        let (name, dir) = (detect.to_string(), self.paths.detect_dir());
        super::edge::gather("reading an agent's screen rules", move || {
            load_rules(&name, &dir)
        })
        .await
    }

    /// A chunk of tab `tab`'s output (under the state lock): the tracker
    /// scans it, and the timer is woken when the tab now wants a look
    /// sooner than it was going to wake.
    pub(super) fn detect_output(&self, state: &mut State, tab: &str, bytes: &[u8]) {
        let Some(t) = state.tabs.get_mut(tab) else {
            return;
        };
        let Some(d) = t.detection.as_mut() else {
            // A terminal: only its bells count.
            if t.kind == TabKind::Terminal && t.terminal_bells.feed(bytes) {
                let folder = t.folder.clone();
                self.bell_rang(state, &folder);
            }
            return;
        };
        let bells = d.tracker.bells();
        let change = d.tracker.output(bytes, Instant::now(), SystemTime::now());
        let rang = d.tracker.bells() > bells;
        let due = d.tracker.deadline();
        if let Some(change) = change {
            self.state_changed(state, tab, change);
        } else if rang {
            // Windows showing another tab mark this one's bell
            // (`client::attach::marks`): they need the new count now.
            if let Some(folder) = state.tabs.get(tab).map(|t| t.folder.clone()) {
                self.bell_rang(state, &folder);
            }
        }
        self.schedule(state, due);
    }

    /// A bell rang in `folder`'s session (under the state lock): its
    /// windows get the tab list now, or once a second at most
    /// (`bell_lists`), the timer waking to send the one owed.
    fn bell_rang(&self, state: &mut State, folder: &Path) {
        let now = Instant::now();
        let t = state.bell_lists.entry(folder.to_path_buf()).or_default();
        match bell_lists::on_bell(*t, now) {
            OnBell::Send => {
                *t = bell_lists::Throttle {
                    last: Some(now),
                    owed: false,
                };
                self.send_tabs(state, folder);
            }
            OnBell::Owe(at) => {
                t.owed = true;
                self.schedule(state, Some(at));
            }
            OnBell::Owed => {}
        }
    }

    /// Send the bell-driven lists that are due (under the state lock);
    /// the earliest still owed.
    fn send_owed_bells(&self, state: &mut State, now: Instant) -> Option<Instant> {
        let mut due = Vec::new();
        let mut next: Option<Instant> = None;
        for (folder, t) in state.bell_lists.iter_mut() {
            match bell_lists::owed_due(*t, now) {
                bell_lists::Owed::Now => {
                    *t = bell_lists::Throttle {
                        last: Some(now),
                        owed: false,
                    };
                    due.push(folder.clone());
                }
                bell_lists::Owed::At(at) => next = Some(next.map_or(at, |n| n.min(at))),
                bell_lists::Owed::Nothing => {}
            }
        }
        // A session that rang long ago has nothing to hold.
        state
            .bell_lists
            .retain(|_, t| t.owed || t.last.is_some_and(|l| now < l + bell_lists::EVERY));
        for folder in due {
            self.send_tabs(state, &folder);
        }
        next
    }

    /// Make the timer wake by `due` if it would wake later (or never).
    fn schedule(&self, state: &mut State, due: Option<Instant>) {
        if let Some(due) = due {
            if state.detect_next.is_none_or(|next| due < next) {
                state.detect_next = Some(due);
                self.wake.states.notify_one();
            }
        }
    }

    /// Look at the tabs whose deadline passed; the earliest deadline left
    /// (`None`: nothing to look at until something changes).
    pub(super) fn evaluate_due(&self) -> Option<Instant> {
        let mut state = self.state.lock().unwrap();
        let state = &mut *state;
        let (now, wall) = (Instant::now(), SystemTime::now());
        let mut changes = Vec::new();
        for (id, t) in state.tabs.iter_mut() {
            let Some(d) = t.detection.as_mut() else {
                continue;
            };
            if d.tracker.deadline().is_some_and(|at| at <= now) {
                let view = ScreenView::of(&t.screen);
                if let Some(c) = d.tracker.evaluate(&view, now, wall) {
                    changes.push((id.clone(), c));
                }
            }
        }
        for (id, c) in changes {
            self.state_changed(state, &id, c);
        }
        let bells = self.send_owed_bells(state, now);
        let next = state
            .tabs
            .values()
            .filter_map(|t| t.detection.as_ref()?.tracker.deadline())
            .chain(bells)
            .min();
        state.detect_next = next;
        next
    }

    /// A window shows tab `tab` now (under the state lock): `done` was
    /// seen.
    pub(super) fn detect_shown(&self, state: &mut State, tab: &str) {
        let Some(d) = state.tabs.get_mut(tab).and_then(|t| t.detection.as_mut()) else {
            return;
        };
        if let Some(c) = d.tracker.shown(Instant::now(), SystemTime::now()) {
            self.state_changed(state, tab, c);
        }
    }

    /// No window shows tab `tab` any more, unless one still does (under
    /// the state lock): a turn that ends now is `done`.
    pub(super) fn detect_unless_shown(&self, state: &mut State, tab: &str) {
        let shown = state
            .windows
            .by_id
            .values()
            .any(|w| w.showing.as_deref() == Some(tab));
        if shown {
            return;
        }
        if let Some(d) = state.tabs.get_mut(tab).and_then(|t| t.detection.as_mut()) {
            d.tracker.hidden();
        }
    }

    /// A report from tab `tab`'s own hooks, with its sequence number.
    pub(super) fn detect_report(&self, state: &mut State, tab: &str, event: &str, seq: u64) {
        let Some(d) = state.tabs.get_mut(tab).and_then(|t| t.detection.as_mut()) else {
            return;
        };
        let change = d
            .tracker
            .report(event, seq, Instant::now(), SystemTime::now());
        let due = d.tracker.deadline();
        if let Some(c) = change {
            self.state_changed(state, tab, c);
        }
        self.schedule(state, due);
    }

    /// Carry out a change of tab `tab`'s state (under the state lock: each
    /// effect is a message, not I/O).
    fn state_changed(&self, state: &mut State, tab: &str, change: Change) {
        let Some(t) = state.tabs.get(tab) else {
            return;
        };
        tracing::debug!(tab = %tab, agent = %t.agent, from = change.from.as_str(), to = change.to.as_str(), "agent state");
        let folder = t.folder.clone();
        let shown = state
            .windows
            .by_id
            .values()
            .any(|w| w.showing.as_deref() == Some(tab));
        if !shown
            && t.state == TabState::Running
            && matches!(change.to, AgentState::Blocked | AgentState::Done)
        {
            self.tell_the_person(state, tab, &change);
        }
        self.send_tabs(state, &folder);
        self.states.send_modify(|n| *n += 1);
    }

    /// Tab `tab` became blocked or done and no window shows it: the
    /// person's notifications (`crate::alerts`, in a task of its own), and
    /// an attention message to the windows on the tab's session when the
    /// config asks for terminal notifications.
    fn tell_the_person(&self, state: &State, tab: &str, change: &Change) {
        let Some(t) = state.tabs.get(tab) else {
            return;
        };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let event = crate::alerts::Event {
            tab: tab.to_string(),
            agent: t.agent.clone(),
            folder: t
                .worktree
                .as_ref()
                .map_or(t.folder.clone(), |w| w.path.clone()),
            from: change.from,
            to: change.to,
        };
        // The windows of the session as they are now: sending to them later
        // is a message, not a look at the state.
        let windows: Vec<_> = state
            .windows
            .by_id
            .values()
            .filter(|w| w.folder == t.folder)
            .map(|w| w.out.clone())
            .collect();
        let text = attention_text(&t.agent, tab, change.to);
        let paths = self.paths.clone();
        rt.spawn(async move {
            let to = event.to;
            let tab = event.tab.clone();
            if crate::alerts::deliver(paths, event).await.terminal {
                let msg = crate::protocol::frame::Frame::control(
                    &crate::protocol::handshake::CoreMsg::Attention {
                        tab,
                        state: to,
                        text,
                    },
                );
                for w in windows {
                    w.send(msg.clone());
                }
            }
        });
    }

    /// `nerdr explain TAB`.
    pub(super) fn explain(&self, tab: &str) -> Result<Explained, ApiError> {
        let state = self.state.lock().unwrap();
        let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
        let d = t.detection.as_ref();
        let cause = d.map(|d| d.tracker.cause());
        let running = t.state == TabState::Running;
        Ok(Explained {
            tab: t.id.clone(),
            agent: t.agent.clone(),
            state: t.state.as_str().to_string(),
            agent_state: t.agent_state().map(|a| a.as_str().to_string()),
            agent_state_since: d.and_then(|d| d.since_while(running)),
            rules: d.and_then(|d| d.tracker.rules()).map(|r| rules_in_words(r)),
            cause: match (&cause, d, running) {
                (_, None, _) => "a terminal: nerdr tells no state for it".into(),
                (_, _, false) => match t.state {
                    TabState::Exited => "the program exited".into(),
                    TabState::Refused => match &t.reason {
                        Some(why) => {
                            format!("the sandbox check refused the program: it never ran: {why}")
                        }
                        None => "the sandbox check refused the program: it never ran".into(),
                    },
                    s => format!("the program is {}", s.as_str()),
                },
                (Some(c), _, true) => c.what.clone(),
                (None, _, true) => String::new(),
            },
            lines: cause
                .filter(|_| running)
                .map(|c| c.lines)
                .unwrap_or_default(),
            warning: d.and_then(|d| d.warning.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attention_lines() {
        assert_eq!(
            attention_text("claude", "ab12", AgentState::Blocked),
            "claude in tab ab12 needs you"
        );
        assert_eq!(
            attention_text("codex", "cd34", AgentState::Done),
            "codex in tab cd34 is done"
        );
    }
}
