//! The core's replies, one type per method (each `api::Method`
//! names its own). Their JSON is the wire's: field names, `null`s and
//! left-out fields are as the core sent them when replies were built by
//! hand, and `replies_tests.rs` holds each to those bytes, so renaming a
//! field fails a test instead of a script. The replies of `nerdr tabs --json` and
//! `nerdr approvals --json` are printed as the wire carries them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A tab was started (`agent`, `terminal`, `restart`): its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Started {
    pub tab: String,
    /// The tab is there but its program is not: the sandbox check refused
    /// it, for this reason (also the tab's in `nerdr tabs`/`explain`).
    /// `nerdr agent` prints the id and fails, so a script gets both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// The folder of the session the tab joined (absent from an older
    /// core): the nearest session around the folder asked for, which
    /// `nerdr agent` says when it is not that folder itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<std::path::PathBuf>,
}

/// The tab's screen as text (`read`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScreenText {
    pub text: String,
}

/// What became of text sent to a tab (`send`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Sent {
    /// It waits for the person's approval as `queued`, because `why`; not
    /// typed yet.
    Queued { queued: String, why: String },
    /// Typed into the tab's terminal.
    Typed {},
}

/// Done, with nothing to tell (`resize`, `report`): `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Done {}

/// A tab was renamed (`rename`): its id and its new name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Renamed {
    pub tab: String,
    pub name: String,
}

/// A tab was closed (`close`); with `--remove-worktree`, what became of its
/// worktree.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Closed {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub removed: Option<WorktreeRemoved>,
    /// The closed tab's id and name, to say what was closed (empty from
    /// an older core).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub tab: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The worktree the tab leaves, when it holds work not home yet
    /// (unmerged commits, uncommitted work), with how to get it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<String>,
}

/// What removing a worktree did: where work no commit held went, and the
/// branch, which stays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeRemoved {
    pub worktree: PathBuf,
    /// Where the work no commit held went, if there was any.
    pub saved: Option<SavedWork>,
    pub branch: String,
    /// Commits of the branch that no other branch has (`None`: git could
    /// not tell).
    pub branch_only_commits: Option<usize>,
    /// Commits of the branch not in its base yet (0 once merged, their
    /// content too: a squash); absent when git could not compare.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unmerged: Option<usize>,
}

/// Where a worktree's work was saved before it was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedWork {
    /// `refs/nerdr/saved/<tab>` (or `<tab>-2`, ... when saved before).
    pub reference: String,
    pub commit: String,
    /// Ignored paths saved with the rest: no rule nerdr trusts ignores
    /// them (an agent's untracked `.gitignore`, say).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

/// A session was quit (`quit`): how many tabs it closed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionQuit {
    pub closed: usize,
    /// What each closed tab's worktree holds that is not home yet, with
    /// how to get it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
}

/// The agents that can be started, built-in first (`agents`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentNames {
    pub agents: Vec<String>,
    /// Each agent's program word, as its config names it (absent from an
    /// older core): a window on this machine's core looks it up on its own
    /// PATH, which a start or switch from it runs with; one over `--host`
    /// does not, the PATH there being another.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub programs: std::collections::BTreeMap<String, String>,
}

/// What waits for the person's approval (`approvals`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalsList {
    pub pending: Vec<Approval>,
}

/// One thing that waits for the person's yes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: String,
    /// What is asked, for people.
    pub question: String,
    /// The tab that asks (for a setup: the agent's tab it is for).
    pub tab: String,
    #[serde(flatten)]
    pub asked: Asked,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Asked {
    Setup {
        worktree: PathBuf,
        hash: String,
        argv: Vec<String>,
        /// In a repository sandboxed agents worked in: its content may be
        /// their work, so a yes is for this run only, never remembered.
        #[serde(default)]
        once: bool,
    },
    /// Input for tab `to`, typed as is once approved.
    Message { to: String, text: String },
    /// A plugin run; whoever waits for it holds the other end.
    Plugin { name: String, args: Vec<String> },
    /// A connection a sandbox's proxy holds until the person answers.
    Network { host: String, port: u16 },
    /// A sandboxed tab's handoff to `agent`, outside every sandbox; the
    /// handoff waits for the answer (`core::handoff`).
    Handoff { agent: String },
}

/// The person's answer was taken (`decide`): the setup tabs it started,
/// and the tab an approved message was typed into.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decided {
    pub ran: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivered: Option<String>,
}

/// The person's answer to a sandbox's network question (`ask_network`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum NetworkAnswer {
    /// Open the host for this request only.
    Once,
    /// Open the host for the rest of the sandbox's run.
    Session,
    Deny,
    /// No one answered within `secs` seconds.
    NoAnswer {
        secs: u64,
    },
    /// The person was not asked, because `why`.
    NotAsked {
        why: String,
    },
}

/// A plugin ran (`plugin`): its exit code (`None`: killed by a signal) and
/// what it wrote, each cut at the core's limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PluginRan {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// An agent's resume command was taken (`report_agent`), or `ignored`
/// and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReportTaken {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
}

/// The end of a `wait`: whether the state was reached, and the state the
/// tab was in then (an agent state, or the program's: `starting`,
/// `exited`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waited {
    pub reached: bool,
    pub state: String,
    /// Why the state can no longer be reached (the program exited, the tab
    /// is a terminal); `None` when the wait ran out of time or reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub never: Option<String>,
}

/// Why a tab's agent is in its state (`nerdr explain`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Explained {
    pub tab: String,
    pub agent: String,
    /// The program's state: `running`, `exited`, ... (`api::TabState`'s
    /// words; `replies` names nothing of `api`).
    pub state: String,
    /// `api::AgentState`'s word; `None` for a terminal and for a tab whose
    /// program is not running.
    pub agent_state: Option<String>,
    /// When `agent_state` last changed (RFC 3339, UTC).
    pub agent_state_since: Option<String>,
    /// The rules in force: `NAME (built-in)`, `NAME (FILE)`, or `None`.
    pub rules: Option<String>,
    /// What set the state: a rule and its file, a report, an escape
    /// sequence, a quiet period.
    pub cause: String,
    /// The screen lines (or title) the rule matched.
    pub lines: Vec<String>,
    /// Something wrong with the rules (a user file that could not be used).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
}

/// A reviewer was started (`request_review`): its tab, its agent, and the
/// range it reviews; `replaced` when it stands in for the reviewer wanted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewStarted {
    pub tab: String,
    pub agent: String,
    pub author: String,
    pub base: String,
    pub head: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The reviewer's tab is there but its sandbox check refused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// A review was taken (`post_review`): it is review `number` of tab
/// `author`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewPosted {
    pub author: String,
    pub number: u32,
}

/// One tab's reviews (`reviews`): those posted, and those still being
/// written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TabReviews {
    pub tab: String,
    pub name: String,
    pub reviews: Vec<ShownReview>,
    pub requested: Vec<ReviewRequested>,
    /// The program the tab runs when it is one (`nerdr agent -- CMD`), not
    /// a configured agent: review text is never typed into it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// A posted review as it leaves the store (`review::shown`: the
/// reviewer's words made printable), and, from a sandbox, the note
/// whoever reads it outside one is given (`review::SANDBOX_NOTE`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShownReview {
    #[serde(flatten)]
    pub review: crate::review::store::Review,
    /// Written by an agent in a sandbox (as `written_in_sandbox`).
    #[serde(default)]
    pub from_sandbox: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl ShownReview {
    pub fn of(review: &crate::review::store::Review) -> ShownReview {
        let from_sandbox = review.written_in_sandbox;
        ShownReview {
            review: crate::review::shown(review),
            from_sandbox,
            note: from_sandbox.then(|| crate::review::SANDBOX_NOTE.to_string()),
        }
    }
}

/// A reviewer at work on a tab's work.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRequested {
    pub reviewer_tab: String,
    pub agent: String,
    pub base: String,
    pub head: String,
    pub automatic: bool,
    /// Where it is (`review::status`), and that as a line for a person.
    #[serde(default)]
    pub state: crate::review::status::State,
    #[serde(default)]
    pub status: String,
}

pub use super::handoffs::{HandedOff, HandoffInfo};
