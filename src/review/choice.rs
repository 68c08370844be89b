//! Which agent reviews an author's work (README.md, "Reviews"): pure over
//! plain data, so every rule is a row of the table test below. The core
//! gathers the facts (the author's tab, `[review]`, every agent the config
//! can start) and starts what this picks, or tells the person why not.
//!
//! The rules: the reviewer asked for (`--reviewer`), else `[review] agent`,
//! else the author's own agent. Work of a sandboxed author is reviewed only
//! by a sandboxed agent, since the review reads text the sandboxed agent
//! wrote (its code) and could carry its instructions out: an unsandboxed
//! reviewer from the config is replaced by a sandboxed agent (one of the
//! same kind as the one configured, else the author's own agent, else the
//! first sandboxed agent by name); one asked for by name is refused rather
//! than silently swapped; with no sandboxed agent, no review starts.

/// An agent the config can start, as far as the choice cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Available {
    pub name: String,
    /// Its config marks it `sandboxed = true`.
    pub sandboxed: bool,
    /// Which agent it is underneath (its screen rules' name: `claude` for
    /// a wrapper around claude).
    pub kind: String,
}

/// What the choice is made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facts<'a> {
    pub author_sandboxed: bool,
    /// The author tab's agent (its config name).
    pub author_agent: &'a str,
    /// `[review] agent`.
    pub configured: Option<&'a str>,
    /// `--reviewer AGENT`.
    pub asked: Option<&'a str>,
    /// Every agent the config can start, in a stable order.
    pub agents: &'a [Available],
}

/// Where the wanted reviewer came from, for the reasons given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Asked,
    Configured,
    AuthorsOwn,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Start `agent`; `replaced` says which reviewer it stands in for, and
    /// why, when it is not the one wanted.
    Start {
        agent: String,
        replaced: Option<String>,
    },
    /// No review starts, because of this (for the person).
    Refuse(String),
}

/// Pick the reviewer (see the module docs).
pub fn choose(f: &Facts) -> Choice {
    let (wanted, source) = match (f.asked, f.configured) {
        (Some(a), _) => (a, Source::Asked),
        (None, Some(c)) => (c, Source::Configured),
        (None, None) => (f.author_agent, Source::AuthorsOwn),
    };
    let find = |name: &str| f.agents.iter().find(|a| a.name == name);
    let Some(agent) = find(wanted) else {
        let known: Vec<&str> = f.agents.iter().map(|a| a.name.as_str()).collect();
        return Choice::Refuse(format!(
            "no agent `{wanted}` ({}) can review: the agents are {}",
            from_words(source),
            known.join(", ")
        ));
    };
    if !f.author_sandboxed || agent.sandboxed {
        return Choice::Start {
            agent: agent.name.clone(),
            replaced: None,
        };
    }
    let sandboxed: Vec<&Available> = f.agents.iter().filter(|a| a.sandboxed).collect();
    let names = || {
        sandboxed
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if source == Source::Asked {
        let offer = match sandboxed.is_empty() {
            true => "none is: mark one `sandboxed = true` in config.toml".to_owned(),
            false => format!("name one that is: {}", names()),
        };
        return Choice::Refuse(format!(
            "`{wanted}` runs outside every sandbox, and the author's work was written in a \
             sandbox: only a sandboxed agent may review it; {offer}"
        ));
    }
    let same_kind = sandboxed.iter().find(|a| a.kind == agent.kind);
    let authors = sandboxed.iter().find(|a| a.name == f.author_agent);
    match same_kind.or(authors).or(sandboxed.first()) {
        Some(pick) => Choice::Start {
            agent: pick.name.clone(),
            replaced: Some(format!(
                "`{wanted}` ({}) runs outside every sandbox and the author is sandboxed: \
                 `{}` reviews instead",
                from_words(source),
                pick.name
            )),
        },
        None => Choice::Refuse(format!(
            "no review started: the author is sandboxed, so only a sandboxed agent may review \
             its work, and no agent can run sandboxed (`{wanted}`, {}, does not); mark one \
             `sandboxed = true` in config.toml, with a sandboxing `command`",
            from_words(source)
        )),
    }
}

fn from_words(source: Source) -> &'static str {
    match source {
        Source::Asked => "asked for with --reviewer",
        Source::Configured => "`[review] agent`",
        Source::AuthorsOwn => "the author's own agent",
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

    /// A start of `name`, or a start replacing another, or a refusal whose
    /// reason holds the text.
    #[derive(Debug)]
    enum Want {
        Start(&'static str),
        Replaced(&'static str),
        Refused(&'static str),
    }

    #[test]
    fn every_rule_of_the_reviewer_choice() {
        use Want::*;
        let mixed = [
            agent("claude", false, "claude"),
            agent("codex", false, "codex"),
            agent("sb-claude", true, "claude"),
            agent("sb-codex", true, "codex"),
        ];
        let only_authors = [
            agent("claude", false, "claude"),
            agent("sb-codex", true, "codex"),
        ];
        let none_sandboxed = [
            agent("claude", false, "claude"),
            agent("codex", false, "codex"),
        ];
        let other_kind_only = [agent("codex", false, "codex"), agent("sb-x", true, "x")];
        /// (what, author sandboxed, author's agent, configured, asked,
        /// agents, verdict)
        type Row<'a> = (
            &'a str,
            bool,
            &'a str,
            Option<&'a str>,
            Option<&'a str>,
            &'a [Available],
            Want,
        );
        #[rustfmt::skip]
        let rows: &[Row] = &[
            // (what, author sandboxed, author's agent, configured, asked, agents, verdict)
            ("unsandboxed author, nothing set: its own agent", false, "claude", None, None, &mixed, Start("claude")),
            ("unsandboxed author, configured reviewer", false, "claude", Some("codex"), None, &mixed, Start("codex")),
            ("unsandboxed author, asked beats configured", false, "claude", Some("codex"), Some("sb-claude"), &mixed, Start("sb-claude")),
            ("unsandboxed author, unknown asked", false, "claude", None, Some("nope"), &mixed, Refused("no agent `nope` (asked for with --reviewer)")),
            ("unsandboxed author, unknown configured", false, "claude", Some("gone"), None, &mixed, Refused("no agent `gone` (`[review] agent`)")),
            ("unsandboxed author, its own agent unknown", false, "bash", None, None, &mixed, Refused("no agent `bash` (the author's own agent)")),
            ("sandboxed author, nothing set: its own sandboxed agent", true, "sb-codex", None, None, &mixed, Start("sb-codex")),
            ("sandboxed author, sandboxed configured reviewer", true, "sb-codex", Some("sb-claude"), None, &mixed, Start("sb-claude")),
            ("sandboxed author, sandboxed asked reviewer", true, "sb-codex", Some("codex"), Some("sb-claude"), &mixed, Start("sb-claude")),
            ("sandboxed author, unsandboxed asked reviewer is refused", true, "sb-codex", None, Some("claude"), &mixed, Refused("name one that is: sb-claude, sb-codex")),
            ("sandboxed author, unsandboxed asked and none sandboxed", true, "claude", None, Some("codex"), &none_sandboxed, Refused("none is: mark one `sandboxed = true`")),
            ("sandboxed author, unsandboxed configured: same kind sandboxed", true, "sb-codex", Some("claude"), None, &mixed, Replaced("sb-claude")),
            ("sandboxed author, unsandboxed configured, no same kind: the author's kind", true, "sb-codex", Some("claude"), None, &only_authors, Replaced("sb-codex")),
            ("sandboxed author, unsandboxed own agent now: same kind sandboxed", true, "codex", None, None, &mixed, Replaced("sb-codex")),
            ("sandboxed author, no same kind nor author's: first sandboxed", true, "codex", Some("codex"), None, &other_kind_only, Replaced("sb-x")),
            ("sandboxed author, none can run sandboxed", true, "claude", Some("codex"), None, &none_sandboxed, Refused("no agent can run sandboxed")),
            ("sandboxed author, own agent and none sandboxed", true, "claude", None, None, &none_sandboxed, Refused("no agent can run sandboxed (`claude`, the author's own agent")),
        ];
        for (what, author_sandboxed, author_agent, configured, asked, agents, want) in rows {
            let got = choose(&Facts {
                author_sandboxed: *author_sandboxed,
                author_agent,
                configured: *configured,
                asked: *asked,
                agents,
            });
            match (want, &got) {
                (
                    Start(name),
                    Choice::Start {
                        agent,
                        replaced: None,
                    },
                ) if agent == name => {}
                (
                    Replaced(name),
                    Choice::Start {
                        agent,
                        replaced: Some(why),
                    },
                ) if agent == name && why.contains("outside every sandbox") => {}
                (Refused(text), Choice::Refuse(why)) if why.contains(text) => {}
                _ => panic!("{what}: wanted {want:?}, got {got:?}"),
            }
            // Whatever starts for a sandboxed author is sandboxed.
            if let (true, Choice::Start { agent: name, .. }) = (*author_sandboxed, &got) {
                assert!(
                    agents.iter().any(|a| &a.name == name && a.sandboxed),
                    "{what}: {name} is not sandboxed"
                );
            }
        }
    }
}
