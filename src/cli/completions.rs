//! `nerdr completions SHELL`: the script a shell sources to complete nerdr's
//! commands, and the completion itself.
//!
//! The script is clap_complete's dynamic kind: on each TAB the shell runs
//! `COMPLETE=bash nerdr -- WORDS...` and prints what nerdr answers, so
//! subcommands and options always match the installed binary, and tab ids,
//! tab names and agent names come from the running core. A core that is not
//! running, or that does not answer within [`ASK_WITHIN`], gives no
//! candidates and prints nothing: a TAB press must never hang a shell or
//! spill errors onto its prompt.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use clap::CommandFactory;
use clap_complete::env::{Bash, EnvCompleter, Fish, Zsh};
use clap_complete::{ArgValueCandidates, CompleteEnv, CompletionCandidate};

use crate::client;
use crate::protocol::api::{ListAgents, ListTabs};

/// The variable the scripts set to ask for candidates (clap_complete's).
const VAR: &str = "COMPLETE";

/// How long a TAB press waits for the core: long enough for a live core,
/// short enough that a stuck one is not noticed.
const ASK_WITHIN: Duration = Duration::from_millis(400);

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, clap::Args)]
#[command(long_about = "Print the completion script for SHELL.\n\n\
        Install it where the shell looks (the packages do this):\n  \
        bash: /usr/share/bash-completion/completions/nerdr\n  \
        zsh:  /usr/share/zsh/vendor-completions/_nerdr\n  \
        fish: /usr/share/fish/vendor_completions.d/nerdr.fish\n\
        or source it from the shell's startup file: `source <(nerdr completions bash)`.\n\n\
        The script runs `nerdr` (from PATH) on each TAB press; tab ids, tab names and \
        agent names come from the running core, when it answers quickly.")]
pub struct Args {
    /// The shell to print the script for
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    print!("{}", script(args.shell)?);
    Ok(ExitCode::SUCCESS)
}

/// The registration script for `shell`, calling `nerdr` from PATH: a
/// package's script must not name the build machine's path.
pub fn script(shell: Shell) -> std::io::Result<String> {
    let completer: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Zsh => &Zsh,
        Shell::Fish => &Fish,
    };
    let mut out = Vec::new();
    completer.write_registration(VAR, "nerdr", "nerdr", "nerdr", &mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Answers a shell's completion request and exits, when this process is
/// one (`COMPLETE` set); returns at once otherwise. Called before the
/// command line is parsed, since the words being completed rarely parse.
pub fn answer_if_asked() {
    // Only a shell's request: a COMPLETE=1 some other tool left in the
    // environment must not turn every nerdr command into an error.
    let asked = std::env::var_os(VAR).is_some_and(|v| {
        let name = std::path::Path::new(&v)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        matches!(name.as_deref(), Some("bash" | "zsh" | "fish"))
    });
    if !asked {
        return;
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let dir = std::env::current_dir().ok();
    match CompleteEnv::with_factory(command)
        .var(VAR)
        .bin("nerdr")
        .completer("nerdr")
        .try_complete(args, dir.as_deref())
    {
        Ok(true) => std::process::exit(0),
        Ok(false) => {}
        // A shell showing clap's error under its prompt helps nobody.
        Err(_) => std::process::exit(1),
    }
}

/// nerdr's command line with candidates from the core on the arguments
/// that name a tab (`tab`) or an agent (`agent`): added here, by argument
/// id, so each command's own file stays as it is.
fn command() -> clap::Command {
    let mut cli = super::Cli::command();
    let names: Vec<String> = cli
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        cli = cli.mut_subcommand(name, |mut sub| {
            // `mut_arg` moves an argument to the end, so every positional
            // one is taken in order and given its index explicitly.
            let positions: Vec<String> = sub
                .get_positionals()
                .map(|a| a.get_id().to_string())
                .collect();
            let options: Vec<String> = sub
                .get_opts()
                .map(|a| a.get_id().to_string())
                .filter(|id| candidates(id).is_some())
                .collect();
            for (i, id) in positions.into_iter().enumerate() {
                let more = candidates(&id);
                sub = sub.mut_arg(id, |a| {
                    let a = a.index(i + 1);
                    match more {
                        Some(c) => a.add(c),
                        None => a,
                    }
                });
            }
            for id in options {
                let more = candidates(&id);
                sub = sub.mut_arg(id, |a| match more {
                    Some(c) => a.add(c),
                    None => a,
                });
            }
            sub
        });
    }
    cli
}

/// What completes an argument, by its id.
fn candidates(id: &str) -> Option<ArgValueCandidates> {
    match id {
        "tab" => Some(ArgValueCandidates::new(tab_candidates)),
        "agent" => Some(ArgValueCandidates::new(agent_candidates)),
        _ => None,
    }
}

/// The tabs of the current folder's session, by number, id and name (what
/// `nerdr read` takes); outside any session, every tab by id (ids work
/// from anywhere, numbers and names only in their session).
fn tab_candidates() -> Vec<CompletionCandidate> {
    let folder = std::env::current_dir()
        .ok()
        .and_then(|d| std::fs::canonicalize(d).ok());
    let here = folder.clone().and_then(|f| {
        client::peek(
            ListTabs {
                folder: Some(f),
                all: false,
            },
            ASK_WITHIN,
        )
    });
    match here {
        Some(tabs) if !tabs.is_empty() => tabs
            .iter()
            .flat_map(|t| {
                let about = format!("{} {}", t.agent, t.id);
                let numbered = format!("{} {}", t.name, t.id);
                [
                    CompletionCandidate::new(t.number.to_string()).help(Some(numbered.into())),
                    CompletionCandidate::new(&t.id).help(Some(t.name.clone().into())),
                    CompletionCandidate::new(&t.name).help(Some(about.into())),
                ]
            })
            .collect(),
        _ => client::peek(
            ListTabs {
                folder: None,
                all: true,
            },
            ASK_WITHIN,
        )
        .unwrap_or_default()
        .iter()
        .map(|t| {
            let about = format!("{} in {}", t.name, t.folder.display());
            CompletionCandidate::new(&t.id).help(Some(about.into()))
        })
        .collect(),
    }
}

/// The agents the core's config defines.
fn agent_candidates() -> Vec<CompletionCandidate> {
    client::peek(ListAgents, ASK_WITHIN)
        .map(|a| a.agents)
        .unwrap_or_default()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_calls_nerdr_from_path() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = script(shell).unwrap();
            assert!(text.contains("COMPLETE="), "{shell:?}: {text}");
            assert!(!text.contains("target/"), "{shell:?}: {text}");
        }
    }

    /// Every argument that names a tab or an agent gets candidates, so a
    /// command added later with a `tab` argument completes too.
    #[test]
    fn tab_and_agent_arguments_get_candidates() {
        let mut cli = command();
        cli.build();
        let with = |sub: &str, arg: &str| {
            cli.find_subcommand(sub)
                .and_then(|s| s.get_arguments().find(|a| a.get_id() == arg))
                .and_then(|a| a.get::<ArgValueCandidates>())
                .is_some()
        };
        for (sub, arg) in [
            ("read", "tab"),
            ("send", "tab"),
            ("close", "tab"),
            ("agent", "agent"),
            ("switch", "agent"),
        ] {
            assert!(with(sub, arg), "{sub} {arg}");
        }
        assert!(!with("send", "text"));
    }
}
