//! Ignored files that still count as work. Git's "ignored" is a rule
//! anyone who can write the worktree can make: an agent that writes an
//! untracked `.gitignore` holding `*` hides every untracked file from
//! `git status`, and with it from every check that asks whether removing
//! the worktree loses anything (adversarial review). So nerdr trusts only
//! the rules an agent cannot have planted unseen:
//!
//! - the repository's `info/exclude` and the person's own excludes file
//!   (`core.excludesFile` from the global or system config, else git's
//!   default `~/.config/git/ignore`): outside the worktree;
//! - a worktree's `.gitignore` that is unchanged since the tab's
//!   recorded base (`super::base`): the same in the base commit, in the
//!   index and on disk. Being committed is not enough: the agent commits
//!   on its own branch (and can point its worktree's HEAD anywhere), so
//!   a `.gitignore` of `*` it committed there is as planted as an
//!   untracked one (adversarial review). The base is what the tab
//!   started from, recorded by nerdr where the agent cannot write; a
//!   worktree with no recorded base trusts no `.gitignore`. The main
//!   checkout, the person's own, trusts its HEAD.
//!
//! A file ignored by any other rule (a `.gitignore` the tab added or
//! changed, committed or not; an excludes file set in the repository's
//! own config; no rule git can name) counts as work: close and clean
//! keep its worktree, `diff` shows it, a forced removal saves it. This
//! errs toward keeping: a tool's self-ignoring folder (`.venv/`,
//! `.pytest_cache/` write a `.gitignore` of `*`) counts until a trusted
//! rule ignores it.
//!
//! Git names the rule: `git status --ignored=matching` lists each ignored
//! path that a rule matches itself (an ignored folder once, never what is
//! in it, so a committed `target/` costs one line), and `git check-ignore
//! -v --no-index` the file each rule is in. [`source_of`], [`unchanged`]
//! and [`counts`] are the pure rule; [`work`] gathers the facts with git.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::GitError;
use crate::paths::Paths;

/// Where the rule that ignores a path comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The repository's `info/exclude`.
    RepoExclude,
    /// The person's excludes file (global or system `core.excludesFile`,
    /// else git's default).
    PersonExcludes,
    /// A `.gitignore` of the worktree, the same in the trusted commit
    /// (the tab's recorded base), in the index and on disk.
    BaseGitignore,
    /// A `.gitignore` of the worktree that is not in the trusted commit
    /// (or there is none), or differs from it in the index or on disk.
    ChangedGitignore,
    /// Any other file: an excludes file the repository's or worktree's
    /// own config names, say.
    OtherFile,
    /// Git said the path is ignored but names no rule.
    NoRule,
}

/// The facts [`source_of`] decides from, gathered by [`work`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The repository's `info/exclude`, as git names it (absolute).
    pub repo_exclude: Option<PathBuf>,
    /// The person's excludes file, as git names it (absolute).
    pub person_excludes: Option<PathBuf>,
    /// The worktree's `.gitignore` files (paths from its top) that are
    /// unchanged since the trusted commit ([`unchanged`]).
    pub unchanged: HashSet<String>,
}

/// The source of a rule in `file`, as `git check-ignore -v` names it: a
/// worktree's `.gitignore` by its path from the top, other files by
/// their absolute path, none as empty.
pub fn source_of(file: &str, facts: &Facts) -> Source {
    if file.is_empty() {
        return Source::NoRule;
    }
    let path = Path::new(file);
    if path.is_absolute() {
        return match (&facts.repo_exclude, &facts.person_excludes) {
            (Some(r), _) if r == path => Source::RepoExclude,
            (_, Some(p)) if p == path => Source::PersonExcludes,
            _ => Source::OtherFile,
        };
    }
    if path.file_name() != Some(std::ffi::OsStr::new(".gitignore")) {
        return Source::OtherFile;
    }
    match facts.unchanged.contains(file) {
        true => Source::BaseGitignore,
        false => Source::ChangedGitignore,
    }
}

/// What is known of one `.gitignore` of the worktree, gathered by
/// [`work`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Copies {
    /// Its blob in the trusted commit; `None` when that commit has no
    /// such file, or there is no trusted commit (no base recorded).
    pub at_base: Option<String>,
    /// Its entries in the index (`git ls-files -s`): blob and stage.
    pub in_index: Vec<(String, String)>,
    /// Whether the file on disk is a regular file holding the base
    /// blob's bytes (read as it is: no filter runs).
    pub disk_is_base: bool,
}

/// Whether a `.gitignore` is unchanged since the trusted commit: there,
/// staged as it is there (one entry, no conflict) and the same on disk.
pub fn unchanged(c: &Copies) -> bool {
    let Some(base) = &c.at_base else {
        return false;
    };
    let staged = matches!(c.in_index.as_slice(), [(blob, stage)] if blob == base && stage == "0");
    staged && c.disk_is_base
}

/// Whether a path ignored by a rule from `source` is work nerdr keeps.
pub fn counts(source: Source) -> bool {
    match source {
        Source::RepoExclude | Source::PersonExcludes | Source::BaseGitignore => false,
        Source::ChangedGitignore | Source::OtherFile | Source::NoRule => true,
    }
}

/// The ignored paths of `git status --porcelain=v1 -z --ignored=matching`
/// (`!! path`; a folder with its trailing `/`).
pub fn ignored_paths(porcelain: &[u8]) -> Vec<&[u8]> {
    porcelain
        .split(|b| *b == 0)
        .filter_map(|f| f.strip_prefix(b"!! "))
        .collect()
}

/// The records of `git check-ignore -v -n -z`: source, line, pattern and
/// path, as (source, path); a path no rule matches has an empty source.
pub fn rules(check_ignore: &[u8]) -> Vec<(String, String)> {
    let fields: Vec<&[u8]> = check_ignore.split(|b| *b == 0).collect();
    fields
        .chunks_exact(4)
        .map(|r| {
            let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
            (s(r[0]), s(r[3]))
        })
        .collect()
}

/// The ignored paths of `worktree` that count as work ([`counts`]), a
/// folder once with its trailing `/`. `base` is the commit whose
/// `.gitignore` files are trusted: a tab's recorded base, `HEAD` for the
/// main checkout; `None` trusts no `.gitignore`.
pub fn work(paths: &Paths, worktree: &Path, base: Option<&str>) -> Result<Vec<String>, GitError> {
    let status = super::run_bytes_env(
        paths,
        worktree,
        &[
            "status",
            "--porcelain=v1",
            "-z",
            "--ignored=matching",
            "--untracked-files=normal",
        ],
        &[],
    )?;
    let ignored = ignored_paths(&status);
    if ignored.is_empty() {
        return Ok(Vec::new());
    }
    let input: Vec<u8> = ignored.iter().flat_map(|p| [*p, b"\0"].concat()).collect();
    // `-n` keeps a path no rule matches in the answer (git exits 0 then).
    let found = super::query_with_input(
        worktree,
        &["check-ignore", "-v", "-n", "-z", "--no-index", "--stdin"],
        input,
    )?;
    let found = rules(&found);
    let facts = facts(worktree, base, &found)?;
    // Every path git listed gets an answer (`-n`); one that did not is
    // kept all the same.
    let answered: HashSet<&str> = found.iter().map(|(_, p)| p.as_str()).collect();
    let mut out: Vec<String> = ignored
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .filter(|p| !answered.contains(p.as_str()))
        .collect();
    out.extend(
        found
            .iter()
            .filter(|(file, _)| counts(source_of(file, &facts)))
            .map(|(_, path)| path.clone()),
    );
    out.sort();
    out.dedup();
    Ok(out)
}

/// Stage `list` (from [`work`]) into the index `env` names, past the
/// rules that ignore them (`add -f`): a save or a diff of the worktree
/// then holds them as `add -A` holds untracked files.
pub fn add_forced(
    paths: &Paths,
    worktree: &Path,
    env: &[(&str, &std::ffi::OsStr)],
    list: &[String],
) -> Result<(), GitError> {
    // A bounded command line however many there are.
    for chunk in list.chunks(500) {
        let mut args = vec!["add".to_string(), "-f".into(), "--".into()];
        args.extend(chunk.iter().map(|p| format!(":(literal){p}")));
        super::run_env(paths, worktree, &args, env)?;
    }
    Ok(())
}

/// The facts about the rule files `found` names, `.gitignore` files
/// against `base`.
fn facts(
    worktree: &Path,
    base: Option<&str>,
    found: &[(String, String)],
) -> Result<Facts, GitError> {
    let mut facts = Facts::default();
    let files: HashSet<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    if files.iter().any(|f| Path::new(f).is_absolute()) {
        facts.repo_exclude = super::query(
            worktree,
            &[
                "rev-parse",
                "--path-format=absolute",
                "--git-path",
                "info/exclude",
            ],
        )
        .ok()
        .map(PathBuf::from);
        facts.person_excludes = person_excludes(worktree);
    }
    for file in files {
        let gitignore = !file.is_empty()
            && !Path::new(file).is_absolute()
            && Path::new(file).file_name() == Some(std::ffi::OsStr::new(".gitignore"));
        if gitignore && unchanged(&copies(worktree, base, file)) {
            facts.unchanged.insert(file.to_string());
        }
    }
    Ok(facts)
}

/// The person's excludes file: `core.excludesFile` when the global or
/// system config sets it (a repository's own config is not the person's
/// word), else git's default under `$HOME` (nerdr's git runs without
/// `XDG_CONFIG_HOME`).
fn person_excludes(worktree: &Path) -> Option<PathBuf> {
    let set = super::query(
        worktree,
        &[
            "config",
            "--show-scope",
            "--path",
            "--get",
            "core.excludesFile",
        ],
    );
    match set {
        Ok(line) => {
            let (scope, value) = line.split_once('\t')?;
            matches!(scope, "global" | "system").then(|| PathBuf::from(value))
        }
        Err(_) => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config/git/ignore")),
    }
}

/// The copies of `.gitignore` file `rel` (from the top of `worktree`):
/// in `base`, in the index, on disk. Without a base nothing is read.
fn copies(worktree: &Path, base: Option<&str>, rel: &str) -> Copies {
    let Some(base) = base else {
        return Copies::default();
    };
    let at_base = super::query(
        worktree,
        &["rev-parse", "--verify", "--quiet", &format!("{base}:{rel}")],
    )
    .ok();
    let Some(blob) = at_base else {
        return Copies::default();
    };
    let literal = format!(":(literal){rel}");
    let index = super::query(worktree, &["ls-files", "-s", "--", &literal]).unwrap_or_default();
    let in_index = index
        .lines()
        .filter_map(|l| {
            let (meta, _path) = l.split_once('\t')?;
            let mut f = meta.split(' ');
            let (_mode, object, stage) = (f.next()?, f.next()?, f.next()?);
            Some((object.to_string(), stage.to_string()))
        })
        .collect();
    let file = worktree.join(rel);
    let regular = file.symlink_metadata().is_ok_and(|m| m.is_file());
    let disk_is_base = regular
        && super::query_bytes(worktree, &["cat-file", "blob", &blob])
            .is_ok_and(|stored| std::fs::read(&file).is_ok_and(|on_disk| on_disk == stored));
    Copies {
        at_base: Some(blob),
        in_index,
        disk_is_base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_row() {
        use Source::*;
        let facts = Facts {
            repo_exclude: Some("/r/.git/info/exclude".into()),
            person_excludes: Some("/home/p/.config/git/ignore".into()),
            unchanged: [".gitignore", "sub/.gitignore"].map(String::from).into(),
        };
        let none = Facts::default();
        // file, facts, its source, whether what it ignores counts as work
        let rows = [
            ("/r/.git/info/exclude", &facts, RepoExclude, false),
            ("/home/p/.config/git/ignore", &facts, PersonExcludes, false),
            (".gitignore", &facts, BaseGitignore, false),
            ("sub/.gitignore", &facts, BaseGitignore, false),
            // Planted: untracked, or changed since the base (committed or
            // not), or no base recorded.
            ("other/.gitignore", &facts, ChangedGitignore, true),
            (".gitignore", &none, ChangedGitignore, true),
            // An excludes file a repository's config names, or any other.
            ("/elsewhere/ignore", &facts, OtherFile, true),
            ("/r/.git/info/exclude", &none, OtherFile, true),
            ("/home/p/.config/git/ignore", &none, OtherFile, true),
            ("rel/excludes", &facts, OtherFile, true),
            ("sub/x.gitignore", &facts, OtherFile, true),
            ("", &facts, NoRule, true),
        ];
        for (file, facts, source, work) in rows {
            assert_eq!(source_of(file, facts), source, "{file}");
            assert_eq!(counts(source), work, "{file}");
        }
    }

    #[test]
    fn every_gitignore_row() {
        let c = |at_base: Option<&str>, index: &[(&str, &str)], disk_is_base| Copies {
            at_base: at_base.map(String::from),
            in_index: index
                .iter()
                .map(|(b, s)| (b.to_string(), s.to_string()))
                .collect(),
            disk_is_base,
        };
        #[rustfmt::skip]
        let rows = [
            ("the base's, staged and on disk as it is", c(Some("b"), &[("b", "0")], true), true),
            // The tab's own commit brought it (or no base is recorded):
            // whatever the index and disk say.
            ("not in the base, committed by the tab", c(None, &[("t", "0")], false), false),
            ("no base recorded", c(None, &[("b", "0")], true), false),
            ("changed since the base, committed", c(Some("b"), &[("t", "0")], false), false),
            ("changed since the base, staged", c(Some("b"), &[("t", "0")], true), false),
            ("the base's, deleted from the index", c(Some("b"), &[], true), false),
            ("the base's, changed on disk", c(Some("b"), &[("b", "0")], false), false),
            ("a conflict", c(Some("b"), &[("b", "1"), ("t", "2")], true), false),
            ("a conflict's stage holding the base's", c(Some("b"), &[("b", "2")], true), false),
        ];
        for (what, copies, want) in rows {
            assert_eq!(unchanged(&copies), want, "{what}");
        }
    }

    #[test]
    fn ignored_entries_and_their_rules_are_read() {
        let status = b"?? notes.txt\0!! target/\0 M a.txt\0!! sp ace.o\0";
        assert_eq!(
            ignored_paths(status),
            vec![&b"target/"[..], &b"sp ace.o"[..]]
        );
        let found = b".gitignore\x001\0target/\0target/\0\0\0\0x.o\0/r/.git/info/exclude\x007\0*.o\0sp ace.o\0";
        assert_eq!(
            rules(found),
            vec![
                (".gitignore".to_string(), "target/".to_string()),
                (String::new(), "x.o".to_string()),
                ("/r/.git/info/exclude".to_string(), "sp ace.o".to_string()),
            ]
        );
    }
}
