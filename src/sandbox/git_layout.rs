//! Where a worktree's git data lies, and which parts `git commit` writes
//! and which host git trusts (hooks, config). A main checkout has a `.git`
//! directory; a linked worktree a `.git` file naming its admin dir
//! (`gitdir: ...`), whose `commondir` names the repository's shared dir.
//! [`gather`] reads the disk and resolves symlinks; the parsing is pure.
//!
//! Of the repository's history (`objects`, `refs`, `logs`, `packed-refs`)
//! nothing is writable: the program writes into private copies instead
//! (`private_git`), and its branch comes home through host git after it
//! (`bring_home`).

use std::path::{Path, PathBuf};

/// What host git trusts and the sandbox must keep read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Protected {
    pub hooks: Vec<PathBuf>,
    pub config: Vec<PathBuf>,
    /// `config.worktree`, `commondir`, `gitdir`: they redirect git.
    pub other: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitLayout {
    /// Not a git worktree.
    None,
    /// `.git` is the repository: all of it writable but what is protected
    /// and its history (objects, refs, logs, packed-refs).
    Main {
        git_dir: PathBuf,
        protected: Protected,
    },
    /// `.git` is a file; the admin dir is writable, the common dir is not
    /// (its history is replaced by private copies, as in a main checkout).
    Linked {
        dot_git: PathBuf,
        admin_dir: PathBuf,
        common: PathBuf,
        protected: Protected,
    },
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GitLayoutError {
    #[error("{0} is a symbolic link: the sandbox cannot keep a repository reached through one read-only; replace it with the real directory or file")]
    Symlink(PathBuf),
    #[error("{path}: {what}")]
    Bad { path: PathBuf, what: String },
}

/// The path a `.git` file names, as written (`gitdir: PATH`).
pub fn parse_gitdir_file(content: &str) -> Option<&str> {
    let line = content.lines().next()?.trim_end();
    let path = line.strip_prefix("gitdir:")?.trim();
    (!path.is_empty()).then_some(path)
}

/// A path written in a git admin file, relative to `base` unless absolute.
pub fn resolve(base: &Path, written: &str) -> PathBuf {
    let p = Path::new(written);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// What the disk says about a `.git` file's target, gathered before anything
/// there is trusted: every path canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkedFacts {
    /// `<worktree>/.git`.
    pub dot_git: PathBuf,
    pub home: PathBuf,
    /// The dir the `.git` file names.
    pub admin: PathBuf,
    /// Where the admin dir's own `gitdir` file points back to, if it has one
    /// that resolves.
    pub admin_gitdir: Option<PathBuf>,
    /// The dir the admin dir's `commondir` names (the admin dir if none).
    pub common: PathBuf,
    /// The common dir holds `HEAD` and `objects`, as a git dir does.
    pub common_is_git_dir: bool,
}

/// Accept a linked worktree only as git itself validates one: a `.git`
/// file is a line anyone who can write the worktree can plant, and what it
/// names becomes writable. So the admin dir must be `<common>/worktrees/X`,
/// its `gitdir` must point back at this `.git`, the common dir must look
/// like a git dir, and neither may be the home folder or above it.
pub fn check_linked(f: &LinkedFacts) -> Result<(), String> {
    for (what, dir) in [("admin dir", &f.admin), ("repository", &f.common)] {
        if f.home.starts_with(dir) {
            return Err(format!(
                "the {what} it names, {}, is the home folder or above it",
                dir.display()
            ));
        }
    }
    if f.admin == f.common {
        return Err("it names a whole repository (a submodule or `git init --separate-git-dir`), which the sandbox cannot tell from a planted one; run `nerdr sandbox` from the superproject or a main checkout".into());
    }
    if f.admin.parent() != Some(&f.common.join("worktrees")) {
        return Err(format!(
            "the admin dir {} is not in the worktrees folder of its repository {}",
            f.admin.display(),
            f.common.display()
        ));
    }
    if !f.common_is_git_dir {
        return Err(format!(
            "{} has no HEAD and objects: not a git repository",
            f.common.display()
        ));
    }
    match &f.admin_gitdir {
        Some(back) if back == &f.dot_git => Ok(()),
        Some(back) => Err(format!(
            "the admin dir's gitdir file names {}, not this worktree; if the worktree moved, run `git worktree repair` outside the sandbox",
            back.display()
        )),
        None => Err(format!(
            "the admin dir {} has no gitdir file naming this worktree; run `git worktree repair` outside the sandbox",
            f.admin.display()
        )),
    }
}

/// Files that, in a git dir, send host git elsewhere (`commondir`,
/// `gitdir`), add config it trusts (`config.worktree`), or cut the
/// repository's history short (`shallow`, read from the common dir).
pub const REDIRECTS: &[&str] = &["commondir", "gitdir", "config.worktree", "shallow"];

/// Why a [`REDIRECTS`] file that appeared during a run is removed.
pub fn why_removed(name: &str) -> &'static str {
    if name == "shallow" {
        "it appeared during the run, and host git would take the repository's history for cut short there (a later gc deletes what lies behind)"
    } else {
        "it appeared during the run, and host git would follow it to config the sandboxed program wrote"
    }
}

/// A main checkout's `.git` is a repository: `commondir` or `gitdir` there
/// send host git to another dir's config, so one found before the run was
/// planted (by an earlier run, or by hand) and nerdr will not start on it.
pub fn check_main(present: &[&str]) -> Result<(), String> {
    match present.iter().find(|n| **n == "commondir" || **n == "gitdir") {
        Some(n) => Err(format!(
            "{n} in a main checkout's .git points host git at another repository's config (a planted redirect); look at it, and remove it if you did not put it there"
        )),
        None => Ok(()),
    }
}

/// Which [`REDIRECTS`] appeared during a run (in `after`, not in `before`):
/// they are removed after the run.
pub fn appeared<'a>(before: &[&str], after: &[&'a str]) -> Vec<&'a str> {
    after
        .iter()
        .filter(|n| !before.contains(n))
        .copied()
        .collect()
}

/// The [`REDIRECTS`] present in `dir` (a symlink counts).
pub fn redirects_in(dir: &Path) -> Vec<&'static str> {
    REDIRECTS
        .iter()
        .filter(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
        .copied()
        .collect()
}

impl GitLayout {
    /// The git dir whose [`REDIRECTS`] the agent could create: `.git` of
    /// a main checkout, the admin dir of a linked worktree.
    pub fn watched_dir(&self) -> Option<&Path> {
        match self {
            GitLayout::None => None,
            GitLayout::Main { git_dir, .. } => Some(git_dir),
            GitLayout::Linked { admin_dir, .. } => Some(admin_dir),
        }
    }

    /// The repository's common dir: where its objects and refs are.
    pub fn common(&self) -> Option<&Path> {
        match self {
            GitLayout::None => None,
            GitLayout::Main { git_dir, .. } => Some(git_dir),
            GitLayout::Linked { common, .. } => Some(common),
        }
    }
}

/// What a repository's history is made of, in its common dir: each must be
/// a real directory (or, for `packed-refs`, a file), so a bind over it
/// covers the repository's own and not something a link leads to.
fn check_history(common: &Path) -> Result<(), GitLayoutError> {
    for name in ["objects", "refs", "logs"] {
        let p = common.join(name);
        if !is_real_dir(&p)? {
            return Err(GitLayoutError::Bad {
                path: p,
                what: "missing, or not a directory: not a usable git repository".into(),
            });
        }
    }
    exists_not_symlink(&common.join("packed-refs"))?;
    Ok(())
}

/// The header git writes: an empty `packed-refs` holds no refs.
pub const PACKED_REFS_HEADER: &str = "# pack-refs with: peeled fully-peeled sorted \n";

/// Read the layout of `worktree` (already canonical; `home` too). Creates
/// an empty `hooks` (and in a main checkout `modules`) dir where there is
/// none, so the agent cannot create one: host git would run what it put
/// there. Nothing is created before the layout is checked.
pub fn gather(worktree: &Path, home: &Path) -> Result<GitLayout, GitLayoutError> {
    let dot_git = worktree.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return Ok(GitLayout::None);
    };
    if meta.file_type().is_symlink() {
        return Err(GitLayoutError::Symlink(dot_git));
    }
    let bad = |path: &Path, what: String| GitLayoutError::Bad {
        path: path.to_path_buf(),
        what,
    };
    if meta.is_dir() {
        check_main(&redirects_in(&dot_git)).map_err(|e| bad(&dot_git, e))?;
        let mut protected = protect(&dot_git, &dot_git)?;
        // Submodules' repositories: host git runs their config and hooks
        // when it recurses, so the agent may not plant one.
        let modules = dot_git.join("modules");
        if std::fs::symlink_metadata(&modules).is_err() {
            let _ = std::fs::create_dir(&modules);
        }
        if exists_not_symlink(&modules)? {
            protected.other.push(modules);
        }
        // History host git trusts beside the refs: `info/grafts` gives
        // commits other parents (a rewrite then passes for a
        // fast-forward), `shallow` cuts history short (host git then takes
        // an incomplete history for a complete one, and a later gc deletes
        // what lies behind). `info` read-only (made where missing: empty, it
        // changes nothing); a `shallow` that exists read-only, one that
        // appears removed after the run ([`REDIRECTS`]).
        // The other worktrees' admin dirs (their HEAD says which branch
        // their next commit moves, `gitdir` where they are): read-only,
        // made where missing (empty, it changes nothing); `git worktree
        // add` fails inside.
        for name in ["info", "worktrees"] {
            let p = dot_git.join(name);
            if std::fs::symlink_metadata(&p).is_err() {
                let _ = std::fs::create_dir(&p);
            }
        }
        for name in ["info", "worktrees", "shallow"] {
            let p = dot_git.join(name);
            if exists_not_symlink(&p)? {
                protected.other.push(p);
            }
        }
        make_history_mount_points(&dot_git);
        check_history(&dot_git)?;
        // `.git` is writable here: the refs git trusts most stay the
        // user's (a bound file cannot be replaced by rename either). Refs
        // in a reftable (`extensions.refStorage`) have no private copy:
        // read-only, so commits fail rather than history be lost. (Where
        // the user cannot create `packed-refs`, the program cannot either.)
        for name in ["packed-refs", "reftable"] {
            let p = dot_git.join(name);
            if exists_not_symlink(&p)? {
                protected.other.push(p);
            }
        }
        return Ok(GitLayout::Main {
            git_dir: dot_git,
            protected,
        });
    }
    if !meta.is_file() {
        return Err(bad(&dot_git, "neither a directory nor a file".into()));
    }
    let content = std::fs::read_to_string(&dot_git)
        .map_err(|e| bad(&dot_git, format!("cannot read: {e}")))?;
    let written = parse_gitdir_file(&content)
        .ok_or_else(|| bad(&dot_git, "expected a `gitdir: PATH` line".into()))?;
    let admin_dir = canonical(&resolve(worktree, written))?;
    let commondir = admin_dir.join("commondir");
    let common = match std::fs::read_to_string(&commondir) {
        Ok(c) => canonical(&resolve(&admin_dir, c.trim()))?,
        // A linked worktree without `commondir` is its own repository.
        Err(_) => admin_dir.clone(),
    };
    let admin_gitdir = std::fs::read_to_string(admin_dir.join("gitdir"))
        .ok()
        .and_then(|t| std::fs::canonicalize(resolve(&admin_dir, t.trim())).ok());
    let facts = LinkedFacts {
        dot_git: dot_git.clone(),
        home: home.to_path_buf(),
        admin: admin_dir.clone(),
        admin_gitdir,
        common: common.clone(),
        common_is_git_dir: common.join("HEAD").is_file() && common.join("objects").is_dir(),
    };
    check_linked(&facts).map_err(|e| {
        bad(
            &dot_git,
            format!("not accepted as a linked worktree: {e} (if you did not write this .git file, it was planted: remove it)"),
        )
    })?;
    make_history_mount_points(&common);
    check_history(&common)?;
    let mut protected = protect(&common, &admin_dir)?;
    for name in ["commondir", "gitdir"] {
        let f = admin_dir.join(name);
        if exists_not_symlink(&f)? {
            protected.other.push(f);
        }
    }
    Ok(GitLayout::Linked {
        dot_git,
        admin_dir,
        common,
        protected,
    })
}

/// bwrap can only bind over what exists: `logs` (absent until a first
/// reflog) and `packed-refs` (absent until refs are packed; in a main
/// checkout the program could otherwise create one, adding refs host git
/// would trust). An empty `packed-refs` with git's header holds no refs.
fn make_history_mount_points(common: &Path) {
    let logs = common.join("logs");
    if std::fs::symlink_metadata(&logs).is_err() {
        let _ = std::fs::create_dir(&logs);
    }
    let packed = common.join("packed-refs");
    if std::fs::symlink_metadata(&packed).is_err() {
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&packed)
            .and_then(|mut f| std::io::Write::write_all(&mut f, PACKED_REFS_HEADER.as_bytes()));
    }
}

/// Hooks and config of the common dir, `config.worktree` of both dirs.
fn protect(common: &Path, admin: &Path) -> Result<Protected, GitLayoutError> {
    let hooks = common.join("hooks");
    if !hooks.exists() && std::fs::symlink_metadata(&hooks).is_err() {
        let _ = std::fs::create_dir(&hooks);
    }
    let mut p = Protected::default();
    if exists_not_symlink(&hooks)? {
        p.hooks.push(hooks);
    }
    let config = common.join("config");
    if exists_not_symlink(&config)? {
        p.config.push(config);
    }
    for dir in [common, admin] {
        let f = dir.join("config.worktree");
        if exists_not_symlink(&f)? && !p.other.contains(&f) {
            p.other.push(f);
        }
    }
    Ok(p)
}

fn exists_not_symlink(p: &Path) -> Result<bool, GitLayoutError> {
    match std::fs::symlink_metadata(p) {
        Ok(m) if m.file_type().is_symlink() => Err(GitLayoutError::Symlink(p.to_path_buf())),
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    }
}

fn is_real_dir(p: &Path) -> Result<bool, GitLayoutError> {
    Ok(exists_not_symlink(p)? && p.is_dir())
}

fn canonical(p: &Path) -> Result<PathBuf, GitLayoutError> {
    std::fs::canonicalize(p).map_err(|e| GitLayoutError::Bad {
        path: p.to_path_buf(),
        what: format!("cannot resolve: {e}"),
    })
}

#[cfg(test)]
#[path = "git_layout_tests.rs"]
mod tests;
