//! The session picker's list (prefix `s`, like tmux's choose-session):
//! each session's name, how many tabs it has and what they need, and its
//! folder, so the person knows where a choice leads. Pure: sessions in,
//! lines and choices out.
//!
//! With `[hosts]` in the config the list has a group per place: this
//! machine (`local`) first, then each host by name, each under its name
//! (README.md, "The window"). The place the window shows is known at
//! once (its core's list); the others are asked in the background
//! (`session_hosts`) and are `asking...` until they answer, with their
//! sessions or `no answer: WHY`. With no hosts the list is one group,
//! drawn as it always was, with no heading.

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

/// Where sessions are: this machine's core, or a `[hosts.NAME]` host's
/// (or, for a window opened with `--host` on a destination no section
/// names, that destination's). Ordered as the groups are listed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    Local,
    Host(String),
}

/// What this machine is called in the list, as in `tabs --all-hosts`
/// (no `[hosts]` section may take it).
pub const LOCAL_NAME: &str = crate::config::LOCAL_HOST;

impl Place {
    pub fn name(&self) -> &str {
        match self {
            Place::Local => LOCAL_NAME,
            Place::Host(name) => name,
        }
    }
}

/// What is known of one place's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Asked, not answered yet.
    Asking,
    Sessions(Vec<Session>),
    /// Why there is no list: the reason, one line of text.
    NoAnswer(String),
}

/// The list the picker shows: every place's group, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picker {
    /// The place this window shows.
    pub here: Place,
    pub groups: Vec<(Place, Known)>,
}

/// What choosing an entry does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chosen {
    /// Nothing: the session this window shows.
    Stay,
    /// Show this folder's session, on the same core.
    Switch(PathBuf),
    /// Show a session of another place: the window connects there.
    Move { place: Place, folder: PathBuf },
}

impl Picker {
    /// The picker of a window showing `here`: its core's `sessions`
    /// (`None`: not connected, so not known), and a group asked for each
    /// of `hosts` (the configured ones) and for this machine when `here`
    /// is a host.
    pub fn open<'a>(
        here: Place,
        sessions: Option<Vec<Session>>,
        hosts: impl IntoIterator<Item = &'a String>,
    ) -> Picker {
        let mut places: Vec<Place> = hosts.into_iter().cloned().map(Place::Host).collect();
        places.push(here.clone());
        places.push(Place::Local);
        places.sort();
        places.dedup();
        let groups = places
            .into_iter()
            .map(|p| {
                let known = match (&sessions, p == here) {
                    (Some(s), true) => Known::Sessions(s.clone()),
                    (None, true) => Known::NoAnswer("not connected (reconnecting...)".into()),
                    (_, false) => Known::Asking,
                };
                (p, known)
            })
            .collect();
        Picker { here, groups }
    }

    /// The places to ask for their sessions.
    pub fn asking(&self) -> Vec<Place> {
        self.groups
            .iter()
            .filter(|(_, k)| *k == Known::Asking)
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// The entries one can choose, in the order they are numbered.
    pub fn entries(&self) -> Vec<(&Place, &Session)> {
        self.groups
            .iter()
            .flat_map(|(p, k)| match k {
                Known::Sessions(s) => s.iter().map(|s| (p, s)).collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    pub fn count(&self) -> usize {
        self.entries().len()
    }

    /// Where the picker opens: on the session this window shows, so that
    /// Enter stays.
    pub fn shown(&self) -> usize {
        self.entries()
            .iter()
            .position(|(p, s)| **p == self.here && s.here)
            .unwrap_or(0)
    }

    /// `place` answered (its sessions, or why not) while entry `sel` was
    /// selected: the selection afterwards, on the same entry (a group
    /// above it that fills in moves it down).
    pub fn answered(
        &mut self,
        place: &Place,
        answer: Result<Vec<Session>, String>,
        sel: usize,
    ) -> usize {
        let was = self
            .entries()
            .get(sel)
            .map(|(p, s)| ((*p).clone(), s.folder.clone()));
        let Some((_, known)) = self.groups.iter_mut().find(|(p, _)| p == place) else {
            return sel;
        };
        *known = match answer {
            Ok(mut sessions) => {
                // A picker is for a person to read: a place with more
                // sessions than that is cut there (its far end may be no
                // nerdr, and every key redraws the list).
                sessions.truncate(MAX_SESSIONS);
                Known::Sessions(sessions)
            }
            Err(why) => Known::NoAnswer(reason(&why)),
        };
        let Some((p, folder)) = was else {
            return sel;
        };
        self.entries()
            .iter()
            .position(|(q, s)| **q == p && s.folder == folder)
            .unwrap_or(sel)
    }

    /// What Enter on entry `i` does.
    pub fn chose(&self, i: usize) -> Chosen {
        let entries = self.entries();
        let Some((place, s)) = entries.get(i) else {
            return Chosen::Stay;
        };
        match (**place == self.here, s.here) {
            (true, true) => Chosen::Stay,
            (true, false) => Chosen::Switch(s.folder.clone()),
            (false, _) => Chosen::Move {
                place: (*place).clone(),
                folder: s.folder.clone(),
            },
        }
    }

    /// Whether the list has groups (any place but this machine's core).
    fn grouped(&self) -> bool {
        self.groups.len() > 1 || self.here != Place::Local
    }
}

/// How many characters of a place's reason are shown: its line stays a
/// line, and a remote login's chatter cannot fill the window.
const REASON_CHARS: usize = 200;

/// Why a place gave no list, as one plain line: escape sequences and
/// control characters dropped (a remote shell's words may be in it),
/// The most sessions the picker lists of one place.
pub const MAX_SESSIONS: usize = 500;

/// lines joined, cut at [`REASON_CHARS`].
pub fn reason(text: &str) -> String {
    let text = crate::printable::typeable(text);
    let line = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
        .replace('\t', " ");
    match line.char_indices().nth(REASON_CHARS) {
        Some((cut, _)) => format!("{}...", &line[..cut]),
        None => line,
    }
}

/// The picker's lines for a window `cols` wide, entry `sel` marked `>`,
/// and the index of the line that shows it (what must stay in view). A
/// place's reason wraps: ssh's words come at its end.
pub fn lines(p: &Picker, sel: usize, cols: usize) -> (Vec<String>, usize) {
    let mut lines = vec!["Switch to a session:".to_string(), String::new()];
    let wide = p
        .entries()
        .iter()
        .map(|(_, s)| printable(&s.name).chars().count())
        .max()
        .unwrap_or(0);
    let grouped = p.grouped();
    let indent = if grouped { "  " } else { "" };
    let mut at = 0;
    let mut sel_line = 0;
    for (place, known) in &p.groups {
        if grouped {
            let name = printable(place.name());
            match known {
                Known::Sessions(s) if s.is_empty() => lines.push(format!(" {name}: no sessions")),
                Known::Sessions(_) => lines.push(format!(" {name}:")),
                Known::Asking => lines.push(format!(" {name}: asking...")),
                Known::NoAnswer(why) => lines.extend(wrap(
                    &format!(" {name}: no answer: {}", printable(why)),
                    cols,
                    "     ",
                )),
            }
        }
        let sessions = match known {
            Known::Sessions(sessions) => sessions,
            // One group, so no heading: why it has no list, alone.
            Known::NoAnswer(why) if !grouped => {
                lines.push(printable(why));
                continue;
            }
            _ => continue,
        };
        for s in sessions {
            let mark = if at == sel { ">" } else { " " };
            if at == sel {
                sel_line = lines.len();
            }
            at += 1;
            lines.push(format!("{indent} {mark} {at}. {}", session_line(s, wide)));
        }
    }
    if !grouped && at == 0 && lines.len() == 2 {
        lines.push("No sessions.".into());
    }
    (lines, sel_line)
}

/// `text` in lines of at most `cols` characters, broken at spaces where
/// it can be, each line after the first led by `indent`.
pub fn wrap(text: &str, cols: usize, indent: &str) -> Vec<String> {
    let lead = indent.chars().count();
    let cols = cols.max(lead + 10);
    let mut out = Vec::new();
    let mut line = String::new();
    let mut len = 0;
    // Nothing but the indent on the line yet: no space before a word.
    let mut fresh = true;
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let gap = usize::from(!fresh);
            if len + gap + word.len() <= cols {
                if !fresh {
                    line.push(' ');
                }
                line.extend(word.iter());
                len += gap + word.len();
                fresh = false;
                break;
            }
            if fresh {
                // A word longer than a line: cut.
                line.extend(word.drain(..cols - len));
            }
            out.push(std::mem::take(&mut line));
            line.push_str(indent);
            len = lead;
            fresh = true;
        }
    }
    out.push(line);
    out
}

/// The lines that fit `room` rows, from the top unless the selected one
/// (`sel_line`) would be below them.
pub fn in_view(mut lines: Vec<String>, sel_line: usize, room: usize) -> Vec<String> {
    let skip = (sel_line + 1).saturating_sub(room.max(1));
    lines.split_off(skip.min(lines.len()))
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
#[path = "session_pick_tests.rs"]
mod tests;
