//! Where a worktree's git data lies, and which parts `git commit` writes
//! and which host git trusts (hooks, config). A main checkout has a `.git`
//! directory; a linked worktree a `.git` file naming its admin dir
//! (`gitdir: ...`), whose `commondir` names the repository's shared dir.
//! [`gather`] reads the disk and resolves symlinks; the parsing is pure.

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
    /// `.git` is the repository: all of it writable but what is protected.
    Main {
        git_dir: PathBuf,
        protected: Protected,
    },
    /// `.git` is a file; the admin dir is writable, and of the common dir
    /// only what a commit writes (objects, refs, logs).
    Linked {
        dot_git: PathBuf,
        admin_dir: PathBuf,
        common_writable: Vec<PathBuf>,
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

/// Read the layout of `worktree` (already canonical). Creates an empty
/// `hooks` dir where there is none, so the agent cannot create one: host
/// git would run what it put there.
pub fn gather(worktree: &Path) -> Result<GitLayout, GitLayoutError> {
    let dot_git = worktree.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
        return Ok(GitLayout::None);
    };
    if meta.file_type().is_symlink() {
        return Err(GitLayoutError::Symlink(dot_git));
    }
    if meta.is_dir() {
        let protected = protect(&dot_git, &dot_git)?;
        return Ok(GitLayout::Main {
            git_dir: dot_git,
            protected,
        });
    }
    let bad = |path: &Path, what: String| GitLayoutError::Bad {
        path: path.to_path_buf(),
        what,
    };
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
    let mut common_writable = Vec::new();
    for name in ["objects", "refs", "logs"] {
        let d = common.join(name);
        if name == "logs" && !d.exists() {
            // The reflog of a first commit goes here; bwrap can only bind
            // what exists.
            let _ = std::fs::create_dir(&d);
        }
        if is_real_dir(&d)? {
            common_writable.push(d);
        }
    }
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
        common_writable,
        protected,
    })
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
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    #[test]
    fn gitdir_files_parse() {
        let rows: &[(&str, Option<&str>)] = &[
            ("gitdir: /r/.git/worktrees/a\n", Some("/r/.git/worktrees/a")),
            (
                "gitdir: ../r/.git/worktrees/a",
                Some("../r/.git/worktrees/a"),
            ),
            ("gitdir:   /x  \r\n", Some("/x")),
            ("gitdir:\n", None),
            ("nonsense", None),
            ("", None),
        ];
        for (text, want) in rows {
            assert_eq!(parse_gitdir_file(text), *want, "{text:?}");
        }
        assert_eq!(resolve(Path::new("/w"), "../r"), Path::new("/w/../r"));
        assert_eq!(resolve(Path::new("/w"), "/r"), Path::new("/r"));
    }

    #[test]
    fn a_main_checkout_and_a_linked_worktree() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let main = root.join("main");
        std::fs::create_dir(&main).unwrap();
        git(&main, &["init", "-q", "-b", "main"]);
        git(
            &main,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        std::fs::remove_dir_all(main.join(".git/hooks")).unwrap();
        let layout = gather(&main).unwrap();
        let g = main.join(".git");
        assert_eq!(
            layout,
            GitLayout::Main {
                git_dir: g.clone(),
                protected: Protected {
                    hooks: vec![g.join("hooks")],
                    config: vec![g.join("config")],
                    other: vec![],
                }
            }
        );
        assert!(g.join("hooks").is_dir(), "a missing hooks dir is created");

        git(&main, &["worktree", "add", "-q", "-b", "side", "../linked"]);
        let linked = root.join("linked");
        let admin = g.join("worktrees/linked");
        assert_eq!(
            gather(&linked).unwrap(),
            GitLayout::Linked {
                dot_git: linked.join(".git"),
                admin_dir: admin.clone(),
                common_writable: vec![g.join("objects"), g.join("refs"), g.join("logs")],
                protected: Protected {
                    hooks: vec![g.join("hooks")],
                    config: vec![g.join("config")],
                    other: vec![admin.join("commondir"), admin.join("gitdir")],
                }
            }
        );

        assert_eq!(gather(&root).unwrap(), GitLayout::None);

        std::fs::remove_dir(g.join("hooks")).unwrap();
        std::os::unix::fs::symlink(root.join("elsewhere"), g.join("hooks")).unwrap();
        assert_eq!(gather(&main), Err(GitLayoutError::Symlink(g.join("hooks"))));
    }
}
