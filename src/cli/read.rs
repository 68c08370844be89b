//! `nerdr read TAB [--lines N]`: a tab's current screen as text.

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ReadScreen;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The tab: its id, a unique id prefix, its number or its name (see `nerdr tabs`)
    pub tab: String,
    /// Only the last N lines of the screen (0 prints nothing)
    #[arg(long, value_name = "N")]
    pub lines: Option<usize>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let screen = client::call(ReadScreen {
        tab: args.tab,
        lines: args.lines,
        folder: folder.scope()?,
    })?;
    print!("{}", text_out(&screen.text));
    Ok(ExitCode::SUCCESS)
}

/// What is printed: the lines, each ended by a newline; nothing at all for
/// no lines (`--lines 0`, an empty screen), not an empty line.
fn text_out(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!("{text}\n")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_lines_print_nothing() {
        for (text, out) in [("", ""), ("$ ", "$ \n"), ("a\nb", "a\nb\n")] {
            assert_eq!(super::text_out(text), out, "{text:?}");
        }
    }
}
