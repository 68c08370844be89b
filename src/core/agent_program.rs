//! Which program a sandboxed agent is: the word of its command the sandbox
//! check runs in place of (and the name `nerdr sandbox` knows the agent
//! by, the file name of the program it runs). A built-in agent's is its
//! program (`cursor-agent` for `cursor`); a custom agent's is its
//! `program` key, else its section's name. When no word of the command is
//! that program, the launch cannot be checked, and [`missing_program`]
//! says the exact fix in one line. Pure.

use std::path::Path;

use crate::config::ResolvedAgent;

/// The file name the agent's program goes by.
pub(super) fn program_of(agent: &ResolvedAgent) -> String {
    let builtin = crate::config::builtin_program(&agent.name).filter(|_| agent.builtin);
    builtin
        .map(str::to_owned)
        .or_else(|| agent.program.clone())
        .unwrap_or_else(|| agent.name.clone())
}

fn file_name(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// The refusal of a sandboxed agent whose command (`agent.command`'s own
/// words, before its args) runs no program named [`program_of`], as one
/// line naming the fix in `config_file`; `None` when one does.
pub(super) fn missing_program(agent: &ResolvedAgent, config_file: &Path) -> Option<String> {
    let words = &agent.command[..agent.command_words.min(agent.command.len())];
    let program = program_of(agent);
    if words.iter().any(|w| file_name(w) == program) {
        return None;
    }
    // What the wrapper runs last, its options aside: the word the person
    // most likely meant (`--norc` is bash's argument, whose place is
    // `args`, never the program).
    let at = words.iter().rposition(|w| !w.starts_with('-'));
    let runs = at.map_or("", |i| file_name(&words[i]));
    let options = at.map_or(words, |i| &words[i + 1..]);
    let (name, file) = (&agent.name, config_file.display());
    let args = match options.is_empty() {
        true => String::new(),
        false => format!(
            "; {options:?} are {runs}'s arguments: move them from command to args = {options:?}"
        ),
    };
    let advice = match (agent.builtin, &agent.program) {
        (false, None) => format!(
            "agent \"{name}\" runs {runs} inside the sandbox: add program = \"{runs}\" to \
             [agents.{name}] in {file} (or name the section after the program)"
        ),
        (false, Some(_)) => format!(
            "agent \"{name}\" runs {runs} inside the sandbox, not {program}: set program = \
             \"{runs}\" in [agents.{name}] in {file}"
        ),
        (true, _) => format!(
            "agent \"{name}\" runs {runs} inside the sandbox, not {program}: end its command \
             with {program} in [agents.{name}] in {file}, or define a custom agent under \
             another name with program = \"{runs}\""
        ),
    };
    Some(format!("{advice}{args}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(toml: &str, name: &str) -> ResolvedAgent {
        crate::config::parse(toml, Path::new("/c.toml"))
            .unwrap()
            .resolve_agent(name)
            .unwrap()
    }

    #[test]
    fn every_way_an_agent_names_its_program() {
        const WRAP: &str = "command = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\nsandboxed = true";
        #[rustfmt::skip]
        let rows: &[(&str, String, &str, &str, Option<&str>)] = &[
            ("a custom agent named after its program",
             format!("[agents.bash]\n{WRAP}\n"), "bash", "bash", None),
            ("a custom agent with program set",
             format!("[agents.sbsh]\n{WRAP}\nprogram = \"bash\"\n"), "sbsh", "bash", None),
            ("a custom agent named otherwise, without program: the fix names both ways",
             format!("[agents.sbsh]\n{WRAP}\n"), "sbsh", "sbsh",
             Some("agent \"sbsh\" runs bash inside the sandbox: add program = \"bash\" to [agents.sbsh] in /c.toml (or name the section after the program)")),
            ("a path as the program's word counts by its file name",
             "[agents.sbsh]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"/bin/bash\"]\nsandboxed = true\nprogram = \"bash\"\n".into(),
             "sbsh", "bash", None),
            ("args after the command are not the program",
             format!("[agents.sbsh]\n{WRAP}\nargs = [\"sbsh\"]\n"), "sbsh", "sbsh",
             Some("agent \"sbsh\" runs bash inside the sandbox: add program = \"bash\"")),
            ("a wrapper's options after the program are its arguments, not the program",
             "[agents.box]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\", \"--norc\"]\nsandboxed = true\n".into(),
             "box", "box",
             Some("agent \"box\" runs bash inside the sandbox: add program = \"bash\" to [agents.box] in /c.toml (or name the section after the program); [\"--norc\"] are bash's arguments: move them from command to args = [\"--norc\"]")),
            ("a built-in agent by its program, not its name",
             "[agents.cursor]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"cursor-agent\"]\nsandboxed = true\n".into(),
             "cursor", "cursor-agent", None),
            ("a built-in agent whose command runs another program",
             "[agents.claude]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"my-claude\"]\nsandboxed = true\n".into(),
             "claude", "claude",
             Some("agent \"claude\" runs my-claude inside the sandbox, not claude: end its command with claude in [agents.claude] in /c.toml, or define a custom agent under another name with program = \"my-claude\"")),
        ];
        for (sentence, toml, name, program, refusal) in rows {
            let a = agent(toml, name);
            assert_eq!(&program_of(&a), program, "{sentence}");
            let got = missing_program(&a, Path::new("/c.toml"));
            match (refusal, &got) {
                (None, None) => {}
                (Some(want), Some(got)) => {
                    assert!(got.starts_with(want), "{sentence}: {got}");
                    assert!(!got.contains('\n'), "{sentence}: one line: {got}");
                }
                _ => panic!("{sentence}: got {got:?}, want {refusal:?}"),
            }
        }
    }

    #[test]
    fn a_program_set_in_code_but_not_run_is_refused_with_the_word_it_runs() {
        let mut a = agent(
            "[agents.sbsh]\ncommand = [\"nerdr\", \"sandbox\", \"--\", \"bash\"]\nsandboxed = true\n",
            "sbsh",
        );
        // Parsing refuses such a config; a config built in code might not.
        a.program = Some("zsh".into());
        assert_eq!(
            missing_program(&a, Path::new("/c.toml")).as_deref(),
            Some(
                "agent \"sbsh\" runs bash inside the sandbox, not zsh: set program = \"bash\" \
                 in [agents.sbsh] in /c.toml"
            )
        );
    }
}
