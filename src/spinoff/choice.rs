//! Which agent a spinoff starts (README.md, "Spinoffs"): pure over plain
//! data, so every rule is a row of the table test below. The core gathers
//! the facts (the parent tab, every agent the config can start) and starts
//! what this picks, or tells the caller why not.
//!
//! The rules: `--agent` when given, else the parent's own agent. A
//! sandboxed parent (SECURITY.md, on spinoffs) spins off only
//! into sandboxed agents: the spun-off agent works from the parent's
//! commits and reports back to it, so an unsandboxed one would be a way out
//! of the sandbox. An unsandboxed `--agent` is refused (never silently
//! swapped for another); by default the parent's own agent, else a
//! sandboxed agent of the same kind, else the first sandboxed agent by
//! name; with none, no spinoff starts and the reason says how to get one.

pub use crate::review::choice::Available;

/// What the choice is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts<'a> {
    pub parent_sandboxed: bool,
    /// The parent tab's agent (its config name); `None` for a program run
    /// as it is (`nerdr agent -- CMD`), which is no agent to start again.
    pub parent_agent: Option<&'a str>,
    /// The parent agent's kind (its screen rules' name).
    pub parent_kind: Option<&'a str>,
    /// `--agent NAME`.
    pub asked: Option<&'a str>,
    /// Every agent the config can start, in a stable order.
    pub agents: &'a [Available],
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Start `agent`; `instead` says why it is not the parent's own agent,
    /// when it is not and nobody asked for it.
    Start {
        agent: String,
        instead: Option<String>,
    },
    /// No spinoff starts, because of this.
    Refuse(String),
}

/// Pick the spun-off agent (see the module docs).
pub fn choose(f: &Facts) -> Choice {
    let find = |name: &str| f.agents.iter().find(|a| a.name == name);
    let known = || {
        f.agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let sandboxed: Vec<&Available> = f.agents.iter().filter(|a| a.sandboxed).collect();
    let sandboxed_names = || {
        sandboxed
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(asked) = f.asked {
        let Some(agent) = find(asked) else {
            return Choice::Refuse(format!(
                "no agent `{asked}` (asked for with --agent): the agents are {}",
                known()
            ));
        };
        if f.parent_sandboxed && !agent.sandboxed {
            let offer = match sandboxed.is_empty() {
                true => "none is: mark one `sandboxed = true` in config.toml".to_string(),
                false => format!("name one that is: {}", sandboxed_names()),
            };
            return Choice::Refuse(format!(
                "`{asked}` runs outside every sandbox, and the spinoff comes from a sandboxed \
                 agent: it may start only sandboxed agents; {offer}"
            ));
        }
        return Choice::Start {
            agent: agent.name.clone(),
            instead: None,
        };
    }
    let Some(own) = f.parent_agent else {
        return Choice::Refuse(
            "the parent tab runs a program, not an agent: name the agent to start with \
             --agent NAME"
                .to_string(),
        );
    };
    let own_agent = find(own);
    match own_agent {
        Some(a) if !f.parent_sandboxed || a.sandboxed => {
            return Choice::Start {
                agent: a.name.clone(),
                instead: None,
            }
        }
        None if !f.parent_sandboxed => {
            return Choice::Refuse(format!(
                "the parent's agent `{own}` is no longer in the config: name one with --agent \
                 ({})",
                known()
            ))
        }
        _ => {}
    }
    let kind = own_agent.map(|a| a.kind.as_str()).or(f.parent_kind);
    let same_kind = sandboxed.iter().find(|a| Some(a.kind.as_str()) == kind);
    match same_kind.or(sandboxed.first()) {
        Some(pick) => Choice::Start {
            agent: pick.name.clone(),
            instead: Some(format!(
                "the parent is sandboxed and its agent `{own}` no longer runs sandboxed by the \
                 config: `{}` is started instead",
                pick.name
            )),
        },
        None => Choice::Refuse(format!(
            "the parent is sandboxed, so its spinoff must run sandboxed, and no agent can \
             (`{own}` does not by the config now); mark one `sandboxed = true` in config.toml, \
             with a sandboxing `command`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str, sandboxed: bool, kind: &str) -> Available {
        Available {
            name: name.into(),
            sandboxed,
            kind: kind.into(),
        }
    }

    #[derive(Debug)]
    enum Want {
        Start(&'static str),
        Instead(&'static str),
        Refused(&'static str),
    }

    #[test]
    fn every_rule_of_the_spinoff_agent_choice() {
        use Want::*;
        let mixed = [
            agent("claude", false, "claude"),
            agent("codex", false, "codex"),
            agent("sb-claude", true, "claude"),
            agent("sb-codex", true, "codex"),
        ];
        let none_sandboxed = [
            agent("claude", false, "claude"),
            agent("codex", false, "codex"),
        ];
        let other_kind_only = [agent("claude", false, "claude"), agent("sb-x", true, "x")];
        /// (what, parent sandboxed, parent's agent, asked, agents, verdict)
        type Row<'a> = (
            &'a str,
            bool,
            Option<&'a str>,
            Option<&'a str>,
            &'a [Available],
            Want,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            ("unsandboxed parent, nothing asked: its own agent", false, Some("claude"), None, &mixed, Start("claude")),
            ("unsandboxed parent, another agent asked", false, Some("claude"), Some("codex"), &mixed, Start("codex")),
            ("unsandboxed parent, a sandboxed agent asked", false, Some("claude"), Some("sb-codex"), &mixed, Start("sb-codex")),
            ("unknown agent asked", false, Some("claude"), Some("nope"), &mixed, Refused("no agent `nope`")),
            ("unsandboxed parent, its agent gone from the config", false, Some("gone"), None, &mixed, Refused("no longer in the config")),
            ("a program's tab, nothing asked", false, None, None, &mixed, Refused("name the agent to start with --agent")),
            ("a program's tab, an agent asked", false, None, Some("codex"), &mixed, Start("codex")),
            ("sandboxed parent, nothing asked: its own sandboxed agent", true, Some("sb-claude"), None, &mixed, Start("sb-claude")),
            ("sandboxed parent, a sandboxed agent asked", true, Some("sb-claude"), Some("sb-codex"), &mixed, Start("sb-codex")),
            ("sandboxed parent, an unsandboxed agent asked is refused", true, Some("sb-claude"), Some("claude"), &mixed, Refused("name one that is: sb-claude, sb-codex")),
            ("sandboxed parent, unsandboxed asked and none sandboxed", true, Some("claude"), Some("codex"), &none_sandboxed, Refused("none is: mark one `sandboxed = true`")),
            ("sandboxed parent whose agent is unsandboxed now: same kind", true, Some("claude"), None, &mixed, Instead("sb-claude")),
            ("sandboxed parent whose agent is gone: the first sandboxed", true, Some("gone"), None, &mixed, Instead("sb-claude")),
            ("sandboxed parent, no same kind: the first sandboxed", true, Some("claude"), None, &other_kind_only, Instead("sb-x")),
            ("sandboxed parent, none can run sandboxed", true, Some("claude"), None, &none_sandboxed, Refused("no agent can")),
            ("sandboxed program's tab, nothing asked", true, None, None, &mixed, Refused("name the agent")),
        ];
        for (what, sandboxed, own, asked, agents, want) in rows {
            let kind = own.map(|o| o.trim_start_matches("sb-"));
            let got = choose(&Facts {
                parent_sandboxed: *sandboxed,
                parent_agent: *own,
                parent_kind: kind,
                asked: *asked,
                agents,
            });
            match (want, &got) {
                (
                    Start(w),
                    Choice::Start {
                        agent,
                        instead: None,
                    },
                ) if agent == w => {}
                (
                    Instead(w),
                    Choice::Start {
                        agent,
                        instead: Some(_),
                    },
                ) if agent == w => {}
                (Refused(w), Choice::Refuse(why)) if why.contains(w) => {}
                _ => panic!("{what}: want {want:?}, got {got:?}"),
            }
            // Whatever is picked for a sandboxed parent is sandboxed.
            if let (true, Choice::Start { agent, .. }) = (sandboxed, &got) {
                assert!(
                    agents.iter().any(|a| &a.name == agent && a.sandboxed),
                    "{what}: {agent} is not sandboxed"
                );
            }
        }
    }
}
