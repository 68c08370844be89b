//! `nerdr sessions [--json]`: every session, one line each: its name (what
//! `nerdr attach NAME` takes), its folder, its tabs and what they are
//! doing. Colour only on a terminal, as `nerdr tabs`.

use std::io::IsTerminal;
use std::process::ExitCode;

use crate::client;
use crate::protocol::api::{ListSessions, SessionInfo};

#[derive(Debug, clap::Args)]
#[command(
    after_help = "A session holds the tabs started in its folder. A command run in a subfolder of \
        a session's folder, or inside one of its tabs' worktrees, acts on that session (the \
        nearest one); in a folder in no session, it starts a new session at that exact folder."
)]
pub struct Args {
    /// One JSON array of {folder, name, tabs, running, blocked, done}
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let sessions = client::call(ListSessions)?;
    if args.json {
        println!("{}", crate::printable::json(&sessions)?);
    } else {
        print!("{}", table(&sessions, std::io::stdout().is_terminal()));
    }
    Ok(ExitCode::SUCCESS)
}

/// The sessions as a table whose columns are as wide as their widest cell.
fn table(sessions: &[SessionInfo], colour: bool) -> String {
    if sessions.is_empty() {
        return "no sessions (run `nerdr` or `nerdr agent NAME` in a folder to start one)\n".into();
    }
    let header = ["NAME", "FOLDER", "TABS"].map(String::from);
    let mut rows = vec![(header, String::from("STATES"))];
    for s in sessions {
        let cells = [
            crate::protocol::printable(&s.name),
            crate::protocol::printable(&s.folder.display().to_string()),
            s.tabs.to_string(),
        ];
        rows.push((cells, states(s, colour)));
    }
    let mut width = [0; 3];
    for (cells, _) in &rows {
        for (w, cell) in width.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for ([name, folder, tabs], states) in rows {
        let line = format!(
            "{name:<w0$}  {folder:<w1$}  {tabs:>w2$}  {states}",
            w0 = width[0],
            w1 = width[1],
            w2 = width[2].max(4),
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// What a session's tabs are doing, in words: `2 running (1 BLOCKED, 1
/// done), 1 not running`. `BLOCKED` is in capitals so it stands out
/// without colour; on a terminal it is red and `done` green, as in `nerdr
/// tabs`.
fn states(s: &SessionInfo, colour: bool) -> String {
    if s.tabs == 0 {
        return "no tabs".into();
    }
    let paint = |text: String, c: &str| {
        if colour {
            format!("\x1b[{c}m{text}\x1b[0m")
        } else {
            text
        }
    };
    let mut of_running = Vec::new();
    if s.blocked > 0 {
        of_running.push(paint(format!("{} BLOCKED", s.blocked), "1;31"));
    }
    if s.done > 0 {
        of_running.push(paint(format!("{} done", s.done), "1;32"));
    }
    let mut out = format!("{} running", s.running);
    if !of_running.is_empty() {
        out.push_str(&format!(" ({})", of_running.join(", ")));
    }
    let stopped = s.tabs.saturating_sub(s.running);
    if stopped > 0 {
        out.push_str(&format!(", {stopped} not running"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str, folder: &str, counts: [usize; 4]) -> SessionInfo {
        let [tabs, running, blocked, done] = counts;
        SessionInfo {
            folder: folder.into(),
            name: name.into(),
            tabs,
            running,
            blocked,
            done,
        }
    }

    #[test]
    fn each_session_is_one_aligned_line() {
        let rows = [
            session("proj", "/home/u/proj", [3, 2, 1, 0]),
            session("a-longer-name", "/w", [12, 10, 0, 2]),
            session("empty", "/e", [0, 0, 0, 0]),
        ];
        let text = table(&rows, false);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines,
            [
                "NAME           FOLDER        TABS  STATES",
                "proj           /home/u/proj     3  2 running (1 BLOCKED), 1 not running",
                "a-longer-name  /w              12  10 running (2 done), 2 not running",
                "empty          /e               0  no tabs",
            ]
        );
    }

    #[test]
    fn colour_only_when_asked() {
        let s = session("p", "/p", [2, 2, 1, 1]);
        assert_eq!(states(&s, false), "2 running (1 BLOCKED, 1 done)");
        assert_eq!(
            states(&s, true),
            "2 running (\x1b[1;31m1 BLOCKED\x1b[0m, \x1b[1;32m1 done\x1b[0m)"
        );
        assert!(!table(&[s], false).contains('\x1b'));
    }

    #[test]
    fn no_sessions_says_how_to_start_one() {
        assert!(table(&[], false).starts_with("no sessions (run `nerdr`"));
    }
}
