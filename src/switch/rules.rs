//! What a switch may do, as pure functions of plain facts. Who may ask at
//! all is the privilege matrix's (`Operation::Switch`: a sandboxed agent
//! only its own tab, an author never its reviewer); these are the rules of
//! the tab and the agent it is switched to, which hold for every caller,
//! the person too.

/// The tab to switch, and the agent asked for, as far as the rules go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts<'a> {
    pub tab: &'a str,
    /// A terminal pane, not an agent.
    pub terminal: bool,
    /// The tab runs sandboxed now.
    pub sandboxed: bool,
    /// The tab's agent (its config name).
    pub from: &'a str,
    /// The agent asked for, and whether its settings sandbox it.
    pub to: &'a str,
    pub to_sandboxed: bool,
    /// How the first prompt of the new agent is had.
    pub handoff: Handoff,
}

/// Where the new agent's handoff comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Handoff {
    /// Given with the switch (`TEXT` or `--file`).
    Given,
    /// Built from the old agent's conversation (claude, codex, opencode).
    FromConversation,
    /// The old agent's conversation cannot be read (a custom agent, a
    /// program run as it is): the switch needs a handoff given.
    Unreadable,
    /// `--no-handoff`: the new agent starts with no first prompt.
    None,
}

/// Why a switch does not happen; `None`: it may.
pub fn refusal(f: &Facts) -> Option<String> {
    let tab = f.tab;
    if f.terminal {
        return Some(format!(
            "tab {tab} is a terminal: only an agent's tab is switched to another agent"
        ));
    }
    if f.from == f.to {
        return Some(format!(
            "tab {tab} runs {} already; `nerdr restart {tab}` starts it again",
            f.to
        ));
    }
    if f.sandboxed && !f.to_sandboxed {
        return Some(SANDBOXED_STAYS.to_string());
    }
    if f.handoff == Handoff::Unreadable {
        return Some(format!(
            "cannot read {}'s {NO_HANDOFF} {}: give one, {} (e.g. what \
             `nerdr handoff --to-me` kept), or switch without one (`--no-handoff`)",
            f.from,
            f.to,
            crate::handoff::rules::give_one(crate::handoff::rules::Asked::Switch { tab, to: f.to })
        ));
    }
    None
}

/// What the refusal of a switch with no handoff to be had says: the
/// window, seeing it, asks whether to switch without one.
pub const NO_HANDOFF: &str = "conversation to build a handoff for";

/// Why a sandboxed tab stays sandboxed: the work in its worktree was done
/// (and may be steered) by an agent in a sandbox.
pub const SANDBOXED_STAYS: &str =
    "a sandboxed tab switches only to sandboxed agents (`sandboxed = true` in the agent's \
     [agents.NAME] of config.toml): its worktree holds a sandboxed agent's work, which an agent \
     outside every sandbox would run as the user";

/// The widest agent column [`chain`] makes (characters), so a tab switched
/// many times does not widen `nerdr tabs` past a terminal.
pub const MAX_CHAIN: usize = 24;

/// A tab's agent column: its first agent, then each it was switched to
/// (`claude→codex`); the agent alone when never switched. Past
/// [`MAX_CHAIN`] the oldest go first, marked `…→b→c`: the agent now is
/// what the column is read for.
pub fn chain(agent: &str, switches: &[crate::protocol::listing::SwitchInfo]) -> String {
    let Some(first) = switches.first() else {
        return agent.to_string();
    };
    let all: Vec<&str> = std::iter::once(first.from.as_str())
        .chain(switches.iter().map(|s| s.to.as_str()))
        .collect();
    let whole = all.join("→");
    if whole.chars().count() <= MAX_CHAIN {
        return whole;
    }
    // The newest that fit after `…→`; the agent now always stays.
    let mut kept = vec![*all.last().expect("a switch has a target")];
    for a in all[..all.len() - 1].iter().rev() {
        let width =
            2 + kept.iter().map(|k| k.chars().count() + 1).sum::<usize>() + a.chars().count();
        if width > MAX_CHAIN {
            break;
        }
        kept.push(a);
    }
    kept.reverse();
    format!("…→{}", kept.join("→"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(sandboxed: bool, to_sandboxed: bool, handoff: Handoff) -> Facts<'static> {
        Facts {
            tab: "ab12",
            terminal: false,
            sandboxed,
            from: "claude",
            to: "codex",
            to_sandboxed,
            handoff,
        }
    }

    /// The CLI prints errors after `nerdr: `; a refusal starting with
    /// "nerdr" read `nerdr: nerdr cannot read ...` (a newcomer's finding).
    #[test]
    fn an_unreadable_conversation_s_refusal_names_the_switch_to_give_one() {
        let f = facts(false, false, Handoff::Unreadable);
        let got = refusal(&f).unwrap();
        assert!(got.starts_with("cannot read"), "{got}");
        let give = crate::handoff::rules::give_one(crate::handoff::rules::Asked::Switch {
            tab: f.tab,
            to: f.to,
        });
        assert!(got.contains(&give), "{got}");
    }

    /// (tab sandboxed, agent sandboxed, handoff, refused with)
    #[test]
    fn every_row() {
        use Handoff::{FromConversation as Log, Given, None as No, Unreadable};
        const SB: Option<&str> = Some("switches only to sandboxed agents");
        #[rustfmt::skip]
        let rows: &[(bool, bool, Handoff, Option<&str>)] = &[
            (false, false, Log, None),
            (false, true, Log, None),
            (true, true, Log, None),
            (true, false, Log, SB),
            (true, false, Given, SB),
            (true, false, No, SB),
            (false, false, Given, None),
            (false, false, No, None),
            (true, true, No, None),
            (true, true, Given, None),
            (false, false, Unreadable, Some("--no-handoff")),
            (true, true, Unreadable, Some("--file FILE")),
            (true, false, Unreadable, SB),
        ];
        for &(sb, to_sb, h, want) in rows {
            let got = refusal(&facts(sb, to_sb, h));
            match (want, &got) {
                (None, None) => {}
                (Some(w), Some(g)) => assert!(g.contains(w), "{sb} {to_sb} {h:?}: {g}"),
                _ => panic!("{sb} {to_sb} {h:?}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn a_terminal_and_the_same_agent_are_refused_saying_what_to_do() {
        let t = Facts {
            terminal: true,
            ..facts(false, false, Handoff::FromConversation)
        };
        assert!(refusal(&t).unwrap().contains("is a terminal"));
        let same = Facts {
            to: "claude",
            ..facts(false, false, Handoff::FromConversation)
        };
        assert!(refusal(&same).unwrap().contains("`nerdr restart ab12`"));
    }

    #[test]
    fn the_agent_column_chains_the_switches() {
        use crate::protocol::listing::SwitchInfo;
        let s = |from: &str, to: &str| SwitchInfo {
            from: from.into(),
            to: to.into(),
            at: "2026-12-01T18:41:38Z".into(),
        };
        assert_eq!(chain("claude", &[]), "claude");
        assert_eq!(chain("codex", &[s("claude", "codex")]), "claude→codex");
        assert_eq!(
            chain("claude", &[s("claude", "codex"), s("codex", "claude")]),
            "claude→codex→claude"
        );
        // Long: the oldest go, marked; the agent now stays.
        let many = [
            s("claude", "codex"),
            s("codex", "opencode"),
            s("opencode", "gemini"),
            s("gemini", "claude"),
        ];
        let col = chain("claude", &many);
        assert_eq!(col, "…→opencode→gemini→claude");
        assert!(col.chars().count() <= MAX_CHAIN, "{col}");
        let long = "an-agent-with-a-very-long-name";
        assert_eq!(chain(long, &[s("claude", long)]), format!("…→{long}"));
    }
}
