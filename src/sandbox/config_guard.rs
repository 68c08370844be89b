//! The edge that applies `agent_config` to one run: before it, private
//! copies of the agent's mixed config files and shadow folders in a 0700
//! folder of nerdr's state dir (hidden inside every sandbox), and the
//! binds that put them in place; after it, the safe keys and new files
//! carried back into the real ones, and every refusal reported (stderr,
//! the audit trail, the journal). The real files never hold what the
//! agent wrote until it has been checked.
//!
//! A run killed before its end (SIGKILL) leaves its private folder with a
//! manifest; the next run finishes it before starting (a folder without
//! one, from a run that died while setting up, is named instead), so
//! nothing the agent wrote there is lost unseen.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::agent_config::{self, Guarded, Policy};
use super::audit_trail::Trail;
use super::bwrap::Bind;
use super::config_merge::{self, Format};

/// `eprintln!` that cannot panic: after the run the terminal may be gone
/// (a closed tab), and the carrying back must go on.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

#[path = "config_carry.rs"]
mod carry;
pub use carry::recover_leftovers;
use carry::*;

/// The folder, under nerdr's state dir, of every run's private copies.
pub const PRIVATE_DIR: &str = "sandbox-private";

/// One guarded file for this run.
struct GuardedRun {
    /// The real file (symlinks followed).
    real: PathBuf,
    /// What the sandbox writes instead.
    copy: PathBuf,
    /// The real file's text when the run started.
    base: Option<String>,
    g: Guarded,
}

/// One shadowed folder for this run.
struct ShadowRun {
    real: PathBuf,
    private: PathBuf,
    rel: &'static str,
    /// Top-level names that were put there from the real folder.
    placed: BTreeSet<OsString>,
    /// Top-level names the user's config names (`agent_config::named_in`):
    /// read-only, and not carried over when made.
    named: BTreeSet<OsString>,
}

/// What `prepare` set up; `finish` takes it back down.
pub struct Prepared {
    dir: PathBuf,
    agent: String,
    policy: Policy,
    files: Vec<GuardedRun>,
    shadows: Vec<ShadowRun>,
    /// The binds, in order, for the layout.
    pub binds: Vec<Bind>,
    /// Real paths the layout must no longer bind writable itself.
    pub replaces: Vec<PathBuf>,
}

fn mkdir_private(p: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(p)
}

fn write_private(p: &Path, text: &str, mode: u32) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(p)?;
    f.write_all(text.as_bytes())
}

/// What the agent's own config files on the host (its locked and guarded
/// files, and the files directly in its locked folders) name at the top
/// of the shadowed folder `shadow`.
fn named_entries(home: &Path, policy: &Policy, shadow: &str) -> BTreeSet<OsString> {
    const MAX: u64 = 4 << 20;
    let mut files: Vec<PathBuf> = Vec::new();
    for l in policy.locked {
        let p = home.join(l.rel);
        if l.dir {
            if let Ok(rd) = std::fs::read_dir(&p) {
                files.extend(rd.flatten().map(|e| e.path()));
            }
        } else {
            files.push(p);
        }
    }
    let home_text = home.to_string_lossy();
    let read = |f: &Path| -> Option<String> {
        let small = std::fs::metadata(f).is_ok_and(|m| m.is_file() && m.len() <= MAX);
        if !small {
            return None;
        }
        Some(String::from_utf8_lossy(&std::fs::read(f).ok()?).into_owned())
    };
    let mut texts: Vec<String> = files.iter().filter_map(|f| read(f)).collect();
    for g in policy.guarded {
        let Some(text) = read(&home.join(g.rel)) else {
            continue;
        };
        match (g.format, g.carry) {
            // A file of bookkeeping (paths of projects, plans, sessions):
            // only what its refused keys hold starts programs.
            (Format::Json, config_merge::Carry::AllBut(rules)) => {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                    texts.extend(refused_parts(&v, rules));
                }
            }
            _ => texts.push(text),
        }
    }
    let mut out = BTreeSet::new();
    for text in texts {
        for n in agent_config::named_in(&text, &home_text, shadow) {
            let rel = format!("{shadow}/{n}");
            if !policy.guarded.iter().any(|g| g.rel == rel) {
                out.insert(OsString::from(n));
            }
        }
    }
    out
}

/// The values under `rules`' keys in `v`, as text.
fn refused_parts(v: &serde_json::Value, rules: &[config_merge::Rule]) -> Vec<String> {
    fn walk(v: &serde_json::Value, key: &[&str], out: &mut Vec<String>) {
        let Some((first, rest)) = key.split_first() else {
            out.push(v.to_string());
            return;
        };
        let Some(m) = v.as_object() else {
            return;
        };
        for (k, sub) in m {
            if *first == "*" || first == k {
                walk(sub, rest, out);
            }
        }
    }
    let mut out = Vec::new();
    for r in rules {
        walk(v, r.key, &mut out);
    }
    out
}

fn empty_text(format: Format) -> &'static str {
    match format {
        Format::Json => "{}\n",
        Format::Toml => "",
    }
}

/// Set up the agent's private copies under `state_dir`. `home` is
/// resolved; the agent's folders exist (`facts::gather` made them).
pub fn prepare(
    home: &Path,
    state_dir: &Path,
    session: &str,
    agent: &str,
) -> anyhow::Result<Prepared> {
    use anyhow::Context;
    let policy = agent_config::policy(agent);
    let root = state_dir.join(PRIVATE_DIR);
    // Made for every run, so every sandbox hides it.
    mkdir_private(&root).with_context(|| format!("cannot make {}", root.display()))?;
    let dir = root.join(session);
    let mut p = Prepared {
        dir: dir.clone(),
        agent: agent.to_string(),
        policy,
        files: Vec::new(),
        shadows: Vec::new(),
        binds: Vec::new(),
        replaces: Vec::new(),
    };
    if policy.locked.is_empty() && policy.guarded.is_empty() {
        return Ok(p);
    }
    mkdir_private(&dir).with_context(|| format!("cannot make {}", dir.display()))?;
    std::fs::write(dir.join("pid"), std::process::id().to_string())?;

    for (i, rel) in policy.shadowed.iter().enumerate() {
        let Ok(real) = std::fs::canonicalize(home.join(rel)) else {
            continue;
        };
        let private = dir.join(format!("shadow-{i}"));
        mkdir_private(&private)?;
        p.binds.push(Bind::rw(&private, &real));
        let mut placed = BTreeSet::new();
        let named = named_entries(home, &policy, rel);
        let mut entries: Vec<_> = std::fs::read_dir(&real)
            .with_context(|| format!("cannot read {}", real.display()))?
            .flatten()
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            let Some(rel_name) = name.to_str().map(|n| format!("{rel}/{n}")) else {
                continue;
            };
            if agent_config::is_private(&policy, &rel_name) {
                // The run's own, made below.
                continue;
            }
            if let Some(g) = policy.guarded.iter().find(|g| g.rel == rel_name) {
                let text = std::fs::read_to_string(e.path())
                    .with_context(|| format!("cannot read {}", e.path().display()))?;
                let copy = private.join(&name);
                write_private(&copy, &text, 0o600)?;
                placed.insert(name);
                p.files.push(GuardedRun {
                    // A link to the user's dotfiles stays a link.
                    real: std::fs::canonicalize(e.path()).unwrap_or(e.path()),
                    copy,
                    base: Some(text),
                    g: *g,
                });
                continue;
            }
            let locked = agent_config::is_protected(&policy, &rel_name) || named.contains(&name);
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            let inside = private.join(&name);
            if meta.file_type().is_symlink() {
                // The link itself, resolved inside as before.
                std::os::unix::fs::symlink(std::fs::read_link(e.path())?, &inside)?;
            } else if meta.is_dir() {
                mkdir_private(&inside)?;
                p.binds.push(Bind::same(&e.path(), locked));
            } else if meta.is_file() {
                write_private(&inside, "", 0o600)?;
                p.binds.push(Bind::same(&e.path(), locked));
            } else {
                continue;
            }
            placed.insert(name);
        }
        for l in policy
            .private
            .iter()
            .filter(|l| agent_config::shadow_of(&policy, l.rel) == Some(rel))
        {
            let name = OsString::from(Path::new(l.rel).file_name().expect("a file name"));
            mkdir_private(&private.join(&name))?;
            placed.insert(name);
        }
        for g in policy
            .guarded
            .iter()
            .filter(|g| agent_config::shadow_of(&policy, g.rel) == Some(rel))
        {
            let name = OsString::from(Path::new(g.rel).file_name().expect("a file name"));
            // Another guarded file is seen here when this one is missing.
            let stand_in = policy.guarded.iter().any(|o| o.inside == Some(g.rel));
            if !placed.contains(&name) && !stand_in {
                write_private(&private.join(&name), empty_text(g.format), 0o600)?;
                placed.insert(name.clone());
                p.files.push(GuardedRun {
                    real: real.join(&name),
                    copy: private.join(&name),
                    base: None,
                    g: *g,
                });
            }
        }
        p.replaces.push(real.clone());
        p.shadows.push(ShadowRun {
            real,
            private,
            rel,
            placed,
            named,
        });
    }

    for l in policy.locked {
        if agent_config::shadow_of(&policy, l.rel).is_some() {
            continue;
        }
        let path = home.join(l.rel);
        if std::fs::symlink_metadata(&path).is_err() {
            // Made empty, so the agent cannot make it.
            if l.dir {
                mkdir_private(&path)?;
            } else {
                let _ = write_private(
                    &path,
                    if l.rel.ends_with(".json") { "{}\n" } else { "" },
                    0o600,
                );
            }
        }
        if let Ok(real) = std::fs::canonicalize(&path) {
            p.binds.push(Bind::same(&real, true));
        }
    }

    for (i, g) in policy.guarded.iter().enumerate() {
        if agent_config::shadow_of(&policy, g.rel).is_some() {
            continue;
        }
        let path = home.join(g.rel);
        if let Some(inside) = g.inside {
            let parent = agent_config::shadow_of(&policy, inside);
            let name = OsString::from(Path::new(inside).file_name().expect("a file name"));
            let Some(s) = p.shadows.iter_mut().find(|s| Some(s.rel) == parent) else {
                continue;
            };
            if s.placed.contains(&name) {
                // The real one there is what the agent reads.
                continue;
            }
            let real = std::fs::canonicalize(&path).unwrap_or(path);
            let base = std::fs::read_to_string(&real).ok();
            let copy = s.private.join(&name);
            write_private(
                &copy,
                base.as_deref().unwrap_or(empty_text(g.format)),
                0o600,
            )?;
            s.placed.insert(name);
            p.replaces.push(real.clone());
            p.files.push(GuardedRun {
                real,
                copy,
                base,
                g: *g,
            });
            continue;
        }
        if std::fs::symlink_metadata(&path).is_err() {
            // bwrap needs a file to bind over, in a home it cannot write.
            let _ = write_private(&path, empty_text(g.format), 0o600);
        }
        let real = std::fs::canonicalize(&path)
            .with_context(|| format!("cannot resolve {}", path.display()))?;
        let base = std::fs::read_to_string(&real)
            .with_context(|| format!("cannot read {}", real.display()))?;
        let copy = dir.join(format!("file-{i}"));
        write_private(&copy, &base, 0o600)?;
        p.binds.push(Bind::rw(&copy, &real));
        p.replaces.push(real.clone());
        p.files.push(GuardedRun {
            real,
            copy,
            base: Some(base),
            g: *g,
        });
    }
    let manifest = serde_json::to_string(&p.manifest())?;
    write_private(&dir.join(MANIFEST), &manifest, 0o600)?;
    Ok(p)
}

#[cfg(test)]
#[path = "config_guard_tests.rs"]
mod tests;
