//! Windows onto a session (`nerdr` with no command): who is attached where,
//! at what size, watching which tab. Output reaches a window only for the
//! tab it shows, in order after that tab's redraw.
//!
//! Size: a session's terminals take the smallest size among the windows
//! attached to it, as tmux does with `window-size smallest`, so every
//! window shows the whole pane.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::state::{State, DEFAULT_COLS, DEFAULT_ROWS};
use super::window::Window;
use super::Core;
use crate::protocol::frame::Frame;
use crate::protocol::handshake::CoreMsg;
use crate::protocol::outbox::Outbox;

/// Queued bytes beyond which a window is not sent tab lists until it
/// drains: a program controls how often they go out (bells, states), and
/// queueing them for a window that does not read would grow the core's
/// memory without end. (Terminal output needs no such bound: a window is
/// painted only when its queue is empty and, if it acknowledges its
/// paint, little of it is unacknowledged; see `painting::backed_up`.)
pub const WINDOW_BACKLOG: usize = 1 << 20;

#[derive(Default)]
pub struct Windows {
    next: u64,
    pub by_id: HashMap<u64, Window>,
}

impl Windows {
    /// The size a session's terminals should have: the smallest attached
    /// window, or the default when none is attached.
    pub fn session_size(&self, folder: &Path) -> (u16, u16) {
        smallest(
            self.by_id
                .values()
                .filter(|w| w.folder == folder)
                .map(|w| (w.rows, w.cols)),
        )
    }

    /// The windows showing `tab`, by id.
    pub fn showing(&self, tab: &str) -> Vec<u64> {
        self.showing_any(&[tab])
    }

    /// The windows showing any of `tabs`, by id.
    pub fn showing_any<T: AsRef<str>>(&self, tabs: &[T]) -> Vec<u64> {
        self.by_id
            .iter()
            .filter(|(_, w)| {
                w.showing
                    .as_deref()
                    .is_some_and(|s| tabs.iter().any(|t| t.as_ref() == s))
            })
            .map(|(id, _)| *id)
            .collect()
    }
}

/// Pure: the smallest of some window sizes, each way, or the default.
pub fn smallest(sizes: impl Iterator<Item = (u16, u16)>) -> (u16, u16) {
    sizes
        .fold(None, |acc: Option<(u16, u16)>, (r, c)| match acc {
            None => Some((r, c)),
            Some((ar, ac)) => Some((ar.min(r), ac.min(c))),
        })
        .unwrap_or((DEFAULT_ROWS, DEFAULT_COLS))
}

impl Core {
    /// Register a window; the session is created if it does not exist.
    pub fn attach(
        self: &Arc<Self>,
        folder: PathBuf,
        rows: u16,
        cols: u16,
        env: Vec<(String, String)>,
        out: Outbox,
        acks: bool,
    ) -> u64 {
        let mut state = self.state.lock().unwrap();
        if !env.is_empty() {
            state.last_client_env = Some(env);
        }
        state.sessions.entry(folder.clone()).or_default();
        let first = state.sessions[&folder].first().cloned();
        let w = &mut state.windows;
        w.next += 1;
        let id = w.next;
        let (rows, cols) = crate::protocol::clamp_size(rows, cols);
        let mut win = Window::new(folder.clone(), rows, cols, out);
        win.acks = acks;
        let (bell, drain) = (win.bell.clone(), win.out.drain());
        super::painting::spawn_drain_task(Arc::downgrade(self), id, bell, drain);
        w.by_id.insert(id, win);
        self.fit_session(&mut state, &folder);
        self.send_tabs(&mut state, &folder);
        if let Some(tab) = first {
            self.show(&mut state, id, &tab);
        }
        id
    }

    pub fn detach(&self, id: u64) {
        let mut state = self.state.lock().unwrap();
        if let Some(w) = state.windows.by_id.remove(&id) {
            // Its drain task finds it gone and ends.
            w.bell.notify_one();
            if let Some(tab) = &w.showing {
                self.detect_unless_shown(&mut state, tab);
            }
            self.fit_session(&mut state, &w.folder);
        }
    }

    pub fn select(&self, id: u64, tab: &str) {
        let mut state = self.state.lock().unwrap();
        if same_session(&state, id, tab) {
            self.show(&mut state, id, tab);
        }
    }

    pub fn resize_window(&self, id: u64, rows: u16, cols: u16) {
        let mut state = self.state.lock().unwrap();
        let Some(win) = state.windows.by_id.get_mut(&id) else {
            return;
        };
        (win.rows, win.cols) = crate::protocol::clamp_size(rows, cols);
        let folder = win.folder.clone();
        let showing = win.showing.clone();
        let changed = self.fit_session(&mut state, &folder);
        // The window cleared its terminal for the new size: it is owed a
        // whole screen, which a change of the session's size has sent.
        if showing.is_some_and(|t| !changed.contains(&t)) {
            self.paint(&mut state, id, true);
        }
    }

    /// Window `id` asked for its whole screen again (an overlay closed).
    pub fn repaint(&self, id: u64) {
        let mut state = self.state.lock().unwrap();
        self.paint(&mut state, id, true);
    }

    /// The windows showing `tab` get its whole screen (its size changed).
    pub fn repaint_showing(&self, state: &mut State, tab: &str) {
        for id in state.windows.showing(tab) {
            self.paint(state, id, true);
        }
    }

    /// Keys typed in window `id` go to the tab it shows, if that tab is
    /// still in its session.
    pub fn window_input(&self, id: u64, tab: &str, bytes: Vec<u8>) {
        let allowed = {
            let mut state = self.state.lock().unwrap();
            let ok = same_session(&state, id, tab);
            if let Some(win) = state.windows.by_id.get_mut(&id).filter(|_| ok) {
                win.typed = true;
            }
            ok
        };
        if allowed {
            self.typed(tab, &bytes);
            let _ = self.host.write(tab, bytes);
        }
    }

    /// The tab's history as text lines (scroll mode), from its output log.
    /// The replay runs off the async threads and outside the state lock.
    pub async fn history(&self, tab: &str) -> Vec<String> {
        let log = {
            let state = self.state.lock().unwrap();
            state.tabs.get(tab).map(|t| t.log.clone())
        };
        match log {
            Some(log) => tokio::task::spawn_blocking(move || log.lines())
                .await
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// Show window `id` `tab`: its whole screen, then its changes.
    /// Called with the state lock held, so no change slips in between.
    fn show(&self, state: &mut State, id: u64, tab: &str) {
        if !state.tabs.contains_key(tab) {
            return;
        }
        let Some(win) = state.windows.by_id.get_mut(&id) else {
            return;
        };
        let before = win.showing.replace(tab.to_string());
        self.paint(state, id, true);
        if let Some(before) = before.filter(|b| b != tab) {
            self.detect_unless_shown(state, &before);
        }
        self.detect_shown(state, tab);
    }

    /// Tell every window of `folder` its session's tabs.
    ///
    /// A window whose queue is past [`WINDOW_BACKLOG`] (a stopped or
    /// stalled terminal) is skipped and owed the list once it drains: tab
    /// lists go out on every bell and state change of any tab of the
    /// session, which a program in a tab controls, so queueing them for a
    /// window that does not read would grow the core's memory without end.
    pub fn send_tabs(&self, state: &mut State, folder: &Path) {
        let tabs: Vec<_> = state
            .session_tabs(folder)
            .iter()
            .map(|t| {
                state
                    .review_links
                    .mark(super::spinoff::marked(&state.spinoffs, t))
            })
            .map(|t| super::switch::marked(&state.switches, t))
            .map(|t| super::handoff::marked(&state.handed, t))
            .collect();
        let approvals = state.approvals.pending.len();
        for win in state
            .windows
            .by_id
            .values_mut()
            .filter(|w| w.folder == folder)
        {
            if win.out.queued() > WINDOW_BACKLOG {
                if !win.tabs_owed {
                    win.tabs_owed = true;
                    win.bell.notify_one();
                }
                continue;
            }
            win.tabs_owed = false;
            win.out.send(Frame::control(&CoreMsg::Tabs {
                folder: folder.to_path_buf(),
                tabs: tabs.clone(),
                approvals,
            }));
        }
    }

    /// Bring a session's terminals to its windows' smallest size and redraw
    /// the windows if that changed anything: the tabs it resized.
    fn fit_session(&self, state: &mut State, folder: &Path) -> Vec<String> {
        let (rows, cols) = state.windows.session_size(folder);
        let ids: Vec<String> = state.sessions.get(folder).cloned().unwrap_or_default();
        let mut changed = Vec::new();
        for id in ids {
            if let Some(t) = state.tabs.get_mut(&id) {
                if t.screen.size() != (rows, cols) {
                    t.screen.resize(rows, cols);
                    state.snapshots.resized(&id);
                    // A message to the host's connection task, not I/O.
                    let _ = self.host.resize(&id, rows, cols);
                    changed.push(id);
                }
            }
        }
        for wid in state.windows.showing_any(&changed) {
            self.paint(state, wid, true);
        }
        changed
    }
}

/// Whether window `id` and tab `tab` are of the same session.
fn same_session(state: &State, id: u64, tab: &str) -> bool {
    match (state.windows.by_id.get(&id), state.tabs.get(tab)) {
        (Some(win), Some(t)) => win.folder == t.folder,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A window open on a folder with no tabs holds that folder's session,
    /// but none of its subfolders: a window left open on `~` must not take
    /// in every project under it (`State::session_of`).
    #[test]
    fn a_window_with_no_tabs_holds_its_own_folder_only() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _in = rt.enter();
        let (out, _) = Outbox::new(tokio::io::sink());
        let mut state = State::default();
        state.sessions.insert("/home/u".into(), vec![]);
        let placed = |s: &State, d: &str| s.session_of(Path::new(d));
        assert_eq!(placed(&state, "/home/u"), None, "no window yet");
        state
            .windows
            .by_id
            .insert(1, Window::new("/home/u".into(), 24, 80, out));
        assert_eq!(placed(&state, "/home/u"), Some("/home/u".into()));
        assert_eq!(placed(&state, "/home/u/proj"), None);
    }

    #[test]
    fn the_windows_showing_a_tab_are_those_and_only_those() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let _in = rt.enter();
        let mut windows = Windows::default();
        for (id, shows) in [(1, Some("a")), (2, Some("b")), (3, None), (4, Some("a"))] {
            let (out, _) = Outbox::new(tokio::io::sink());
            let mut w = Window::new("/p".into(), 24, 80, out);
            w.showing = shows.map(str::to_string);
            windows.by_id.insert(id, w);
        }
        let sorted = |mut v: Vec<u64>| {
            v.sort();
            v
        };
        assert_eq!(sorted(windows.showing("a")), [1, 4]);
        assert_eq!(sorted(windows.showing("b")), [2]);
        assert!(windows.showing("c").is_empty());
        assert_eq!(sorted(windows.showing_any(&["b", "a"])), [1, 2, 4]);
        assert!(windows.showing_any::<&str>(&[]).is_empty());
    }

    #[test]
    fn the_smallest_window_wins_each_way() {
        type Row = (&'static [(u16, u16)], (u16, u16));
        let rows: &[Row] = &[
            (&[], (DEFAULT_ROWS, DEFAULT_COLS)),
            (&[(40, 120)], (40, 120)),
            (&[(40, 120), (30, 200)], (30, 120)),
            (&[(50, 60), (30, 200), (45, 100)], (30, 60)),
        ];
        for (sizes, want) in rows {
            assert_eq!(smallest(sizes.iter().copied()), *want, "{sizes:?}");
        }
    }
}
