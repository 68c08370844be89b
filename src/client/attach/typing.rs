//! What the person types: keys go to the shown tab's program, a command
//! after the prefix, or the overlay that is open, in order.

use super::diff_view::DiffView;
use super::keys::{self, Action};
use super::{overlay, status, Mode, Window, AWAIT_AT_MOST};
use crate::protocol::holder::data_frame;

/// At most this much typeahead is kept for the first tab: a line or a
/// paste's start, not a flood typed at a window that never shows a tab.
pub(super) const TYPEAHEAD_MAX: usize = 4096;

impl Window {
    /// Keys for the shown tab's program; while it is not running they
    /// would reach nothing, so the status line says what brings it back.
    pub(super) fn type_keys(&mut self, bytes: &[u8]) {
        let Some(tab) = self.view.tab.clone() else {
            // No tab shown yet: the first one takes them (see `early`).
            let room = TYPEAHEAD_MAX.saturating_sub(self.early.len());
            self.early
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
            return;
        };
        if !self.connected {
            if self.outage.is_some() {
                self.note = "not connected: what you typed was dropped, not sent \
                             (reconnecting...)"
                    .into();
            }
            return;
        }
        let stopped = self
            .showing()
            .and_then(|i| status::stopped_hint(&self.tabs[i], &self.prefix_name));
        match stopped {
            Some(hint) => {
                self.note = hint;
                self.note_for_a_key = true;
            }
            None => {
                let _ = self.out.try_send(data_frame(&tab, bytes));
            }
        }
    }
    /// The first tab shows: the keys typed before it are its.
    pub(super) fn typeahead_to_the_first_tab(&mut self) {
        if !self.early.is_empty() && self.view.tab.is_some() {
            let keys = std::mem::take(&mut self.early);
            self.type_keys(&keys);
        }
    }

    /// Every key of a read, in order: a command that opens an overlay
    /// (`C-b x y` in one write) gives it the keys after it, and an overlay
    /// that closes hands the rest back to the tab.
    pub(super) fn on_keys(&mut self, bytes: &[u8]) {
        if std::mem::take(&mut self.note_for_a_key) {
            self.note.clear();
        }
        if let Some(a) = &mut self.awaiting {
            if a.since.elapsed() < AWAIT_AT_MOST {
                a.keys.extend_from_slice(bytes);
                return;
            }
            self.awaiting = None;
        }
        self.feed_keys(bytes);
    }

    pub(super) fn feed_keys(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            rest = self.some_keys(rest);
        }
    }

    /// The keys at the start of `bytes` up to a change of who reads them:
    /// the bytes left for the next turn.
    pub(super) fn some_keys<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            // An overlay closed asking for one to open (the diff view's
            // reload): what follows is the coming overlay's.
            Mode::Normal if self.awaiting.is_some() => {
                if let Some(a) = &mut self.awaiting {
                    a.keys.extend_from_slice(bytes);
                }
                &[]
            }
            Mode::Normal => {
                let (actions, rest) = self.keys.step(bytes);
                for action in actions {
                    match action {
                        Action::Send(b) => self.type_keys(&b),
                        Action::Cmd(c) => self.command(c),
                    }
                }
                match &mut self.awaiting {
                    // The rest of this read is the coming overlay's.
                    Some(a) => {
                        a.keys.extend_from_slice(rest);
                        &[]
                    }
                    None => rest,
                }
            }
            Mode::Diff(v) if self.keys.armed() || bytes[0] == self.keys.prefix() => {
                self.prefix_in_diff(v, bytes)
            }
            other => {
                let (mode, effect, used) = overlay::feed(other, bytes);
                self.mode = mode;
                if matches!(self.mode, Mode::Normal) {
                    self.view.invalidate();
                }
                self.effect(effect);
                &bytes[used..]
            }
        }
    }

    /// The prefix in the diff view works as outside it (tmux users expect
    /// it everywhere): a command closes the view, its comments kept as
    /// drafts, then runs (`d` detaches, `n` shows the next tab), except the
    /// help (`?`), shown over the view and closed back to it as it was, as
    /// tmux's help over copy mode; the prefix twice is the view's own key (less's `C-b`, a
    /// page up, with the default prefix); any other key is dropped, as
    /// tmux does. The bytes left.
    fn prefix_in_diff<'a>(&mut self, v: Box<DiffView>, bytes: &'a [u8]) -> &'a [u8] {
        if !self.keys.armed() {
            self.keys.set_armed(true);
            self.mode = Mode::Diff(v);
            return &bytes[1..];
        }
        self.keys.set_armed(false);
        if bytes[0] == self.keys.prefix() {
            let (mode, effect, used) = overlay::feed(Mode::Diff(v), &bytes[..1]);
            self.mode = mode;
            if matches!(self.mode, Mode::Normal) {
                self.view.invalidate();
            }
            self.effect(effect);
            return &bytes[used..];
        }
        let (cmd, used) = keys::command_of(bytes);
        let Some(cmd) = cmd else {
            self.mode = Mode::Diff(v);
            return &bytes[used.max(1)..];
        };
        if cmd == keys::Cmd::Help {
            self.mode = Mode::Help { over: Some(v) };
            return &bytes[used..];
        }
        let drafts = v.drafts();
        self.view.invalidate();
        self.effect(overlay::Effect::DiffClosed { tab: v.tab, drafts });
        self.command(cmd);
        &bytes[used..]
    }
}
