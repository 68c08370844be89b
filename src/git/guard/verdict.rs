//! The guard's decision, a pure function of plain facts: where the folder
//! stands in the sandbox history, the operation, the configuration git
//! would use (with scopes and origins), the places sandboxed agents could
//! write, and which filter drivers the repository's attributes assign.
//! Nothing here reads a file or runs git.

use std::path::{Component, Path, PathBuf};

use super::boolean::is_true;
use super::config::{Entry, Origin};
use super::history::{is_linked, writable_place, Location, Standing};
use crate::git::op::Op;

/// An attribute file assigns `filter=<driver>` to some paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterUse {
    pub driver: String,
    /// Where: `HEAD:.gitattributes`, `/r/.git/info/attributes`, ...
    pub file: String,
}

pub struct Facts<'a> {
    pub standing: &'a Standing,
    pub op: Op,
    /// Where git finds its repository (None: outside any).
    pub location: Option<&'a Location>,
    /// The git dir holds a `commondir` file (a linked worktree's admin
    /// folder does; a main checkout's `.git` does not).
    pub commondir_file: bool,
    pub entries: &'a [Entry],
    /// Places a sandboxed agent could write (canonical).
    pub writable: &'a [&'a Path],
    /// Paths inside those places every run that could write there kept
    /// read-only (see [`writable_place`]).
    pub kept_read_only: &'a [&'a Path],
    /// Where git runs (canonical): relative program paths start here.
    pub cwd: &'a Path,
    pub home: Option<&'a Path>,
    /// Filled only when some filter driver is configured and the
    /// operation converts content (see [`configured_filters`]).
    pub filter_uses: &'a [FilterUse],
    /// Where a `.gitmodules` was found (working tree, index or HEAD):
    /// gathered only when git runs in an agent-writable place and the
    /// operation may enter submodules.
    pub gitmodules: Option<&'a str>,
    /// Where a path really leads (symlinks followed as far as the path
    /// exists): a symlinked HOME must not hide a worktree.
    pub realpath: &'a dyn Fn(&Path) -> PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// The history or the configuration could not be read: fail closed.
    Unreadable,
    Network,
    InWritablePlace,
    /// git reports a common dir other than the recorded one, or the git
    /// dir's `commondir` file does not fit its place.
    CommonDir,
    /// Submodules in an agent-writable place, for an operation that may
    /// look inside them.
    Submodules,
    WorktreeConfig,
    RepositoryProgram,
    ConfigInWritablePlace,
    ProgramInWritablePlace,
    Conversion,
}

/// Why host git is refused: the setting, its value, where it came from,
/// and what the user can do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    pub rule: Rule,
    pub setting: String,
    pub value: String,
    pub origin: String,
    pub why: String,
    pub todo: String,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {}", self.why, self.todo)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    Refuse(Vec<Reason>),
}

pub fn decide(f: &Facts) -> Verdict {
    if f.op == Op::Query {
        return Verdict::Allow;
    }
    let mut reasons = Vec::new();
    match f.standing {
        Standing::Clean => return Verdict::Allow,
        Standing::Recorded { .. } => {}
        Standing::InWritablePlace { place } => reasons.push(Reason {
            rule: Rule::InWritablePlace,
            setting: "repository".into(),
            value: f.cwd.display().to_string(),
            origin: place.display().to_string(),
            why: format!(
                "git in {} finds a repository inside {}, a place a sandboxed agent could write \
                 (the agent may have made that repository, or pointed a worktree's .git file at it)",
                f.cwd.display(),
                place.display()
            ),
            todo: "check the folder's .git and its config, then run git there yourself".into(),
        }),
    }
    reasons.extend(common_dir(f));
    if f.op.networked() {
        reasons.push(Reason {
            rule: Rule::Network,
            setting: f.op.name().into(),
            value: String::new(),
            origin: "sandbox history".into(),
            why: format!(
                "nerdr does not {} in a repository where sandboxed agents ran: every transport \
                 (ssh, https, a local path) runs programs the configuration names",
                f.op.name()
            ),
            todo: format!(
                "run `git {}` yourself once you have checked the repository's config",
                f.op.name()
            ),
        });
    }
    for e in f.entries {
        reasons.extend(entry_reasons(e, f));
    }
    reasons.extend(included_files(f));
    if f.op.converts() {
        reasons.extend(conversions(f));
    }
    reasons.extend(submodules(f));
    if reasons.is_empty() {
        Verdict::Allow
    } else {
        Verdict::Refuse(reasons)
    }
}

/// git must report the common dir the history was recorded under, and a
/// `commondir` file may only sit in a linked worktree's admin folder
/// (`<common>/worktrees/<name>`): anything else means a planted
/// `commondir` sends git to a repository nobody checked.
fn common_dir(f: &Facts) -> Option<Reason> {
    let at = f.location?;
    let refuse = |why: String| Reason {
        rule: Rule::CommonDir,
        setting: "commondir".into(),
        value: at.common_dir.display().to_string(),
        origin: at.git_dir.join("commondir").display().to_string(),
        why,
        todo: format!(
            "look at {} (a sandboxed agent may have planted it), remove it if you did not make \
             it, then run git there yourself",
            at.git_dir.join("commondir").display()
        ),
    };
    if let Standing::Recorded { common_dir } = f.standing {
        if *common_dir != at.common_dir {
            return Some(refuse(format!(
                "git in {} reads its repository from {}, but sandbox history records {} for it",
                f.cwd.display(),
                at.common_dir.display(),
                common_dir.display()
            )));
        }
    }
    let linked = is_linked(&at.git_dir, &at.common_dir);
    let fits = if linked {
        f.commondir_file
    } else {
        at.git_dir == at.common_dir && !f.commondir_file
    };
    (!fits).then(|| {
        refuse(format!(
            "the git dir {} {} and git reads its repository from {}: a main checkout's git dir \
             has no commondir file",
            at.git_dir.display(),
            if f.commondir_file {
                "holds a commondir file"
            } else {
                "is not where its common dir says"
            },
            at.common_dir.display()
        ))
    })
}

/// A repository an agent made in its worktree and registered in
/// `.gitmodules` with `ignore = none` gets `git status` run inside it,
/// with its own config's filters, when checkout reports local changes.
fn submodules(f: &Facts) -> Option<Reason> {
    let file = f.gitmodules?;
    if !f.op.may_enter_submodules() {
        return None;
    }
    let place = writable_place(f.writable, f.kept_read_only, f.cwd)?;
    Some(Reason {
        rule: Rule::Submodules,
        setting: ".gitmodules".into(),
        value: String::new(),
        origin: file.to_string(),
        why: format!(
            "`git {}` in {}, inside {} (which a sandboxed agent could write), may look inside \
             the submodules {} names, each with its own config, which the agent could have \
             written",
            f.op.command(),
            f.cwd.display(),
            place.display(),
            file
        ),
        todo: "do this step yourself with git, after checking the submodules' configs".into(),
    })
}

fn reason(rule: Rule, e: &Entry, why: String, todo: String) -> Reason {
    Reason {
        rule,
        setting: e.key.clone(),
        value: e.value_str().to_string(),
        origin: e.origin.to_string(),
        why,
        todo,
    }
}

fn entry_reasons(e: &Entry, f: &Facts) -> Vec<Reason> {
    let mut out = Vec::new();
    let shown = format!(
        "{} = `{}` (in {}, {} config)",
        e.key,
        e.value_str(),
        e.origin,
        e.scope.name()
    );
    if e.key == "extensions.worktreeconfig" && is_true(e.value.as_deref()) != Some(false) {
        out.push(reason(
            Rule::WorktreeConfig,
            e,
            format!(
                "{shown} lets each worktree's config.worktree change git's settings, and sandboxed \
                 agents' worktrees may have written theirs (`git sparse-checkout` turns this on: \
                 sparse checkouts and sandboxed agents do not go together)"
            ),
            "turn it off with `git config --unset extensions.worktreeConfig` in the repository, \
             and remove the worktrees' config.worktree files"
                .into(),
        ));
    }
    if e.scope.of_repository() && runs_program(e) {
        out.push(reason(
            Rule::RepositoryProgram,
            e,
            format!(
                "{shown} makes git run a program, and a repository's own config names no program \
                 nerdr will run once sandboxed agents have worked in it"
            ),
            format!(
                "remove it (`git config --file {} --unset {}`), or set it in your global config if \
                 you trust the program",
                e.origin, e.key
            ),
        ));
    }
    if names_program(e) {
        let (section, _, name) = e.parts();
        let whole = matches!((section, name), ("core", "hookspath" | "fsmonitor"));
        let bool_or_path = name == "fsmonitor";
        for p in mentioned_paths(e.value_str(), whole, bool_or_path, f.cwd, f.home) {
            if let Some(place) = inside(&p, f) {
                out.push(reason(
                    Rule::ProgramInWritablePlace,
                    e,
                    format!(
                        "{shown} names {}, inside {}, which a sandboxed agent could write",
                        p.display(),
                        place.display()
                    ),
                    format!(
                        "point {} at a program outside agents' worktrees, or unset it",
                        e.key
                    ),
                ));
                break;
            }
        }
    }
    out
}

/// Config files in agent-writable places, and includes that point there
/// (even before the file exists: the agent may write it later).
fn included_files(f: &Facts) -> Vec<Reason> {
    let mut out: Vec<Reason> = Vec::new();
    for e in f.entries {
        if let Origin::File(file) = &e.origin {
            if let Some(place) = inside(file, f) {
                if !out.iter().any(|r| r.origin == e.origin.to_string()) {
                    out.push(reason(
                        Rule::ConfigInWritablePlace,
                        e,
                        format!(
                            "git reads config from {}, inside {}, which a sandboxed agent could \
                             write (its first setting: {} = `{}`)",
                            file.display(),
                            place.display(),
                            e.key,
                            e.value_str()
                        ),
                        if is_own_config(file, f) {
                            "this is the repository's own config, and sandbox history says a \
                             sandboxed program could write it (the main checkout was writable \
                             to an agent started without a worktree, or to a sandbox recorded \
                             before nerdr kept note of what `nerdr sandbox` keeps read-only), \
                             so nerdr runs no host git in this repository; start agents with \
                             `--no-worktree`, or clone the repository afresh for worktrees"
                                .into()
                        } else {
                            "remove the include of that file from your config, or move the \
                             file where agents cannot write"
                                .into()
                        },
                    ));
                }
            }
        }
        let (section, _, name) = e.parts();
        if matches!(section, "include" | "includeif") && name == "path" {
            let base = origin_dir(e).unwrap_or(f.cwd);
            let target = resolve(e.value_str(), base, f.home);
            if let Some(place) = inside(&target, f) {
                out.push(reason(
                    Rule::ConfigInWritablePlace,
                    e,
                    format!(
                        "{} = `{}` (in {}) includes {}, inside {}, which a sandboxed agent could write",
                        e.key,
                        e.value_str(),
                        e.origin,
                        target.display(),
                        place.display()
                    ),
                    format!("remove that include from {}", e.origin),
                ));
            }
        }
    }
    out
}

fn conversions(f: &Facts) -> Vec<Reason> {
    let mut out = Vec::new();
    for u in f.filter_uses {
        let driver = f.entries.iter().find(|e| {
            let (section, sub, name) = e.parts();
            section == "filter"
                && sub == Some(u.driver.as_str())
                && matches!(name, "clean" | "smudge" | "process")
        });
        if let Some(e) = driver {
            let lfs = if u.driver == "lfs" { " (Git LFS)" } else { "" };
            out.push(reason(
                Rule::Conversion,
                e,
                format!(
                    "{} assigns `filter={}`, so `git {}` would run {} = `{}` (in {}){lfs} on content \
                     sandboxed agents may have written",
                    u.file,
                    u.driver,
                    f.op.command(),
                    e.key,
                    e.value_str(),
                    e.origin
                ),
                format!(
                    "do this step yourself with git, after checking the filter's settings{}",
                    if lfs.is_empty() { "" } else { " and .lfsconfig" }
                ),
            ));
        }
    }
    out
}

/// Filter drivers with a command configured in any scope: only these make
/// attribute facts worth gathering.
pub fn configured_filters(entries: &[Entry]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for e in entries {
        if let ("filter", Some(d), "clean" | "smudge" | "process") = e.parts() {
            if !out.iter().any(|o| o == d) {
                out.push(d.to_string());
            }
        }
    }
    out
}

/// Settings that make git run a program during ordinary local work (the
/// repository-scope rule): the list, plus the hooks git runs on
/// its own (auto gc's recentObjectsHook, commit trailers' commands).
fn runs_program(e: &Entry) -> bool {
    matches!(
        e.parts(),
        ("filter", Some(_), "clean" | "smudge" | "process")
            | ("diff", Some(_), "textconv" | "command")
            | ("diff", None, "external")
            | ("merge", Some(_), "driver")
            | ("gc", None, "recentobjectshook")
            | ("trailer", Some(_), "command" | "cmd")
    )
}

/// Settings whose value names a program (or, for hooksPath, a folder of
/// them) that git may run.
fn names_program(e: &Entry) -> bool {
    runs_program(e)
        || matches!(
            e.parts(),
            (
                "core",
                None,
                "fsmonitor"
                    | "hookspath"
                    | "pager"
                    | "editor"
                    | "sshcommand"
                    | "askpass"
                    | "gitproxy"
                    | "alternaterefscommand"
            ) | ("sequence", None, "editor")
                | ("gpg", _, "program")
                | ("gpg", Some(_), "defaultkeycommand")
                | ("credential", _, "helper")
                | ("pager", _, _)
                | ("remote", Some(_), "uploadpack" | "receivepack")
                | ("uploadpack", None, "packobjectshook")
                | ("difftool" | "mergetool", Some(_), "cmd" | "path")
                | ("interactive", None, "difffilter")
        )
}

fn origin_dir(e: &Entry) -> Option<&Path> {
    match &e.origin {
        Origin::File(p) => p.parent(),
        Origin::CommandLine | Origin::Other(_) => None,
    }
}

/// The paths a setting's value names: every word that looks like a path
/// (absolute, `~/`, or relative with a `/`), and with `whole` the entire
/// value (hooksPath, fsmonitor: a path even without a slash). Relative
/// program paths run from `cwd`; `whole` values relative to it as well.
pub fn mentioned_paths(
    value: &str,
    whole: bool,
    bool_or_path: bool,
    cwd: &Path,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    // fsmonitor takes a boolean (the built-in daemon) or a hook's path;
    // hooksPath is always a path.
    if whole && !(bool_or_path && is_true(Some(value)).is_some()) && !value.is_empty() {
        out.push(resolve(value, cwd, home));
    }
    let shell_meta = |c: char| c.is_whitespace() || "'\";|&()<>$`=,".contains(c);
    for word in value.split(shell_meta) {
        let word = word.trim_start_matches('!');
        if word.is_empty() {
            continue;
        }
        if word.starts_with('/')
            || word.starts_with("~/")
            || word.contains('/')
            || word.starts_with('.')
        {
            out.push(resolve(word, cwd, home));
        }
    }
    out
}

/// A path as git would read it: `~/` from HOME, relative ones from `base`,
/// `.` and `..` folded without touching the disk.
fn resolve(p: &str, base: &Path, home: Option<&Path>) -> PathBuf {
    let joined = match (p.strip_prefix("~/"), home) {
        (Some(rest), Some(h)) => h.join(rest),
        _ => base.join(p),
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}

/// The agent-writable place `p` lies in, as written or as it really leads.
/// `file` is the repository's own config (`config` in the common dir, or
/// a `config.worktree`), not one a setting includes.
fn is_own_config(file: &Path, f: &Facts) -> bool {
    f.location.is_some_and(|at| {
        [
            at.common_dir.join("config"),
            at.common_dir.join("config.worktree"),
            at.git_dir.join("config.worktree"),
        ]
        .iter()
        .any(|own| file == own || (f.realpath)(file) == (f.realpath)(own))
    })
}

fn inside<'a>(p: &Path, f: &Facts<'a>) -> Option<&'a Path> {
    let real = (f.realpath)(p);
    writable_place(f.writable, f.kept_read_only, p)
        .or_else(|| writable_place(f.writable, f.kept_read_only, &real))
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
