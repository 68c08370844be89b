//! What an agent in a tab is doing (`AgentState`), told from four signals:
//! its screen (rules as data, one TOML file per agent: `rules`, evaluated
//! by `eval`), the escape sequences it writes (`signals`: codex's OSC 7501
//! state, the bell, titles), its hooks' reports, and whether its output
//! flows. `tracker` combines them per tab. Everything here is pure over
//! plain data and the time the caller hands in; the core feeds it (see
//! docs/ARCHITECTURE.md, "Agent states").
//!
//! SKELETON (issue 15): the types and signatures below are the contract
//! between the engine (this module) and its users (core, window, tests).
//! Bodies marked `todo!` are being written; nothing here is done yet.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Instant, SystemTime};

pub use crate::protocol::api::AgentState;

/// A screen as the rules see it: the visible rows (trailing blanks cut)
/// and the terminal title. Plain data, so the evaluator is testable on
/// captured screens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenView {
    pub rows: Vec<String>,
    pub title: String,
}

impl ScreenView {
    pub fn of(screen: &vt100::Screen) -> Self {
        let (_, cols) = screen.size();
        ScreenView {
            rows: screen
                .rows(0, cols)
                .map(|r| r.trim_end().to_string())
                .collect(),
            title: screen.title().to_string(),
        }
    }
}

/// One agent's rules, loaded and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    /// The name `detect = "NAME"` selects (or the built-in agent's name).
    pub name: String,
    /// Where the rules came from: `None` for the built-in file.
    pub file: Option<PathBuf>,
    // (engine-private fields follow)
}

/// A rules file that cannot be used: names its file, line and key, and
/// says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RulesError {
    pub message: String,
}

/// The rules for `name`: the user's `dir/NAME.toml` if it exists, else the
/// built-in file. `Ok(None)`: no rules for that name. A malformed user
/// file is an error (the caller logs it, warns on the tab and keeps the
/// built-in rules: [`builtin`]). Reads the disk: call it off the state
/// lock.
pub fn load(name: &str, dir: &Path) -> Result<Option<Arc<RuleSet>>, RulesError> {
    let _ = (name, dir);
    todo!("issue 15: engine")
}

/// The built-in rules for `name`, if nerdr ships some.
pub fn builtin(name: &str) -> Option<Arc<RuleSet>> {
    let _ = name;
    todo!("issue 15: engine")
}

/// What set a tab's state, for `nerdr explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `rule "NAME" (FILE)`, `report Stop`, `osc 7501 state=blocked`,
    /// `output quiet for 1.5s`, `shown in a window`, ...
    pub what: String,
    /// The screen lines (or title) the rule matched; empty otherwise.
    pub lines: Vec<String>,
}

/// A change of a tab's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub from: AgentState,
    pub to: AgentState,
}

/// One tab's detection: fed by the core under its state lock (cheap: no
/// I/O, no allocation per byte beyond the scanner's), queried for the
/// state, and told when to look again.
#[derive(Debug)]
pub struct Tracker {
    // (engine-private fields)
    _rules: Option<Arc<RuleSet>>,
}

impl Tracker {
    pub fn new(rules: Option<Arc<RuleSet>>, now: Instant, wall: SystemTime) -> Self {
        let _ = (now, wall);
        Tracker { _rules: rules }
    }

    /// Raw output the program wrote (before or after the screen model took
    /// it; the tracker only scans it for OSC 7501, bells, and notes that
    /// output flowed). Returns a change an escape sequence caused at once.
    pub fn output(&mut self, bytes: &[u8], now: Instant, wall: SystemTime) -> Option<Change> {
        let _ = (bytes, now, wall);
        todo!("issue 15: engine")
    }

    /// When the core should call [`Tracker::evaluate`] next; `None` when
    /// nothing changed since the last look (no timer runs: idle is free).
    pub fn deadline(&self) -> Option<Instant> {
        todo!("issue 15: engine")
    }

    /// Look at the screen (at most about every 100 ms, only after output),
    /// and let time pass (a quiet period ends `working`).
    pub fn evaluate(
        &mut self,
        screen: &ScreenView,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Change> {
        let _ = (screen, now, wall);
        todo!("issue 15: engine")
    }

    /// A report from the agent's hooks (`UserPromptSubmit`, `Stop`,
    /// `Notification`, codex's `agent-turn-complete`, ...) with its
    /// sequence number; an out-of-order one (seq not above the last) is
    /// dropped.
    pub fn report(
        &mut self,
        event: &str,
        seq: u64,
        now: Instant,
        wall: SystemTime,
    ) -> Option<Change> {
        let _ = (event, seq, now, wall);
        todo!("issue 15: engine")
    }

    /// A window shows the tab now (`done` becomes `idle`).
    pub fn shown(&mut self, now: Instant, wall: SystemTime) -> Option<Change> {
        let _ = (now, wall);
        todo!("issue 15: engine")
    }

    pub fn state(&self) -> AgentState {
        todo!("issue 15: engine")
    }

    /// When the state last changed.
    pub fn since(&self) -> SystemTime {
        todo!("issue 15: engine")
    }

    pub fn cause(&self) -> Cause {
        todo!("issue 15: engine")
    }

    /// Bells rung so far.
    pub fn bells(&self) -> u64 {
        todo!("issue 15: engine")
    }
}
