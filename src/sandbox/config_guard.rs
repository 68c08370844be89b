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

/// What a later run needs to finish this one if it dies (paths inside the
/// private folder relative to it, so the folder can be moved).
#[derive(serde::Serialize, serde::Deserialize)]
struct Manifest {
    agent: String,
    files: Vec<FileRecord>,
    shadows: Vec<ShadowRecord>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct FileRecord {
    rel: String,
    real: PathBuf,
    copy: PathBuf,
    base: Option<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ShadowRecord {
    rel: String,
    real: PathBuf,
    private: PathBuf,
    placed: Vec<String>,
    #[serde(default)]
    named: Vec<String>,
}

const MANIFEST: &str = "manifest.json";

impl Prepared {
    fn manifest(&self) -> Manifest {
        let inside = |p: &Path| p.strip_prefix(&self.dir).unwrap_or(p).to_path_buf();
        Manifest {
            agent: self.agent.clone(),
            files: self
                .files
                .iter()
                .map(|f| FileRecord {
                    rel: f.g.rel.to_string(),
                    real: f.real.clone(),
                    copy: inside(&f.copy),
                    base: f.base.clone(),
                })
                .collect(),
            shadows: self
                .shadows
                .iter()
                .map(|s| ShadowRecord {
                    rel: s.rel.to_string(),
                    real: s.real.clone(),
                    private: inside(&s.private),
                    placed: s
                        .placed
                        .iter()
                        .filter_map(|n| n.to_str().map(String::from))
                        .collect(),
                    named: s
                        .named
                        .iter()
                        .filter_map(|n| n.to_str().map(String::from))
                        .collect(),
                })
                .collect(),
        }
    }

    /// The run recorded in `dir`, to finish it.
    fn load(dir: &Path) -> Option<Prepared> {
        let m: Manifest =
            serde_json::from_str(&std::fs::read_to_string(dir.join(MANIFEST)).ok()?).ok()?;
        let policy = agent_config::policy(&m.agent);
        let files = m
            .files
            .into_iter()
            .filter_map(|f| {
                let g = *policy.guarded.iter().find(|g| g.rel == f.rel)?;
                Some(GuardedRun {
                    real: f.real,
                    copy: dir.join(f.copy),
                    base: f.base,
                    g,
                })
            })
            .collect();
        let shadows = m
            .shadows
            .into_iter()
            .filter_map(|s| {
                let rel = *policy.shadowed.iter().find(|r| **r == s.rel)?;
                Some(ShadowRun {
                    real: s.real,
                    private: dir.join(s.private),
                    rel,
                    placed: s.placed.into_iter().map(OsString::from).collect(),
                    named: s.named.into_iter().map(OsString::from).collect(),
                })
            })
            .collect();
        Some(Prepared {
            dir: dir.to_path_buf(),
            agent: m.agent,
            policy,
            files,
            shadows,
            binds: Vec::new(),
            replaces: Vec::new(),
        })
    }
}

/// Finish the run that left `dir` (it died before its own end): carry
/// back and report as it would have. False when there is nothing to go
/// on (it died while setting up, or another run took it first).
fn recover(dir: &Path, trail: &Trail) -> bool {
    // Taken by renaming, so two runs starting at once do not both merge.
    let name = dir.file_name().unwrap_or_default().to_string_lossy();
    let claimed = dir.with_file_name(format!("{name}.recovering-{}", std::process::id()));
    if std::fs::rename(dir, &claimed).is_err() {
        return false;
    }
    match Prepared::load(&claimed) {
        Some(p) => {
            let w = format!(
                "an earlier run ({}) ended before its agent's config was checked; checking it now",
                dir.display()
            );
            say!("nerdr sandbox: warning: {w}");
            trail.setting(&w);
            p.finish(trail);
            true
        }
        None => {
            let _ = std::fs::rename(&claimed, dir);
            false
        }
    }
}

/// Finish what earlier runs that died left in `state_dir`, before this
/// run copies the agent's config; the folders that could not be finished.
pub fn recover_leftovers(state_dir: &Path, trail: &Trail) -> Vec<PathBuf> {
    leftovers(&state_dir.join(PRIVATE_DIR))
        .into_iter()
        .filter(|d| !recover(d, trail))
        .collect()
}

/// Private folders of runs whose process is gone.
fn leftovers(root: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    rd.flatten()
        .map(|e| e.path())
        .filter(|d| {
            // No pid yet: a run still setting up (or one that died before
            // it had copied anything).
            let pid = std::fs::read_to_string(d.join("pid")).unwrap_or_default();
            let pid = pid.trim();
            !pid.is_empty() && !Path::new("/proc").join(pid).exists()
        })
        .collect()
}

impl Prepared {
    /// After the run: carry back what is safe, report the rest, and remove
    /// the private folder unless something had to stay there.
    pub fn finish(self, trail: &Trail) {
        let mut keep = false;
        for f in &self.files {
            keep |= !carry_file(f, trail);
        }
        for s in &self.shadows {
            keep |= !carry_new_entries(s, &self.policy, trail);
        }
        if keep {
            say!(
                "nerdr sandbox: warning: what could not be carried back stays in {}",
                self.dir.display()
            );
        } else if self.dir.exists() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

fn refuse(trail: &Trail, file: &Path, key: &str, why: &str) {
    say!(
        "nerdr sandbox: WARNING: refused {key} in {}: {why}; the change made inside the sandbox was not kept",
        file.display()
    );
    trail.config_refused(file, key, why);
}

/// The most of a copy that is read back: the agents' own files are far
/// smaller.
const MAX_COPY: u64 = 64 << 20;

/// The text of the sandbox's copy: only a plain file of at most
/// [`MAX_COPY`] bytes, never through a link the agent left there (it
/// would read a host file hidden from the sandbox into the real one) nor
/// from a FIFO (it would wait forever).
fn read_copy(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(p)?;
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a plain file"));
    }
    if meta.len() > MAX_COPY {
        return Err(std::io::Error::other(format!(
            "larger than {MAX_COPY} bytes"
        )));
    }
    let mut text = String::new();
    f.take(MAX_COPY).read_to_string(&mut text)?;
    Ok(text)
}

/// Merge one guarded file back; false when the copy must be kept.
fn carry_file(f: &GuardedRun, trail: &Trail) -> bool {
    let ours = match read_copy(&f.copy) {
        Ok(t) => t,
        Err(e) => {
            let w = format!(
                "cannot read the sandbox's copy of {}: {e}",
                f.real.display()
            );
            say!("nerdr sandbox: warning: {w}");
            trail.setting(&w);
            return false;
        }
    };
    if f.base.as_deref() == Some(ours.as_str()) {
        return true;
    }
    let theirs = std::fs::read_to_string(&f.real).ok();
    let merged = match config_merge::merge(
        f.g.format,
        f.g.carry,
        f.base.as_deref(),
        &ours,
        theirs.as_deref(),
    ) {
        Ok(m) => m,
        Err(e) => {
            let w = format!(
                "nothing carried back into {}: {e}; the sandbox's copy is {}",
                f.real.display(),
                f.copy.display()
            );
            say!("nerdr sandbox: warning: {w}");
            trail.setting(&w);
            return false;
        }
    };
    for r in &merged.refused {
        refuse(trail, &f.real, &r.key, r.why);
    }
    if let Some(text) = merged.text {
        if let Err(e) = replace_file(&f.real, &text) {
            let w = format!(
                "cannot write {}: {e}; the sandbox's copy is {}",
                f.real.display(),
                f.copy.display()
            );
            say!("nerdr sandbox: warning: {w}");
            trail.setting(&w);
            return false;
        }
    }
    true
}

/// Replace `path` by `text` at once (a temporary file renamed over it),
/// keeping its mode: a host-side agent reading it sees the old or the new
/// file, never half of one.
fn replace_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mode = std::fs::metadata(path)
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0o600);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.nerdr-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_private(&tmp, text, mode)?;
    std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Move what the agent added at the top of a shadowed folder into the
/// real one, except locked names; false when something stays behind.
fn carry_new_entries(s: &ShadowRun, policy: &Policy, trail: &Trail) -> bool {
    let Ok(rd) = std::fs::read_dir(&s.private) else {
        return false;
    };
    let mut ok = true;
    for e in rd.flatten() {
        let name = e.file_name();
        if s.placed.contains(&name) {
            continue;
        }
        let real = s.real.join(&name);
        let rel = format!("{}/{}", s.rel, name.to_string_lossy());
        if let Some(l) = policy.locked.iter().find(|l| l.rel == rel) {
            refuse(trail, &real, "what was made", l.why);
            continue;
        }
        if s.named.contains(&name) {
            refuse(
                trail,
                &real,
                "what was made",
                "the user's own config names it: a program it runs",
            );
            continue;
        }
        if std::fs::symlink_metadata(&real).is_ok() {
            say!(
                "nerdr sandbox: warning: {} was made during the run outside the sandbox too; the sandbox's is kept at {}",
                real.display(),
                e.path().display()
            );
            ok = false;
            continue;
        }
        if let Err(err) = std::fs::rename(e.path(), &real) {
            say!(
                "nerdr sandbox: warning: cannot move {} to {}: {err}",
                e.path().display(),
                real.display()
            );
            ok = false;
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Without bubblewrap: what `prepare` binds, and what `finish` brings
    /// back once "the agent" (this test) wrote the private copies.
    #[test]
    fn prepare_binds_and_finish_carries_back() {
        let t = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(t.path()).unwrap();
        let env = crate::paths::Env {
            home: Some(home.clone()),
            ..Default::default()
        };
        let paths = crate::paths::Paths::resolve(&env).unwrap();
        std::fs::create_dir_all(&paths.state_dir).unwrap();
        let codex = home.join(".codex");
        std::fs::create_dir_all(codex.join("sessions")).unwrap();
        std::fs::create_dir_all(codex.join("rules")).unwrap();
        // The user's config is a link into their dotfiles.
        std::fs::create_dir(home.join("dotfiles")).unwrap();
        std::fs::write(home.join("dotfiles/codex.toml"), "model = \"a\"\n").unwrap();
        std::os::unix::fs::symlink(home.join("dotfiles/codex.toml"), codex.join("config.toml"))
            .unwrap();
        std::fs::write(codex.join("auth.json"), "{}").unwrap();

        let p = prepare(&home, &paths.state_dir, "s1", "codex").unwrap();
        let private = paths.state_dir.join(PRIVATE_DIR).join("s1/shadow-0");
        let want = [
            Bind::rw(&private, &codex),
            Bind::same(&codex.join("auth.json"), false),
            Bind::same(&codex.join("rules"), true),
            Bind::same(&codex.join("sessions"), false),
        ];
        assert_eq!(p.binds, want);
        assert_eq!(p.replaces, std::slice::from_ref(&codex));

        // The agent: a safe key and `notify`, a new folder, a new `.env`.
        std::fs::write(
            private.join("config.toml"),
            "model = \"b\"\nnotify = [\"sh\"]\n",
        )
        .unwrap();
        std::fs::create_dir(private.join("memories")).unwrap();
        std::fs::write(private.join(".env"), "LD_PRELOAD=x\n").unwrap();
        let trail = Trail::open(&paths, "s1").unwrap();
        p.finish(&trail);

        assert_eq!(
            std::fs::read_to_string(codex.join("config.toml")).unwrap(),
            "model = \"b\"\n"
        );
        assert!(std::fs::symlink_metadata(codex.join("config.toml"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert!(codex.join("memories").is_dir());
        assert!(!codex.join(".env").exists());
        assert!(!paths.state_dir.join(PRIVATE_DIR).join("s1").exists());
        let lines = std::fs::read_to_string(trail.path()).unwrap();
        let refused: Vec<serde_json::Value> = lines
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|v: &serde_json::Value| v["event"] == "config-refused")
            .collect();
        assert_eq!(refused.len(), 2, "{lines}");
        assert_eq!(refused[0]["key"], "notify");
        assert_eq!(refused[1]["path"], codex.join(".env").display().to_string());
    }

    /// What of claude's bookkeeping names scripts: only its refused keys.
    #[test]
    fn only_refused_keys_of_a_bookkeeping_file_name_scripts() {
        let carry = agent_config::policy("claude").guarded[1].carry;
        let config_merge::Carry::AllBut(rules) = carry else {
            panic!("claude's global config carries all but some keys");
        };
        // (file, names found)
        let rows: &[(&str, &[&str])] = &[
            (
                r#"{"mcpServers": {"m": {"command": "~/.claude/mcp.sh"}}, "lastPlan": "~/.claude/plans/x.md"}"#,
                &["mcp.sh"],
            ),
            (
                r#"{"projects": {"/p": {"mcpServers": {"m": {"command": "$HOME/.claude/bin/m"}}, "x": "~/.claude/projects/y"}}}"#,
                &["bin"],
            ),
            (r#"{"apiKeyHelper": "~/.claude/key.sh"}"#, &["key.sh"]),
            (r#"{"githubRepoPaths": {"a": ["~/.claude/todos"]}}"#, &[]),
        ];
        for (text, want) in rows {
            let v: serde_json::Value = serde_json::from_str(text).unwrap();
            let mut got = BTreeSet::new();
            for t in refused_parts(&v, rules) {
                got.extend(agent_config::named_in(&t, "/home/u", ".claude"));
            }
            let got: Vec<&str> = got.iter().map(String::as_str).collect();
            assert_eq!(&got, want, "{text}");
        }
    }

    /// What the agent may leave as its copy: only a plain file is read.
    #[test]
    fn only_a_plain_copy_is_read_back() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("host.json"), "{\"secret\": 1}").unwrap();
        std::fs::write(d.join("plain"), "{}").unwrap();
        std::os::unix::fs::symlink(d.join("host.json"), d.join("link")).unwrap();
        let fifo = std::ffi::CString::new(d.join("fifo").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        std::fs::File::create(d.join("huge"))
            .unwrap()
            .set_len(MAX_COPY + 1)
            .unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        // (name, read back)
        let rows = [
            ("plain", true),
            ("link", false),
            ("fifo", false),
            ("huge", false),
            ("dir", false),
            ("missing", false),
        ];
        for (name, ok) in rows {
            let got = read_copy(&d.join(name));
            assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
        }
    }

    /// A run that died (SIGKILL) is finished by the next one; one that died
    /// while setting up is named.
    #[test]
    fn the_next_run_finishes_a_run_that_died() {
        let t = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(t.path()).unwrap();
        let env = crate::paths::Env {
            home: Some(home.clone()),
            ..Default::default()
        };
        let paths = crate::paths::Paths::resolve(&env).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(home.join(".claude.json"), "{\"n\": 1}").unwrap();
        let p = prepare(&home, &paths.state_dir, "dead", "claude").unwrap();
        let private = paths.state_dir.join(PRIVATE_DIR).join("dead/shadow-0");
        std::fs::write(
            private.join(".config.json"),
            "{\"n\": 2, \"env\": {\"A\": \"b\"}}",
        )
        .unwrap();
        std::fs::create_dir(private.join("projects")).unwrap();
        std::fs::write(
            paths.state_dir.join(PRIVATE_DIR).join("dead/pid"),
            "999999999",
        )
        .unwrap();
        drop(p); // killed: no finish
        let broken = paths.state_dir.join(PRIVATE_DIR).join("broken");
        std::fs::create_dir_all(&broken).unwrap();
        std::fs::write(broken.join("pid"), "999999999").unwrap();

        let trail = Trail::open(&paths, "next").unwrap();
        let left = recover_leftovers(&paths.state_dir, &trail);
        assert_eq!(left, [broken]);
        assert_eq!(
            std::fs::read_to_string(home.join(".claude.json")).unwrap(),
            "{\"n\": 2}"
        );
        assert!(home.join(".claude/projects").is_dir());
        let text = std::fs::read_to_string(trail.path()).unwrap();
        assert!(
            text.contains("config-refused") && text.contains("\"key\":\"env\""),
            "{text}"
        );
        let rest: Vec<_> = std::fs::read_dir(paths.state_dir.join(PRIVATE_DIR))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(rest, [OsString::from("broken")]);
    }

    /// claude: the copy of `~/.claude.json` is seen as
    /// `~/.claude/.config.json`, unless a real one is there.
    #[test]
    fn claudes_global_config_is_seen_in_its_folder() {
        for real_config_json in [false, true] {
            let t = tempfile::tempdir().unwrap();
            let home = std::fs::canonicalize(t.path()).unwrap();
            std::fs::create_dir_all(home.join(".claude")).unwrap();
            std::fs::write(home.join(".claude.json"), "{\"a\": 1}").unwrap();
            if real_config_json {
                std::fs::write(home.join(".claude/.config.json"), "{\"b\": 1}").unwrap();
            }
            let state = home.join("state");
            let p = prepare(&home, &state, "s", "claude").unwrap();
            let seen = state.join(PRIVATE_DIR).join("s/shadow-0/.config.json");
            let text = std::fs::read_to_string(&seen).unwrap();
            let real: Vec<&PathBuf> = p.files.iter().map(|f| &f.real).collect();
            if real_config_json {
                assert_eq!(text, "{\"b\": 1}");
                assert_eq!(real, [&home.join(".claude/.config.json")]);
            } else {
                assert_eq!(text, "{\"a\": 1}");
                assert_eq!(real, [&home.join(".claude.json")]);
                assert!(p.replaces.contains(&home.join(".claude.json")));
            }
        }
    }
}
