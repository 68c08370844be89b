//! `nerdr send TAB TEXT|- [--file F] [--no-enter]`: type text into a tab.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use super::Folder;
use crate::client;
use crate::protocol::api::SendText;
use crate::protocol::replies::Sent;

#[derive(Debug, clap::Args)]
#[command(
    after_help = "TEXT `-`, or --file, takes the text from standard input or a file, \
    for text too long or too awkward for one argument (a command line's argument stops at \
    128 KiB). Their one last newline is dropped, as `$(cat F)` drops it, so the Enter that \
    follows is the only one. With Enter, text for an agent goes as one message: a long or \
    multi-line one as a bracketed paste (when the agent's terminal turned that on; claude and \
    codex always), and the Enter once its screen has settled (at most 3 s), so its newlines \
    stay new lines and it is sent once."
)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// What to type; `-` reads it from standard input
    #[arg(required_unless_present = "file")]
    pub text: Option<String>,
    /// Type the contents of this file (`-`: standard input)
    #[arg(long, short = 'f', value_name = "FILE", conflicts_with = "text")]
    pub file: Option<PathBuf>,
    /// Do not press Enter after the text
    #[arg(long)]
    pub no_enter: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let text = text_of(args.text, args.file)?;
    let sent = client::call(SendText {
        tab: args.tab.clone(),
        text,
        enter: !args.no_enter,
        agent_only: false,
        folder: folder.scope()?,
    })?;
    if let Sent::Queued { queued, why } = sent {
        // Not delivered yet: say so, so a script does not take it as sent.
        eprintln!(
            "nerdr: the message for tab {} waits for the user's approval as {queued}: {why}",
            args.tab,
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The text to type: the argument itself, or what `-` or `--file` name.
pub(super) fn text_of(text: Option<String>, file: Option<PathBuf>) -> anyhow::Result<String> {
    let from = match (text, file) {
        (Some(t), _) if t != "-" => return Ok(t),
        (Some(_), _) => PathBuf::from("-"),
        (None, Some(f)) => f,
        (None, None) => anyhow::bail!("give the text to type, `-` for standard input, or --file"),
    };
    let mut bytes = Vec::new();
    let shown = if from.as_os_str() == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .context("reading the text from standard input")?;
        "standard input".to_string()
    } else {
        bytes = std::fs::read(&from).with_context(|| format!("reading {}", from.display()))?;
        from.display().to_string()
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "{shown} is not UTF-8 text (a bad byte at offset {}); nerdr types text only",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok(without_last_newline(text))
}

/// `text` without its one last newline (`\n` or `\r\n`).
fn without_last_newline(mut text: String) -> String {
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_last_newline_goes_and_nothing_else() {
        for (given, want) in [
            ("make test\n", "make test"),
            ("make test\r\n", "make test"),
            ("a\n\n", "a\n"),
            ("a\nb", "a\nb"),
            ("", ""),
            ("\n", ""),
            ("no newline", "no newline"),
        ] {
            assert_eq!(without_last_newline(given.into()), want, "{given:?}");
        }
    }

    #[test]
    fn the_argument_is_the_text_unless_it_is_a_dash() {
        assert_eq!(text_of(Some("hi".into()), None).unwrap(), "hi");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("prompt.txt");
        std::fs::write(&f, "line one\nline two\n").unwrap();
        assert_eq!(text_of(None, Some(f)).unwrap(), "line one\nline two");
    }

    #[test]
    fn a_bad_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.txt");
        let err = format!("{:#}", text_of(None, Some(missing.clone())).unwrap_err());
        assert!(err.contains(missing.to_str().unwrap()), "{err}");
        let binary = dir.path().join("blob");
        std::fs::write(&binary, b"ok\xff").unwrap();
        let err = format!("{:#}", text_of(None, Some(binary.clone())).unwrap_err());
        assert!(err.contains("blob") && err.contains("offset 2"), "{err}");
    }
}
