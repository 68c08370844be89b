//! What a hook report says about the agent's state. The integrations pass
//! claude's hook event names (copilot's are mapped to them) and codex's
//! `notify` types; events that say nothing about the state (`SessionEnd`,
//! a subagent's `SubagentStop`, ...) are ignored.

/// What a signal says about the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// Busy on a turn, by a positive sign: a rule, OSC 7501, a report.
    Working,
    /// Output flows and nothing says more: busy, but no sign that a turn
    /// runs (it may be the program drawing its first screen).
    Flowing,
    Blocked,
    /// Waiting for a prompt (a screen that shows one, or a finished
    /// turn's line above it).
    Idle,
    /// A turn ended, said outright (a Stop report, OSC 7501 `done`).
    TurnEnded,
    /// Waiting for a prompt, said outright, and not a turn's end (OSC 7501
    /// `idle`: codex says `working` then `idle` as it starts, and `done`
    /// when a turn ends; `SessionStart`).
    Ready,
}

pub fn meaning(event: &str) -> Option<Evidence> {
    match event {
        "UserPromptSubmit" | "PreToolUse" | "PostToolUse" => Some(Evidence::Working),
        "Stop" | "agent-turn-complete" => Some(Evidence::TurnEnded),
        "Notification" | "PermissionRequest" => Some(Evidence::Blocked),
        "SessionStart" => Some(Evidence::Ready),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_event_means_what_it_says() {
        let cases: &[(&str, Option<Evidence>)] = &[
            ("UserPromptSubmit", Some(Evidence::Working)),
            ("PreToolUse", Some(Evidence::Working)),
            ("PostToolUse", Some(Evidence::Working)),
            ("Stop", Some(Evidence::TurnEnded)),
            ("agent-turn-complete", Some(Evidence::TurnEnded)),
            ("Notification", Some(Evidence::Blocked)),
            ("PermissionRequest", Some(Evidence::Blocked)),
            ("SessionStart", Some(Evidence::Ready)),
            ("SubagentStop", None),
            ("SessionEnd", None),
            ("stop", None),
            ("", None),
        ];
        for (event, want) in cases {
            assert_eq!(meaning(event), *want, "{event}");
        }
    }
}
