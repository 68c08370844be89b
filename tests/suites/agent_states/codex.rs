//! The real codex under nerdr (which gives it `--no-daemon`): its states
//! as nerdr tells them, sandboxed and unsandboxed with its `notify`
//! reporting turn ends to nerdr.

use super::{blocked_at_a_dialog, codex_home, states_of_a_turn, CodexDialogs};
use crate::suites::agent_turns::Turns;

fn setup(dialogs: CodexDialogs) -> Option<Turns> {
    Turns::setup("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), dialogs)
    })
}

#[test]
fn codex_is_idle_working_done_blocked_at_its_approval_prompt_and_idle_once_shown() {
    let Some(t) = setup(CodexDialogs::NONE) else {
        return;
    };
    states_of_a_turn(&t, "Would you like to run the following command?");
}

#[test]
fn codex_with_its_notify_goes_through_the_same_states() {
    let Some(t) = Turns::setup_with_hooks("codex", |url, home| {
        codex_home(url, home, &home.join("proj"), CodexDialogs::NONE)
    }) else {
        return;
    };
    states_of_a_turn(&t, "Would you like to run the following command?");
}

#[test]
fn codex_at_its_sign_in_choice_is_blocked() {
    let Some(t) = setup(CodexDialogs {
        signed_in: false,
        ..CodexDialogs::NONE
    }) else {
        return;
    };
    blocked_at_a_dialog(&t, "Sign in with ChatGPT");
}

/// codex 0.171 asks "Trust this folder?" with a choice line that starts
/// like its composer (`› 1. Trust and continue`): it read as idle, and a
/// first prompt or a result was typed into the question.
#[test]
fn codex_at_its_folder_trust_question_is_blocked() {
    let Some(t) = setup(CodexDialogs {
        trusted: false,
        ..CodexDialogs::NONE
    }) else {
        return;
    };
    blocked_at_a_dialog(&t, "Trust this folder?");
}
