//! Bring a sandboxed program's work home: its branch's commits (and their
//! objects) from the private copy (`private_git`) into the user's
//! repository, while it runs and once more when it has ended.
//!
//! While the program runs, a thread waits on inotify for the private ref
//! of the branch the worktree started on (git replaces a ref by renaming
//! its `.lock` file) and brings that branch home each time it moves, so
//! the host sees the agent's commits as it makes them. The thread reads
//! only what the branch reaches. When the program has ended (and nothing
//! of it can change the store any more), the whole private store is
//! copied, so staged files and a detached HEAD's commits are kept too,
//! every branch is looked at once more, and the private copy is removed
//! if everything in it came home. Which ref changes come back is
//! `ref_rules`'s decision; every one goes to the audit trail, and what is
//! kept rather than moved is also said on stderr at the end (not during
//! the run: the terminal is the program's).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::audit_trail::Trail;
use super::private_git::{self, Head, Private};
use super::ref_rules::{self, Change, Verdict};
use crate::git::import::{self, Objects, Repo};

pub struct Homecoming {
    private: Private,
    session: String,
    /// The worktree's HEAD file (`.git/HEAD`, or the admin dir's).
    head_file: PathBuf,
    /// The branch the worktree's HEAD named at the start.
    start_branch: Option<String>,
    /// In a worktree nerdr made for a tab: the tab's branch.
    tab_branch: Option<String>,
    /// The sandbox's branches as last handled.
    seen: BTreeMap<String, String>,
    /// What the host is expected to hold, per branch.
    expected: BTreeMap<String, String>,
    /// What could not come home: a message per ref, told at the end.
    kept: BTreeMap<String, String>,
    /// The objects could not be copied: the private copy stays.
    failed: Option<String>,
    trail: Arc<Trail>,
    /// Set when the program has ended: the live pass's git stops.
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl Homecoming {
    /// Before the program starts: what the host holds now.
    pub fn start(
        private: Private,
        session: &str,
        worktree: &Path,
        worktrees: &Path,
        head_file: PathBuf,
        trail: Arc<Trail>,
    ) -> anyhow::Result<Homecoming> {
        let branches = import::branches(&private.repo())?;
        let start_branch = match private_git::read_small(&head_file)
            .as_deref()
            .and_then(private_git::parse_head)
        {
            Some(Head::Branch(b)) => Some(b),
            _ => None,
        };
        std::fs::create_dir_all(private.dir.join("work"))?;
        Ok(Homecoming {
            private,
            session: session.to_string(),
            head_file,
            start_branch,
            tab_branch: ref_rules::tab_branch(worktrees, worktree),
            seen: branches.clone(),
            expected: branches,
            kept: BTreeMap::new(),
            failed: None,
            trail,
            stop: Arc::default(),
        })
    }

    fn repo(&self) -> Repo {
        Repo {
            stop: Some(self.stop.clone()),
            ..self.private.repo()
        }
    }

    /// The folder and file name of the start branch's private ref.
    fn watched(&self) -> Option<(PathBuf, String)> {
        let rel = self.start_branch.as_deref()?.strip_prefix("refs/")?;
        let file = self.private.binds.refs.join(rel);
        let dir = file.parent()?.to_path_buf();
        let name = file.file_name()?.to_str()?.to_string();
        Some((dir, name))
    }

    /// One look at the sandbox's refs; `ended`: the program is gone.
    fn pass(&mut self, ended: bool) {
        if self.failed.is_some() {
            return;
        }
        // The repository's HEAD (which git reads whole when it moves a
        // ref) not a file: the end says so (`finish`). While the program
        // runs this is a look, not a lock (see SECURITY.md's Limits).
        let repo_head = self.private.common.join("HEAD");
        if !ended && !std::fs::metadata(&repo_head).is_ok_and(|m| m.is_file()) {
            return;
        }
        let now = private_git::loose_branches(&self.private.binds.refs);
        let changed: BTreeMap<String, String> = now
            .iter()
            .filter(|(name, id)| self.seen.get(*name) != Some(*id))
            .filter(|(name, _)| ended || Some(name.as_str()) == self.start_branch.as_deref())
            .map(|(n, i)| (n.clone(), i.clone()))
            .collect();
        let head = if ended {
            private_git::read_small(&self.head_file)
                .as_deref()
                .and_then(private_git::parse_head)
        } else {
            None
        };
        let detached = match &head {
            Some(Head::Detached(id)) => Some(id.clone()),
            _ => None,
        };
        if !ended && changed.is_empty() {
            return;
        }
        let common = self.repo();
        let work = self.private.dir.join("work");
        let copied = if ended {
            self.copy_all(&common, &work)
        } else {
            let host = import::branches(&common).unwrap_or_default();
            let tips: Vec<&str> = changed.values().map(String::as_str).collect();
            let not: Vec<&str> = host.values().map(String::as_str).collect();
            import::copy(
                &common,
                &self.private.binds.objects,
                Objects::Reachable {
                    tips: &tips,
                    not: &not,
                },
                &work,
            )
            .map_err(|e| e.to_string())
        };
        if let Err(e) = copied {
            // Still running: the program may be between writing objects
            // and its ref; the end tries again.
            if ended {
                self.failed = Some(e);
            }
            return;
        }
        if changed.is_empty() && detached.is_none() {
            return;
        }
        // Without these facts nothing moves (at the end, the copy stays).
        let facts = import::branches(&common)
            .map_err(|e| e.to_string())
            .and_then(|h| {
                Ok((
                    h,
                    private_git::checked_out(&common.common, &self.head_file)
                        .map_err(|e| e.to_string())?,
                ))
            });
        let (host, worktrees) = match facts {
            Ok(f) => f,
            Err(e) => {
                if ended {
                    self.failed = Some(e);
                }
                return;
            }
        };
        let elsewhere: BTreeSet<String> = worktrees.into_iter().map(|(_, b)| b).collect();
        for (name, new) in &changed {
            if self.one(&common, name, new, &host, &elsewhere, &head, ended) {
                self.seen.insert(name.clone(), new.clone());
            }
        }
        if let Some(id) = detached {
            if import::complete(&common, &id) && import::unreachable(&common, &id) {
                self.keep(
                    &common,
                    "HEAD",
                    &id,
                    "the worktree ended on a detached HEAD",
                );
            }
        }
    }

    fn copy_all(&self, common: &Repo, work: &Path) -> Result<usize, String> {
        copy_store(common, &self.private.binds.objects, work)
    }

    /// Handle one changed branch; false: try again later.
    #[allow(clippy::too_many_arguments)]
    fn one(
        &mut self,
        common: &Repo,
        name: &str,
        new: &str,
        host: &BTreeMap<String, String>,
        elsewhere: &BTreeSet<String>,
        head: &Option<Head>,
        ended: bool,
    ) -> bool {
        let host_id = host.get(name).map(String::as_str);
        if !import::complete(common, new) {
            if ended {
                let msg = format!("{name} in the sandbox names {new}, whose history is incomplete (objects deleted inside): not brought home");
                self.trail.git_work("incomplete", name, new, &msg);
                self.kept.insert(name.to_string(), msg);
            }
            return ended;
        }
        let change = Change {
            name,
            start_branch: Some(name) == self.start_branch.as_deref(),
            head_names: matches!(head, Some(Head::Branch(b)) if b == name),
            host: host_id,
            expected: self.expected.get(name).map(String::as_str),
            new,
            fast_forward: host_id.is_some_and(|h| import::is_ancestor(common, h, new)),
            checked_out_elsewhere: elsewhere.contains(name),
            tab_branch: self.tab_branch.as_deref(),
        };
        match ref_rules::decide(&change) {
            Verdict::Nothing | Verdict::Private => {}
            Verdict::Move => {
                let why = format!(
                    "nerdr sandbox {}: the sandboxed program's work",
                    self.session
                );
                match import::update_ref(common, name, new, Some(host_id), &why) {
                    Ok(()) => {
                        self.expected.insert(name.to_string(), new.to_string());
                        self.kept.remove(name);
                        self.trail.git_work(
                            "moved",
                            name,
                            new,
                            &format!("{name} {} -> {new}", host_id.unwrap_or("(new)")),
                        );
                    }
                    Err(_) => {
                        self.keep(common, name, new, "the branch moved on the host meanwhile")
                    }
                }
            }
            Verdict::Keep(why) => self.keep(common, name, new, why),
        }
        true
    }

    fn keep(&mut self, common: &Repo, name: &str, new: &str, why: &str) {
        let msg = keep_ref(common, &self.session, name, new, why, &self.trail);
        self.kept.insert(name.to_string(), msg);
    }

    /// After the program: the last pass, what is left said on stderr, and
    /// the private copy removed if everything in it is home.
    pub fn finish(mut self) {
        if let Some(bad) = planted_head(&self.private.common, &self.head_file) {
            self.failed = Some(format!(
                "{} is not a file (the program put a FIFO or the like there, which host git would wait on); replace it with a HEAD of yours",
                bad.display()
            ));
        }
        self.pass(true);
        for msg in self.kept.values() {
            // Ref names and paths are the program's: escaped.
            eprintln!("nerdr sandbox: {}", crate::protocol::printable(msg));
        }
        match &self.failed {
            None => {
                let _ = std::fs::remove_dir_all(&self.private.dir);
            }
            Some(e) => {
                let msg = format!(
                    "the program's git objects could not be brought home ({e}); they stay in {}",
                    self.private.dir.display()
                );
                eprintln!(
                    "nerdr sandbox: WARNING: {}",
                    crate::protocol::printable(&msg)
                );
                self.trail.setting(&msg);
            }
        }
    }
}

/// A HEAD file host git reads (the repository's, each worktree's, and
/// this run's worktree's) that is there but not a regular file (followed
/// through a symlink, as git does): a FIFO would hold every host git
/// command that reads it until its time limit.
fn planted_head(common: &Path, head_file: &Path) -> Option<PathBuf> {
    let mut heads = vec![common.join("HEAD"), head_file.to_path_buf()];
    if let Ok(wts) = std::fs::read_dir(common.join("worktrees")) {
        heads.extend(wts.flatten().map(|e| e.path().join("HEAD")));
    }
    heads.into_iter().find(|h| {
        std::fs::symlink_metadata(h).is_ok() && !std::fs::metadata(h).is_ok_and(|m| m.is_file())
    })
}

/// Copy everything in a private `store` the repository lacks, once
/// nothing can change the store any more.
fn copy_store(common: &Repo, store: &Path, work: &Path) -> Result<usize, String> {
    if let Some(bad) = private_git::unsafe_entry(store) {
        return Err(format!(
            "{} is not a plain file or folder (host git does not follow links out of a sandbox's store)",
            bad.display()
        ));
    }
    if !private_git::holds_files(store) {
        return Ok(0);
    }
    let all = import::store_objects(common, store).map_err(|e| e.to_string())?;
    let lacking = import::missing(common, &all, work).map_err(|e| e.to_string())?;
    import::copy(common, store, Objects::Listed(&lacking), work).map_err(|e| e.to_string())
}

/// Keep `id` as [`ref_rules::kept_ref`]; the message to tell.
fn keep_ref(
    common: &Repo,
    session: &str,
    name: &str,
    id: &str,
    why: &str,
    trail: &Trail,
) -> String {
    let kept = ref_rules::kept_ref(session, name);
    let why_ref = format!("nerdr sandbox {session}: kept, {why}");
    let msg = match import::update_ref(common, &kept, id, None, &why_ref) {
        Ok(()) => format!("{name}: {why}; the program's {id} is kept as {kept}"),
        Err(e) => format!("{name}: {why}, and {id} could not be kept as {kept}: {e}"),
    };
    trail.git_work("kept", name, id, &msg);
    msg
}

/// Bring home what a run that ended before its last pass left in its
/// private copy (`private_git::leftovers`): every object (its staged
/// files), and each branch holding commits the repository does not reach,
/// kept under nerdr's namespace (no branch moves: nobody knows any more
/// which one the run started on). The copy is removed once home.
pub fn recover(left: Private, trail: &Trail) {
    let session = left.session();
    let repo = left.repo();
    if let Some(bad) = planted_head(&left.common, &left.common.join("HEAD")) {
        eprintln!(
            "nerdr sandbox: WARNING: {} is not a file; a private copy left by an earlier run stays in {}",
            crate::protocol::printable(&bad.display().to_string()),
            left.dir.display()
        );
        return;
    }
    let work = left.dir.join("work");
    let copied = std::fs::create_dir_all(&work)
        .map_err(|e| e.to_string())
        .and_then(|_| copy_store(&repo, &left.binds.objects, &work));
    let say = |msg: &str| eprintln!("nerdr sandbox: {}", crate::protocol::printable(msg));
    match copied {
        Ok(_) => {
            for (name, id) in private_git::loose_branches(&left.binds.refs) {
                if import::complete(&repo, &id) && import::unreachable(&repo, &id) {
                    let why = "left by a run that ended before bringing it home";
                    say(&keep_ref(&repo, &session, &name, &id, why, trail));
                }
            }
            trail.git_work(
                "recovered",
                "",
                "",
                &format!("{} brought home", left.dir.display()),
            );
            let _ = std::fs::remove_dir_all(&left.dir);
        }
        Err(e) => {
            let msg = format!(
                "a run that ended early left git objects that could not be brought home ({e}); they stay in {}",
                left.dir.display()
            );
            say(&format!("WARNING: {msg}"));
            trail.setting(&msg);
        }
    }
}

/// The live half: a thread bringing the start branch home whenever it
/// moves, until [`Watcher::stop`] hands the [`Homecoming`] back.
pub struct Watcher {
    stop: std::os::fd::OwnedFd,
    /// The live pass's git stops when set.
    stop_git: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Homecoming>,
}

impl Watcher {
    pub fn spawn(mut h: Homecoming) -> std::io::Result<Watcher> {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let (stop_read, stop) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC)?;
        let watched = h.watched();
        let stop_git = h.stop.clone();
        if let Some((dir, _)) = &watched {
            std::fs::create_dir_all(dir)?;
            inotify.add_watch(
                dir.as_path(),
                AddWatchFlags::IN_MOVED_TO | AddWatchFlags::IN_CLOSE_WRITE,
            )?;
        }
        let thread = std::thread::spawn(move || {
            use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
            use std::os::fd::AsFd;
            let Some((_, name)) = watched else { return h };
            loop {
                let mut fds = [
                    PollFd::new(inotify.as_fd(), PollFlags::POLLIN),
                    PollFd::new(stop_read.as_fd(), PollFlags::POLLIN),
                ];
                match poll(&mut fds, PollTimeout::NONE) {
                    Err(nix::errno::Errno::EINTR) => continue,
                    Err(_) => return h,
                    Ok(_) => {}
                }
                let stopped = fds[1].any().unwrap_or(true);
                if stopped {
                    return h;
                }
                let Ok(events) = inotify.read_events() else {
                    return h;
                };
                if events
                    .iter()
                    .any(|e| e.name.as_deref() == Some(std::ffi::OsStr::new(&name)))
                {
                    h.pass(false);
                }
            }
        });
        Ok(Watcher {
            stop,
            stop_git,
            thread,
        })
    }

    /// After the program: a live pass still running 10 s on (its git
    /// waiting on a FIFO the program left, say) is cut short; the last pass
    /// in [`Homecoming::finish`] does the work again. (Not at once: git
    /// stopped in the middle of an update leaves its lock file.)
    pub fn stop(self) -> Option<Homecoming> {
        use std::sync::atomic::Ordering;
        drop(self.stop);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !self.thread.is_finished() && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.stop_git.store(true, Ordering::SeqCst);
        let h = self.thread.join().ok();
        self.stop_git.store(false, Ordering::SeqCst);
        h
    }
}
