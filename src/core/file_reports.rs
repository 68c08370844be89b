//! Reports through files (`crate::file_reports`), in the core: each tab of
//! an agent with `install = "worktree"` has its data folder watched with
//! inotify (one instance, one thread blocked in `read`: idle costs
//! nothing, nothing polls). Lines appended to its reports file are read
//! from a kept offset, checked by `file_reports::check`, and each accepted
//! one becomes the request the same report would be over the hook socket,
//! from that tab as a sandboxed caller: the same privilege checks, the
//! same handlers. Which tab a line is from is the file's, never the
//! line's. Every refused line is journaled with the file, its line number
//! and the reason, as refusals on the socket are.
//!
//! The file lies in a folder the agent writes: it is opened without
//! following a link, without blocking (a FIFO in its place reads as
//! nothing), and read only while it is a regular file of at most
//! `file_reports::MAX_FILE` bytes.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

use super::caller::Caller;
use super::Core;
use crate::file_reports::{self, Piece, Refusal, Report, Splitter, TabNames};
use crate::protocol::api::{AddWhy, PostReview, ReportEvent, Request};

/// The watcher, started with the first watched tab.
#[derive(Default)]
pub struct Watcher(OnceLock<Arc<Inner>>);

struct Inner {
    inotify: Inotify,
    watched: Mutex<Watched>,
}

#[derive(Default)]
struct Watched {
    by_wd: HashMap<WatchDescriptor, One>,
    by_tab: HashMap<String, WatchDescriptor>,
}

/// One tab's reports file and how far it was read.
struct One {
    tab: String,
    tree: PathBuf,
    dir: PathBuf,
    offset: u64,
    /// Bytes still to be read this run: `MAX_FILE` in all, however often
    /// the file is emptied and written again.
    left: u64,
    lines: Splitter,
    /// Past `MAX_FILE`: read no further (said once).
    full: bool,
}

impl Core {
    /// Read tab `tab`'s reports in `dir` (its `<worktree>/<data_dir>`) from
    /// now on, in place of what was watched for it before (a restart). The
    /// install emptied the file just before.
    pub(super) fn watch_reports(self: &Arc<Self>, tab: &str, tree: &Path, dir: &Path) {
        self.watch_reports_from(tab, tree, dir, 0);
    }

    /// After a core restart: the reports files of the tabs it adopted whose
    /// agent has a worktree install, read from their end (what was
    /// appended while no core ran is not read: the old core may have).
    pub(super) async fn watch_adopted_reports(self: &Arc<Self>) {
        let tabs: Vec<(String, String, PathBuf)> = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .values()
                .filter(|t| t.kind == crate::protocol::api::TabKind::Agent && !t.program)
                .map(|t| {
                    let tree = t.worktree.as_ref().map_or(&t.folder, |w| &w.path);
                    (t.id.clone(), t.agent.clone(), tree.clone())
                })
                .collect()
        };
        for (id, agent, tree) in tabs {
            let Ok(Ok((resolved, _))) = self.settings_of(&agent).await else {
                continue;
            };
            let Some(rel) = resolved.worktree_data_dir else {
                continue;
            };
            let dir = tree.join(rel);
            let file = dir.join(file_reports::FILE);
            let len = super::edge::gather("reading a reports file's size", move || {
                std::fs::symlink_metadata(file)
                    .ok()
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
            })
            .await;
            if let Some(len) = len {
                self.watch_reports_from(&id, &tree, &dir, len);
            }
        }
    }

    /// Another open tab whose reports are read from `dir`, if any: a file
    /// speaks for one tab, so two tabs sharing a worktree (a handoff's)
    /// cannot both report through it.
    pub(super) fn reports_dir_taken(&self, dir: &Path, except: &str) -> Option<String> {
        let readers: Vec<String> = {
            let inner = self.file_reports.0.get()?;
            let w = inner.watched.lock().unwrap();
            w.by_wd
                .values()
                .filter(|o| o.dir == dir && o.tab != except)
                .map(|o| o.tab.clone())
                .collect()
        };
        let state = self.state.lock().unwrap();
        readers.into_iter().find(|t| state.tabs.contains_key(t))
    }

    fn watch_reports_from(self: &Arc<Self>, tab: &str, tree: &Path, dir: &Path, offset: u64) {
        let inner = match self.file_reports.0.get() {
            Some(i) => i.clone(),
            None => match start(self) {
                Ok(i) => self.file_reports.0.get_or_init(|| i).clone(),
                Err(e) => {
                    tracing::warn!(tab, error = %e, "cannot watch reports files: inotify did not start");
                    return;
                }
            },
        };
        let flags = AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_CLOSE_WRITE;
        let wd = match inner.inotify.add_watch(dir, flags) {
            Ok(wd) => wd,
            Err(e) => {
                tracing::warn!(tab, dir = %dir.display(), error = %e, "cannot watch the reports folder");
                return;
            }
        };
        let mut w = inner.watched.lock().unwrap();
        if let Some(old) = w.by_tab.insert(tab.to_string(), wd) {
            if old != wd {
                w.by_wd.remove(&old);
                let _ = inner.inotify.rm_watch(old);
            }
        }
        w.by_wd.insert(
            wd,
            One {
                tab: tab.to_string(),
                tree: tree.to_path_buf(),
                dir: dir.to_path_buf(),
                offset,
                left: file_reports::MAX_FILE.saturating_sub(offset),
                lines: Splitter::default(),
                full: false,
            },
        );
        tracing::info!(tab, dir = %dir.display(), "reading the tab's reports file");
    }
}

fn start(core: &Arc<Core>) -> nix::Result<Arc<Inner>> {
    let inner = Arc::new(Inner {
        inotify: Inotify::init(InitFlags::IN_CLOEXEC)?,
        watched: Mutex::default(),
    });
    let (weak, i, rt) = (
        Arc::downgrade(core),
        inner.clone(),
        tokio::runtime::Handle::current(),
    );
    std::thread::Builder::new()
        .name("nerdr-file-reports".into())
        .spawn(move || run(weak, i, rt))
        .map_err(|_| nix::Error::EAGAIN)?;
    Ok(inner)
}

/// The watcher's thread: blocked in inotify's `read` until a watched
/// folder changes.
fn run(core: Weak<Core>, inner: Arc<Inner>, rt: tokio::runtime::Handle) {
    loop {
        let events = match inner.inotify.read_events() {
            Ok(e) => e,
            Err(nix::Error::EINTR) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "reports watcher stopped");
                return;
            }
        };
        let Some(core) = core.upgrade() else {
            return;
        };
        let mut wds: Vec<WatchDescriptor> = Vec::new();
        for ev in events {
            if ev.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                // Events were lost: every file is read for what it holds.
                let w = inner.watched.lock().unwrap();
                wds.extend(
                    w.by_wd
                        .keys()
                        .filter(|wd| !wds.contains(wd))
                        .copied()
                        .collect::<Vec<_>>(),
                );
                continue;
            }
            if ev.mask.contains(AddWatchFlags::IN_IGNORED) {
                // The folder is gone (its worktree removed): so is the watch.
                let mut w = inner.watched.lock().unwrap();
                if let Some(one) = w.by_wd.remove(&ev.wd) {
                    if w.by_tab.get(&one.tab) == Some(&ev.wd) {
                        w.by_tab.remove(&one.tab);
                    }
                }
                continue;
            }
            let ours = ev
                .name
                .as_deref()
                .is_some_and(|n| n == std::ffi::OsStr::new(file_reports::FILE));
            if ours && !wds.contains(&ev.wd) {
                wds.push(ev.wd);
            }
        }
        for wd in wds {
            read_new(&core, &inner, wd, &rt);
        }
    }
}

/// What was appended to one watched file, through to the core.
fn read_new(core: &Arc<Core>, inner: &Inner, wd: WatchDescriptor, rt: &tokio::runtime::Handle) {
    // Taken out while it is read and handled (the lock is never held
    // across I/O), put back after unless the tab is gone or re-watched.
    let Some(mut one) = inner.watched.lock().unwrap().by_wd.remove(&wd) else {
        return;
    };
    let names = {
        let state = core.state.lock().unwrap();
        state.tabs.get(&one.tab).map(|t| TabNames {
            id: t.id.clone(),
            name: t.name.clone(),
        })
    };
    let Some(names) = names else {
        let mut w = inner.watched.lock().unwrap();
        if w.by_tab.get(&one.tab) == Some(&wd) {
            w.by_tab.remove(&one.tab);
        }
        let _ = inner.inotify.rm_watch(wd);
        return;
    };
    let file = one.dir.join(file_reports::FILE);
    let (bytes, full) = match appended(&one.dir, &mut one.offset, &mut one.left) {
        Ok(r) => r,
        Err(e) => {
            // A link, a FIFO or a folder in its place: said, not followed.
            let why = Refusal::BadField(format!("the file was not read: {e}"));
            refused(core, &one.tab, &file, one.lines.lines(), &why);
            (Vec::new(), false)
        }
    };
    for piece in one.lines.feed(&bytes) {
        match piece {
            Piece::TooLong(n) => refused(core, &one.tab, &file, n, &Refusal::TooLong),
            Piece::Line(_, l) if l.iter().all(u8::is_ascii_whitespace) => {}
            Piece::Line(n, l) => match file_reports::check(&l, &names) {
                Err(r) => refused(core, &one.tab, &file, n, &r),
                Ok(report) => {
                    let caller = Caller::Tab {
                        id: one.tab.clone(),
                        sandboxed: true,
                        program: false,
                    };
                    let req = request(report, &one.tree);
                    let reply = rt.block_on(core.handle(&caller, req));
                    if let Err(e) = reply {
                        let why = Refusal::BadField(format!("not taken: {}", e.message));
                        refused(core, &one.tab, &file, n, &why);
                    }
                }
            },
        }
    }
    if full && !one.full {
        one.full = true;
        let why = Refusal::BadField(format!(
            "the file passed {} bytes: nothing more of it is read until the tab restarts",
            file_reports::MAX_FILE
        ));
        refused(core, &one.tab, &file, one.lines_read(), &why);
    }
    let mut w = inner.watched.lock().unwrap();
    if w.by_tab.get(&one.tab) == Some(&wd) && !w.by_wd.contains_key(&wd) {
        w.by_wd.insert(wd, one);
    }
}

impl One {
    fn lines_read(&self) -> u64 {
        self.lines.lines()
    }
}

/// The request an accepted line stands for: what `nerdr hook`, `nerdr
/// post-review` and `nerdr why add` would send from the tab.
fn request(report: Report, tree: &Path) -> Request {
    match report {
        Report::State { event, session_id } => Request::Report(ReportEvent {
            event,
            session_id,
            data: serde_json::Value::Null,
            seq: None,
        }),
        Report::Review { text } => Request::PostReview(PostReview { text }),
        Report::Why { text, file, lines } => Request::AddWhy(AddWhy {
            folder: tree.to_path_buf(),
            file: file.map(PathBuf::from),
            lines,
            text,
        }),
    }
}

/// The bytes appended since `offset` (moved past them), at most `left`
/// (counted down), and whether no more is to be read (`MAX_FILE` read in
/// all). A file that shrank was rewritten: read from its start, within
/// the same `left`.
fn appended(dir: &Path, offset: &mut u64, left: &mut u64) -> std::io::Result<(Vec<u8>, bool)> {
    if *left == 0 {
        return Ok((Vec::new(), true));
    }
    use nix::fcntl::{open, openat, OFlag};
    use nix::sys::stat::Mode;
    let flags = OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW;
    let d = open(
        dir,
        flags | OFlag::O_DIRECTORY | OFlag::O_RDONLY,
        Mode::empty(),
    )?;
    // SAFETY: `open` returned a new descriptor that nothing else owns.
    let d = unsafe { OwnedFd::from_raw_fd(d) };
    let f = openat(
        Some(std::os::fd::AsRawFd::as_raw_fd(&d.as_fd())),
        file_reports::FILE,
        flags | OFlag::O_RDONLY | OFlag::O_NONBLOCK,
        Mode::empty(),
    )?;
    // SAFETY: as above.
    let mut f = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(f) });
    let meta = f.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let len = meta.len();
    if len < *offset {
        *offset = 0;
    }
    let want = (len - *offset).min(*left);
    if want == 0 {
        return Ok((Vec::new(), false));
    }
    f.seek(SeekFrom::Start(*offset))?;
    let mut buf = Vec::with_capacity(want as usize);
    f.take(want).read_to_end(&mut buf)?;
    *offset += buf.len() as u64;
    *left -= buf.len() as u64;
    Ok((buf, *left == 0))
}

/// Journal a refused line: the tab, the file, the line and why.
/// Once a second per kind of refusal (`Refusal::class`), not per line:
/// a line's words are the writer's, and each line refused in words of
/// its own would be an entry of its own. The reason is made printable and
/// bounded (serde's messages quote a field's name as written, newlines
/// and escapes included).
fn refused(core: &Core, tab: &str, file: &Path, line: u64, why: &Refusal) {
    if !core.first_this_second(tab, "file-report", why.class()) {
        return;
    }
    let why: String = why.to_string().chars().take(1000).collect();
    let why = crate::printable::printable(&why);
    tracing::warn!(tab, file = %file.display(), line, reason = %why, "report line refused");
    let message = format!(
        "refused line {line} of {} (tab {tab}'s reports): {why}",
        file.display()
    );
    let event = crate::audit::Event::new(crate::audit::Kind::HookRefused, message)
        .field("NERDR_TAB", tab)
        .field("NERDR_OPERATION", "file-report")
        .field("NERDR_FILE", file.display().to_string())
        .field("NERDR_LINE", line.to_string())
        .field("NERDR_REASON", why);
    crate::audit::record(&core.paths, &event);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emptying_the_file_does_not_start_its_bytes_again() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(file_reports::FILE);
        let chunk = vec![b'x'; (file_reports::MAX_FILE / 2 + 1) as usize];
        let (mut offset, mut left) = (0, file_reports::MAX_FILE);
        std::fs::write(&file, &chunk).unwrap();
        let (got, full) = appended(dir.path(), &mut offset, &mut left).unwrap();
        assert_eq!((got.len(), full), (chunk.len(), false));
        // Emptied and written again: read from its start, within what is
        // left of the run's bytes.
        std::fs::write(&file, b"\n").unwrap();
        let (got, full) = appended(dir.path(), &mut offset, &mut left).unwrap();
        assert_eq!((got, full), (b"\n".to_vec(), false));
        std::fs::write(&file, &chunk).unwrap();
        let (got, full) = appended(dir.path(), &mut offset, &mut left).unwrap();
        let rest = file_reports::MAX_FILE - chunk.len() as u64 - 1;
        assert_eq!((got.len() as u64, full), (rest, true));
        std::fs::write(&file, b"{}\n").unwrap();
        let (got, full) = appended(dir.path(), &mut offset, &mut left).unwrap();
        assert_eq!((got.len(), full), (0, true));
    }

    #[test]
    fn a_link_or_a_fifo_in_the_files_place_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(file_reports::FILE);
        let other = dir.path().join("other");
        std::fs::write(&other, "{}\n").unwrap();
        std::os::unix::fs::symlink(&other, &file).unwrap();
        let (mut offset, mut left) = (0, file_reports::MAX_FILE);
        assert!(appended(dir.path(), &mut offset, &mut left).is_err());
        std::fs::remove_file(&file).unwrap();
        nix::unistd::mkfifo(&file, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(appended(dir.path(), &mut offset, &mut left).is_err());
    }
}
