//! The real claude under nerdr: its states as nerdr tells them, sandboxed
//! (the screen is all nerdr has) and unsandboxed with its hooks reporting
//! to nerdr (screen and reports combined).

use super::{blocked_at_a_dialog, claude_home, states_of_a_turn, ClaudeDialogs};
use crate::suites::agent_turns::Turns;

/// A HOME where claude asks before running a command (no dialog before).
fn asking(url: &str, home: &std::path::Path) -> crate::support::agent_home::AgentHome {
    claude_home(
        url,
        home,
        ClaudeDialogs {
            bash_allowed: false,
            ..ClaudeDialogs::none()
        },
    )
}

#[test]
fn claude_is_idle_working_done_blocked_at_its_permission_prompt_and_idle_once_shown() {
    let Some(t) = Turns::setup("claude", asking) else {
        return;
    };
    states_of_a_turn(&t, "Do you want to proceed?");
}

#[test]
fn claude_with_its_hooks_goes_through_the_same_states() {
    let Some(t) = Turns::setup_with_hooks("claude", asking) else {
        return;
    };
    states_of_a_turn(&t, "Do you want to proceed?");
}

#[test]
fn claude_at_its_folder_trust_dialog_is_blocked() {
    let Some(t) = Turns::setup("claude", |url, home| {
        claude_home(
            url,
            home,
            ClaudeDialogs {
                trusted: false,
                ..ClaudeDialogs::none()
            },
        )
    }) else {
        return;
    };
    blocked_at_a_dialog(&t, "Yes, I trust this folder");
}
