//! Which session a folder belongs to, found as git finds a repository: the
//! session whose folder is the folder or its nearest ancestor, or the
//! session of the tab whose worktree holds it (a tab works in a worktree
//! outside its session's folder). A folder in none starts a session of
//! its own, at that exact folder. Pure over plain data: the core gathers
//! the session folders and the tabs' worktrees from its state, and the
//! folder asked about is canonical before it comes here.

use std::path::{Path, PathBuf};

/// The session `dir` belongs to, among `sessions` (their folders) and
/// `worktrees` (a tab's worktree, and its tab's session folder): the
/// nearest of those folders that is `dir` or an ancestor of it, compared
/// component by component (`/p/ab` is not in `/p/a`). `None`: a folder in
/// no session.
pub fn session_of<'a>(
    dir: &Path,
    sessions: impl IntoIterator<Item = &'a Path>,
    worktrees: impl IntoIterator<Item = (&'a Path, &'a Path)>,
) -> Option<PathBuf> {
    let candidates = sessions
        .into_iter()
        .map(|s| (s, s))
        .chain(worktrees)
        .filter(|(at, _)| dir.starts_with(at));
    // The deepest holder wins; on a tie (a worktree at a session's folder,
    // which nerdr never makes) the session's own folder, listed first.
    let mut best: Option<(&Path, &Path)> = None;
    for (at, session) in candidates {
        let deeper = best.is_none_or(|(b, _)| at.components().count() > b.components().count());
        if deeper {
            best = Some((at, session));
        }
    }
    best.map(|(_, session)| session.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every way a folder can be placed.
    #[test]
    fn every_kind_of_folder() {
        let sessions = ["/p", "/p/sub", "/q", "/r/a"];
        let worktrees = [
            // proj's tab works in a worktree under the data folder
            ("/data/wt/p-1/ab12", "/p"),
            ("/data/wt/q-2/cd34", "/q"),
            // a worktree inside another session's folder: nearest wins
            ("/q/nested-wt", "/p"),
        ];
        let rows: &[(&str, Option<&str>)] = &[
            // a session's folder
            ("/p", Some("/p")),
            ("/q", Some("/q")),
            // any subfolder of one, the nearest ancestor winning
            ("/p/src", Some("/p")),
            ("/p/src/deep/er", Some("/p")),
            ("/p/sub", Some("/p/sub")),
            ("/p/sub/x", Some("/p/sub")),
            // a tab's worktree, or any folder inside it: its tab's session
            ("/data/wt/p-1/ab12", Some("/p")),
            ("/data/wt/p-1/ab12/src/lib", Some("/p")),
            ("/data/wt/q-2/cd34/x", Some("/q")),
            ("/q/nested-wt/y", Some("/p")),
            ("/q/nested-wtx", Some("/q")),
            // the worktrees' common parent is no worktree
            ("/data/wt/p-1", None),
            // only a shared prefix: not an ancestor
            ("/pp", None),
            ("/r/ab", None),
            ("/r", None),
            ("/data/wt/p-1/ab123", None),
            // a folder in none
            ("/elsewhere", None),
            ("/", None),
        ];
        for (dir, want) in rows {
            let got = session_of(
                Path::new(dir),
                sessions.iter().map(Path::new),
                worktrees
                    .iter()
                    .map(|(w, s)| (Path::new(*w), Path::new(*s))),
            );
            assert_eq!(got.as_deref(), want.map(Path::new), "{dir}");
        }
    }

    /// No sessions at all: every folder is in none.
    #[test]
    fn nothing_to_find() {
        let none: [&Path; 0] = [];
        assert_eq!(session_of(Path::new("/p"), none, []), None);
    }
}
