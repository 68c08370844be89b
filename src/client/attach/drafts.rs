//! Comments put on a tab's diff and not sent yet (drafts), kept per tab
//! across closing and reopening the diff view and across detaching: in
//! the window while it runs, and in `drafts/<tab id>.json` under nerdr's
//! state dir (0600, in a 0700 folder), written whenever they change and
//! read when the view opens in a window that has none for the tab.
//!
//! They are the window's, not the core's: a draft is the person's typing,
//! which no agent, hook or other caller has any business reading (the
//! core answers them all), and nothing but the window ever acts on it; the
//! window and the core run as the same user with the same state dir, so a
//! file there outlives a detach, a new window and a core restart alike,
//! without a new request in the protocol or a core that must be up to
//! keep typing safe.
//!
//! Each draft records the commit its diff started from and the text of
//! its line ([`Draft`]). When the view opens on a new diff ([`reanchor`],
//! pure), a draft stays on its line while that line reads the same, moves
//! to the nearest line that does (lines added above it), and is dropped
//! when no line of its file reads so any more; the view says which were
//! dropped, with their text, so nothing typed goes unsaid. A comment on a
//! file stays while the diff has the file; a question on a review comment
//! stays with the review.
//!
//! A tab's drafts outlive the tab (closing it from another window or `nerdr
//! close` must not take the person's words with it); `nerdr clean` removes
//! those of tabs that are gone ([`orphans`], pure), printing each comment
//! whole as it does, so what goes is said, not lost silently.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::comments::{Comment, Side};
use crate::client::patch::{Kind, Patch};

/// One unsent comment, with what it was made on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Draft {
    pub comment: Comment,
    /// The text of its line when it was made (`None`: on a whole file, or
    /// a line the diff did not show).
    #[serde(default)]
    pub line_text: Option<String>,
    /// The commit the diff it was made on started from.
    #[serde(default)]
    pub made_on: String,
}

/// The drafts of `comments` on `patch`, whose diff started from
/// `made_on`.
pub fn keep(patch: &Patch, comments: &[Comment], made_on: &str) -> Vec<Draft> {
    comments
        .iter()
        .map(|c| Draft {
            line_text: c
                .line
                .and_then(|n| lines_of(patch, &c.path, c.side).find(|(k, _)| *k == n))
                .map(|(_, text)| text.to_string()),
            comment: c.clone(),
            made_on: made_on.to_string(),
        })
        .collect()
}

/// Drafts against a new diff: the comments that stay (on their lines as
/// the new diff numbers them), and those whose line is gone.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reanchored {
    pub kept: Vec<Comment>,
    pub dropped: Vec<Comment>,
}

/// Put each draft on `patch` (see the module docs).
pub fn reanchor(drafts: Vec<Draft>, patch: &Patch) -> Reanchored {
    let mut out = Reanchored::default();
    for d in drafts {
        let mut c = d.comment;
        let stays = match (c.about.is_some(), c.line) {
            // On a review comment: the review says where it is.
            (true, _) => true,
            (false, None) => patch.files.iter().any(|f| names(f).any(|p| p == c.path)),
            (false, Some(n)) => {
                let on = lines_of(patch, &c.path, c.side);
                let found = match &d.line_text {
                    None => on.map(|(k, _)| k).find(|k| *k == n),
                    // Its own line if it still reads the same, else the
                    // nearest that does.
                    Some(text) => on
                        .filter(|(_, t)| t == text)
                        .map(|(k, _)| k)
                        .min_by_key(|k| k.abs_diff(n)),
                };
                found.map(|k| c.line = Some(k)).is_some()
            }
        };
        if stays {
            out.kept.push(c);
        } else {
            out.dropped.push(c);
        }
    }
    out
}

/// What the view says of `dropped`, or nothing.
pub fn dropped_note(dropped: &[Comment]) -> Option<String> {
    let said: Vec<String> = dropped
        .iter()
        .map(|c| format!("{} \"{}\"", c.place(), c.text))
        .collect();
    match said.len() {
        0 => None,
        1 => Some(format!(
            "an unsent comment was dropped, its line is gone: {}",
            said[0]
        )),
        n => Some(format!(
            "{n} unsent comments were dropped, their lines are gone: {}",
            said.join("; ")
        )),
    }
}

/// A file's paths in the patch (both, for a rename).
fn names(f: &crate::client::patch::FileDiff) -> impl Iterator<Item = &str> {
    f.old_path
        .as_deref()
        .into_iter()
        .chain(f.new_path.as_deref())
}

/// The numbered lines of `path` on `side` that the patch shows.
fn lines_of<'a>(
    patch: &'a Patch,
    path: &'a str,
    side: Side,
) -> impl Iterator<Item = (u32, &'a str)> + 'a {
    patch
        .files
        .iter()
        .filter(move |f| match side {
            Side::Old => f.old_path.as_deref() == Some(path),
            Side::New => f.new_path.as_deref() == Some(path),
        })
        .flat_map(|f| f.hunks.iter().flat_map(|h| h.lines.iter()))
        .filter_map(move |l| match (side, l.kind) {
            (Side::Old, Kind::Removed) => Some((l.old?, l.text.as_str())),
            (Side::New, Kind::Added | Kind::Context) => Some((l.new?, l.text.as_str())),
            _ => None,
        })
}

/// The folder of the drafts in `state_dir`.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("drafts")
}

/// The folder of the drafts of another host's tabs (`nerdr --host`),
/// apart from this machine's: `nerdr clean` here removes the drafts of
/// tabs this machine's core no longer has, and another host's tabs are
/// none of its. The host's name is made a file name one to one, so two
/// hosts never share a folder: letters, digits and `-_.@` stay, any other
/// byte becomes `%XX` (`%` too), as in a URL. The `host-` prefix keeps
/// `.` and `..` from being the name.
pub fn host_dir(state_dir: &Path, host: &str) -> PathBuf {
    let mut name = String::from("host-");
    for b in host.bytes() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'@' => {
                name.push(b as char)
            }
            _ => name.push_str(&format!("%{b:02X}")),
        }
    }
    dir(state_dir).join(name)
}

/// Tab `tab`'s file in `dir`. Tab ids are the core's hex: anything else is
/// not made into a path.
fn file(dir: &Path, tab: &str) -> Result<PathBuf, String> {
    if tab.is_empty() || !tab.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Err(format!(
            "tab id {tab:?} is not a file name: drafts not kept"
        ));
    }
    Ok(dir.join(format!("{tab}.json")))
}

/// The tabs with drafts kept in `dir` (none when it is missing).
pub fn kept_tabs(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let tab = name.strip_suffix(".json")?;
            file(dir, tab).is_ok().then(|| tab.to_string())
        })
        .collect();
    out.sort();
    out
}

/// The tabs of `kept` that are not among `tabs` (every tab the core has):
/// closed for good, so nothing will show their drafts again.
pub fn orphans(kept: &[String], tabs: &[&str]) -> Vec<String> {
    kept.iter()
        .filter(|k| !tabs.contains(&k.as_str()))
        .cloned()
        .collect()
}

/// Drafts as `nerdr clean` says them when it removes them: each comment
/// on a line of its own, whole, `  file:line: text`.
pub fn said(drafts: &[Draft]) -> String {
    drafts
        .iter()
        .map(|d| {
            let c = &d.comment;
            let on = match &c.about {
                Some(a) => format!(" (on review {}: {})", a.review, a.quote),
                None => String::new(),
            };
            format!(
                "  {}{on}: {}\n",
                c.place(),
                crate::protocol::printable(&c.text)
            )
        })
        .collect()
}

#[derive(Serialize, Deserialize)]
struct Kept {
    tab: String,
    drafts: Vec<Draft>,
}

/// Tab `tab`'s drafts as kept in `dir`; none kept is none. A file that
/// does not read is an error naming it, and stays (it holds the person's
/// words).
pub fn load(dir: &Path, tab: &str) -> Result<Vec<Draft>, String> {
    let path = file(dir, tab)?;
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice::<Kept>(&bytes)
            .map(|k| k.drafts)
            .map_err(|e| {
                format!(
                    "{} does not read as unsent comments ({e}); move it aside to start afresh",
                    path.display()
                )
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Keep `drafts` as tab `tab`'s in `dir` (none: its file goes): a new
/// file, 0600, renamed over the old.
pub fn save(dir: &Path, tab: &str, drafts: &[Draft]) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = file(dir, tab)?;
    if drafts.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {e}", path.display()))
            }
            _ => Ok(()),
        };
    }
    crate::private_dir::create(dir).map_err(|e| e.to_string())?;
    let kept = Kept {
        tab: tab.to_string(),
        drafts: drafts.to_vec(),
    };
    let json = serde_json::to_vec_pretty(&kept).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&json)?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::attach::comments::About;

    #[test]
    fn another_hosts_drafts_are_kept_apart_under_a_file_name() {
        let state = Path::new("/s");
        #[rustfmt::skip]
        let rows = [
            ("devbox", "/s/drafts/host-devbox"),
            ("me@box.example.com", "/s/drafts/host-me@box.example.com"),
            ("../../etc", "/s/drafts/host-..%2F..%2Fetc"),
            ("a/b c", "/s/drafts/host-a%2Fb%20c"),
            ("a_b", "/s/drafts/host-a_b"),
            ("a:b", "/s/drafts/host-a%3Ab"),
            ("a%3Ab", "/s/drafts/host-a%253Ab"),
            (".x", "/s/drafts/host-.x"),
            ("..", "/s/drafts/host-.."),
            ("é", "/s/drafts/host-%C3%A9"),
        ];
        for (host, want) in rows {
            assert_eq!(host_dir(state, host), PathBuf::from(want), "{host}");
        }
        // One to one: names that differ never share a folder.
        let names = ["a_b", "a:b", "a%b", "a b", "a%3Ab", "x", ".x", "a/b"];
        let dirs: std::collections::HashSet<_> = names.iter().map(|h| host_dir(state, h)).collect();
        assert_eq!(dirs.len(), names.len());
        // Not a tab's file: `kept_tabs` of this machine's folder skips it.
        assert!(!host_dir(state, "x")
            .display()
            .to_string()
            .ends_with(".json"));
    }

    fn patch(text: &str) -> Patch {
        crate::client::patch::parse(text).unwrap()
    }

    /// `notes.txt` with `body` as its new lines 1.. (all added).
    fn added(body: &[&str]) -> Patch {
        let mut text = format!(
            "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n\
             +++ b/notes.txt\n@@ -0,0 +1,{} @@\n",
            body.len()
        );
        for l in body {
            text.push_str(&format!("+{l}\n"));
        }
        patch(&text)
    }

    fn on(line: Option<u32>, text: &str) -> Comment {
        Comment {
            path: "notes.txt".into(),
            side: Side::New,
            line,
            text: text.into(),
            about: None,
        }
    }

    #[test]
    fn drafts_of_gone_tabs_are_orphans() {
        let kept = vec!["ab12".to_string(), "cd34".to_string()];
        assert_eq!(orphans(&kept, &["ab12", "ef56"]), vec!["cd34".to_string()]);
        assert!(orphans(&kept, &["cd34", "ab12"]).is_empty());
        assert_eq!(orphans(&kept, &[]), kept);
    }

    #[test]
    fn drafts_are_kept_per_tab_and_listed_by_tab() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("drafts");
        assert!(kept_tabs(&d).is_empty(), "no folder, no drafts");
        let draft = |text: &str| Draft {
            comment: on(Some(2), text),
            line_text: Some("beta".into()),
            made_on: "c0ffee".into(),
        };
        save(&d, "cd34", &[draft("why\u{1b}[2J this?")]).unwrap();
        save(&d, "ab12", &[draft("one"), draft("two")]).unwrap();
        std::fs::write(d.join("not a tab.json"), "{}").unwrap();
        assert_eq!(kept_tabs(&d), vec!["ab12".to_string(), "cd34".to_string()]);
        assert_eq!(
            said(&load(&d, "cd34").unwrap()),
            "  notes.txt:2: why\\u{1b}[2J this?\n"
        );
    }

    /// (what, the diff it was made on, the comment, the new diff, where
    /// it is after: `None` dropped)
    #[test]
    fn drafts_follow_their_lines_or_are_dropped() {
        let first = added(&["alpha", "beta", "gamma"]);
        let question = Comment {
            about: Some(About {
                review: 1,
                index: 0,
                quote: "note: x".into(),
            }),
            ..on(Some(9), "why?")
        };
        #[rustfmt::skip]
        let rows: Vec<(&str, Comment, Patch, Option<Option<u32>>)> = vec![
            ("the same line, the same text", on(Some(2), "a"), added(&["alpha", "beta", "gamma"]), Some(Some(2))),
            ("a line added above: it moves down", on(Some(2), "a"), added(&["new", "alpha", "beta", "gamma"]), Some(Some(3))),
            ("its line rewritten: dropped", on(Some(2), "a"), added(&["alpha", "BETA", "gamma"]), None),
            ("its file gone from the diff: dropped", on(Some(2), "a"), Patch::default(), None),
            ("on the file, the file still there", on(None, "a"), added(&["x"]), Some(None)),
            ("on the file, the file gone", on(None, "a"), Patch::default(), None),
            ("a question on a review comment stays", question.clone(), Patch::default(), Some(Some(9))),
        ];
        for (what, comment, next, want) in rows {
            let drafts = keep(&first, std::slice::from_ref(&comment), "b0");
            assert_eq!(drafts[0].made_on, "b0");
            let got = reanchor(drafts, &next);
            match want {
                Some(line) => {
                    assert_eq!(got.kept.len(), 1, "{what}: {got:?}");
                    assert_eq!(got.kept[0].line, line, "{what}");
                    assert!(got.dropped.is_empty(), "{what}");
                }
                None => assert_eq!(got.dropped, vec![comment], "{what}"),
            }
        }
        // The nearest line reading the same wins.
        let twice = added(&["x", "dup", "x", "x", "dup"]);
        let d = keep(&twice, &[on(Some(5), "a")], "b0");
        let got = reanchor(d, &added(&["dup", "x", "x", "x", "x", "dup"]));
        assert_eq!(got.kept[0].line, Some(6));
    }

    #[test]
    fn the_view_names_what_it_dropped() {
        assert_eq!(dropped_note(&[]), None);
        assert_eq!(
            dropped_note(&[on(Some(2), "fix it")]).unwrap(),
            "an unsent comment was dropped, its line is gone: notes.txt:2 \"fix it\""
        );
        assert!(dropped_note(&[on(Some(2), "a"), on(None, "b")])
            .unwrap()
            .starts_with("2 unsent comments were dropped, their lines are gone: notes.txt:2 \"a\"; notes.txt \"b\""));
    }

    #[test]
    fn drafts_are_kept_private_and_come_back() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = dir(root.path());
        assert_eq!(load(&dir, "ab12").unwrap(), vec![], "none kept yet");
        let d = keep(&added(&["alpha"]), &[on(Some(1), "é日 ok")], "b0");
        save(&dir, "ab12", &d).unwrap();
        let f = dir.join("ab12.json");
        assert_eq!(
            std::fs::metadata(&f).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        assert_eq!(load(&dir, "ab12").unwrap(), d);
        save(&dir, "ab12", &[]).unwrap();
        assert!(!f.exists(), "none left: the file goes");
        assert!(save(&dir, "../x", &d)
            .unwrap_err()
            .contains("not a file name"));
        std::fs::write(&f, "{").unwrap();
        let e = load(&dir, "ab12").unwrap_err();
        assert!(
            e.contains("ab12.json") && e.contains("move it aside"),
            "{e}"
        );
        assert!(f.exists(), "an unreadable file stays");
    }
}
