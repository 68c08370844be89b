//! `install = "worktree"`: what nerdr puts into a tab's worktree before its
//! agent starts, for a sandbox that reaches nothing of nerdr's but that
//! worktree (`nerdr sandbox --worktree-only`). The data folder with an
//! empty reports file (`crate::file_reports`), and for claude its hooks in
//! `.claude/settings.local.json` (merged into the person's file as the
//! home install merges, never a rewrite) and the worktree's skill in
//! `.claude/skills/nerdr/SKILL.md`; then the repository's `info/exclude`
//! names all of it, so none of it is committed.
//!
//! The hooks are the home install's own (`"${NERDR_BIN:-nerdr}" hook
//! EVENT`): `nerdr hook` writes the report line into the file when the
//! socket cannot be reached (`cli::hook`). codex 0.171.0 reads a
//! project's `.codex/config.toml` (and hooks there) only for a project the
//! person trusted, so nothing is installed for codex, or any other agent,
//! but the data folder: its reports are what it appends itself.
//!
//! The worktree was writable by the agent's last run: every path nerdr
//! writes is checked to be no symlink (a planted link would have nerdr
//! write where it points), and a file git tracks is refused, not edited.

use std::path::{Path, PathBuf};

use super::edit::{self, Planned};
use super::skills::{install_step, InstallStep};
use crate::paths::Paths;

/// The skill a worktree install writes: its reports go into a file.
pub const SKILL: &str = include_str!("SKILL-worktree.md");
const SETTINGS: &str = ".claude/settings.local.json";
const SKILL_FILE: &str = ".claude/skills/nerdr/SKILL.md";

/// What was done, in words for the log and the tab's warning.
#[derive(Debug, Default)]
pub struct Installed {
    /// The reports folder, absolute: the tab's `NERDR_DATA_DIR`.
    pub data_dir: PathBuf,
    pub notes: Vec<String>,
}

/// Install for agent `agent` into `tree` (a tab's worktree, or its folder),
/// its reports in `data_rel` (checked by the config schema). An error is
/// one line saying what to do; the launch is refused with it.
pub fn install(
    paths: &Paths,
    agent: &str,
    tree: &Path,
    data_rel: &str,
) -> Result<Installed, String> {
    let git = in_git(paths, tree);
    let mut wrote: Vec<String> = vec![format!("/{}/", data_rel.trim_matches('/'))];
    let mut files =
        vec![data_rel.trim_end_matches('/').to_string() + "/" + crate::file_reports::FILE];
    if agent == "claude" {
        files.extend([SETTINGS.to_string(), SKILL_FILE.to_string()]);
    }
    if git.is_some() {
        refuse_tracked(paths, tree, &files)?;
    }
    for f in &files {
        no_symlink_in(tree, Path::new(f))?;
    }
    let data_dir = tree.join(data_rel);
    std::fs::create_dir_all(&data_dir)
        .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    fresh_reports(&data_dir.join(crate::file_reports::FILE))?;
    let mut notes = Vec::new();
    if agent == "claude" {
        notes.push(hooks(&tree.join(SETTINGS))?);
        notes.push(skill(&tree.join(SKILL_FILE))?);
        wrote.extend([format!("/{SETTINGS}"), "/.claude/skills/nerdr/".to_string()]);
    } else {
        notes.push(format!(
            "{agent} has no per-worktree hooks nerdr installs: its states come from its screen, \
             and it reports by appending to {}",
            data_dir.join(crate::file_reports::FILE).display()
        ));
    }
    if let Some(common) = git {
        notes.push(exclude(&common, &wrote)?);
    }
    Ok(Installed { data_dir, notes })
}

/// The repository's common git dir, when `tree` is in one.
fn in_git(paths: &Paths, tree: &Path) -> Option<PathBuf> {
    let out = crate::git::run(
        paths,
        tree,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    )
    .ok()?;
    let dir = out.trim();
    (!dir.is_empty()).then(|| PathBuf::from(dir))
}

fn refuse_tracked(paths: &Paths, tree: &Path, files: &[String]) -> Result<(), String> {
    let mut args = vec!["ls-files", "--"];
    args.extend(files.iter().map(String::as_str));
    let tracked = crate::git::run(paths, tree, &args).map_err(|e| {
        format!(
            "cannot ask git which of {files:?} it tracks in {}: {e}",
            tree.display()
        )
    })?;
    match tracked.lines().next() {
        None => Ok(()),
        Some(f) => Err(format!(
            "{} is tracked by git: a worktree install would change a committed file; remove it \
             from the repository (git rm --cached {f}), or use install = \"home\"",
            tree.join(f).display()
        )),
    }
}

/// Every existing part of `rel` under `tree` is a real folder (the last a
/// real file, or absent): no symlink that would send a write elsewhere.
fn no_symlink_in(tree: &Path, rel: &Path) -> Result<(), String> {
    let mut at = tree.to_path_buf();
    for part in rel.components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{} is a symlink: nerdr writes nothing through a link in a worktree an agent \
                     wrote; remove it",
                    at.display()
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// An empty reports file: what the last run appended was read then, and a
/// new run starts counting lines (and bytes, `file_reports::MAX_FILE`)
/// afresh. Opened without following a link, in case one appeared since.
fn fresh_reports(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .mode(0o600)
        .open(path)
        .map(drop)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}

fn hooks(file: &Path) -> Result<String, String> {
    let before = super::files::read(file).map_err(|e| format!("{e:#}"))?;
    let plan = match super::claude::TARGET
        .plan_install(before.as_deref())
        .map_err(|e| format!("{}: {e}", file.display()))?
    {
        Planned::Already => return Ok(format!("nerdr's hooks are already in {}", file.display())),
        Planned::Plan(p) => p,
    };
    let after = edit::apply(before.as_deref().unwrap_or(""), &plan.inserts);
    let dirs = super::files::missing_dirs(file);
    super::files::make_dirs(&dirs)
        .and_then(|()| super::files::write(file, &after))
        .map_err(|e| format!("{e:#}"))?;
    Ok(format!(
        "added nerdr's hooks to {} ({})",
        file.display(),
        plan.events.join(", ")
    ))
}

fn skill(file: &Path) -> Result<String, String> {
    let before = super::files::read(file).map_err(|e| format!("{e:#}"))?;
    match install_step(before.as_deref(), None, SKILL) {
        InstallStep::Already => Ok(format!("nerdr's skill is already in {}", file.display())),
        InstallStep::KeepTheirs => Ok(format!(
            "{} exists and is not nerdr's: left as it is",
            file.display()
        )),
        InstallStep::Write => {
            let dirs = super::files::missing_dirs(file);
            super::files::make_dirs(&dirs)
                .and_then(|()| super::files::write(file, SKILL))
                .map_err(|e| format!("{e:#}"))?;
            Ok(format!("wrote nerdr's skill to {}", file.display()))
        }
    }
}

fn exclude(common: &Path, patterns: &[String]) -> Result<String, String> {
    let file = common.join("info").join("exclude");
    no_symlink_in(common, Path::new("info/exclude"))?;
    let before = super::files::read(&file).map_err(|e| format!("{e:#}"))?;
    let Some(after) = excluded(before.as_deref().unwrap_or(""), patterns) else {
        return Ok(format!(
            "{} already keeps them out of commits",
            file.display()
        ));
    };
    std::fs::create_dir_all(common.join("info"))
        .map_err(|e| format!("cannot create {}: {e}", common.join("info").display()))?;
    super::files::write(&file, &after).map_err(|e| format!("{e:#}"))?;
    Ok(format!(
        "{} keeps {} out of commits",
        file.display(),
        patterns.join(" ")
    ))
}

/// `before` (an `info/exclude`) with each of `patterns` it lacks appended
/// under nerdr's comment, the person's lines as they were; `None` when
/// every pattern is there already.
pub fn excluded(before: &str, patterns: &[String]) -> Option<String> {
    let has = |p: &str| before.lines().any(|l| l.trim_end() == p);
    let missing: Vec<&String> = patterns.iter().filter(|p| !has(p)).collect();
    if missing.is_empty() {
        return None;
    }
    let mut out = before.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    const HEADER: &str = "# nerdr: its worktree install (install = \"worktree\")";
    if !has(HEADER) {
        out.push_str(HEADER);
        out.push('\n');
    }
    for p in missing {
        out.push_str(p);
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pats(p: &[&str]) -> Vec<String> {
        p.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn exclude_rows() {
        let ours = pats(&["/.nerdr/", "/.claude/settings.local.json"]);
        let header = "# nerdr: its worktree install (install = \"worktree\")\n";
        let rows: &[(&str, &str, Option<String>)] = &[
            (
                "an empty file gets the header and every pattern",
                "",
                Some(format!("{header}/.nerdr/\n/.claude/settings.local.json\n")),
            ),
            (
                "the person's lines stay, a last line without newline is ended",
                "# git ls-files --others --exclude-from=.git/info/exclude\n*.o",
                Some(format!(
                    "# git ls-files --others --exclude-from=.git/info/exclude\n*.o\n{header}/.nerdr/\n/.claude/settings.local.json\n"
                )),
            ),
            (
                "every pattern there: nothing to write (idempotent)",
                "/.claude/settings.local.json\n*.o\n/.nerdr/\n",
                None,
            ),
            (
                "only the missing pattern is added, the header once",
                "# nerdr: its worktree install (install = \"worktree\")\n/.nerdr/\n",
                Some(format!("{header}/.nerdr/\n/.claude/settings.local.json\n")),
            ),
        ];
        for (sentence, before, want) in rows {
            assert_eq!(excluded(before, &ours), *want, "{sentence}");
            if let Some(after) = want {
                assert_eq!(excluded(after, &ours), None, "{sentence}: twice");
            }
        }
    }

    #[test]
    fn a_symlink_anywhere_on_the_way_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path();
        std::fs::create_dir_all(tree.join("real")).unwrap();
        std::os::unix::fs::symlink(tree.join("real"), tree.join(".claude")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", tree.join("real/x")).unwrap();
        let rows = [
            (".claude/settings.local.json", true),
            ("real/x", true),
            ("real/y/z", false),
            (".nerdr/reports.jsonl", false),
        ];
        for (rel, refused) in rows {
            assert_eq!(
                no_symlink_in(tree, Path::new(rel)).is_err(),
                refused,
                "{rel}"
            );
        }
    }

    #[test]
    fn the_reports_file_is_never_opened_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "the person's work").unwrap();
        let link = dir.path().join("reports.jsonl");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(fresh_reports(&link).is_err());
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the person's work"
        );
    }
}
