//! The core's picture of sessions and tabs: plain data and the pure queries
//! over it. Effects (starting programs, talking to sockets) live elsewhere.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use super::State;
use crate::protocol::api::{AgentState, TabInfo, TabKind, TabState};

pub const DEFAULT_ROWS: u16 = 24;
pub const DEFAULT_COLS: u16 = 80;

pub struct Tab {
    pub id: String,
    /// What the person calls it (`claude-1`, or its `nerdr rename`); empty
    /// until [`State::insert`] gives it its default.
    pub name: String,
    /// Its number in its session, from 1, as `nerdr send 2` and the
    /// window's digit keys take it: kept for the tab's life (a close does
    /// not renumber the others, as tmux's default); 0 until
    /// [`State::insert`] gives it the lowest free one.
    pub number: usize,
    /// The tab's `NERDR_TAB`: proves a hook caller belongs here. Never logged.
    pub secret: String,
    pub folder: PathBuf,
    pub agent: String,
    pub command: Vec<String>,
    pub sandboxed: bool,
    /// A program run as it is (`nerdr agent -- CMD`): started again from
    /// `command`, with no config.
    pub program: bool,
    pub kind: TabKind,
    pub parent: Option<String>,
    /// Its line of starters (`privilege::Lined`): the tabs whose programs
    /// started it, oldest first; empty for a tab the person started and
    /// for a reviewer. Kept across restarts of the tab and of the core.
    pub started_by: Vec<String>,
    /// Where the program runs: the folder, or a folder inside the worktree.
    pub cwd: PathBuf,
    pub worktree: Option<Worktree>,
    /// A terminal's `<n>` in `nerdr-term-<tab>-<n>.scope`.
    pub term_number: Option<u32>,
    /// The agent's conversation, as nerdr gave it or the agent reported it.
    pub session_id: Option<String>,
    /// The agent's own resume command, as it reported it.
    pub reported: Option<Vec<String>>,
    /// The last event the agent's hooks reported (turn start, end, ...).
    pub last_event: Option<String>,
    /// Something the person should know about this tab (not saved).
    pub warning: Option<String>,
    /// Why the tab is `refused` (the sandbox check's verdict).
    pub reason: Option<String>,
    /// What of nerdr a sandboxed agent cannot reach from inside (the hook
    /// socket, `$NERDR_BIN`), as its last sandbox check found: it cannot
    /// use nerdr's CLI, a reviewer cannot post (`review::status`).
    pub nerdr_missing: Option<String>,
    pub state: TabState,
    pub pid: Option<u32>,
    pub start_time: Option<u64>,
    pub exit_code: Option<i32>,
    pub screen: crate::term::Screen,
    pub log: super::outlog::OutLog,
    /// What the agent is doing (`agent_states`); `None` for a terminal.
    pub detection: Option<super::detection::Detection>,
    /// A terminal's bells (an agent's are its tracker's).
    pub terminal_bells: crate::detect::Bells,
    /// Its reviews the person has not seen, as `reviews.json` last said
    /// (`Core::update_reviews` keeps it; not saved).
    pub unread_reviews: usize,
}

/// A tab's own git worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Worktree {
    pub path: PathBuf,
    /// The main worktree of its repository, where git is run to remove it.
    pub repo: PathBuf,
    pub branch: String,
    /// The commit it was made from (`git::base`); absent in records of
    /// worktrees made before bases were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    /// The main checkout's branch when it was made: where `nerdr merge`
    /// takes the work back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_branch: Option<String>,
}

impl Worktree {
    /// The base as recorded, if it was.
    pub fn recorded_base(&self) -> Option<crate::git::base::Recorded> {
        self.base.clone().map(|commit| crate::git::base::Recorded {
            commit,
            branch: self.base_branch.clone(),
        })
    }

    /// The commit whose `.gitignore` files nerdr trusts in this worktree
    /// (`git::ignored`): its recorded base, from the tab's record or the
    /// file beside the worktree (neither is the agent's to write), never
    /// a guess.
    pub fn ignore_base(&self) -> Option<String> {
        self.recorded_base()
            .or_else(|| crate::git::base::read_record(&self.path))
            .map(|r| r.commit)
    }
}

/// A tab as written down: in `tabs.json` (without the secret) so a full
/// stop does not lose what was running, and as the holder's opaque record
/// (with it) so a restarted core gets its tabs back whole.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Saved {
    pub id: String,
    /// Absent in lists written before tabs had names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `Tab::number`. Absent in lists written before numbers were kept:
    /// their tabs are numbered in the list's order, as they were shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<usize>,
    pub folder: PathBuf,
    pub agent: String,
    pub command: Vec<String>,
    pub sandboxed: bool,
    /// Absent in lists written before programs could run as they are.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program: bool,
    #[serde(default)]
    pub kind: TabKind,
    #[serde(default)]
    pub parent: Option<String>,
    /// `Tab::started_by`. Absent where empty, and in records written
    /// before it was kept (whose tabs count as the person's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub started_by: Vec<String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    pub worktree: Option<Worktree>,
    #[serde(default)]
    pub term_number: Option<u32>,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub reported: Option<Vec<String>>,
    pub state: TabState,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What of nerdr its sandbox hides from it (`Tab::nerdr_missing`):
    /// kept so a restarted core still says a reviewer cannot post. Absent
    /// in records written before it was kept, and where nothing is hidden.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nerdr_missing: Option<String>,
    pub pid: Option<u32>,
    pub start_time: Option<u64>,
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl Tab {
    pub fn saved(&self, with_secret: bool) -> Saved {
        Saved {
            id: self.id.clone(),
            name: (!self.name.is_empty()).then(|| self.name.clone()),
            number: (self.number > 0).then_some(self.number),
            folder: self.folder.clone(),
            agent: self.agent.clone(),
            command: self.command.clone(),
            sandboxed: self.sandboxed,
            program: self.program,
            kind: self.kind,
            parent: self.parent.clone(),
            started_by: self.started_by.clone(),
            cwd: Some(self.cwd.clone()),
            worktree: self.worktree.clone(),
            term_number: self.term_number,
            session_id: self.session_id.clone(),
            reported: self.reported.clone(),
            state: self.state,
            reason: self.reason.clone(),
            nerdr_missing: self.nerdr_missing.clone(),
            pid: self.pid,
            start_time: self.start_time,
            exit_code: self.exit_code,
            secret: with_secret.then(|| self.secret.clone()),
        }
    }

    pub fn from_saved(s: Saved, rows: u16, cols: u16) -> Tab {
        Tab {
            id: s.id,
            name: s.name.unwrap_or_default(),
            number: s.number.unwrap_or(0),
            // A tab restored without its secret has no program that could
            // present it; a fresh random one matches nothing.
            secret: s
                .secret
                .unwrap_or_else(|| crate::protocol::handshake::random_hex(32)),
            cwd: s.cwd.unwrap_or_else(|| s.folder.clone()),
            folder: s.folder,
            agent: s.agent,
            command: s.command,
            sandboxed: s.sandboxed,
            program: s.program,
            kind: s.kind,
            parent: s.parent,
            started_by: s.started_by,
            worktree: s.worktree,
            term_number: s.term_number,
            session_id: s.session_id,
            reported: s.reported,
            last_event: None,
            warning: None,
            reason: s.reason,
            nerdr_missing: s.nerdr_missing,
            state: s.state,
            pid: s.pid,
            start_time: s.start_time,
            exit_code: s.exit_code,
            screen: crate::term::Screen::new(rows, cols),
            log: Default::default(),
            detection: None,
            terminal_bells: Default::default(),
            unread_reviews: 0,
        }
    }

    pub fn info(&self) -> TabInfo {
        TabInfo {
            id: self.id.clone(),
            name: self.name.clone(),
            number: self.number,
            folder: self.folder.clone(),
            agent: self.agent.clone(),
            command: self.command.clone(),
            sandboxed: self.sandboxed,
            kind: self.kind,
            parent: self.parent.clone(),
            worktree: self.worktree.as_ref().map(|w| w.path.clone()),
            session_id: self.session_id.clone(),
            resumable: self.kind == TabKind::Agent
                && self.state == TabState::Exited
                && (self.session_id.is_some() || self.reported.is_some()),
            state: self.state,
            reason: self.reason.clone(),
            pid: self.pid,
            exit_code: self.exit_code,
            warning: self.warning.clone(),
            agent_state: self.agent_state(),
            agent_state_since: self
                .detection
                .as_ref()
                .and_then(|d| d.since_while(self.state == TabState::Running)),
            bells: match &self.detection {
                Some(d) => d.tracker.bells(),
                None => self.terminal_bells.count(),
            },
            unread_reviews: self.unread_reviews,
            // The spinoff store's: `spinoff::store::Links::mark`.
            spun_off_from: None,
            // The review store's: `ReviewLinks::mark`.
            reviews: None,
            results_waiting: 0,
            report_due: false,
            handed_to_you: false,
            switches: Vec::new(),
            limit: self
                .detection
                .as_ref()
                .filter(|_| self.state == TabState::Running)
                .and_then(|d| d.tracker.limit())
                .map(str::to_string),
        }
    }

    /// What the agent is doing: `None` for a terminal and for a tab whose
    /// program is not running.
    pub fn agent_state(&self) -> Option<AgentState> {
        self.detection
            .as_ref()
            .and_then(|d| d.state_while(self.state == TabState::Running))
    }

    /// The visible screen as text: trailing blanks of each row and trailing
    /// empty rows dropped; with `lines`, only the last N rows of what is left.
    pub fn screen_text(&self, lines: Option<usize>) -> String {
        self.screen.text(lines)
    }
}

/// The queries over the tabs of [`State`] (defined with the rest of what
/// the core knows, in `core`).
impl State {
    /// Add a tab to its session, or back at its place when
    /// [`State::remove_keeping_place`] kept one for its id (with its name
    /// and number). A tab without a name gets its default (`AGENT-N`); one
    /// without a number, or with one another tab of its session has, the
    /// lowest free number. A session's tabs are kept in number order.
    pub fn insert(&mut self, mut tab: Tab) {
        if tab.name.is_empty() {
            tab.name = match self.kept_names.remove(&tab.id) {
                Some(name) => name,
                None => {
                    let taken: Vec<&str> = self
                        .session_tabs(&tab.folder)
                        .into_iter()
                        .map(|t| t.name.as_str())
                        .collect();
                    super::handles::default_name(&tab.agent, taken.iter().copied())
                }
            };
        }
        if let Some(n) = self.kept_numbers.remove(&tab.id) {
            tab.number = n;
        }
        let taken = self.numbers_taken(&tab.folder, &tab.id);
        if tab.number == 0 || taken.contains(&tab.number) {
            tab.number = super::handles::lowest_free(&taken);
        }
        let numbers: Vec<(String, usize)> = self
            .sessions
            .get(&tab.folder)
            .into_iter()
            .flatten()
            .filter(|id| **id != tab.id)
            .map(|id| (id.clone(), self.number_of(id)))
            .collect();
        let at = numbers
            .iter()
            .position(|(_, n)| *n > tab.number)
            .unwrap_or(numbers.len());
        let mut ids: Vec<String> = numbers.into_iter().map(|(id, _)| id).collect();
        ids.insert(at, tab.id.clone());
        self.sessions.insert(tab.folder.clone(), ids);
        self.tabs.insert(tab.id.clone(), tab);
    }

    /// The numbers of `folder`'s session that tab `id` may not take: its
    /// other tabs', and those kept for tabs starting again.
    fn numbers_taken(&self, folder: &Path, id: &str) -> Vec<usize> {
        let ids = self.sessions.get(folder).map(Vec::as_slice).unwrap_or(&[]);
        ids.iter()
            .filter(|other| *other != id)
            .map(|other| self.number_of(other))
            .collect()
    }

    /// Tab `id`'s number, or the one kept for it while it starts again.
    fn number_of(&self, id: &str) -> usize {
        self.tabs
            .get(id)
            .map(|t| t.number)
            .or_else(|| self.kept_numbers.get(id).copied())
            .unwrap_or(0)
    }

    /// Take a tab out that is about to start again under its id (`nerdr
    /// restart`), keeping its place in its session, its name and its
    /// number, so the windows show it as before. The place is taken again
    /// by [`State::insert`], or given up by [`State::remove`] or
    /// [`State::forget_place`].
    pub fn remove_keeping_place(&mut self, id: &str) -> Option<Tab> {
        let tab = self.tabs.remove(id)?;
        self.kept_names.insert(tab.id.clone(), tab.name.clone());
        self.kept_numbers.insert(tab.id.clone(), tab.number);
        if let Some(pid) = tab.pid {
            self.replaced_pids.insert(tab.id.clone(), pid);
        }
        Some(tab)
    }

    /// Give up a place kept for a tab that did not come back.
    pub fn forget_place(&mut self, folder: &Path, id: &str) {
        if self.tabs.contains_key(id) {
            return;
        }
        self.kept_names.remove(id);
        self.kept_numbers.remove(id);
        if let Some(ids) = self.sessions.get_mut(folder) {
            ids.retain(|t| t != id);
        }
    }

    pub fn remove(&mut self, id: &str) -> Option<Tab> {
        self.kept_names.remove(id);
        self.kept_numbers.remove(id);
        self.replaced_pids.remove(id);
        let tab = self.tabs.remove(id)?;
        if let Some(ids) = self.sessions.get_mut(&tab.folder) {
            ids.retain(|t| t != id);
        }
        Some(tab)
    }

    pub fn session_tabs(&self, folder: &Path) -> Vec<&Tab> {
        self.sessions
            .get(folder)
            .map(|ids| ids.iter().filter_map(|id| self.tabs.get(id)).collect())
            .unwrap_or_default()
    }

    /// The sessions that count when a folder is placed or sessions are
    /// listed: those with a tab (or a place kept for one starting again),
    /// or a window onto them. A session whose tabs all closed lingers in
    /// [`State::sessions`] but holds no folder.
    pub fn live_sessions(&self) -> impl Iterator<Item = &Path> + '_ {
        self.sessions
            .iter()
            .filter(|(folder, ids)| {
                !ids.is_empty() || self.windows.by_id.values().any(|w| &w.folder == *folder)
            })
            .map(|(folder, _)| folder.as_path())
    }

    /// The session canonical folder `dir` belongs to (see
    /// [`super::session_of`]), `None` for a folder in none. A session with
    /// a window but no tabs is found at its own folder only: a window left
    /// open on `~` must not take in every project under it.
    pub fn session_of(&self, dir: &Path) -> Option<PathBuf> {
        if self.live_sessions().any(|s| s == dir) {
            return Some(dir.to_path_buf());
        }
        let with_tabs = self
            .sessions
            .iter()
            .filter(|(_, ids)| !ids.is_empty())
            .map(|(folder, _)| folder.as_path());
        let worktrees = self.tabs.values().filter_map(|t| {
            t.worktree
                .as_ref()
                .map(|w| (w.path.as_path(), t.folder.as_path()))
        });
        super::session_of::session_of(dir, with_tabs, worktrees)
    }

    pub fn all_tabs(&self) -> Vec<&Tab> {
        self.sessions
            .values()
            .flatten()
            .filter_map(|id| self.tabs.get(id))
            .collect()
    }

    /// The tab whose secret is `secret`, compared in constant time.
    pub fn tab_by_secret(&self, secret: &str) -> Option<&Tab> {
        use crate::protocol::handshake::constant_time_eq;
        // Compare against every tab so timing does not reveal which matched.
        let mut found = None;
        for tab in self.tabs.values() {
            if constant_time_eq(tab.secret.as_bytes(), secret.as_bytes()) {
                found = Some(tab);
            }
        }
        found
    }

    pub fn status_text(&self) -> String {
        status_text(self.tabs.values().map(|t| t.state), self.sessions.len())
    }
}

/// The `STATUS=` line: "2 agents running, 1 exited, 1 session".
pub fn status_text(states: impl Iterator<Item = TabState>, sessions: usize) -> String {
    let (mut running, mut exited, mut refused, mut starting) = (0, 0, 0, 0);
    for s in states {
        match s {
            TabState::Starting => starting += 1,
            TabState::Running => running += 1,
            TabState::Exited => exited += 1,
            TabState::Refused => refused += 1,
        }
    }
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let mut parts = vec![format!("{} running", plural(running, "agent", "agents"))];
    for (n, what) in [
        (starting, "starting"),
        (exited, "exited"),
        (refused, "refused"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    parts.push(plural(sessions, "session", "sessions"));
    parts.join(", ")
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;
