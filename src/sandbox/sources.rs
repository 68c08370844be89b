//! Which sandbox settings files are read, and how far each is trusted.
//! Only a file the sandboxed program cannot change may loosen the sandbox:
//! otherwise one run could loosen the next. [`trust`] decides over plain
//! facts (pure, table-tested); [`load`] gathers them, opening each file so
//! that nothing can make it hang (a FIFO planted in its place).

use std::path::{Path, PathBuf};

use super::settings::{self, Layer, Source};
use crate::paths::Paths;

/// Which file it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `~/.claude/settings.json`: the sandbox binds it read-only, so inside
    /// it cannot change while it stays a regular file with one link.
    ClaudeUser,
    /// `$XDG_CONFIG_HOME/nerdr/sandbox.json`: nerdr's config dir is
    /// read-only inside.
    NerdrOwn,
    /// `--settings FILE`.
    Flag,
    /// `<worktree>/.claude/settings*.json`.
    Project,
}

/// What the disk says about one file (opened, then `fstat`ed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileFacts {
    /// The path itself is a symbolic link.
    pub symlink: bool,
    /// What was opened is a regular file.
    pub regular: bool,
    /// Its hard-link count.
    pub links: u64,
    /// Where it really lies (symlinks followed).
    pub resolved: PathBuf,
    /// nerdr saw it as a symbolic link when a sandbox started before: a
    /// sandboxed Claude could then replace the link (in its writable
    /// `~/.claude`) with a file of its own, so a regular file there now
    /// proves nothing.
    pub was_symlink: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    MayLoosen,
    TightenOnly(String),
    /// Not read at all (with a warning).
    Skip(String),
}

/// How far a file may change the sandbox. `writable`: every folder some
/// sandbox may write (worktree, every agent's own dirs, `allowWrite`);
/// `pinned`: the folder `ClaudeUser` lies in, writable to Claude's sandbox
/// but with the file itself bound read-only there.
pub fn trust(kind: Kind, f: &FileFacts, writable: &[PathBuf], pinned: Option<&Path>) -> Trust {
    if !f.regular {
        return Trust::Skip("not a regular file, not read".into());
    }
    match kind {
        Kind::Project => return Trust::TightenOnly(String::new()),
        Kind::ClaudeUser if f.symlink => {
            return Trust::TightenOnly(
                "it is a symbolic link, which the sandboxed agent can replace in ~/.claude; make it a regular file (or put loosening keys in nerdr's sandbox.json)".into(),
            )
        }
        Kind::ClaudeUser if f.was_symlink => {
            return Trust::TightenOnly(
                "it was a symbolic link when a sandbox started before, so a sandboxed agent may have replaced it; if you made it a regular file yourself, remove $XDG_STATE_HOME/nerdr/sandbox-claude-settings-was-a-symlink".into(),
            )
        }
        _ => {}
    }
    if f.links > 1 {
        return Trust::TightenOnly(format!(
            "it has {} hard links, and another may lie where the sandbox writes",
            f.links
        ));
    }
    let inside = writable.iter().find(|w| {
        f.resolved.starts_with(w)
            && !(kind == Kind::ClaudeUser && pinned.is_some_and(|p| p == w.as_path()))
    });
    match inside {
        Some(w) => Trust::TightenOnly(format!(
            "it lies in {} ({}), which a sandbox can write",
            w.display(),
            f.resolved.display()
        )),
        None => Trust::MayLoosen,
    }
}

/// A settings file's text and facts; `None` if it does not exist.
fn open(path: &Path) -> anyhow::Result<Option<(String, FileFacts)>> {
    use std::io::Read;
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let symlink = match std::fs::symlink_metadata(path) {
        Ok(m) => m.file_type().is_symlink(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read the sandbox settings {}: {e}", path.display()),
    };
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
    let mut file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        // A dangling symlink: as good as absent.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => anyhow::bail!("cannot read the sandbox settings {}: {e}", path.display()),
    };
    let meta = file.metadata()?;
    let facts = FileFacts {
        symlink,
        regular: meta.is_file(),
        links: meta.nlink(),
        resolved: std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        was_symlink: false,
    };
    let mut text = String::new();
    if facts.regular {
        file.read_to_string(&mut text).map_err(|e| {
            anyhow::anyhow!("cannot read the sandbox settings {}: {e}", path.display())
        })?;
    }
    Ok(Some((text, facts)))
}

/// In nerdr's state dir: `~/.claude/settings.json` was a symlink once.
const SYMLINK_MARKER: &str = "sandbox-claude-settings-was-a-symlink";

/// The layers, each with its source, and the warnings.
pub type Loaded = (Vec<(Source, Layer)>, Vec<String>);

/// The layers in trust order (the user's own files, `--settings`, the
/// project's), each with the trust its file earns, and warnings for files
/// skipped or trusted less. A missing default file is no layer, a missing
/// or unreadable `--settings` file an error.
pub fn load(
    home: &Path,
    paths: &Paths,
    flag: Option<&Path>,
    worktree: &Path,
    agent_dirs: &[PathBuf],
) -> anyhow::Result<Loaded> {
    let claude_dir = home.join(".claude");
    let mut files = vec![
        (Kind::ClaudeUser, home.join(".claude/settings.json")),
        (Kind::NerdrOwn, paths.config_dir.join("sandbox.json")),
    ];
    if let Some(f) = flag {
        files.push((Kind::Flag, f.to_path_buf()));
    }
    files.push((Kind::Project, worktree.join(".claude/settings.json")));
    files.push((Kind::Project, worktree.join(".claude/settings.local.json")));

    let marker = paths.state_dir.join(SYMLINK_MARKER);
    let mut read = Vec::new();
    let mut warnings = Vec::new();
    for (kind, path) in files {
        // A symlink is remembered even when it leads nowhere yet: the agent
        // could otherwise put a file of its own in its place.
        if kind == Kind::ClaudeUser
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
            && !marker.exists()
        {
            std::fs::create_dir_all(&paths.state_dir)?;
            std::fs::write(&marker, path.as_os_str().as_encoded_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", marker.display()))?;
        }
        let Some((text, mut facts)) = open(&path)? else {
            if kind == Kind::Flag {
                anyhow::bail!("--settings {} does not exist", path.display());
            }
            continue;
        };
        if kind == Kind::ClaudeUser {
            // Remembered (in nerdr's state dir, read-only inside) before the
            // sandbox starts, for as long as the user keeps the marker.
            if facts.symlink && !marker.exists() {
                std::fs::create_dir_all(&paths.state_dir)?;
                std::fs::write(&marker, facts.resolved.as_os_str().as_encoded_bytes())
                    .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", marker.display()))?;
            }
            facts.was_symlink = marker.exists();
        }
        // Unknown keys are errors in nerdr's own file only.
        let strict = kind == Kind::NerdrOwn;
        let layer = if facts.regular {
            Some(settings::parse(&path, &text, strict)?)
        } else {
            None
        };
        read.push((kind, path, facts, layer));
    }
    // Every folder a sandbox may write, whatever its agent.
    let mut writable: Vec<PathBuf> = agent_dirs.to_vec();
    writable.extend(std::fs::canonicalize(worktree).ok());
    for (_, _, _, layer) in &read {
        for w in layer.iter().flat_map(|l| l.allow_write.iter().flatten()) {
            let p = if let Some(rest) = w.strip_prefix("~/") {
                home.join(rest)
            } else if w == "~" {
                home.to_path_buf()
            } else {
                worktree.join(w)
            };
            writable.extend(std::fs::canonicalize(p).ok());
        }
    }
    let pinned = std::fs::canonicalize(&claude_dir).ok();

    let mut out = Vec::new();
    for (kind, path, facts, layer) in read {
        let source = match trust(kind, &facts, &writable, pinned.as_deref()) {
            Trust::Skip(why) if kind == Kind::Flag => {
                anyhow::bail!("--settings {}: {why}; pass a regular file", path.display())
            }
            Trust::Skip(why) => {
                warnings.push(format!("{}: {why}", path.display()));
                continue;
            }
            Trust::MayLoosen if kind == Kind::Flag => Source::Flag(path),
            Trust::MayLoosen => Source::User(path),
            Trust::TightenOnly(_) if kind == Kind::Project => Source::Project(path),
            Trust::TightenOnly(why) => Source::TightenOnly { path, why },
        };
        out.extend(layer.map(|l| (source, l)));
    }
    Ok((out, warnings))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(resolved: &str) -> FileFacts {
        FileFacts {
            symlink: false,
            regular: true,
            links: 1,
            resolved: resolved.into(),
            was_symlink: false,
        }
    }

    /// Every rule, one row each: (kind, facts, verdict as `loosen`,
    /// `tighten: WORDS` or `skip`).
    #[test]
    fn only_files_the_sandbox_cannot_change_may_loosen() {
        let writable: Vec<PathBuf> = vec![
            "/h/.claude".into(),
            "/h/.codex".into(),
            "/h/src/p".into(),
            "/h/cache".into(),
        ];
        let pinned = Path::new("/h/.claude");
        let link = |mut f: FileFacts| {
            f.symlink = true;
            f
        };
        let rows: Vec<(&str, Kind, FileFacts, &str)> = vec![
            (
                "claude's own",
                Kind::ClaudeUser,
                facts("/h/.claude/settings.json"),
                "loosen",
            ),
            (
                "claude's, a symlink",
                Kind::ClaudeUser,
                link(facts("/h/dotfiles/settings.json")),
                "tighten: symbolic link",
            ),
            (
                "claude's, a regular file that was a symlink before",
                Kind::ClaudeUser,
                FileFacts {
                    was_symlink: true,
                    ..facts("/h/.claude/settings.json")
                },
                "tighten: was a symbolic link",
            ),
            (
                "nerdr's own is not concerned by claude's symlink",
                Kind::NerdrOwn,
                FileFacts {
                    was_symlink: true,
                    ..facts("/h/.config/nerdr/sandbox.json")
                },
                "loosen",
            ),
            (
                "claude's, a hard link",
                Kind::ClaudeUser,
                FileFacts {
                    links: 2,
                    ..facts("/h/.claude/settings.json")
                },
                "tighten: hard links",
            ),
            (
                "claude's dir leads into the worktree",
                Kind::ClaudeUser,
                facts("/h/src/p/claude/settings.json"),
                "tighten: /h/src/p",
            ),
            (
                "claude's, a FIFO",
                Kind::ClaudeUser,
                FileFacts {
                    regular: false,
                    ..facts("/h/.claude/settings.json")
                },
                "skip",
            ),
            (
                "nerdr's own",
                Kind::NerdrOwn,
                facts("/h/.config/nerdr/sandbox.json"),
                "loosen",
            ),
            (
                "nerdr's own, a symlink out of the way",
                Kind::NerdrOwn,
                link(facts("/h/dotfiles/sandbox.json")),
                "loosen",
            ),
            (
                "nerdr's own, a symlink into ~/.claude",
                Kind::NerdrOwn,
                link(facts("/h/.claude/x.json")),
                "tighten: /h/.claude",
            ),
            (
                "--settings elsewhere",
                Kind::Flag,
                facts("/etc/s.json"),
                "loosen",
            ),
            (
                "--settings in the worktree",
                Kind::Flag,
                facts("/h/src/p/s.json"),
                "tighten: /h/src/p",
            ),
            (
                "--settings in another agent's dir",
                Kind::Flag,
                facts("/h/.codex/s.json"),
                "tighten: /h/.codex",
            ),
            (
                "--settings in ~/.claude (not pinned for it)",
                Kind::Flag,
                facts("/h/.claude/s.json"),
                "tighten: /h/.claude",
            ),
            (
                "--settings in an allowWrite folder",
                Kind::Flag,
                facts("/h/cache/s.json"),
                "tighten: /h/cache",
            ),
            (
                "--settings a pipe",
                Kind::Flag,
                FileFacts {
                    regular: false,
                    ..facts("/etc/s.json")
                },
                "skip",
            ),
            (
                "a project's",
                Kind::Project,
                facts("/h/src/p/.claude/settings.json"),
                "tighten: ",
            ),
            (
                "a project's, a FIFO",
                Kind::Project,
                FileFacts {
                    regular: false,
                    ..facts("/h/src/p/.claude/settings.json")
                },
                "skip",
            ),
        ];
        for (name, kind, f, want) in rows {
            let got = trust(kind, &f, &writable, Some(pinned));
            match (&got, want) {
                (Trust::MayLoosen, "loosen") | (Trust::Skip(_), "skip") => {}
                (Trust::TightenOnly(why), w) if w.starts_with("tighten: ") => {
                    assert!(why.contains(&w["tighten: ".len()..]), "{name}: {why}")
                }
                _ => panic!("{name}: {got:?}, wanted {want}"),
            }
        }
    }

    /// A FIFO in a project's place is skipped without hanging, and a
    /// symlinked user file reads as tighten-only.
    #[test]
    fn a_fifo_is_skipped_without_hanging() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let home = root.join("h");
        let wt = root.join("w");
        std::fs::create_dir_all(wt.join(".claude")).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        let fifo = wt.join(".claude/settings.json");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::fs::write(root.join("real.json"), r#"{"sandbox": {"enabled": false}}"#).unwrap();
        std::os::unix::fs::symlink(root.join("real.json"), home.join(".claude/settings.json"))
            .unwrap();
        let env = crate::paths::Env {
            home: Some(home.clone()),
            ..Default::default()
        };
        let paths = Paths::resolve(&env).unwrap();
        let (layers, warnings) = load(&home, &paths, None, &wt, &[]).unwrap();
        assert_eq!(layers.len(), 1, "{layers:?}");
        assert!(
            matches!(layers[0].0, Source::TightenOnly { .. }),
            "{layers:?}"
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("not a regular file"), "{warnings:?}");
        let (eff, w) = settings::merge(&layers);
        assert!(eff.enabled, "a symlinked user file loosened");
        assert!(w[0].what.contains("symbolic link"), "{w:?}");

        // Replaced by a regular file (as a sandboxed Claude could): still
        // tighten-only, as nerdr remembers the link.
        std::fs::remove_file(home.join(".claude/settings.json")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"sandbox": {"enabled": false}}"#,
        )
        .unwrap();
        let (layers, _) = load(&home, &paths, None, &wt, &[]).unwrap();
        let (eff, w) = settings::merge(&layers);
        assert!(eff.enabled, "a replaced symlink loosened");
        assert!(w[0].what.contains("was a symbolic link"), "{w:?}");
    }
}
