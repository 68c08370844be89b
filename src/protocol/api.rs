//! The requests and replies of nerdr's commands. The same [`Request`] travels
//! in a client-socket frame or in a hook-socket line, so both sockets reach
//! one dispatcher and differ only in who the caller is.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A command for the core. Serialized as `{"method": ..., "params": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "snake_case")]
pub enum Request {
    /// Start agent `name` in a new tab of `folder`'s session.
    Agent {
        folder: PathBuf,
        name: String,
        #[serde(default)]
        extra_args: Vec<String>,
        /// The caller's environment, the base of the program's environment.
        #[serde(default)]
        env: Vec<(String, String)>,
        /// Give the tab its own git worktree when the folder is in a
        /// repository (and `[tabs] worktree` allows it).
        #[serde(default = "yes")]
        worktree: bool,
    },
    /// The tabs of `folder`'s session, or of every session with `all`.
    Tabs {
        folder: Option<PathBuf>,
        #[serde(default)]
        all: bool,
    },
    /// The tab's screen as text; with `lines`, only its last N lines.
    Read { tab: String, lines: Option<usize> },
    /// Type `text` into the tab, then Enter unless `enter` is false.
    Send {
        tab: String,
        text: String,
        enter: bool,
    },
    /// Resize the tab's terminal (and its screen model).
    Resize { tab: String, rows: u16, cols: u16 },
    /// Open a terminal (the user's shell) in tab `tab`'s folder.
    Terminal {
        tab: String,
        #[serde(default)]
        env: Vec<(String, String)>,
    },
    /// Start the tab's agent again, resuming its conversation.
    Restart {
        tab: String,
        #[serde(default)]
        env: Vec<(String, String)>,
    },
    /// Stop the tab's program and forget the tab; with `remove_worktree`,
    /// also remove its git worktree (its branch stays). A worktree holding
    /// work no commit has is refused unless `force`, which saves the work
    /// under `refs/nerdr/saved/` first (the person's only).
    Close {
        tab: String,
        #[serde(default)]
        remove_worktree: bool,
        #[serde(default)]
        force: bool,
    },
    /// Stop every program of `folder`'s session and forget it.
    Quit { folder: PathBuf },
    /// The core's own figures (pid, version, counts), for `doctor`/`status`.
    Status,
    /// The agents that can be started: built-in and configured.
    Agents,
    /// What waits for the person's approval.
    Approvals,
    /// The person's answer to approval `id`; `session` (a network
    /// question only) approves for the rest of that sandbox run.
    Decide {
        id: String,
        approve: bool,
        #[serde(default)]
        session: bool,
    },
    /// `nerdr sandbox`'s proxy, in a tab, asking the person whether its
    /// sandbox may connect to `host:port` (on neither network list). Only
    /// over the hook socket; answered when the person answers or the
    /// question times out.
    AskNetwork { host: String, port: u16 },
    /// Run plugin `name` (an executable in `$XDG_CONFIG_HOME/nerdr/plugins/`)
    /// with `args`, in `folder` (the caller's tab's folder when it has one).
    Plugin {
        name: String,
        #[serde(default)]
        args: Vec<String>,
        folder: PathBuf,
    },
    /// An agent's hook reporting an event from inside its tab (`nerdr hook
    /// EVENT`): its session id, a turn starting or ending. Only over the hook
    /// socket; the tab is the caller's.
    Report {
        event: String,
        #[serde(default)]
        session_id: Option<String>,
        #[serde(default)]
        data: serde_json::Value,
    },
    /// An agent telling how to resume it (`nerdr pane report-agent TAB --
    /// CMD ARGS...`).
    ReportAgent { tab: String, argv: Vec<String> },
}

fn yes() -> bool {
    true
}

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

/// Why a request failed. `code` is stable for scripts; `message` is for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    pub code: ErrorCode,
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request could not be parsed or is not allowed in this form.
    BadRequest,
    /// The named tab or session does not exist.
    NotFound,
    /// The configuration is invalid.
    Config,
    /// The program could not be started.
    LaunchFailed,
    /// The caller may not do this.
    Denied,
    /// Something failed inside the core.
    Internal,
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }
}

/// The result of a request: a JSON value whose shape depends on the method
/// (`{"tab": id}`, an array of [`TabInfo`], `{"text": screen}`, `{}`).
pub type Reply = Result<serde_json::Value, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_use_method_and_params() {
        let r = Request::Send {
            tab: "ab12".into(),
            text: "ls".into(),
            enter: true,
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"method": "send", "params": {"tab": "ab12", "text": "ls", "enter": true}})
        );
        assert_eq!(serde_json::from_value::<Request>(v).unwrap(), r);
    }

    #[test]
    fn unit_requests_need_no_params() {
        let r: Request = serde_json::from_str(r#"{"method":"status"}"#).unwrap();
        assert_eq!(r, Request::Status);
    }

    #[test]
    fn programs_modes_read_back_as_written() {
        for mode in [
            ProgramsMode::HolderScopes,
            ProgramsMode::HolderSessions,
            ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()),
            ProgramsMode::CoreChildren(
                "cannot start the holder: StartTransientUnit failed (Access denied)".into(),
            ),
        ] {
            assert_eq!(ProgramsMode::parse(&mode.to_string()), Some(mode.clone()));
        }
        assert_eq!(
            ProgramsMode::CoreChildren("NERDR_HOLDER=0".into()).to_string(),
            "core children (NERDR_HOLDER=0): programs end with the core"
        );
        assert_eq!(ProgramsMode::parse("in a jar"), None);
    }

    #[test]
    fn unknown_methods_are_rejected() {
        assert!(serde_json::from_str::<Request>(r#"{"method":"rm_rf","params":{}}"#).is_err());
    }
}
