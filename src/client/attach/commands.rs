//! What the window's commands do: each prefix key's command (see
//! `keys::Cmd`), and what the window does with the core's replies to the
//! requests they make.

use super::keys::Cmd;
use super::overlay::{self, Mode};
use super::{marks, prompt, Window};
use crate::protocol::api::{
    CloseTab, Decide, ListAgents, ListApprovals, OpenTerminal, QuitSession, RenameTab,
    ReportResult, RestartTab, StartAgent, SwitchTab, Switched, TabKind, TabState,
};
use crate::protocol::handshake::ClientMsg;
use crate::protocol::printable;
use crate::protocol::replies::{AgentNames, ApprovalsList, Asked, SessionQuit, Started};
use crate::protocol::spinoffs::ResultTaken;
use crate::spinoff::store::Held;

impl Window {
    pub(super) fn pick_agent(&mut self, names: AgentNames) {
        self.mode = Mode::Picker {
            agents: names.agents,
            sel: 0,
            typed: String::new(),
            switching: None,
        };
        self.overlay_opened();
    }

    /// The agents to switch the tab prefix `A` was typed on to, but its
    /// own agent.
    fn pick_switch(&mut self, names: AgentNames) {
        let Some(tab) = self.switching.take() else {
            return;
        };
        let own = self.tabs.iter().find(|t| t.id == tab).map(|t| &t.agent);
        let agents: Vec<String> = names
            .agents
            .into_iter()
            .filter(|a| Some(a) != own)
            .collect();
        // Another host's programs are on its PATH, not this one's: there,
        // none is marked, and starting one says if it is missing.
        let missing = match self.remote {
            Some(_) => Vec::new(),
            None => not_on_path(
                &agents,
                &names.programs,
                std::env::var_os("PATH").as_deref(),
            ),
        };
        // The first agent that would start, not one that is not installed.
        let sel = agents
            .iter()
            .position(|a| !missing.contains(a))
            .unwrap_or(0);
        let title = match self.index_of(&tab) {
            Some(i) => format!(
                "Switch tab {} ({}) from {} to another agent (it gets a handoff; same worktree):",
                i + 1,
                printable(&self.tabs[i].name),
                printable(&self.tabs[i].agent)
            ),
            None => "Switch this tab to another agent (it gets a handoff; same worktree):".into(),
        };
        self.mode = Mode::Picker {
            agents,
            sel,
            typed: String::new(),
            switching: Some(overlay::Switching {
                tab,
                title,
                missing,
            }),
        };
        self.overlay_opened();
    }

    /// Ask for the agents to switch tab `tab` to.
    pub(super) fn ask_switch(&mut self, tab: String) {
        self.switching = Some(tab);
        let id = self.request(ListAgents, Window::pick_switch);
        self.await_overlay(Some(id));
    }

    /// The core refused request `id`: when it was a switch refused for
    /// want of a handoff (the old agent's conversation does not read), the
    /// status line asks whether to switch without one, as `C-b x` asks
    /// before closing. Whether it did.
    pub(super) fn switch_refused(&mut self, id: u64, message: &str) -> bool {
        let (tab, agent) = match self.switch_asked.take() {
            Some((asked, tab, agent)) if asked == id => (tab, agent),
            other => {
                self.switch_asked = other;
                return false;
            }
        };
        if !message.contains(crate::switch::rules::NO_HANDOFF) {
            return false;
        }
        let (n, from) = match self.index_of(&tab) {
            Some(i) => ((i + 1).to_string(), printable(&self.tabs[i].agent)),
            None => (tab.clone(), "its agent".into()),
        };
        self.mode = Mode::Confirm {
            question: format!(
                "{from}'s conversation gives no handoff: switch tab {n} to {} without one? y/n",
                printable(&agent)
            ),
            yes: overlay::Effect::SwitchAgent {
                tab,
                agent,
                no_handoff: true,
            },
        };
        true
    }

    fn show_switched(&mut self, s: Switched) {
        self.note = match s.refused {
            Some(why) => format!("switched to {}, refused: {why}", s.to),
            None => format!(
                "switched from {} to {}{}",
                s.from,
                s.to,
                match s.handoff {
                    Some(_) => "; the handoff is typed once it waits",
                    None => "",
                }
            ),
        };
        self.note_for_a_key = true;
    }

    fn show_reported(&mut self, taken: ResultTaken) {
        let why = taken.why.map(|w| format!(": {w}")).unwrap_or_default();
        let parent = super::report_offer::named(&self.tabs, &taken.parent);
        self.note = match taken.held {
            Held::Delivered => format!("result {} sent to {parent}", taken.number),
            Held::Waiting => format!("result {} kept for {parent}{why}", taken.number),
            Held::Approval(id) => {
                format!(
                    "result {} for {parent} waits for approval {id}{why}",
                    taken.number
                )
            }
            Held::Denied(id) => format!("result {} for {parent} was denied ({id})", taken.number),
        };
        self.note_for_a_key = true;
    }

    pub(super) fn show_started(&mut self, started: Started) {
        self.send(ClientMsg::Select { tab: started.tab });
    }

    pub(super) fn clear_note<R>(&mut self, _: R) {
        self.note.clear();
    }

    /// Start tab `tab`'s program again, in its place.
    pub(super) fn restart(&mut self, tab: String) {
        let env = crate::client::own_env();
        self.request(
            RestartTab {
                tab,
                env,
                folder: None,
            },
            Window::show_started,
        );
    }

    pub(super) fn show_approvals(&mut self, list: ApprovalsList) {
        let items = list
            .pending
            .into_iter()
            .map(|p| overlay::Waiting {
                network: matches!(p.asked, Asked::Network { .. }),
                id: p.id,
                question: p.question,
            })
            .collect();
        self.mode = Mode::Approvals { items, sel: 0 };
        self.overlay_opened();
    }

    pub(super) fn quit_done(&mut self, quit: SessionQuit) {
        let n = quit.closed;
        self.done = Some(format!(
            "[quit: stopped {n} tab{}]",
            if n == 1 { "" } else { "s" }
        ));
    }

    pub(super) fn command(&mut self, c: Cmd) {
        let n = self.tabs.len();
        let cur = self.showing();
        match c {
            Cmd::NewTab => {
                let id = self.request(ListAgents, Window::pick_agent);
                self.await_overlay(Some(id));
            }
            Cmd::Next if n > 0 => {
                let from = self.showing_or_asked();
                self.select_index(from.map(|i| (i + 1) % n).unwrap_or(0))
            }
            Cmd::Prev if n > 0 => {
                let from = self.showing_or_asked();
                self.select_index(from.map(|i| (i + n - 1) % n).unwrap_or(0))
            }
            // A tab's own number: after a close its neighbours keep theirs.
            Cmd::Tab(k) => match self.tabs.iter().position(|t| t.number == k) {
                Some(i) => self.select_index(i),
                None if n > 0 => {
                    self.note = format!("no tab {k}");
                    self.note_for_a_key = true;
                }
                None => {}
            },
            Cmd::Close => {
                if let Some(i) = cur {
                    let t = &self.tabs[i];
                    self.mode = Mode::Confirm {
                        question: format!("close tab {} ({})? y/n", t.number, printable(&t.name)),
                        yes: overlay::Effect::Close(t.id.clone()),
                    };
                }
            }
            Cmd::Quit => {
                self.mode = Mode::Confirm {
                    question: overlay::quit_question(n),
                    yes: overlay::Effect::Quit,
                }
            }
            Cmd::Terminal => {
                if let Some(tab) = self.view.tab.clone() {
                    let env = crate::client::own_env();
                    self.request(
                        OpenTerminal {
                            tab,
                            env,
                            folder: None,
                        },
                        Window::show_started,
                    );
                }
            }
            Cmd::Detach => self.done = Some("[detached]".into()),
            Cmd::Help => self.mode = Mode::Help { over: None },
            Cmd::Approvals => {
                let id = self.request(ListApprovals, Window::show_approvals);
                self.await_overlay(Some(id));
            }
            Cmd::Scroll => {
                if let Some(tab) = self.view.tab.clone() {
                    self.history_asked = Some(tab.clone());
                    self.send(ClientMsg::History { tab });
                    self.await_overlay(None);
                }
            }
            Cmd::Rename => {
                if let Some(i) = cur {
                    let t = &self.tabs[i];
                    let label = format!("new name for tab {} ({})", t.number, t.name);
                    self.mode = Mode::Rename {
                        tab: t.id.clone(),
                        prompt: prompt::Prompt::new(printable(&label)),
                    };
                }
            }
            Cmd::Restart => {
                if let Some(i) = cur {
                    let t = &self.tabs[i];
                    if t.state == TabState::Running {
                        self.mode = Mode::Confirm {
                            question: format!(
                                "restart tab {} ({}): stop its program and start it again? y/n",
                                t.number,
                                printable(&t.name)
                            ),
                            yes: overlay::Effect::Restart(t.id.clone()),
                        };
                    } else {
                        let tab = t.id.clone();
                        self.restart(tab);
                    }
                }
            }
            Cmd::Sessions => self.list_sessions(),
            Cmd::Diff => self.open_diff(),
            Cmd::SwitchAgent => match cur.map(|i| &self.tabs[i]) {
                Some(t) if t.kind == TabKind::Agent => {
                    let tab = t.id.clone();
                    self.ask_switch(tab)
                }
                Some(_) => {
                    self.note = "a terminal has no agent to switch".into();
                    self.note_for_a_key = true;
                }
                None => {}
            },
            Cmd::ReportFor => {
                let shown = cur.map(|i| self.tabs[i].id.as_str());
                match super::report_offer::target(&self.tabs, shown) {
                    Some(t) => {
                        self.mode = Mode::Confirm {
                            question: super::report_offer::question(t, &self.tabs),
                            yes: overlay::Effect::ReportFor(t.id.clone()),
                        }
                    }
                    None => {
                        self.note = "no spun-off tab ended its turn without a report".into();
                        self.note_for_a_key = true;
                    }
                }
            }
            Cmd::Redraw => self.view.invalidate(),
            Cmd::Attention => match marks::next_needing(&self.tabs, &self.marks, cur) {
                Some(i) => self.select_index(i),
                None => {
                    self.note = "no other tab needs you".into();
                    self.note_for_a_key = true;
                }
            },
            _ => {}
        }
    }

    /// What a closing overlay asked for.
    pub(super) fn effect(&mut self, effect: overlay::Effect) {
        match effect {
            overlay::Effect::None => {}
            overlay::Effect::Start(agent) => {
                self.request(
                    StartAgent {
                        folder: self.folder.clone(),
                        name: agent,
                        extra_args: vec![],
                        env: crate::client::own_env(),
                        worktree: true,
                        program: false,
                        tab_name: None,
                        resume: None,
                    },
                    Window::show_started,
                );
            }
            overlay::Effect::Close(tab) => {
                let request = CloseTab {
                    tab,
                    remove_worktree: false,
                    force: false,
                    folder: None,
                };
                self.request(request, Window::clear_note);
            }
            overlay::Effect::Decide {
                id,
                approve,
                session,
            } => {
                self.request(
                    Decide {
                        id,
                        approve,
                        session,
                    },
                    Window::clear_note,
                );
            }
            overlay::Effect::Quit => {
                self.request(
                    QuitSession {
                        folder: self.folder.clone(),
                    },
                    Window::quit_done,
                );
            }
            overlay::Effect::Rename { tab, name } => {
                self.request(
                    RenameTab {
                        tab,
                        name,
                        folder: None,
                    },
                    Window::clear_note,
                );
            }
            overlay::Effect::Restart(tab) => self.restart(tab),
            overlay::Effect::Note(note) => {
                self.note = note;
                self.note_for_a_key = true;
            }
            overlay::Effect::ReportFor(tab) => {
                let request = ReportResult {
                    text: String::new(),
                    tab: Some(tab),
                    env: crate::client::own_env(),
                    folder: None,
                };
                self.request(request, Window::show_reported);
            }
            overlay::Effect::SwitchAgent {
                tab,
                agent,
                no_handoff,
            } => {
                let request = SwitchTab {
                    tab: tab.clone(),
                    agent: agent.clone(),
                    text: None,
                    no_handoff,
                    env: crate::client::own_env(),
                    folder: None,
                };
                let id = self.request(request, Window::show_switched);
                self.switch_asked = (!no_handoff).then_some((id, tab, agent));
            }
            overlay::Effect::Switch(folder) => self.switch_session(folder),
            overlay::Effect::Move { place, folder } => self.move_to(place, folder),
            overlay::Effect::SendComments {
                tab,
                text,
                comments,
            } => self.send_comments(tab, text, comments),
            overlay::Effect::SendReview { tab, text, what } => {
                self.send_message(tab, text, Vec::new(), what)
            }
            overlay::Effect::DiffClosed { tab, drafts } => self.keep_drafts(tab, drafts),
            overlay::Effect::DiffReload { tab, drafts } => self.reload_diff(tab, drafts),
        }
    }
}

/// The agents of `agents` whose program word (`programs`) this window
/// could not run.
fn not_on_path(
    agents: &[String],
    programs: &std::collections::BTreeMap<String, String>,
    path_var: Option<&std::ffi::OsStr>,
) -> Vec<String> {
    agents
        .iter()
        .filter(|a| programs.get(*a).is_some_and(|w| !on_path(w, path_var)))
        .cloned()
        .collect()
}

/// Whether program word `word` names a program this window could run: a
/// path as it is, a bare name on `path_var`.
fn on_path(word: &str, path_var: Option<&std::ffi::OsStr>) -> bool {
    match word.contains('/') {
        true => crate::executable::check(std::path::Path::new(word)).is_ok(),
        false => crate::executable::find_on_path(word, path_var).is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The switch picker marks an agent whose program this machine lacks,
    /// but not over --host: the other host's PATH is not this one's.
    #[test]
    fn only_this_machines_window_marks_programs_not_on_its_path() {
        let names = || AgentNames {
            agents: vec!["gone".into(), "sh".into()],
            programs: [
                ("gone".to_string(), "nerdr-no-such-program".to_string()),
                ("sh".to_string(), "sh".to_string()),
            ]
            .into(),
        };
        for (remote, want_missing, want_sel) in [
            (None, vec!["gone".to_string()], 1),
            (Some("devbox"), vec![], 0),
        ] {
            let (mut w, _rx) = super::super::test_window();
            w.remote = remote.map(str::to_owned);
            w.switching = Some("t1".into());
            w.pick_switch(names());
            match &w.mode {
                Mode::Picker {
                    sel,
                    switching: Some(sw),
                    ..
                } => {
                    assert_eq!(sw.missing, want_missing, "{remote:?}");
                    assert_eq!(*sel, want_sel, "{remote:?}");
                }
                _ => panic!("{remote:?}: no picker"),
            }
        }
    }
}
