//! A tab's agent-state detection as plain data: its `detect::Tracker`, the
//! warning about its rules, and the rules a launch loads for it. `state`
//! holds one per agent tab; `agent_states` feeds it and carries its
//! changes out. Neither is imported here, so both can import this.
//!
//! The rules: a user's `$XDG_CONFIG_HOME/nerdr/detect/NAME.toml` replaces
//! the built-in file; one that cannot be used leaves the built-in rules in
//! force and a warning on the tab naming its file, line and key.

use std::path::Path;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

use super::clock::rfc3339_millis;
use crate::detect::{RuleSet, Tracker};
use crate::protocol::api::AgentState;

/// A tab's detection: its tracker (with the rules it was given).
#[derive(Debug)]
pub struct Detection {
    pub tracker: Tracker,
    /// Why a user's rules file is not in force (its error, naming the
    /// file, line and key).
    pub warning: Option<String>,
}

/// The rules a launch found for its agent, at the edge.
#[derive(Debug, Clone)]
pub struct LoadedRules {
    pub rules: Option<Arc<RuleSet>>,
    pub warning: Option<String>,
}

/// The rules for `name`: the user's file in `dir` if there is one, else the
/// built-in; a user file that cannot be used leaves the built-in in force,
/// with its error as a warning. Reads the disk: call it off the state lock.
pub fn load_rules(name: &str, dir: &Path) -> LoadedRules {
    match crate::detect::load(name, dir) {
        Ok(rules) => LoadedRules {
            rules,
            warning: None,
        },
        Err(e) => {
            let builtin = crate::detect::builtin(name);
            let instead = if builtin.is_some() {
                format!("nerdr's built-in `{name}` rules are in force until it is fixed")
            } else {
                "no screen rules are in force until it is fixed".to_string()
            };
            LoadedRules {
                rules: builtin,
                warning: Some(format!("screen rules not used: {}; {instead}", e.message)),
            }
        }
    }
}

impl Detection {
    pub fn new(loaded: LoadedRules) -> Self {
        Detection {
            tracker: Tracker::new(loaded.rules, Instant::now(), SystemTime::now()),
            warning: loaded.warning,
        }
    }

    /// What the agent is doing, while its program runs (`running`).
    pub fn state_while(&self, running: bool) -> Option<AgentState> {
        running.then(|| self.tracker.state())
    }

    /// When the state last changed, as RFC 3339, while its program runs.
    pub fn since_while(&self, running: bool) -> Option<String> {
        running.then(|| rfc3339_millis(self.tracker.since()))
    }
}
