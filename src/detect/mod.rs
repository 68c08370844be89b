//! What an agent in a tab is doing (`AgentState`), told from four signals:
//! its screen (rules as data, one TOML file per agent: `rules`, cut into
//! regions by `region` and evaluated by `eval`), the escape sequences it
//! writes (`signals`: codex's OSC 7501 state and the bell; titles come
//! with the screen), its hooks' reports (`reports`), and whether its
//! output flows. `tracker` combines them per tab; `builtin` finds an
//! agent's rules (the user's file, else the built-in one). Everything here
//! is pure over plain data and the time the caller hands in, except
//! [`load`], which reads the user's file; the core feeds it (see
//! docs/ARCHITECTURE.md, "Agent states").

mod builtin;
mod eval;
mod region;
mod reports;
mod rule_fields;
mod rules;
mod signals;
mod tracker;

#[cfg(test)]
mod corpus_tests;

pub use crate::protocol::api::AgentState;
pub use builtin::{builtin, load};
pub use rules::{RuleSet, DEFAULT_QUIET};
pub use tracker::Tracker;

/// The bells a tab rings that nerdr tells no state of (a terminal), counted
/// so a window can mark it; its OSC 7501 sequences mean nothing there.
#[derive(Debug, Clone, Default)]
pub struct Bells {
    scanner: signals::Scanner,
    count: u64,
}

impl Bells {
    /// Scan a chunk of output; whether it rang.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        let before = self.count;
        let count = &mut self.count;
        self.scanner.feed(bytes, |s| {
            if s == signals::Signal::Bell {
                *count += 1;
            }
        });
        self.count > before
    }

    pub fn count(&self) -> u64 {
        self.count
    }
}

/// A screen as the rules see it: the visible rows (trailing blanks cut)
/// and the terminal title. Plain data, so the evaluator is testable on
/// captured screens.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScreenView {
    pub rows: Vec<String>,
    pub title: String,
}

impl ScreenView {
    pub fn of(screen: &crate::term::Screen) -> Self {
        ScreenView {
            rows: screen.rows_text(),
            title: screen.title(),
        }
    }
}

/// A rules file that cannot be used: names its file, line and key, and
/// says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RulesError {
    pub message: String,
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
