//! config.toml, the agents' programs and their integrations: does the
//! config parse and pass the schema as a launch reads it, are the programs
//! it would start found on PATH, and are the hooks `nerdr integration
//! install` put into an agent's settings still there. A configured agent whose program is missing is a warning naming
//! it; a built-in agent not installed is only listed (most people use one
//! or two of them).

use super::verdict::{check, Check, Status};
use crate::service::facts::{ConfigFacts, Integration};

pub fn check_integrations(all: &[Integration]) -> Check {
    let name = "integrations";
    if all.is_empty() {
        return check(
            name,
            Status::Ok,
            "none installed (`nerdr integration install claude|codex|copilot` adds hooks that report turns)".into(),
            None,
        );
    }
    let gone: Vec<_> = all.iter().filter(|i| i.hooks == Ok(false)).collect();
    let unreadable: Vec<_> = all
        .iter()
        .filter_map(|i| i.hooks.as_ref().err().map(|e| (i, e)))
        .collect();
    if let Some((i, e)) = unreadable.first() {
        return check(
            name,
            Status::Warn,
            format!("cannot tell whether {}'s hooks are in place: {e}", i.agent),
            Some(format!(
                "fix the file, or `nerdr integration uninstall {}`",
                i.agent
            )),
        );
    }
    if !gone.is_empty() {
        let said: Vec<_> = gone
            .iter()
            .map(|i| format!("{} ({})", i.agent, i.file.display()))
            .collect();
        let agents: Vec<_> = gone.iter().map(|i| i.agent.as_str()).collect();
        return check(
            name,
            Status::Warn,
            format!("installed, but nerdr's hooks are gone from: {}", said.join(", ")),
            Some(format!(
                "`nerdr integration install {}` puts them back (or `nerdr integration uninstall` to forget them)",
                agents.join("` / `nerdr integration install ")
            )),
        );
    }
    let said: Vec<_> = all
        .iter()
        .map(|i| format!("{} ({})", i.agent, i.file.display()))
        .collect();
    check(
        name,
        Status::Ok,
        format!("in place: {}", said.join(", ")),
        None,
    )
}

pub fn check_config(c: &ConfigFacts) -> Check {
    let path = c.path.display();
    match (&c.agents, c.exists) {
        (Err(e), _) => check(
            "config",
            Status::Fail,
            e.clone(),
            Some(format!(
                "fix {path} at that line (every launch refuses until then); the keys are in README.md, \"Config\""
            )),
        ),
        (Ok(_), true) => check("config", Status::Ok, format!("{path} is valid"), None),
        (Ok(_), false) => check(
            "config",
            Status::Ok,
            format!("no {path}: the built-in defaults apply"),
            None,
        ),
    }
}

/// `None` when the config does not parse (`check_config` already fails).
pub fn check_agents(c: &ConfigFacts) -> Option<Check> {
    let agents = c.agents.as_ref().ok()?;
    let name = |a: &crate::service::facts::AgentProgram| {
        if a.agent == a.program {
            a.agent.clone()
        } else {
            format!("{} ({})", a.agent, a.program)
        }
    };
    let found: Vec<_> = agents
        .iter()
        .filter(|a| a.found.is_some())
        .map(name)
        .collect();
    let missing_configured: Vec<_> = agents
        .iter()
        .filter(|a| a.found.is_none() && a.configured)
        .map(name)
        .collect();
    let not_installed: Vec<_> = agents
        .iter()
        .filter(|a| a.found.is_none() && !a.configured)
        .map(name)
        .collect();
    let mut detail = if found.is_empty() {
        "no agent's program is on PATH".to_owned()
    } else {
        format!("on PATH: {}", found.join(", "))
    };
    if !missing_configured.is_empty() {
        detail.push_str(&format!(
            "; configured but not on PATH: {}",
            missing_configured.join(", ")
        ));
    }
    if !not_installed.is_empty() {
        detail.push_str(&format!(
            "; built-in, not installed: {}",
            not_installed.join(", ")
        ));
    }
    let path = c.path.display();
    Some(if !missing_configured.is_empty() {
        check(
            "agents",
            Status::Warn,
            detail,
            Some(format!(
                "install {} or fix its `command` in {path} (a launch of it fails)",
                missing_configured.join(", ")
            )),
        )
    } else if found.is_empty() {
        check(
            "agents",
            Status::Warn,
            detail,
            Some("install an agent CLI (claude, codex, ...) so that PATH finds it".into()),
        )
    } else {
        check("agents", Status::Ok, detail, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::{assert_verdicts, Case};

    fn agents(
        f: &mut crate::service::facts::Facts,
    ) -> &mut Vec<crate::service::facts::AgentProgram> {
        f.config.as_mut().unwrap().agents.as_mut().unwrap()
    }

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "a valid config is ok",
                |_| {},
                "config",
                Status::Ok,
                "/home/ann/.config/nerdr/config.toml is valid",
                "",
                0,
            ),
            (
                "no config file is ok",
                |f| f.config.as_mut().unwrap().exists = false,
                "config",
                Status::Ok,
                "built-in defaults",
                "",
                0,
            ),
            (
                "a broken config fails with the launch's file:line message",
                |f| {
                    f.config.as_mut().unwrap().agents = Err(
                        "/home/ann/.config/nerdr/config.toml:3:1: unknown key `sandboxd`".into(),
                    )
                },
                "config",
                Status::Fail,
                "config.toml:3:1: unknown key `sandboxd`",
                "fix /home/ann/.config/nerdr/config.toml",
                2,
            ),
            (
                "found and not-installed built-ins are listed, ok",
                |_| {},
                "agents",
                Status::Ok,
                "on PATH: claude, mine (my-agent); built-in, not installed: gemini",
                "",
                0,
            ),
            (
                "a configured agent's missing program warns naming it, exit 0",
                |f| agents(f)[2].found = None,
                "agents",
                Status::Warn,
                "configured but not on PATH: mine (my-agent)",
                "install mine (my-agent)",
                0,
            ),
            (
                "no agent program at all warns",
                |f| {
                    let all = agents(f);
                    all.retain(|a| !a.configured);
                    all.iter_mut().for_each(|a| a.found = None);
                },
                "agents",
                Status::Warn,
                "no agent's program is on PATH",
                "install an agent CLI",
                0,
            ),
            (
                "a configured built-in whose program is missing warns",
                |f| {
                    let a = &mut agents(f)[1];
                    a.configured = true;
                },
                "agents",
                Status::Warn,
                "configured but not on PATH: gemini",
                "install gemini",
                0,
            ),
        ];
        assert_verdicts(cases);
    }

    #[test]
    fn integration_verdicts() {
        fn one(hooks: Result<bool, String>) -> Vec<Integration> {
            vec![Integration {
                agent: "claude".into(),
                file: "/h/.claude/settings.json".into(),
                hooks,
            }]
        }
        let cases: &[Case] = &[
            (
                "installed hooks in place are ok",
                |_| {},
                "integrations",
                Status::Ok,
                "in place: claude (/home/ann/.claude/settings.json)",
                "",
                0,
            ),
            (
                "none installed is ok",
                |f| f.integrations = Some(vec![]),
                "integrations",
                Status::Ok,
                "none installed",
                "",
                0,
            ),
            (
                "hooks gone from the settings warn naming the file",
                |f| f.integrations = Some(one(Ok(false))),
                "integrations",
                Status::Warn,
                "hooks are gone from: claude (/h/.claude/settings.json)",
                "`nerdr integration install claude`",
                0,
            ),
            (
                "an unreadable settings file warns",
                |f| f.integrations = Some(one(Err("line 2: bad json".into()))),
                "integrations",
                Status::Warn,
                "cannot tell whether claude's hooks are in place: line 2: bad json",
                "nerdr integration uninstall claude",
                0,
            ),
        ];
        assert_verdicts(cases);
    }

    #[test]
    fn a_broken_config_has_no_agents_check() {
        let mut f = crate::service::facts::healthy();
        let c = f.config.as_mut().unwrap();
        c.agents = Err("x:1:1: bad".into());
        assert_eq!(check_agents(c), None);
    }
}
