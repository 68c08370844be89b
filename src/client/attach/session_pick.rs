//! The session picker's list (prefix `s`, like tmux's choose-session):
//! each session's name, how many tabs it has and what they need, and its
//! folder, so the person knows where a choice leads. Pure: sessions in,
//! lines out.

use std::path::PathBuf;

use crate::protocol::printable;

/// One session of the session picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub folder: PathBuf,
    pub name: String,
    pub tabs: usize,
    pub running: usize,
    pub blocked: usize,
    pub done: usize,
    /// The session this window shows.
    pub here: bool,
}

/// The picker's lines, entry `sel` marked `>`.
pub fn lines(sessions: &[Session], sel: usize) -> Vec<String> {
    let mut lines = vec!["Switch to a session:".to_string(), String::new()];
    let wide = sessions
        .iter()
        .map(|s| printable(&s.name).chars().count())
        .max()
        .unwrap_or(0);
    for (i, s) in sessions.iter().enumerate() {
        let mark = if i == sel { ">" } else { " " };
        lines.push(format!(" {mark} {}. {}", i + 1, session_line(s, wide)));
    }
    if sessions.is_empty() {
        lines.push("No sessions.".into());
    }
    lines
}

/// A session's entry: its name, its tabs and what they do, its folder.
pub fn session_line(s: &Session, name_cols: usize) -> String {
    let mut what = vec![format!(
        "{} tab{}",
        s.tabs,
        if s.tabs == 1 { "" } else { "s" }
    )];
    if s.blocked > 0 {
        what.push(format!("{} BLOCKED", s.blocked));
    }
    if s.done > 0 {
        what.push(format!("{} done", s.done));
    }
    if s.running < s.tabs {
        what.push(format!("{} stopped", s.tabs - s.running));
    }
    // Before the folder, which a narrow window cuts.
    let here = if s.here { "(this window) " } else { "" };
    format!(
        "{:<name_cols$}  {:<28} {here}{}",
        printable(&s.name),
        what.join(", "),
        printable(&s.folder.display().to_string())
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str, tabs: usize, running: usize, blocked: usize, done: usize) -> Session {
        Session {
            folder: format!("/w/{name}").into(),
            name: name.into(),
            tabs,
            running,
            blocked,
            done,
            here: false,
        }
    }

    /// (session, its entry)
    #[test]
    fn each_session_says_what_its_tabs_need() {
        #[rustfmt::skip]
        let rows = [
            (session("api", 1, 1, 0, 0), "api     1 tab                        /w/api"),
            (session("web", 3, 3, 1, 1), "web     3 tabs, 1 BLOCKED, 1 done    /w/web"),
            (session("docs", 2, 0, 0, 0), "docs    2 tabs, 2 stopped            /w/docs"),
            (Session { here: true, ..session("api", 2, 2, 0, 0) },
             "api     2 tabs                       (this window) /w/api"),
            (session("e\x1b[2J", 0, 0, 0, 0), "e\\u{1b}[2J  0 tabs"),
        ];
        for (s, want) in rows {
            let got = session_line(&s, 6);
            assert!(got.starts_with(want.trim_end()), "{got:?}");
        }
        let l = lines(&[session("a", 1, 1, 0, 0), session("b", 1, 1, 0, 0)], 1);
        assert_eq!(
            l[2].trim_end(),
            "   1. a  1 tab                        /w/a"
        );
        assert!(l[3].starts_with(" > 2. b"), "{l:?}");
        assert_eq!(lines(&[], 0)[2], "No sessions.");
    }
}
