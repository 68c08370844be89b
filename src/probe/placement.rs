//! Where the probe goes: in place of the **last** word of the agent's
//! command that names the agent, so it runs inside whatever the words
//! before it set up. Pure.

/// The probe's command line, or why it cannot be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// The wrapper's words, then the probe's own.
    Argv(Vec<String>),
    Unplaceable(String),
}

/// Put `probe` in place of the last of `command_words` whose file name is
/// `program` (the built-in agent's program, such as `cursor-agent`, or a
/// custom agent's section name). The words after it are the agent's own
/// arguments and are dropped: the probe takes none of them.
pub fn place(command_words: &[String], program: &str, probe: &[String]) -> Placement {
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    match command_words.iter().rposition(|w| file_name(w) == program) {
        Some(i) => Placement::Argv(
            command_words[..i]
                .iter()
                .chain(probe.iter())
                .cloned()
                .collect(),
        ),
        None => Placement::Unplaceable(format!(
            "no word of the command {command_words:?} names the agent's program `{program}`, \
             so the sandbox check has nowhere to run; configure a wrapper that can run both \
             the agent and the check inside the same sandbox (the agent's program as the \
             last word that names it)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    /// The command, the agent's program, and the probe's argv (or none).
    type Row<'a> = (&'a [&'a str], &'a str, Option<&'a [&'a str]>);

    #[test]
    fn each_row() {
        let probe = words(&["/n/nerdr", "probe"]);
        let rows: &[Row] = &[
            // The agent alone: the probe replaces it (and runs unsandboxed).
            (&["/usr/bin/claude"], "claude", Some(&["/n/nerdr", "probe"])),
            (
                &[
                    "bwrap",
                    "--ro-bind",
                    "/",
                    "/",
                    "--",
                    "claude",
                    "--model",
                    "x",
                ],
                "claude",
                Some(&["bwrap", "--ro-bind", "/", "/", "--", "/n/nerdr", "probe"]),
            ),
            // The last word naming the agent wins: earlier ones may be paths
            // the wrapper is given.
            (
                &[
                    "wrap",
                    "--allow",
                    "/opt/claude",
                    "--",
                    "/opt/claude/bin/claude",
                ],
                "claude",
                Some(&["wrap", "--allow", "/opt/claude", "--", "/n/nerdr", "probe"]),
            ),
            (
                &["env", "--", "cursor-agent"],
                "cursor-agent",
                Some(&["env", "--", "/n/nerdr", "probe"]),
            ),
            // A custom agent is named by its section.
            (
                &["sandbox", "--", "mybot"],
                "mybot",
                Some(&["sandbox", "--", "/n/nerdr", "probe"]),
            ),
            // Only the file name counts, whole.
            (&["bwrap", "--", "claude-wrapper"], "claude", None),
            (&["sh", "-c", "exec claude"], "claude", None),
            (&[], "claude", None),
        ];
        for (command, program, want) in rows {
            let got = place(&words(command), program, &probe);
            match want {
                Some(w) => assert_eq!(got, Placement::Argv(words(w)), "{command:?}"),
                None => assert!(
                    matches!(&got, Placement::Unplaceable(why) if why.contains("wrapper that can run both")),
                    "{command:?}: {got:?}"
                ),
            }
        }
    }
}
