//! The requests of nerdr's commands, each tied to its reply type. The same
//! [`Request`] travels in a client-socket frame or in a hook-socket line, so
//! both sockets reach one dispatcher and differ only in who the caller is.
//!
//! Each request variant wraps a params struct named after what it asks
//! (`Request::Agent(StartAgent {..})`), and each params struct implements
//! [`Method`], whose `Reply` is the type the core answers with (see
//! [`super::replies`]). A client calls with the params struct and gets that
//! type back (`client::call(ReadScreen {..})` is a [`super::replies::ScreenText`]),
//! so it cannot ask one method and read another's reply; the core's
//! dispatcher turns each handler's typed reply into JSON in one place, named
//! by the same method. Serde's adjacently tagged newtype variants keep the
//! wire as it was, `{"method": .., "params": {..}}`, byte for byte: the
//! methods without params stay unit variants (`{"method": "status"}`), and
//! their [`Method`] types are unit structs that become them.
//!
//! On the wire a reply is still JSON inside the socket's envelope
//! (`handshake::Outcome`, the hook socket's `result`): the envelope is the
//! same for every method, and only the asker knows which method an id
//! asked, so the JSON is typed where the request is, by [`encode`] in the
//! core's dispatcher and [`decode`] in the client. A reply that does not
//! read as its method's is a [`BadReply`] naming the method.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

pub use super::handoffs::{HandedOff, Handoff, HandoffInfo, HandoffTo, ListHandoffs};
use super::replies::{
    AgentNames, ApprovalsList, Closed, Decided, Done, Explained, NetworkAnswer, PluginRan, Renamed,
    ReportTaken, ReviewPosted, ReviewStarted, ScreenText, Sent, SessionQuit, Started, TabReviews,
    Waited,
};

pub use super::work::{
    CleanEntry, CleanWorktrees, Cleaned, DiffTab, MergeHow, MergeTab, Merged, TabDiff, WorktreeInfo,
};

pub use super::spinoffs::{ListSpinoffs, ReportResult, SpinOff};
pub use super::why::{AddWhy, AskWhy};

pub use super::search::{SearchLogs, SearchResults};

pub use super::switching::{SwitchTab, Switched};

pub use super::listing::{
    AgentState, CoreStatus, ProgramsMode, SessionInfo, SwitchInfo, TabInfo, TabKind, TabState,
};

/// A command for the core. Serialized as `{"method": ..., "params": {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params", rename_all = "snake_case")]
pub enum Request {
    Agent(StartAgent),
    Tabs(ListTabs),
    Read(ReadScreen),
    Send(SendText),
    Resize(Resize),
    Terminal(OpenTerminal),
    Restart(RestartTab),
    Close(CloseTab),
    Quit(QuitSession),
    /// The core's own figures (pid, version, counts), for `doctor`/`status`.
    Status,
    /// The agents that can be started: built-in and configured.
    Agents,
    /// What waits for the person's approval.
    Approvals,
    Decide(Decide),
    AskNetwork(AskNetwork),
    Plugin(RunPlugin),
    Report(ReportEvent),
    ReportAgent(ReportAgent),
    Wait(WaitFor),
    Explain(ExplainTab),
    Rename(RenameTab),
    /// The sessions the caller may see, with their tabs counted.
    Sessions,
    /// A tab's work as one patch (`nerdr diff`, the window's diff view).
    Diff(DiffTab),
    /// Every nerdr worktree with its tab, base and state.
    Worktrees,
    /// Merge a tab's branch in the main checkout.
    Merge(MergeTab),
    /// Remove closed tabs' worktrees whose work is merged.
    Clean(CleanWorktrees),
    /// Start a reviewer agent on a tab's work (`crate::review`).
    RequestReview(RequestReview),
    /// A reviewer's review, from its own tab.
    PostReview(PostReview),
    /// A tab's reviews (`nerdr reviews`, the window's review panel).
    Reviews(ListReviews),
    /// Start part of a tab's work in a new agent (`crate::spinoff`).
    SpinOff(SpinOff),
    /// A spun-off tab's result, for its parent.
    ReportResult(ReportResult),
    /// The spinoffs and their results (`nerdr spinoffs`).
    Spinoffs(ListSpinoffs),
    // --- handoffs ---
    /// Pass a tab's conversation to another agent or to the person.
    Handoff(Handoff),
    /// The handoffs to the person (`nerdr handoffs`).
    Handoffs(ListHandoffs),
    /// Give a tab another agent, with a handoff (`crate::switch`).
    Switch(SwitchTab),
    // --- reasons ---
    /// Keep why a change was made (`crate::why`).
    AddWhy(AddWhy),
    /// The reasons kept for a file's lines.
    Why(AskWhy),
    // --- search ---
    /// Past conversations, handoffs and reviews holding some words.
    Search(SearchLogs),
}

/// A request whose reply has a type of its own: what a client sends, and
/// what it gets back.
pub trait Method: Into<Request> {
    /// The core's answer to this request.
    type Reply: Serialize + DeserializeOwned;
    /// The method's name on the wire, for messages about its reply.
    const NAME: &'static str;
}

/// Ties each params type to its variant (the `From` a [`Method`] needs) and
/// to its reply, in one line per method so they cannot drift apart.
macro_rules! methods {
    ($($variant:ident $(($params:ident))? $(= $unit:ident)? => $reply:ty, $name:literal;)*) => {$(
        methods!(@one $variant $(($params))? $(= $unit)? => $reply, $name);
    )*};
    (@one $variant:ident ($params:ident) => $reply:ty, $name:literal) => {
        impl From<$params> for Request {
            fn from(p: $params) -> Request {
                Request::$variant(p)
            }
        }
        impl Method for $params {
            type Reply = $reply;
            const NAME: &'static str = $name;
        }
    };
    (@one $variant:ident = $unit:ident => $reply:ty, $name:literal) => {
        /// The params of a method that has none.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub struct $unit;
        impl From<$unit> for Request {
            fn from(_: $unit) -> Request {
                Request::$variant
            }
        }
        impl Method for $unit {
            type Reply = $reply;
            const NAME: &'static str = $name;
        }
    };
}

methods! {
    Agent(StartAgent) => Started, "agent";
    Tabs(ListTabs) => Vec<TabInfo>, "tabs";
    Read(ReadScreen) => ScreenText, "read";
    Send(SendText) => Sent, "send";
    Resize(Resize) => Done, "resize";
    Terminal(OpenTerminal) => Started, "terminal";
    Restart(RestartTab) => Started, "restart";
    Close(CloseTab) => Closed, "close";
    Quit(QuitSession) => SessionQuit, "quit";
    Status = GetStatus => CoreStatus, "status";
    Agents = ListAgents => AgentNames, "agents";
    Approvals = ListApprovals => ApprovalsList, "approvals";
    Decide(Decide) => Decided, "decide";
    AskNetwork(AskNetwork) => NetworkAnswer, "ask_network";
    Plugin(RunPlugin) => PluginRan, "plugin";
    Report(ReportEvent) => Done, "report";
    ReportAgent(ReportAgent) => ReportTaken, "report_agent";
    Wait(WaitFor) => Waited, "wait";
    Explain(ExplainTab) => Explained, "explain";
    Rename(RenameTab) => Renamed, "rename";
    Sessions = ListSessions => Vec<SessionInfo>, "sessions";
    Diff(DiffTab) => TabDiff, "diff";
    Worktrees = ListWorktrees => Vec<WorktreeInfo>, "worktrees";
    Merge(MergeTab) => Merged, "merge";
    Clean(CleanWorktrees) => Cleaned, "clean";
    RequestReview(RequestReview) => ReviewStarted, "request_review";
    PostReview(PostReview) => ReviewPosted, "post_review";
    Reviews(ListReviews) => Vec<TabReviews>, "reviews";
    SpinOff(SpinOff) => super::spinoffs::SpunOff, "spin_off";
    ReportResult(ReportResult) => super::spinoffs::ResultTaken, "report_result";
    Spinoffs(ListSpinoffs) => Vec<super::spinoffs::SpinoffInfo>, "spinoffs";
    // --- handoffs ---
    Handoff(Handoff) => HandedOff, "handoff";
    Handoffs(ListHandoffs) => Vec<HandoffInfo>, "handoffs";
    Switch(SwitchTab) => Switched, "switch";
    // --- reasons ---
    AddWhy(AddWhy) => super::why::WhyAdded, "why_add";
    Why(AskWhy) => super::why::WhyAnswer, "why";
    // --- search ---
    Search(SearchLogs) => SearchResults, "search";
}

/// Start agent `name` in a new tab of `folder`'s session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartAgent {
    pub folder: PathBuf,
    pub name: String,
    #[serde(default)]
    pub extra_args: Vec<String>,
    /// The caller's environment, the base of the program's environment.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Give the tab its own git worktree when the folder is in a
    /// repository (and `[tabs] worktree` allows it).
    #[serde(default = "yes")]
    pub worktree: bool,
    /// `name` is a program to run as it is (found on PATH, or a path),
    /// not an agent: `nerdr agent -- CMD ARGS`. No config, no sandbox.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program: bool,
    /// The new tab's name (`nerdr agent --name`); its default without.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_name: Option<String>,
    /// Resume this past conversation rather than start one (`nerdr search
    /// --open`), in the folder it ran in (no worktree of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<super::search::ResumeAt>,
}

/// The tabs of `folder`'s session, or of every session with `all`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListTabs {
    pub folder: Option<PathBuf>,
    #[serde(default)]
    pub all: bool,
}

/// The tab's screen as text; with `lines`, only its last N lines.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadScreen {
    pub tab: String,
    pub lines: Option<usize>,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Type `text` into the tab, then Enter unless `enter` is false.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SendText {
    pub tab: String,
    pub text: String,
    pub enter: bool,
    /// The text is for an agent (a review's, comments on a diff): refused
    /// when the tab runs a program, where a shell would run it as
    /// commands (`review::not_for_a_program`). Absent from older clients:
    /// any tab.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub agent_only: bool,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Resize the tab's terminal (and its screen model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resize {
    pub tab: String,
    pub rows: u16,
    pub cols: u16,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Open a terminal (the user's shell) in tab `tab`'s folder.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenTerminal {
    pub tab: String,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Start the tab's agent again, resuming its conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestartTab {
    pub tab: String,
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Stop the tab's program and forget the tab; with `remove_worktree`,
/// also remove its git worktree (its branch stays). A worktree holding
/// work no commit has is refused unless `force`, which saves the work
/// under `refs/nerdr/saved/` first (the person's only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CloseTab {
    pub tab: String,
    #[serde(default)]
    pub remove_worktree: bool,
    #[serde(default)]
    pub force: bool,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Give tab `tab` the name `name` (unique in its session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenameTab {
    pub tab: String,
    pub name: String,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Stop every program of `folder`'s session and forget it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuitSession {
    pub folder: PathBuf,
}

/// The person's answer to approval `id`; `session` (a network question
/// only) approves for the rest of that sandbox run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decide {
    pub id: String,
    pub approve: bool,
    #[serde(default)]
    pub session: bool,
}

/// `nerdr sandbox`'s proxy, in a tab, asking the person whether its
/// sandbox may connect to `host:port` (on neither network list). Only
/// over the hook socket; answered when the person answers or the
/// question times out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AskNetwork {
    pub host: String,
    pub port: u16,
}

/// Run plugin `name` (an executable in `$XDG_CONFIG_HOME/nerdr/plugins/`)
/// with `args`, in `folder` (the caller's tab's folder when it has one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunPlugin {
    pub name: String,
    #[serde(default)]
    pub args: Vec<String>,
    pub folder: PathBuf,
}

/// An agent's hook reporting an event from inside its tab (`nerdr hook
/// EVENT`): its session id, a turn starting or ending. Only over the hook
/// socket; the tab is the caller's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportEvent {
    pub event: String,
    #[serde(default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub data: serde_json::Value,
    /// When the hook started, in CLOCK_MONOTONIC nanoseconds: a report
    /// older than one already taken is dropped (hooks run concurrently and
    /// can arrive out of order). Older hooks send none; the core then uses
    /// the time the report arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

/// An agent telling how to resume it (`nerdr pane report-agent TAB --
/// CMD ARGS...`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportAgent {
    pub tab: String,
    pub argv: Vec<String>,
}

/// Answer once tab `tab` reaches `until` (at once if it is there), or
/// once `timeout_ms` has passed, whichever comes first. Nothing polls: the
/// core answers when the tab's state changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WaitFor {
    pub tab: String,
    pub until: Until,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// What `nerdr wait` waits for: an agent state, or the program's end.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Until {
    Working,
    Blocked,
    Idle,
    Done,
    Exited,
}

impl Until {
    pub fn as_str(self) -> &'static str {
        match self {
            Until::Working => "working",
            Until::Blocked => "blocked",
            Until::Idle => "idle",
            Until::Done => "done",
            Until::Exited => "exited",
        }
    }
}

/// What set tab `tab`'s agent state, for people writing rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExplainTab {
    pub tab: String,
    /// The caller's folder: tab numbers and names count in its session
    /// (absent from older clients: in every session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// Start a reviewer on tab `tab`'s work (the caller's own tab when
/// `None`): `reviewer`, else `[review] agent`, else the author's agent, as
/// `review::choice` allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestReview {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reviewer: Option<String>,
    /// The caller's environment, the base of the reviewer's.
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// The caller's folder: tab numbers and names count in its session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
}

/// A reviewer's review (`review::format`: JSON lines or text), for the
/// review its tab was started for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PostReview {
    pub text: String,
}

/// The reviews of tab `tab` (the caller's own when `None`; from a
/// terminal, every tab of `folder`'s session that has any).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListReviews {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<PathBuf>,
    /// The person is shown tab `tab`'s reviews (the review panel, `nerdr
    /// reviews TAB` without `--json`): they are read from now on. Taken
    /// only from a caller outside every tab (`review::unread`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mark_read: bool,
}

fn yes() -> bool {
    true
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

/// A request's result as the wire carries it: the method's
/// [`Method::Reply`] as JSON, or why it failed. Only the dispatcher makes
/// one (from a typed reply) and only the client reads one (into it).
pub type Reply = Result<serde_json::Value, ApiError>;

/// A method's typed reply as the wire carries it: the one place the core's
/// replies become JSON.
pub fn encode<M: Method>(reply: Result<M::Reply, ApiError>) -> Reply {
    reply.and_then(|r| {
        serde_json::to_value(r).map_err(|e| {
            ApiError::new(
                ErrorCode::Internal,
                format!("the reply to `{}` does not serialize: {e}", M::NAME),
            )
        })
    })
}

/// The wire's JSON read as method `M`'s reply.
pub fn decode<M: Method>(value: serde_json::Value) -> Result<M::Reply, BadReply> {
    serde_json::from_value(value).map_err(|e| BadReply {
        method: M::NAME,
        why: e.to_string(),
    })
}

/// A reply that is not the shape its method's reply has (a core of another
/// version, say).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the core's reply to `{method}` has an unexpected shape ({why})")]
pub struct BadReply {
    pub method: &'static str,
    pub why: String,
}

#[cfg(test)]
#[path = "api_tests.rs"]
mod tests;

// Beside the methods that name them (under `api`, so `replies` needs
// nothing of `api`).
#[cfg(test)]
#[path = "replies_tests.rs"]
mod replies_tests;
