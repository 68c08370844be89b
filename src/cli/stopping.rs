//! Whether a command that stops a tab's running program (`nerdr restart`,
//! `nerdr switch`) goes on, asks first, or refuses: the same rule for
//! both, as `tmux kill-pane` users expect a prompt only on a terminal.
//! Pure.

/// What to do about a tab whose program is in `state` (its state's word).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing runs, or --force: go on.
    Go,
    /// On a terminal: ask y/N.
    Ask,
    /// No terminal to ask on, and no --force.
    Refuse,
}

pub(super) fn step(state: &str, force: bool, terminal: bool) -> Step {
    match (state == "running", force, terminal) {
        (false, _, _) | (true, true, _) => Step::Go,
        (true, false, true) => Step::Ask,
        (true, false, false) => Step::Refuse,
    }
}

#[cfg(test)]
mod tests {
    use super::{step, Step};

    /// (state, --force, stdin a terminal, what happens)
    #[test]
    fn a_running_program_is_stopped_only_when_the_person_says_so() {
        #[rustfmt::skip]
        let rows = [
            ("exited", false, false, Step::Go),
            ("exited", false, true, Step::Go),
            ("refused", false, false, Step::Go),
            ("running", true, false, Step::Go),
            ("running", true, true, Step::Go),
            ("running", false, true, Step::Ask),
            ("running", false, false, Step::Refuse),
        ];
        for (state, force, terminal, want) in rows {
            assert_eq!(
                step(state, force, terminal),
                want,
                "{state} {force} {terminal}"
            );
        }
    }
}
