//! The sandboxed program's private copy of the repository's history, so it
//! can commit without being able to delete or rewrite what the user has.
//!
//! Inside the sandbox (see `bwrap::git_binds`):
//! - `<common>/objects` is a private, empty object store; the repository's
//!   own objects are bound read-only at `<common>/objects/.nerdr-shared`,
//!   which the private store's `info/alternates` names (relative, so it
//!   means the same inside as outside, where it is an empty folder). `info`
//!   is read-only, so the program cannot add alternates of its own.
//!   Mounts, not `GIT_OBJECT_DIRECTORY`: git in every other repository the
//!   program uses (a dependency fetched by cargo, `git -C ~/other log`),
//!   and tools that clear the environment, keep working as before.
//! - `<common>/refs` is a private copy of the repository's loose refs, and
//!   `<common>/logs` a private, empty reflog folder. `packed-refs` stays
//!   the repository's own, read-only.
//!
//! The repository's own objects, refs and `packed-refs` are never in a
//! writable place. Nothing of this copy is named in the repository's own
//! `objects/info/alternates`: an object planted there under the hash of
//! content the user is about to commit would make host git skip writing it.
//! What the program made comes home through host git (`bring_home`).
//!
//! The copy lives in `$XDG_DATA_HOME/nerdr/sandbox-git/<session>/` and is
//! removed once everything in it is home. The run holds a lock on it (an
//! `flock`, which the kernel drops when the process dies however it
//! dies), and it names its repository (`common`): a copy nobody holds was
//! left by a run that ended before bringing it home (SIGKILL, a reboot),
//! and the next run in that repository brings it home ([`leftovers`]). The recursive copy of `refs` is
//! a few lines over `std::fs`: loose refs are small regular files, and a
//! crate would add nothing but the need to reject symlinks ourselves.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::git_layout::GitLayout;

/// Where the repository's own objects appear inside the private store.
pub const SHARED: &str = ".nerdr-shared";

/// Host folders bound over the repository's `objects`, `refs` and `logs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateGit {
    pub objects: PathBuf,
    pub refs: PathBuf,
    pub logs: PathBuf,
}

/// The private copy made for one run (or left by one).
#[derive(Debug)]
pub struct Private {
    /// `<data>/sandbox-git/<session>`.
    pub dir: PathBuf,
    /// The repository's common dir.
    pub common: PathBuf,
    pub binds: PrivateGit,
    /// Held for as long as the copy is in use.
    _lock: nix::fcntl::Flock<std::fs::File>,
}

impl Private {
    /// The repository, as host git is to see it (see [`crate::git::import::Repo`]).
    pub fn repo(&self) -> crate::git::import::Repo {
        crate::git::import::Repo {
            common: self.common.clone(),
            shallow: self.dir.join("shallow"),
            stop: None,
        }
    }

    /// The session that made the copy (its folder's name).
    pub fn session(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

/// Take the copy's lock without waiting; None while a run holds it.
fn lock(dir: &Path) -> std::io::Result<Option<nix::fcntl::Flock<std::fs::File>>> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(dir.join("lock"))?;
    match nix::fcntl::Flock::lock(f, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(l) => Ok(Some(l)),
        Err((_, nix::errno::Errno::EWOULDBLOCK)) => Ok(None),
        Err((_, e)) => Err(e.into()),
    }
}

fn binds_in(dir: &Path) -> PrivateGit {
    PrivateGit {
        objects: dir.join("objects"),
        refs: dir.join("refs"),
        logs: dir.join("logs"),
    }
}

/// Copies in `data_dir` for the repository at `common` that no run holds:
/// left by runs that ended before bringing their work home.
pub fn leftovers(data_dir: &Path, common: &Path) -> Vec<Private> {
    use std::os::unix::ffi::OsStrExt;
    let Ok(entries) = std::fs::read_dir(data_dir.join("sandbox-git")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let dir = e.path();
        let names_this_repo =
            std::fs::read(dir.join("common")).is_ok_and(|c| c == common.as_os_str().as_bytes());
        if !e.file_type().is_ok_and(|t| t.is_dir()) || !names_this_repo {
            continue;
        }
        if let Ok(Some(l)) = lock(&dir) {
            out.push(Private {
                binds: binds_in(&dir),
                dir,
                common: common.to_path_buf(),
                _lock: l,
            });
        }
    }
    out
}

/// Make the private copy for `git`'s repository (None outside one).
pub fn prepare(data_dir: &Path, session: &str, git: &GitLayout) -> anyhow::Result<Option<Private>> {
    use anyhow::Context;
    use std::os::unix::fs::DirBuilderExt;
    let Some(common) = git.common() else {
        return Ok(None);
    };
    let dir = data_dir.join("sandbox-git").join(session);
    let mkdir = |p: &Path| {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(p)
            .with_context(|| format!("cannot create {}", p.display()))
    };
    mkdir(&dir)?;
    let held = lock(&dir)
        .with_context(|| format!("cannot lock {}", dir.display()))?
        .with_context(|| format!("{} is in use by another run", dir.display()))?;
    {
        use std::os::unix::ffi::OsStrExt;
        std::fs::write(dir.join("common"), common.as_os_str().as_bytes())
            .with_context(|| format!("cannot write in {}", dir.display()))?;
    }
    // The repository's `shallow` as it is now, where the program cannot
    // reach it (see `import::Repo`); none: not shallow.
    let shallow = dir.join("shallow");
    let _ = std::fs::remove_file(&shallow);
    if std::fs::symlink_metadata(common.join("shallow")).is_ok_and(|m| m.is_file()) {
        std::fs::copy(common.join("shallow"), &shallow)
            .with_context(|| format!("cannot copy {}", common.join("shallow").display()))?;
    }
    let binds = binds_in(&dir);
    let objects = binds.objects.clone();
    for d in ["info", "pack", SHARED] {
        mkdir(&objects.join(d))?;
    }
    let alternates = objects.join("info/alternates");
    std::fs::write(&alternates, format!("{SHARED}\n"))
        .with_context(|| format!("cannot write {}", alternates.display()))?;
    copy_tree(&common.join("refs"), &binds.refs)
        .with_context(|| format!("cannot copy {}", common.join("refs").display()))?;
    mkdir(&binds.logs)?;
    Ok(Some(Private {
        dir,
        common: common.to_path_buf(),
        binds,
        _lock: held,
    }))
}

/// Copy the folders and regular files under `from` to `to` (symlinks and
/// anything else are left out: git writes neither as loose refs).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let kind = e.file_type()?;
        let dest = to.join(e.file_name());
        if kind.is_dir() {
            copy_tree(&e.path(), &dest)?;
        } else if kind.is_file() {
            std::fs::copy(e.path(), &dest)?;
        }
    }
    Ok(())
}

/// The most read of a file the program may have written (a HEAD or a
/// loose ref: a line).
const SMALL: u64 = 4096;

/// A small file the program may have replaced, read without following a
/// symlink (it could lead to `/dev/zero`, or a file hidden from the
/// sandbox), without waiting (a FIFO would hang `nerdr sandbox` after the
/// program is gone) and only if a regular file of at most [`SMALL`]
/// bytes. None otherwise.
pub fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = String::new();
    f.take(SMALL + 1).read_to_string(&mut text).ok()?;
    (text.len() as u64 <= SMALL).then_some(text)
}

/// An object name as git writes it in a loose ref: SHA-1 or SHA-256 hex.
pub fn object_id(text: &str) -> Option<&str> {
    let t = text.trim_end_matches('\n');
    let hex = t
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    ((t.len() == 40 || t.len() == 64) && hex).then_some(t)
}

/// A branch name as git accepts one (`git check-ref-format`'s rules):
/// `refs/heads/` and components that are not empty, do not start with a
/// dot or end with `.lock` or a dot, with no `..`, `@{`, control
/// character, space or `~^:?*[\`. A name from a HEAD the program wrote
/// becomes a path in the private copy: `..` would lead out of it.
pub fn branch_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("refs/heads/") else {
        return false;
    };
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    !name.contains("..")
        && !name.contains("@{")
        && !name.contains(bad_char)
        && rest.split('/').all(|c| {
            !c.is_empty() && !c.starts_with('.') && !c.ends_with('.') && !c.ends_with(".lock")
        })
}

/// What a HEAD file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    Branch(String),
    Detached(String),
}

pub fn parse_head(text: &str) -> Option<Head> {
    if let Some(r) = text.strip_prefix("ref: ") {
        let r = r.trim_end_matches('\n');
        return branch_name(r).then(|| Head::Branch(r.to_string()));
    }
    object_id(text).map(|id| Head::Detached(id.to_string()))
}

/// The branch each of the repository's checkouts is on, by the HEAD file
/// that says it: the main checkout's (`<common>/HEAD`, when the common
/// dir is a `.git`) and each linked worktree's. Read from the disk as
/// [`read_small`] reads, not by `git worktree list`: git reads every
/// HEAD whole, and one the program replaced by a link to `/dev/zero` or a
/// FIFO would eat the host's memory or hang. A HEAD that cannot be read
/// so is an error: which branch it holds is unknown. `except`: the run's
/// own HEAD, not read.
pub fn checked_out(common: &Path, except: &Path) -> std::io::Result<Vec<(PathBuf, String)>> {
    let mut heads = Vec::new();
    if common.file_name() == Some(std::ffi::OsStr::new(".git")) {
        heads.push(common.join("HEAD"));
    }
    match std::fs::read_dir(common.join("worktrees")) {
        Ok(entries) => {
            for e in entries {
                let e = e?;
                if e.file_type()?.is_dir() {
                    heads.push(e.path().join("HEAD"));
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let mut out = Vec::new();
    for h in heads {
        if h == except || std::fs::symlink_metadata(&h).is_err() {
            continue;
        }
        match read_small(&h).as_deref().map(parse_head) {
            Some(Some(Head::Branch(b))) => out.push((h, b)),
            Some(Some(Head::Detached(_))) => {}
            _ => {
                return Err(std::io::Error::other(format!(
                    "{} cannot be read as a HEAD",
                    h.display()
                )))
            }
        }
    }
    Ok(out)
}

/// The loose branches in a refs folder (`refs/heads/...` → id); lock files,
/// symlinks and anything that is not a plain object name are left out.
pub fn loose_branches(refs: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    walk_refs(&refs.join("heads"), "refs/heads", &mut out);
    out
}

fn walk_refs(dir: &Path, name: &str, out: &mut BTreeMap<String, String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let Ok(kind) = e.file_type() else { continue };
        let Some(file) = e.file_name().to_str().map(String::from) else {
            continue;
        };
        let full = format!("{name}/{file}");
        if kind.is_dir() {
            walk_refs(&e.path(), &full, out);
        } else if kind.is_file() && !file.ends_with(".lock") {
            if let Some(id) = read_small(&e.path()).as_deref().and_then(object_id) {
                out.insert(full, id.to_string());
            }
        }
    }
}

/// Why host git must not read the private store: a symlink (it could lead
/// to another repository's objects, say one hidden from the sandbox) or
/// anything but folders and regular files. Checked once the program has
/// ended, before the whole store is read.
pub fn unsafe_entry(objects: &Path) -> Option<PathBuf> {
    fn walk(dir: &Path, top: bool) -> Option<PathBuf> {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(_) => return Some(dir.to_path_buf()),
        };
        for e in entries.flatten() {
            let p = e.path();
            if top && e.file_name() == SHARED {
                continue;
            }
            match e.file_type() {
                Ok(k) if k.is_dir() => {
                    if let Some(bad) = walk(&p, false) {
                        return Some(bad);
                    }
                }
                Ok(k) if k.is_file() => {}
                _ => return Some(p),
            }
        }
        None
    }
    walk(objects, true)
}

/// Whether the private store holds anything besides its own `info`
/// (alternates) and the shared objects' mount point: a file anywhere else
/// may be an object (loose, packed, half-written), so host git must look.
/// An empty store, the common case of a run that committed nothing, needs
/// no host git at all.
pub fn holds_files(objects: &Path) -> bool {
    fn walk(dir: &Path) -> bool {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return true;
        };
        entries.flatten().any(|e| match e.file_type() {
            Ok(k) if k.is_dir() => walk(&e.path()),
            _ => true,
        })
    }
    let Ok(entries) = std::fs::read_dir(objects) else {
        return true;
    };
    entries.flatten().any(|e| {
        let name = e.file_name();
        if name == SHARED || name == "info" {
            return false;
        }
        match e.file_type() {
            Ok(k) if k.is_dir() => walk(&e.path()),
            _ => true,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_ids_and_heads_parse() {
        let sha1 = "0123456789abcdef0123456789abcdef01234567";
        let sha256 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let rows: &[(&str, Option<&str>)] = &[
            ("0123456789abcdef0123456789abcdef01234567\n", Some(sha1)),
            (sha256, Some(sha256)),
            ("0123456789ABCDEF0123456789abcdef01234567\n", None),
            ("0123456789abcdef0123456789abcdef0123456\n", None),
            ("ref: refs/heads/main\n", None),
            ("", None),
        ];
        for (text, want) in rows {
            assert_eq!(object_id(text), *want, "{text:?}");
        }
        let heads: &[(&str, Option<Head>)] = &[
            (
                "ref: refs/heads/nerdr/t1\n",
                Some(Head::Branch("refs/heads/nerdr/t1".into())),
            ),
            (
                "0123456789abcdef0123456789abcdef01234567\n",
                Some(Head::Detached(sha1.into())),
            ),
            ("ref: refs/tags/v1\n", None),
            ("ref: refs/heads/a\nref: refs/heads/b\n", None),
            ("ref: refs/heads/../../../../home/u/x\n", None),
            ("ref: refs/heads/a/../b\n", None),
            ("ref: refs/heads/..\n", None),
            ("ref: refs/heads/.hidden\n", None),
            ("ref: refs/heads/a//b\n", None),
            ("ref: refs/heads/\n", None),
            ("ref: refs/heads/a/\n", None),
            ("ref: refs/heads/x.lock\n", None),
            ("ref: refs/heads/a\u{1b}]0;t\u{7}\n", None),
            ("ref: refs/heads/a b\n", None),
            ("ref: refs/heads/a@{1}\n", None),
            (
                "ref: refs/heads/feature/x-1.2\n",
                Some(Head::Branch("refs/heads/feature/x-1.2".into())),
            ),
            ("junk", None),
        ];
        for (text, want) in heads {
            assert_eq!(parse_head(text), *want, "{text:?}");
        }
    }

    /// What the program may have put where a HEAD or a ref is read: only
    /// a small regular file is read, nothing waits, no link is followed.
    #[test]
    fn only_small_regular_files_are_read() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::write(d.join("file"), "ref: refs/heads/x\n").unwrap();
        std::fs::write(d.join("big"), "a".repeat(SMALL as usize + 1)).unwrap();
        std::fs::write(d.join("edge"), "a".repeat(SMALL as usize)).unwrap();
        nix::unistd::mkfifo(&d.join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink(d.join("file"), d.join("link")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero")).unwrap();
        std::fs::create_dir(d.join("dir")).unwrap();
        let rows: &[(&str, Option<usize>)] = &[
            ("file", Some(18)),
            ("edge", Some(SMALL as usize)),
            ("big", None),
            ("fifo", None),
            ("link", None),
            ("zero", None),
            ("dir", None),
            ("missing", None),
        ];
        for (name, want) in rows {
            assert_eq!(read_small(&d.join(name)).map(|t| t.len()), *want, "{name}");
        }
    }

    /// Which branches are checked out, from the HEAD files alone; one that
    /// cannot be read (a FIFO) is an error unless it is the run's own.
    #[test]
    fn checked_out_branches_by_their_head_files() {
        let t = tempfile::tempdir().unwrap();
        let common = t.path().join("r/.git");
        let wt = |n: &str| common.join("worktrees").join(n);
        for d in [wt("a"), wt("b"), wt("own")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let id = "0123456789abcdef0123456789abcdef01234567";
        std::fs::write(common.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(wt("a").join("HEAD"), "ref: refs/heads/nerdr/t2\n").unwrap();
        std::fs::write(wt("b").join("HEAD"), format!("{id}\n")).unwrap();
        nix::unistd::mkfifo(&wt("own").join("HEAD"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let own = wt("own").join("HEAD");
        let got = checked_out(&common, &own).unwrap();
        assert_eq!(
            got,
            vec![
                (common.join("HEAD"), "refs/heads/main".to_string()),
                (wt("a").join("HEAD"), "refs/heads/nerdr/t2".to_string()),
            ]
        );
        assert!(
            checked_out(&common, &common.join("HEAD")).is_err(),
            "another's FIFO"
        );
        std::fs::remove_file(&own).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &own).unwrap();
        assert!(checked_out(&common, Path::new("/x")).is_err(), "a link");
    }

    #[test]
    fn the_private_copy_and_what_is_read_back() {
        let t = tempfile::tempdir().unwrap();
        let common = t.path().join("r/.git");
        let id = "0123456789abcdef0123456789abcdef01234567";
        for (rel, text) in [
            ("refs/heads/main", format!("{id}\n")),
            ("refs/heads/nerdr/t1", format!("{id}\n")),
            ("refs/heads/nerdr/t1.lock", format!("{id}\n")),
            ("refs/heads/bad", "junk\n".to_string()),
            ("refs/tags/v1", format!("{id}\n")),
        ] {
            let p = common.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::os::unix::fs::symlink("/etc/passwd", common.join("refs/heads/link")).unwrap();
        let git = GitLayout::Main {
            git_dir: common.clone(),
            protected: Default::default(),
        };
        let p = prepare(&t.path().join("data"), "s1", &git)
            .unwrap()
            .unwrap();
        assert_eq!(p.dir, t.path().join("data/sandbox-git/s1"));
        assert_eq!(
            std::fs::read_to_string(p.binds.objects.join("info/alternates")).unwrap(),
            ".nerdr-shared\n"
        );
        assert!(p.binds.objects.join(SHARED).is_dir());
        assert!(p.binds.refs.join("tags/v1").is_file());
        assert!(
            !p.binds.refs.join("heads/link").exists(),
            "symlinks left out"
        );
        let got = loose_branches(&p.binds.refs);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            vec!["refs/heads/main", "refs/heads/nerdr/t1"]
        );
        assert_eq!(unsafe_entry(&p.binds.objects), None);
        std::os::unix::fs::symlink("/elsewhere", p.binds.objects.join("pack/x")).unwrap();
        assert_eq!(
            unsafe_entry(&p.binds.objects),
            Some(p.binds.objects.join("pack/x"))
        );
        assert!(prepare(&t.path().join("data"), "s2", &GitLayout::None)
            .unwrap()
            .is_none());
        // Held by its run: no leftover; once the run is gone, one.
        let data = t.path().join("data");
        assert!(leftovers(&data, &common).is_empty());
        assert_eq!(p.session(), "s1");
        drop(p);
        let left = leftovers(&data, &common);
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].dir, data.join("sandbox-git/s1"));
        assert!(leftovers(&data, &common).is_empty(), "held while in hand");
        assert!(leftovers(&data, Path::new("/other/.git")).is_empty());
    }

    /// Host git is skipped only for a store with nothing in it but its
    /// own `info` and the shared objects' mount point.
    #[test]
    fn an_empty_store_needs_no_host_git() {
        let t = tempfile::tempdir().unwrap();
        let store = t.path();
        std::fs::create_dir_all(store.join("info")).unwrap();
        std::fs::write(store.join("info/alternates"), "x\n").unwrap();
        std::fs::create_dir(store.join(SHARED)).unwrap();
        std::fs::create_dir_all(store.join("pack")).unwrap();
        std::fs::create_dir_all(store.join("ab")).unwrap();
        assert!(!holds_files(store), "empty folders hold nothing");
        for f in ["ab/cdef", "pack/p.pack", "tmp_obj_x"] {
            std::fs::write(store.join(f), "").unwrap();
            assert!(holds_files(store), "{f}");
            std::fs::remove_file(store.join(f)).unwrap();
        }
        std::os::unix::fs::symlink("/etc", store.join("ab/link")).unwrap();
        assert!(holds_files(store), "a link is looked at");
        assert!(
            holds_files(&store.join("missing")),
            "an unreadable store is looked at"
        );
    }
}
