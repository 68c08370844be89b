//! `nerdr handoffs [--all] [--json] [--clear]`: the handoffs agents gave
//! you (`nerdr handoff --to-me`).

use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::ListHandoffs;
use crate::protocol::replies::HandoffInfo;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Every session's, not only this folder's
    #[arg(long)]
    pub all: bool,
    /// As JSON
    #[arg(long)]
    pub json: bool,
    /// Forget the ones listed, once shown
    #[arg(long)]
    pub clear: bool,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let list = client::call(ListHandoffs {
        folder: Some(folder.resolve()?),
        all: args.all,
        clear: args.clear,
    })?;
    if args.json {
        // `at` in RFC 3339, as every other time nerdr's JSON gives.
        let mut rows = serde_json::to_value(&list)?;
        for (row, h) in rows.as_array_mut().into_iter().flatten().zip(&list) {
            row["at"] = crate::core::clock::rfc3339_seconds(h.at).into();
        }
        println!("{}", crate::printable::json(&rows)?);
    } else {
        print!("{}", render(&list));
    }
    Ok(ExitCode::SUCCESS)
}

/// Each handoff under a line naming it; agents' text made printable.
fn render(list: &[HandoffInfo]) -> String {
    if list.is_empty() {
        return "no handoffs to you\n".into();
    }
    let mut out = String::new();
    for h in list {
        out.push_str(&format!(
            "handoff {} from tab {} ({}, {}) in {}\n",
            h.number,
            h.name,
            h.tab,
            h.agent,
            h.folder.display()
        ));
        if let Some(n) = &h.note {
            out.push_str(&format!("  {n}\n"));
        }
        for line in h.text.lines() {
            out.push_str(&format!("  {}\n", crate::protocol::printable(line)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandboxed_agent_s_handoff_shows_its_note_and_no_escapes() {
        let h = HandoffInfo {
            number: 3,
            tab: "ab12".into(),
            name: "claude-1".into(),
            agent: "claude".into(),
            folder: "/p".into(),
            at: 0,
            text: "# Handoff\nok\x1b[2J".into(),
            note: Some(crate::review::SANDBOX_NOTE.into()),
        };
        let out = render(&[h]);
        assert!(
            out.starts_with("handoff 3 from tab claude-1 (ab12, claude) in /p\n"),
            "{out}"
        );
        assert!(out.contains(crate::review::SANDBOX_NOTE), "{out}");
        assert!(out.contains("ok\\u{1b}[2J"), "{out}");
        assert_eq!(render(&[]), "no handoffs to you\n");
    }
}
