//! Where the probe goes: in place of the **last** word of the agent's
//! command that names the agent, so it runs inside whatever the words
//! before it set up. Pure.

use std::path::{Path, PathBuf};

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
            "no word of the command {command_words:?} is named `{program}`, so the sandbox \
             check has nowhere to run (it runs in place of the last word naming the agent: \
             a built-in agent's program, or a custom agent's [agents.NAME] section name); \
             end the command with that word (for a custom agent, name its section after the \
             program the wrapper runs last, as [agents.bash] for `nerdr sandbox -- bash`), or \
             configure a wrapper that can run both the agent and the check inside the same \
             sandbox"
        )),
    }
}

/// Why the command cannot be checked if one of its programs is where the
/// agent may write (`writable`: the tab's worktree and its folder, where
/// a new launch looks a relative word up), or `None`. Such a program is the agent's to rewrite: the
/// wrapper could be made to set up no sandbox at all next time, and what
/// the check runs in place of is not what later runs. `programs` are the
/// command's words with where each resolves (symlinks followed); a bare
/// word is also looked up, inside the sandbox, along `path_dirs` (the
/// launch's PATH): a relative or empty folder there, or one the agent may
/// write, ahead of where the word resolves, is as good as the agent's.
pub fn in_agent_reach(
    programs: &[(String, Option<PathBuf>)],
    path_dirs: &[PathBuf],
    writable: &[PathBuf],
) -> Option<String> {
    let shown = writable
        .iter()
        .map(|w| w.display().to_string())
        .collect::<Vec<_>>()
        .join(" or ");
    let in_reach = |p: &Path| writable.iter().any(|w| p.starts_with(w));
    let fix = "configure a wrapper that can run both the agent and the check inside \
               the same sandbox, installed outside the folders the agent may write and \
               named by an absolute path";
    for (word, resolved) in programs {
        let relative = word.contains('/') && !word.starts_with('/');
        let inside = resolved.as_ref().filter(|r| in_reach(r));
        if relative || inside.is_some() {
            let at = resolved
                .as_ref()
                .map(|r| format!(" ({})", r.display()))
                .unwrap_or_default();
            return Some(format!(
                "the command's program `{word}`{at} lies in {shown}, which the agent may \
                 write, so the agent could change its own sandbox; {fix}"
            ));
        }
        if word.contains('/') {
            continue;
        }
        let found_in = resolved.as_ref().and_then(|r| r.parent());
        for d in path_dirs {
            if Some(d.as_path()) == found_in {
                break;
            }
            if !d.is_absolute() || in_reach(d) {
                return Some(format!(
                    "the command's program `{word}` is looked up along PATH, whose folder \
                     `{}` comes first and is (or is relative to) a folder the agent may \
                     write ({shown}), so the agent could put its own `{word}` there; take \
                     that folder out of PATH and {fix}",
                    d.display(),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_the_agent_may_write_are_refused() {
        let wt = [PathBuf::from("/d/worktrees/r/t1"), PathBuf::from("/src/r")];
        let p = |s: &str| Some(PathBuf::from(s));
        let sys: Vec<PathBuf> = vec!["/usr/bin".into(), "/bin".into()];
        // (programs, PATH, refused because of)
        type Row<'a> = (
            Vec<(&'a str, Option<PathBuf>)>,
            Vec<PathBuf>,
            Option<&'a str>,
        );
        let rows: Vec<Row> = vec![
            (
                vec![
                    ("/usr/bin/bwrap", p("/usr/bin/bwrap")),
                    ("claude", p("/usr/bin/claude")),
                ],
                sys.clone(),
                None,
            ),
            // A relative wrapper, found in the worktree.
            (
                vec![(
                    "/d/worktrees/r/t1/sandbox.sh",
                    p("/d/worktrees/r/t1/sandbox.sh"),
                )],
                sys.clone(),
                Some("sandbox.sh"),
            ),
            // A relative agent word, whether or not it exists yet.
            (
                vec![("/usr/bin/bwrap", p("/usr/bin/bwrap")), ("./claude", None)],
                sys.clone(),
                Some("./claude"),
            ),
            // A relative word of a new launch, found in the tab's folder.
            (
                vec![("/src/r/sandbox.sh", p("/src/r/sandbox.sh"))],
                sys.clone(),
                Some("sandbox.sh"),
            ),
            // A symlink elsewhere that leads into the worktree (resolved).
            (
                vec![("/usr/local/bin/wrap", p("/d/worktrees/r/t1/wrap"))],
                sys.clone(),
                Some("wrap"),
            ),
            // An absolute agent word that is not there on the host: the
            // sandbox's business.
            (
                vec![
                    ("/usr/bin/bwrap", p("/usr/bin/bwrap")),
                    ("/opt/claude", None),
                ],
                sys.clone(),
                None,
            ),
            // PATH with the worktree, or an empty (current) folder, first.
            (
                vec![("claude", p("/usr/bin/claude"))],
                vec!["/d/worktrees/r/t1/bin".into(), "/usr/bin".into()],
                Some("PATH"),
            ),
            (
                vec![("claude", p("/usr/bin/claude"))],
                vec!["".into(), "/usr/bin".into()],
                Some("PATH"),
            ),
            (
                vec![("claude", None)],
                vec!["/usr/bin".into(), "bin".into()],
                Some("PATH"),
            ),
            // ... but after where the word is found, it is never looked at.
            (
                vec![("claude", p("/usr/bin/claude"))],
                vec!["/usr/bin".into(), "".into()],
                None,
            ),
            // A sibling folder whose name only starts like the worktree's.
            (
                vec![("claude", p("/d/worktrees/r/t10/claude"))],
                sys.clone(),
                None,
            ),
        ];
        for (programs, path, want) in rows {
            let programs: Vec<(String, Option<PathBuf>)> = programs
                .into_iter()
                .map(|(w, r)| (w.to_string(), r))
                .collect();
            let got = in_agent_reach(&programs, &path, &wt);
            match want {
                None => assert_eq!(got, None, "{programs:?} {path:?}"),
                Some(part) => {
                    let why = got.unwrap_or_else(|| panic!("not refused: {programs:?} {path:?}"));
                    assert!(why.contains(part) && why.contains("agent may"), "{why}");
                }
            }
        }
    }

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
            // A custom agent whose section is not named after the program
            // its wrapper runs: the message must say the section name counts.
            (&["nerdr", "sandbox", "--", "bash", "--norc"], "box", None),
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
                    matches!(&got, Placement::Unplaceable(why) if why.contains("wrapper that can run both")
                        && why.contains(&format!("is named `{program}`"))
                        && why.contains("[agents.NAME] section name")),
                    "{command:?}: {got:?}"
                ),
            }
        }
    }
}
