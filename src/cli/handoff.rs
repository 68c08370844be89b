//! `nerdr handoff [--to AGENT|--to-me] [--from TAB] [--file F|-] [TEXT]`:
//! pass a tab's conversation to another agent or to the person (README.md,
//! "Handoffs").

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;

use super::Folder;
use crate::client;
use crate::protocol::api::{Handoff, HandoffTo};

#[derive(Debug, clap::Args)]
#[command(
    about = "Pass a tab's conversation to another agent (same worktree) or to you",
    long_about = "Pass a tab's conversation on, with what was done, what is next and the open \
    questions.\n\n\
    --to AGENT starts AGENT in a new tab in the same worktree and branch, and types the \
    handoff as its first prompt once it waits at its prompt. --to-me keeps it for you: \
    `nerdr handoffs` lists it and the window marks the tab.\n\n\
    The handoff is TEXT (or --file F, `-` for stdin) when the agent wrote one; otherwise nerdr \
    builds one from the agent's conversation: claude's log (~/.claude/projects/...), codex's \
    (~/.codex/sessions/...), or `opencode export`: the last 5 requests and answers, at most \
    8 KiB, tool calls left out. A custom agent must write its own.\n\n\
    From a sandboxed agent, a handoff to an agent outside every sandbox waits for your \
    approval (`nerdr approvals`) and carries the note that it was written in a sandbox; to a \
    sandboxed agent it goes at once.",
    group = clap::ArgGroup::new("whom").required(true).args(["to", "to_me"])
)]
pub struct Args {
    /// Start this agent in a new tab in the same worktree, with the handoff as its first prompt
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// Keep the handoff for you (`nerdr handoffs`)
    #[arg(long)]
    pub to_me: bool,
    /// The tab handing off: its id, a unique id prefix, its number or its name (default: the tab this runs in)
    #[arg(long, value_name = "TAB")]
    pub from: Option<String>,
    /// Read the handoff from this file (`-`: stdin)
    #[arg(long, value_name = "FILE", conflicts_with = "text")]
    pub file: Option<std::path::PathBuf>,
    /// The handoff, as the agent wrote it (default: built from its conversation)
    pub text: Option<String>,
}

/// The longest handoff taken, as the core takes it.
const MAX_TEXT: u64 = crate::handoff::MAX_WRITTEN as u64;

/// The handoff given: `text`, or `file`'s (`-`: stdin), read up to one
/// byte past what the core takes: more is refused here, saying so without
/// reading a huge file whole.
pub(super) fn given(
    text: Option<String>,
    file: Option<&std::path::Path>,
) -> anyhow::Result<Option<String>> {
    let Some(f) = file else {
        return Ok(text);
    };
    let mut text = String::new();
    let taken = if f.as_os_str() == "-" {
        std::io::stdin()
            .take(MAX_TEXT + 1)
            .read_to_string(&mut text)
    } else {
        std::fs::File::open(f).and_then(|file| file.take(MAX_TEXT + 1).read_to_string(&mut text))
    };
    let read = taken.with_context(|| format!("cannot read the handoff from {}", f.display()))?;
    if read as u64 > MAX_TEXT {
        anyhow::bail!(
            "the handoff in {} is over {MAX_TEXT} bytes; at most {MAX_TEXT} are typed as a \
             prompt: shorten it",
            f.display()
        );
    }
    Ok(Some(text))
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let text = given(args.text, args.file.as_deref())?;
    let to = match args.to {
        Some(name) => HandoffTo::Agent { name },
        None => HandoffTo::Me,
    };
    let done = client::call(Handoff {
        tab: args.from,
        to,
        text,
        env: client::own_env(),
        folder: folder.scope()?,
    })?;
    let how = if done.built {
        "built from its conversation"
    } else {
        "as written"
    };
    match (&done.tab, done.kept, &done.queued) {
        (Some(tab), _, _) => {
            // The new tab's id alone on stdout, for scripts.
            println!("{tab}");
            eprintln!(
                "nerdr: tab {}'s handoff ({how}) goes to {} in tab {tab}, in the same worktree",
                done.from,
                done.agent.as_deref().unwrap_or("the agent")
            );
        }
        (None, Some(n), _) => {
            println!("{n}");
            eprintln!(
                "nerdr: tab {}'s handoff ({how}) is kept for you: `nerdr handoffs`",
                done.from
            );
        }
        (None, None, Some(id)) => {
            println!("{id}");
            eprintln!(
                "nerdr: the handoff ({how}) waits for the user's approval as {id}: {}",
                done.why.as_deref().unwrap_or("")
            );
        }
        (None, None, None) => {}
    }
    match done.refused {
        None => Ok(ExitCode::SUCCESS),
        Some(reason) => {
            eprintln!("nerdr: {reason}");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The commands the core's refusals suggest (`handoff::rules::give_one`)
/// are this CLI's: checked here, where the parser is.
#[cfg(test)]
mod tests {
    /// A handoff file too long is refused saying the limit, not a size
    /// cut at the limit (a recheck's finding: a 20 MB file read "16385
    /// bytes").
    #[test]
    fn a_handoff_file_too_long_is_refused_with_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let (fits, over) = (dir.path().join("fits"), dir.path().join("over"));
        std::fs::write(&fits, "a".repeat(super::MAX_TEXT as usize)).unwrap();
        std::fs::write(&over, "a".repeat(20 * 1024 * 1024)).unwrap();
        assert!(super::given(None, Some(&fits)).unwrap().is_some());
        let err = super::given(None, Some(&over)).unwrap_err().to_string();
        assert!(err.contains("is over 16384 bytes"), "{err}");
    }

    /// Every suggested command line parses as what was asked (a newcomer's
    /// finding: `--to-me` was answered with `--to AGENT`, and a claude
    /// tab's error with `nerdr handoff "TEXT"`, which clap refuses).
    #[test]
    fn each_suggested_command_line_parses_as_what_was_asked() {
        use super::super::{Cli, Command};
        use crate::handoff::rules::{give_one, Asked};
        use clap::Parser;
        let rows: &[(Asked, &str)] = &[
            (
                Asked::Handoff {
                    to: None,
                    from: None,
                },
                "to-me",
            ),
            (
                Asked::Handoff {
                    to: None,
                    from: Some("child"),
                },
                "to-me from child",
            ),
            (
                Asked::Handoff {
                    to: Some("codex"),
                    from: None,
                },
                "to codex",
            ),
            (
                Asked::Handoff {
                    to: Some("codex"),
                    from: Some("my tab"),
                },
                "to codex from my tab",
            ),
            (
                Asked::Switch {
                    tab: "2",
                    to: "codex",
                },
                "switch 2 codex",
            ),
            (
                Asked::Switch {
                    tab: "it's",
                    to: "codex",
                },
                "switch it's codex",
            ),
        ];
        for (asked, want) in rows {
            let message = give_one(*asked);
            let lines: Vec<&str> = message.split('`').skip(1).step_by(2).collect();
            let line = lines[0];
            let words = shell_words(line);
            for argv in [
                words.clone(),
                // `--file FILE` for "TEXT".
                words[..words.len() - 1]
                    .iter()
                    .cloned()
                    .chain(["--file".into(), "FILE".into()])
                    .collect(),
            ] {
                let cli = Cli::try_parse_from(&argv)
                    .unwrap_or_else(|e| panic!("{want}: {argv:?} does not parse: {e}"));
                let got = match cli.command {
                    Some(Command::Handoff(a)) => {
                        let to = match (&a.to, a.to_me) {
                            (None, true) => "to-me".to_string(),
                            (Some(t), false) => format!("to {t}"),
                            other => panic!("{want}: {other:?}"),
                        };
                        match &a.from {
                            Some(f) => format!("{to} from {f}"),
                            None => to,
                        }
                    }
                    Some(Command::Switch(a)) => format!("switch {} {}", a.tab, a.agent),
                    other => panic!("{want}: {other:?}"),
                };
                assert_eq!(&got, want, "{message}");
            }
        }
    }

    /// Enough of a shell's word splitting for the suggestions: blanks,
    /// '...' (with '\'' inside) and "...".
    fn shell_words(line: &str) -> Vec<String> {
        let (mut words, mut cur, mut quote, mut started) = (vec![], String::new(), None, false);
        let mut chars = line.chars();
        while let Some(c) = chars.next() {
            match (quote, c) {
                (None, ' ') => {
                    if started {
                        words.push(std::mem::take(&mut cur));
                    }
                    started = false;
                }
                (None, '\'' | '"') => (quote, started) = (Some(c), true),
                (None, '\\') => cur.extend(chars.next()),
                (Some(q), c) if c == q => quote = None,
                (_, c) => (cur, started) = (cur + &c.to_string(), true),
            }
        }
        if started {
            words.push(cur);
        }
        words
    }
}
