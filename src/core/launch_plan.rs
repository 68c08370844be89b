//! What a launch is, once decided: plain data that the deciding code
//! (`agent`, `launch`, `approvals`) hands to the code that carries it out
//! (`launch`, `sandbox_check`). It imports none of them (only
//! `sandbox_check::ProbeSite`, plain data too), so they need not import
//! one another to share it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::sandbox_check::ProbeSite;
use super::state::Worktree;
use crate::agents::Mode;
use crate::config::ResolvedAgent;
use crate::protocol::api::TabKind;

/// A launch, fully decided: what to run, where, as what kind of tab.
pub(super) struct Plan {
    pub(super) id: String,
    pub(super) folder: PathBuf,
    /// Where the program starts: the folder, or its place in the worktree.
    pub(super) cwd: PathBuf,
    pub(super) worktree: Option<Worktree>,
    /// The agent's name, or `terminal`.
    pub(super) name: String,
    /// The command as configured (for `nerdr tabs`), `argv[0]` unresolved.
    pub(super) command: Vec<String>,
    /// The resolved program, then its arguments.
    pub(super) argv: Vec<String>,
    pub(super) caller_env: Vec<(String, String)>,
    pub(super) agent_env: BTreeMap<String, String>,
    pub(super) sandboxed: bool,
    /// A program run as it is (`nerdr agent -- CMD`).
    pub(super) program: bool,
    pub(super) kind: TabKind,
    pub(super) parent: Option<String>,
    /// Its line of starters (`Tab::started_by`): `Core::line_of` for a
    /// new tab, the tab's own for a restart.
    pub(super) started_by: Vec<String>,
    pub(super) session_id: Option<String>,
    pub(super) reported: Option<Vec<String>>,
    /// For a sandboxed agent: where its sandbox check goes.
    pub(super) probe: Option<ProbeSite>,
    /// For a sandboxed agent: its command line to complete once the check
    /// passed.
    pub(super) deferred: Option<Deferred>,
    /// An agent's screen rules by name (`detect`); `None` for a terminal.
    pub(super) detect: Option<String>,
    /// `install = "worktree"`: the reports folder, relative to the tab's
    /// worktree (`core::file_reports`); `None` for a home install.
    pub(super) reports_dir: Option<String>,
}

/// Where a terminal tab runs and what: the parts that differ between a
/// person's terminal (`nerdr terminal`) and a worktree setup's tab.
pub(super) struct TerminalTab {
    pub(super) id: String,
    pub(super) folder: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) name: &'static str,
    pub(super) command: Vec<String>,
    pub(super) argv: Vec<String>,
    pub(super) caller_env: Vec<(String, String)>,
    pub(super) sandboxed: bool,
    /// The tab it was opened from.
    pub(super) parent: String,
    pub(super) started_by: Vec<String>,
}

impl Plan {
    /// The launch with its line of starters (`Tab::started_by`).
    pub(super) fn started_by(self, started_by: Vec<String>) -> Plan {
        Plan { started_by, ..self }
    }

    /// A terminal tab's launch: no worktree, no agent, no screen rules.
    pub(super) fn terminal(t: TerminalTab) -> Plan {
        Plan {
            id: t.id,
            folder: t.folder,
            cwd: t.cwd,
            worktree: None,
            name: t.name.into(),
            command: t.command,
            argv: t.argv,
            caller_env: t.caller_env,
            agent_env: Default::default(),
            sandboxed: t.sandboxed,
            program: false,
            kind: TabKind::Terminal,
            parent: Some(t.parent),
            started_by: t.started_by,
            session_id: None,
            reported: None,
            probe: None,
            deferred: None,
            detect: None,
            reports_dir: None,
        }
    }
}

/// A sandboxed agent's command line, built without its optional flags
/// (see `agents::help_gate`), and what it takes to build it with them.
#[derive(Debug, Clone)]
pub(super) struct Deferred {
    /// The agent with its extra arguments.
    pub(super) agent: ResolvedAgent,
    pub(super) mode: Mode,
    /// The session id the first build chose, kept by the second.
    pub(super) session_id: Option<String>,
    /// `argv[0]`, resolved.
    pub(super) program: String,
}
