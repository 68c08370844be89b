//! What a worktree holds that no commit does (modified, staged and
//! untracked files, and ignored ones whose only rule an agent could have
//! planted: see [`super::ignored`]; files a trusted rule ignores do not
//! count, as for `git status`), and the pure rule for removing a
//! worktree: nerdr never deletes such work without a word. [`parse`] and
//! [`decide`] are pure; [`changes`] asks git.

use std::path::Path;

use super::{run, GitError};
use crate::paths::Paths;

/// One path with work no commit holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Changed in the index only.
    Staged,
    /// Changed in the working tree only.
    Modified,
    /// Staged, then changed again.
    StagedAndModified,
    /// Not tracked (and not ignored).
    Untracked,
    /// An unresolved merge.
    Conflicted,
    /// Ignored, but by no rule nerdr trusts (a `.gitignore` the tab
    /// added or changed since its base, committed or not, say:
    /// [`super::ignored`]), so as much work as an untracked file.
    Ignored,
    /// A repository of its own inside the worktree (a `.git` there, an
    /// agent's `git init`, a clone, a checked-out submodule): host git
    /// never looks inside one (that would run its own config), so what it
    /// holds (files, commits) cannot be saved, and is never removed.
    NestedRepository,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Staged => "staged",
            ChangeKind::Modified => "modified",
            ChangeKind::StagedAndModified => "staged and modified",
            ChangeKind::Untracked => "untracked",
            ChangeKind::Conflicted => "conflicted",
            ChangeKind::Ignored => "ignored by an untrusted rule",
            ChangeKind::NestedRepository => "nested repository",
        }
    }
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: {}",
            self.kind.as_str(),
            crate::protocol::printable(&self.path)
        )
    }
}

/// The entries of `git status --porcelain=v1 -z`: `XY path`, and for a
/// rename or copy the original path as a field of its own after it.
pub fn parse(porcelain: &[u8]) -> Vec<Change> {
    let mut out = Vec::new();
    let mut fields = porcelain.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let Some(field) = fields.next() {
        if field.len() < 4 {
            continue;
        }
        let (x, y) = (field[0], field[1]);
        let path = String::from_utf8_lossy(&field[3..]).into_owned();
        if matches!(x, b'R' | b'C') {
            fields.next();
        }
        let kind = match (x, y) {
            (b'?', b'?') => ChangeKind::Untracked,
            // Which ignored files are work is `super::ignored`'s to say.
            (b'!', b'!') => continue,
            (b'U', _) | (_, b'U') | (b'A', b'A') | (b'D', b'D') => ChangeKind::Conflicted,
            (b' ', _) => ChangeKind::Modified,
            (_, b' ') => ChangeKind::Staged,
            _ => ChangeKind::StagedAndModified,
        };
        out.push(Change { kind, path });
    }
    out
}

/// The paths of the gitlinks (mode 160000) among the entries of `git
/// ls-files --stage -z`: `MODE OBJECT STAGE\tPATH`, as bytes (a name
/// need not be UTF-8).
pub fn gitlinks(ls_files: &[u8]) -> Vec<&[u8]> {
    ls_files
        .split(|b| *b == 0)
        .filter(|e| e.starts_with(b"160000 "))
        .filter_map(|e| {
            let tab = e.iter().position(|b| *b == b'\t')?;
            Some(&e[tab + 1..])
        })
        .collect()
}

/// `changes` with the nested repositories found (`nested`, paths from
/// the top of the worktree, a trailing `/` or not) marked as such, and
/// added when `git status` did not list them.
pub fn with_nested(mut changes: Vec<Change>, nested: &[String]) -> Vec<Change> {
    for n in nested {
        let bare = n.trim_end_matches('/');
        match changes
            .iter_mut()
            .find(|c| c.path.trim_end_matches('/') == bare)
        {
            Some(c) => c.kind = ChangeKind::NestedRepository,
            None => changes.push(Change {
                kind: ChangeKind::NestedRepository,
                path: format!("{bare}/"),
            }),
        }
    }
    changes
}

/// The paths of the entries of `git ls-files -v -z` that git is told not
/// to look at: `S` (skip-worktree) or a lowercase tag (assume-unchanged).
/// `git status` never reports an edit to those, so an agent that sets the
/// flag on a file hides the person's edit to it from the dirty check
/// (adversarial review): [`changes`] compares them itself.
pub fn flagged(ls_files_v: &[u8]) -> Vec<&[u8]> {
    ls_files_v
        .split(|b| *b == 0)
        .filter(|e| e.len() > 2 && e[1] == b' ')
        .filter(|e| e[0] == b'S' || e[0].is_ascii_lowercase())
        .map(|e| &e[2..])
        .collect()
}

/// The list as shown to a person: at most `max` lines, then how many more.
pub fn listed(changes: &[Change], max: usize) -> String {
    let mut s: String = changes
        .iter()
        .take(max)
        .map(|c| format!("\n  {c}"))
        .collect();
    if changes.len() > max {
        s.push_str(&format!("\n  ... and {} more", changes.len() - max));
    }
    s
}

/// Where a removal stands when its worktree is looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The request arrived; the tab's program may still be running.
    Asked,
    /// The tab's program has stopped; the removal goes on now.
    Stopped,
}

/// What to do with a worktree about to be removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removal {
    /// Nothing to lose: go on (stop the tab, remove the worktree).
    Go,
    /// Save the work under `refs/nerdr/saved/`, then remove.
    SaveThenRemove,
    /// Refuse, listing the work and the command that saves and removes.
    Refuse,
    /// Refuse whatever `force` says, naming each nested repository: its
    /// work cannot be saved, and removing the worktree would delete it.
    Keep,
}

/// Without `force`, work no commit holds refuses the removal before
/// anything is stopped; with it, the work is saved first. Work that
/// appears after the request was accepted (the program wrote until it
/// stopped) is saved too: it is never deleted unsaved. A nested
/// repository (`nested`) cannot be saved: the worktree stays.
pub fn decide(stage: Stage, dirty: bool, nested: bool, force: bool) -> Removal {
    match (stage, dirty, force) {
        _ if nested => Removal::Keep,
        (_, false, _) => Removal::Go,
        (Stage::Asked, true, false) => Removal::Refuse,
        (Stage::Asked, true, true) => Removal::Go,
        (Stage::Stopped, true, _) => Removal::SaveThenRemove,
    }
}

/// What `worktree` holds that no commit does. In a repository with
/// sandbox history this goes through the guard like any host git (filters
/// disarmed; refused where one would run). Nested repositories are found
/// without running git inside them: untracked ones are the folders `git
/// status --untracked-files=all` lists (it lists files, and a folder only
/// when it is a repository), tracked ones the gitlinks of the index whose
/// folder holds anything. `base` is the commit whose `.gitignore` files
/// are trusted ([`super::ignored::work`]): the tab's recorded base.
pub fn changes(
    paths: &Paths,
    worktree: &Path,
    base: Option<&str>,
) -> Result<Vec<Change>, GitError> {
    let status = |untracked: &str| -> Result<Vec<Change>, GitError> {
        let out = run(
            paths,
            worktree,
            &["status", "--porcelain=v1", "-z", untracked],
        )?;
        Ok(parse(out.as_bytes()))
    };
    let folder = |c: &Change| c.kind == ChangeKind::Untracked && c.path.ends_with('/');
    let listed = status("--untracked-files=normal")?;
    let mut nested: Vec<String> = Vec::new();
    if listed.iter().any(folder) {
        nested.extend(
            status("--untracked-files=all")?
                .into_iter()
                .filter(folder)
                .map(|c| c.path),
        );
    }
    let index = super::query_bytes(worktree, &["ls-files", "--stage", "-z"])?;
    nested.extend(
        gitlinks(&index)
            .into_iter()
            .filter(|p| {
                use std::os::unix::ffi::OsStrExt;
                populated(&worktree.join(std::ffi::OsStr::from_bytes(p)))
            })
            .map(|p| String::from_utf8_lossy(p).into_owned()),
    );
    let mut listed = listed;
    listed.extend(flagged_changes(worktree)?);
    let ignored = super::ignored::work(paths, worktree, base)?;
    // git lists an ignored folder once and never looks inside: a
    // repository in one counting as work is found here.
    for dir in ignored.iter().filter(|p| p.ends_with('/')) {
        nested_within(&worktree.join(dir), dir, &mut nested);
    }
    listed.extend(ignored.into_iter().map(|path| Change {
        kind: ChangeKind::Ignored,
        path,
    }));
    Ok(with_nested(listed, &nested))
}

/// The flagged files ([`flagged`]) whose content on disk is not the
/// index's: hashed as they are, no filter run (a filter that would make
/// them equal only makes nerdr keep more). One absent from the disk (a
/// sparse checkout's skip-worktree files) holds nothing to lose.
fn flagged_changes(worktree: &Path) -> Result<Vec<Change>, GitError> {
    use std::os::unix::ffi::OsStrExt;
    let listing = super::query_bytes(worktree, &["ls-files", "-v", "-z"])?;
    let flagged = flagged(&listing);
    if flagged.is_empty() {
        return Ok(Vec::new());
    }
    let stage = super::query_bytes(worktree, &["ls-files", "--stage", "-z"])?;
    let mut out = Vec::new();
    for path in flagged {
        let file = worktree.join(std::ffi::OsStr::from_bytes(path));
        let Ok(meta) = file.symlink_metadata() else {
            continue;
        };
        let in_index = stage.split(|b| *b == 0).find_map(|e| {
            let tab = e.iter().position(|b| *b == b'\t')?;
            (&e[tab + 1..] == path).then(|| e[..tab].split(|b| *b == b' ').nth(1))?
        });
        let same = meta.is_file()
            && in_index.is_some_and(|object| {
                super::query_bytes(
                    worktree,
                    &["hash-object", "--no-filters", "--", &file.to_string_lossy()],
                )
                .is_ok_and(|h| h.trim_ascii() == object)
            });
        if !same {
            out.push(Change {
                kind: ChangeKind::Modified,
                path: String::from_utf8_lossy(path).into_owned(),
            });
        }
    }
    Ok(out)
}

/// The folders at or below `dir` (`rel` from the top of the worktree,
/// with its trailing `/`) holding a `.git`: found without following a
/// link, and not looked into further.
fn nested_within(dir: &Path, rel: &str, out: &mut Vec<String>) {
    if dir.join(".git").symlink_metadata().is_ok() {
        out.push(rel.to_string());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            let name = e.file_name();
            let rel = format!("{rel}{}/", name.to_string_lossy());
            nested_within(&e.path(), &rel, out);
        }
    }
}

/// A folder (not a link to one) with anything in it.
fn populated(dir: &Path) -> bool {
    dir.symlink_metadata().is_ok_and(|m| m.is_dir())
        && std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some())
}

/// How many commits of `branch` no other branch has (`None` when git
/// cannot say, e.g. the branch is gone).
pub fn commits_only_on(repo: &Path, branch: &str) -> Option<usize> {
    let exclude = format!("--exclude={branch}");
    let full = format!("refs/heads/{branch}");
    crate::git::query(
        repo,
        &[
            "rev-list",
            "--count",
            full.as_str(),
            "--not",
            exclude.as_str(),
            "--branches",
        ],
    )
    .ok()?
    .trim()
    .parse()
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flagged_entries_are_skip_worktree_or_assume_unchanged() {
        let listing = b"H plain.txt\0S skipped.txt\0h assumed.txt\0s both.txt\0M merged.txt\0? x\0";
        let got: Vec<&[u8]> = flagged(listing);
        assert_eq!(
            got,
            vec![&b"skipped.txt"[..], &b"assumed.txt"[..], &b"both.txt"[..]]
        );
        assert!(flagged(b"").is_empty());
    }

    #[test]
    fn status_entries_are_read_with_their_kind() {
        let porcelain =
            b" M a.txt\0M  b.txt\0MM c.txt\0?? new/\0R  to.txt\0from.txt\0UU d.txt\0!! ign.o\0A  sp ace\0 D gone\0";
        let got: Vec<(ChangeKind, String)> = parse(porcelain)
            .into_iter()
            .map(|c| (c.kind, c.path))
            .collect();
        let want = |rows: &[(ChangeKind, &str)]| -> Vec<(ChangeKind, String)> {
            rows.iter().map(|(k, p)| (*k, p.to_string())).collect()
        };
        assert_eq!(
            got,
            want(&[
                (ChangeKind::Modified, "a.txt"),
                (ChangeKind::Staged, "b.txt"),
                (ChangeKind::StagedAndModified, "c.txt"),
                (ChangeKind::Untracked, "new/"),
                (ChangeKind::Staged, "to.txt"),
                (ChangeKind::Conflicted, "d.txt"),
                (ChangeKind::Staged, "sp ace"),
                (ChangeKind::Modified, "gone"),
            ])
        );
        assert!(parse(b"").is_empty());
    }

    #[test]
    fn every_removal_row() {
        use Removal::*;
        use Stage::*;
        // stage, dirty, nested, force
        let rows = [
            (Asked, false, false, false, Go),
            (Asked, false, false, true, Go),
            (Asked, true, false, false, Refuse),
            (Asked, true, false, true, Go),
            (Stopped, false, false, false, Go),
            (Stopped, false, false, true, Go),
            (Stopped, true, false, false, SaveThenRemove),
            (Stopped, true, false, true, SaveThenRemove),
            // A nested repository cannot be saved: never removed.
            (Asked, false, true, false, Keep),
            (Asked, false, true, true, Keep),
            (Asked, true, true, false, Keep),
            (Asked, true, true, true, Keep),
            (Stopped, false, true, false, Keep),
            (Stopped, false, true, true, Keep),
            (Stopped, true, true, false, Keep),
            (Stopped, true, true, true, Keep),
        ];
        for (stage, dirty, nested, force, want) in rows {
            assert_eq!(
                decide(stage, dirty, nested, force),
                want,
                "{stage:?} {dirty} {nested} {force}"
            );
        }
    }

    #[test]
    fn nested_repositories_are_found_and_marked() {
        let ls = b"100644 e69de29bb2d1d6434b8b29ae775ad8c2e48c5391 0\ta.txt\0\
160000 0123456789012345678901234567890123456789 0\tlib\0\
160000 0123456789012345678901234567890123456789 0\tsp ace/x\0";
        assert_eq!(gitlinks(ls), vec![&b"lib"[..], &b"sp ace/x"[..]]);
        let c = |kind, p: &str| Change {
            kind,
            path: p.into(),
        };
        let got = with_nested(
            vec![
                c(ChangeKind::Untracked, "deps/"),
                c(ChangeKind::Untracked, "lib2/"),
                c(ChangeKind::Modified, "a.txt"),
            ],
            &["deps/x/".into(), "lib2/".into(), "lib".into()],
        );
        assert_eq!(
            got,
            vec![
                c(ChangeKind::Untracked, "deps/"),
                c(ChangeKind::NestedRepository, "lib2/"),
                c(ChangeKind::Modified, "a.txt"),
                c(ChangeKind::NestedRepository, "deps/x/"),
                c(ChangeKind::NestedRepository, "lib/"),
            ]
        );
    }

    #[test]
    fn repositories_inside_an_ignored_folder_are_found() {
        let top = std::env::temp_dir().join(format!("nerdr-nested-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&top);
        std::fs::create_dir_all(top.join("venv/a/clone/.git")).unwrap();
        std::fs::create_dir_all(top.join("venv/b/c")).unwrap();
        std::fs::create_dir_all(top.join("venv/a/clone/deeper/.git")).unwrap();
        std::fs::create_dir_all(top.join("whole/.git")).unwrap();
        let mut found = Vec::new();
        nested_within(&top.join("venv"), "venv/", &mut found);
        nested_within(&top.join("whole"), "whole/", &mut found);
        nested_within(&top.join("absent"), "absent/", &mut found);
        std::fs::remove_dir_all(&top).unwrap();
        assert_eq!(found, vec!["venv/a/clone/".to_string(), "whole/".into()]);
    }

    #[test]
    fn long_lists_are_cut_and_control_characters_escaped() {
        let c = |p: &str| Change {
            kind: ChangeKind::Untracked,
            path: p.into(),
        };
        let list = listed(&[c("a"), c("b\x1b[2J"), c("c")], 2);
        assert_eq!(list.lines().count(), 4, "{list}");
        assert!(list.contains("... and 1 more"), "{list}");
        assert!(!list.contains('\x1b'), "{list}");
    }
}
