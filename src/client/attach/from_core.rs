//! What the core sends a window: the shown tab's paint, tab lists, whole
//! screens after a switch or a resize, history for scroll mode, and the
//! replies to its requests.

use anyhow::Context;

use super::view::View;
use super::{scroll, Mode, Window};
use crate::protocol::api::{ListAgents, TabInfo};
use crate::protocol::frame::{Frame, Kind};
use crate::protocol::handshake::{ClientMsg, CoreMsg, Outcome};
use crate::protocol::holder::split_data;

impl Window {
    pub(super) fn on_frame(&mut self, frame: Frame) -> anyhow::Result<()> {
        if frame.kind == Kind::Data {
            self.acks.received(frame.body.len());
            if let Some((tab, bytes)) = split_data(&frame.body) {
                if self.view.tab.as_deref() == Some(tab) {
                    self.view.output(bytes);
                }
            }
            return Ok(());
        }
        match frame
            .decode_control::<CoreMsg>()
            .context("a malformed message from the core")?
        {
            CoreMsg::Tabs {
                tabs, approvals, ..
            } => {
                self.approvals = approvals;
                self.on_tabs(tabs)
            }
            CoreMsg::Redraw { tab, rows, cols } => {
                if self.restore.as_ref().is_some_and(|r| *r != tab) {
                    // The core shows a new window the session's first tab;
                    // this one asked for the tab it showed before.
                    return Ok(());
                }
                self.restore = None;
                if self.asked.as_ref() == Some(&tab) {
                    self.asked = None;
                }
                self.marks.shown(&tab);
                self.view.redraw(&tab, rows, cols);
                self.typeahead_to_the_first_tab();
            }
            CoreMsg::History { tab, .. } if self.history_asked.as_ref() != Some(&tab) => {}
            CoreMsg::History { lines, .. } => {
                self.history_asked = None;
                let rows = self.view.term.0.saturating_sub(1) as usize;
                self.mode = Mode::Scroll(scroll::Scroll::new(lines, rows));
                self.overlay_opened();
            }
            CoreMsg::Reply { id, outcome } => self.on_reply(id, outcome),
            CoreMsg::Closing { message } => {
                let on = self.remote.as_ref().map(|h| format!(" on {h}"));
                self.done = Some(format!(
                    "{}{} closed the window: {message}]",
                    super::CLOSED_BY_CORE,
                    on.unwrap_or_default()
                ))
            }
            CoreMsg::Attention { text, .. } => View::write(&self.terminal.notification(&text)),
        }
        Ok(())
    }

    pub(super) fn on_tabs(&mut self, tabs: Vec<TabInfo>) {
        let tabs = numbered(tabs);
        let was = self.showing();
        // A tab's warning shows once in the status line, until the next key.
        for t in &tabs {
            if let Some(w) = &t.warning {
                if self.warned.insert(t.id.clone()) {
                    self.note = format!("tab {}: {w}", t.id);
                }
            }
        }
        if let Some(line) =
            super::limit_offer::offer(&mut self.limit_offered, &tabs, &self.prefix_name)
        {
            self.note = line;
        }
        if super::report_offer::withdrawn(&self.note, &tabs, &self.prefix_name) {
            self.note.clear();
        }
        if let Some(line) =
            super::report_offer::offer(&mut self.report_offered, &tabs, &self.prefix_name)
        {
            self.note = line;
        }
        self.tabs = tabs;
        if let Some(r) = self.restore.clone() {
            if self.tabs.iter().any(|t| t.id == r) {
                self.send(ClientMsg::Select { tab: r });
            } else {
                self.note = super::reattach::gone_after_reconnect(&r, self.remote.as_deref());
                self.note_for_a_key = true;
                self.restore = None;
            }
        }
        self.marks.update(&self.tabs, self.view.tab.as_deref());
        let shown = self.showing();
        if shown.is_none() && !self.tabs.is_empty() {
            // The shown tab is gone (or none was shown): show a neighbour.
            let i = was.unwrap_or(0).min(self.tabs.len() - 1);
            self.select_index(i);
        }
        if self.tabs.is_empty() {
            // Keys typed at a session with no tab are not a new tab's.
            self.early.clear();
            self.view.tab = None;
            self.view.invalidate();
            if !self.offered_picker && matches!(self.mode, Mode::Normal) {
                // A session with no tabs: offer to start an agent.
                self.offered_picker = true;
                self.request(ListAgents, Window::pick_agent);
            }
        }
    }

    pub(super) fn on_reply(&mut self, id: u64, outcome: Outcome) {
        let then = self.pending.remove(&id);
        match outcome {
            Outcome::Error(e) => {
                if self.sending.as_ref().is_some_and(|s| s.id == id) {
                    // The diff view stays open with its comments.
                    self.not_sent(e.message);
                    return;
                }
                if self.reviews_refused(id, &e.message)
                    || self.diff_refused(id, &e.message)
                    || self.switch_refused(id, &e.message)
                {
                    return;
                }
                // The overlay will not open: its keys were for it alone.
                if self.awaiting.as_ref().is_some_and(|a| a.id == Some(id)) {
                    self.awaiting = None;
                }
                // Another host's core speaks of its own machine (its
                // PATH, its folders): the note says which.
                self.note = match &self.remote {
                    Some(host) => format!("on {host}: {}", e.message),
                    None => e.message,
                };
                self.mode = Mode::Normal;
                self.view.invalidate();
            }
            Outcome::Result(value) => {
                if let Some(then) = then {
                    then(self, value);
                }
            }
        }
    }
}

/// The tabs with their numbers: a core from before tabs kept their numbers
/// sends none (0), and its tabs are numbered by their places, as it did.
fn numbered(mut tabs: Vec<TabInfo>) -> Vec<TabInfo> {
    for (i, t) in tabs.iter_mut().enumerate() {
        if t.number == 0 {
            t.number = i + 1;
        }
    }
    tabs
}
