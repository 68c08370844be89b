//! What the core tells about its tabs, its sessions and itself: the rows of
//! `nerdr tabs` and `nerdr sessions`, and the figures of `status`. These
//! are replies' data, shared by several methods of [`super::api`], which
//! re-exports them where the requests are.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What a tab is doing, as `nerdr tabs` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TabState {
    Starting,
    Running,
    Exited,
    Refused,
}

impl TabState {
    pub fn as_str(self) -> &'static str {
        match self {
            TabState::Starting => "starting",
            TabState::Running => "running",
            TabState::Exited => "exited",
            TabState::Refused => "refused",
        }
    }
}

/// What an agent in a running tab is doing, as nerdr tells it from its
/// screen, the escape sequences it writes and its hooks' reports
/// (`crate::detect`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AgentState {
    /// Busy on a turn.
    Working,
    /// Waits for the person: a permission prompt, a question, a sign-in or
    /// trust dialog, a choice.
    Blocked,
    /// Waits for the next prompt.
    Idle,
    /// Finished a turn nobody has looked at since; `idle` once a window
    /// shows the tab.
    Done,
    /// No rules and no reports: nerdr cannot tell.
    Unknown,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            AgentState::Working => "working",
            AgentState::Blocked => "blocked",
            AgentState::Idle => "idle",
            AgentState::Done => "done",
            AgentState::Unknown => "unknown",
        }
    }
}

/// What a tab runs: an agent, or a terminal opened in an agent's tab.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TabKind {
    #[default]
    Agent,
    Terminal,
}

impl TabKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TabKind::Agent => "agent",
            TabKind::Terminal => "terminal",
        }
    }
}

/// One row of `nerdr tabs --json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TabInfo {
    pub id: String,
    /// What the person calls it (`claude-1`, or its `nerdr rename`).
    #[serde(default)]
    pub name: String,
    /// Its number in its session, from 1 (`nerdr send 2`, the window's
    /// digit keys): kept while the tab lives, so a close leaves a gap.
    #[serde(default)]
    pub number: usize,
    pub folder: PathBuf,
    pub agent: String,
    pub command: Vec<String>,
    pub sandboxed: bool,
    #[serde(default)]
    pub kind: TabKind,
    /// For a terminal: the agent tab it was opened in.
    #[serde(default)]
    pub parent: Option<String>,
    /// The tab's own git worktree (its working folder), if it has one.
    #[serde(default)]
    pub worktree: Option<PathBuf>,
    /// The agent's conversation id, when nerdr knows it (for resume).
    #[serde(default)]
    pub session_id: Option<String>,
    /// An exited agent that `nerdr restart` can bring back in its
    /// conversation.
    #[serde(default)]
    pub resumable: bool,
    pub state: TabState,
    /// Why a `refused` tab's program was not started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub pid: Option<u32>,
    pub exit_code: Option<i32>,
    /// Something the person should know about the tab (e.g. its sandbox
    /// seems to block nerdr's integration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// What the agent is doing; `None` for a terminal and for a tab whose
    /// program is not running.
    #[serde(default)]
    pub agent_state: Option<AgentState>,
    /// When `agent_state` last changed (RFC 3339, UTC).
    #[serde(default)]
    pub agent_state_since: Option<String>,
    /// Bells the tab's program rang so far (a window marks a background
    /// tab whose count went up).
    #[serde(default)]
    pub bells: u64,
    /// Reviews posted for the tab that the person has not been shown yet
    /// (`review::unread`).
    #[serde(default)]
    pub unread_reviews: usize,
    /// For a tab `nerdr spinoff` started: the tab it was spun off from,
    /// which its results go to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spun_off_from: Option<String>,
    /// For a reviewer tab: the id of the tab whose work it reviews (its
    /// name alone could point at another tab once the author closes and a
    /// new tab takes its name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviews: Option<String>,
    /// Results of its spinoffs waiting for this tab (its program ended):
    /// typed once `nerdr restart` starts it again.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub results_waiting: usize,
    /// For a spun-off tab: its agent's turn on the task ended and it
    /// reported nothing (`spinoff::due`); the window marks it and offers
    /// to report its last answer to its parent (`nerdr report-result
    /// --for TAB`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub report_due: bool,
    /// Its agent handed its work to the person (`nerdr handoff --to-me`)
    /// and the handoff waits in `nerdr handoffs` until `--clear`; the
    /// window marks it `&`. Absent when false, as `report_due`: the
    /// CLI prints an older core's rows as they came.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub handed_to_you: bool,
    /// Each time `nerdr switch` gave the tab another agent, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub switches: Vec<SwitchInfo>,
    /// The screen rule (`limit = true`) that says the agent hit its plan's
    /// limit, while its screen says so: the window offers `nerdr switch`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
}

/// One switch of a tab's agent (`nerdr switch`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchInfo {
    /// The agent stopped.
    pub from: String,
    /// The agent started in its place.
    pub to: String,
    /// When, in RFC 3339 (UTC), as `agent_state_since`.
    pub at: String,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// One row of `nerdr sessions --json`: a session and its tabs, as the
/// caller may see them (only the tabs it may see are counted).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionInfo {
    /// The session's folder (canonical).
    pub folder: PathBuf,
    /// The folder's last component, made unique among the sessions listed
    /// (`proj`, `proj-2`): what `nerdr attach NAME` takes.
    pub name: String,
    pub tabs: usize,
    /// Tabs whose program runs.
    pub running: usize,
    /// Running agents waiting for the person.
    pub blocked: usize,
    /// Running agents that finished a turn nobody has looked at.
    pub done: usize,
}

/// The core's reply to [`Request::Status`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoreStatus {
    pub pid: u32,
    pub version: String,
    pub sessions: usize,
    pub running: usize,
    pub tabs: usize,
    pub activated: bool,
    /// How programs are kept: a [`ProgramsMode`] in words.
    pub mode: String,
}

/// How the programs are kept, as [`CoreStatus::mode`] and the holder's
/// welcome carry it. Written only through `Display` and read back with
/// [`ProgramsMode::parse`], so the core, the holder and `nerdr doctor` use
/// the same words. On the wire it stays a string for people to read: an
/// older holder sends the same words, and words this nerdr does not know
/// (a newer holder's) still show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramsMode {
    /// A holder keeps them, each in its own transient systemd scope: they
    /// outlive core restarts and the manager can account for each.
    HolderScopes,
    /// A holder keeps them, each in its own session, because the holder has
    /// no service manager to ask for scopes.
    HolderSessions,
    /// The core runs them as its own children, for the reason given
    /// (`NERDR_HOLDER=0`, or why no holder could be had); they end with it.
    CoreChildren(String),
}

const HOLDER_SCOPES: &str = "holder, each program in its own systemd scope";
const HOLDER_SESSIONS: &str = "holder, each program in its own session (no service manager)";
const CORE_CHILDREN: &str = "core children (";
const CORE_CHILDREN_END: &str = "): programs end with the core";

impl std::fmt::Display for ProgramsMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProgramsMode::HolderScopes => f.write_str(HOLDER_SCOPES),
            ProgramsMode::HolderSessions => f.write_str(HOLDER_SESSIONS),
            ProgramsMode::CoreChildren(why) => write!(f, "{CORE_CHILDREN}{why}{CORE_CHILDREN_END}"),
        }
    }
}

impl ProgramsMode {
    /// The mode these words name; `None` for words this nerdr does not know.
    pub fn parse(words: &str) -> Option<ProgramsMode> {
        match words {
            HOLDER_SCOPES => Some(ProgramsMode::HolderScopes),
            HOLDER_SESSIONS => Some(ProgramsMode::HolderSessions),
            _ => {
                let rest = words.strip_prefix(CORE_CHILDREN)?;
                // The reason may hold parentheses of its own (an error
                // message), so cut the known ending, not the first `)`.
                let why = rest.strip_suffix(CORE_CHILDREN_END).unwrap_or(rest);
                Some(ProgramsMode::CoreChildren(why.to_owned()))
            }
        }
    }
}
