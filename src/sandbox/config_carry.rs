//! The carrying back half of `config_guard`: after a run (or, for a run
//! that was killed, before the next one), the safe keys and new files go
//! into the real ones, and every refusal is reported.

use super::*;

/// What a later run needs to finish this one if it dies (paths inside the
/// private folder relative to it, so the folder can be moved).
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Manifest {
    pub(super) agent: String,
    pub(super) files: Vec<FileRecord>,
    pub(super) shadows: Vec<ShadowRecord>,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct FileRecord {
    pub(super) rel: String,
    pub(super) real: PathBuf,
    pub(super) copy: PathBuf,
    pub(super) base: Option<String>,
}

#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct ShadowRecord {
    pub(super) rel: String,
    pub(super) real: PathBuf,
    pub(super) private: PathBuf,
    pub(super) placed: Vec<String>,
    #[serde(default)]
    pub(super) named: Vec<String>,
}

pub(super) const MANIFEST: &str = "manifest.json";

impl Prepared {
    pub(super) fn manifest(&self) -> Manifest {
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
pub(super) fn recover(dir: &Path, trail: &Trail) -> bool {
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
pub(super) fn leftovers(root: &Path) -> Vec<PathBuf> {
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

pub(super) fn refuse(trail: &Trail, file: &Path, key: &str, why: &str) {
    say!(
        "nerdr sandbox: WARNING: refused {key} in {}: {why}; the change made inside the sandbox was not kept",
        file.display()
    );
    trail.config_refused(file, key, why);
}

/// The most of a copy that is read back: the agents' own files are far
/// smaller.
pub(super) const MAX_COPY: u64 = 64 << 20;

/// The text of the sandbox's copy: only a plain file of at most
/// [`MAX_COPY`] bytes, never through a link the agent left there (it
/// would read a host file hidden from the sandbox into the real one) nor
/// from a FIFO (it would wait forever).
pub(super) fn read_copy(p: &Path) -> std::io::Result<String> {
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
pub(super) fn carry_file(f: &GuardedRun, trail: &Trail) -> bool {
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
pub(super) fn replace_file(path: &Path, text: &str) -> std::io::Result<()> {
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
pub(super) fn carry_new_entries(s: &ShadowRun, policy: &Policy, trail: &Trail) -> bool {
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
