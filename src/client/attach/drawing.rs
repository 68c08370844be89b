//! What the window writes to the person's terminal after each event: the
//! core's paint of the shown tab with the status line below it, or an
//! overlay; then the acknowledgement of that paint, when one is due.

use super::view::View;
use super::{overlay, status, usage_figure, Mode, Window};
use crate::protocol::handshake::ClientMsg;

impl Window {
    /// What the status line says after the tabs in the normal mode: the
    /// shown agent's plan usage when known, then the note (or a stopped
    /// tab's keys, or the help hint).
    pub(super) fn normal_note(&mut self) -> String {
        // A stopped tab says what brings it back, unless a note
        // has something newer to say.
        let hint = match self.showing() {
            Some(i) if self.note.is_empty() => {
                status::stopped_hint(&self.tabs[i], &self.prefix_name)
            }
            _ => None,
        };
        let note = hint.as_deref().unwrap_or(&self.note);
        let note = status::status_note(note, self.approvals, &self.prefix_name);
        // The plan's usage before the note (which is cut first when the
        // line is short).
        let plan = self
            .showing()
            .and_then(|i| usage_figure::plan_of(&self.tabs[i]));
        match self.usage.for_agent(plan, std::time::Instant::now()) {
            Some(fig) => format!("{fig} | {note}"),
            None => note,
        }
    }

    pub(super) fn paint(&mut self) {
        let (rows, cols) = self.view.term;
        let tab_shown = match &self.mode {
            Mode::Normal => true,
            Mode::Rename { .. } => self.view.tab.is_some(),
            _ => false,
        };
        if !tab_shown {
            self.view.invalidate();
        } else if self.view.wants_repaint() && self.connected {
            self.send(ClientMsg::Repaint);
        }
        let bytes = match &self.mode {
            Mode::Normal => {
                let note = self.normal_note();
                let width = cols as usize;
                // Another host's session says whose, first, as tmux's
                // status line starts with its session's name.
                let place = self.remote.as_deref().map(|h| status::Span {
                    text: format!(" [{}]", crate::protocol::printable(h)),
                    look: status::Look::Bar,
                });
                let lead = place
                    .as_ref()
                    .map_or(0, |p| status::columns(std::slice::from_ref(p)));
                let mut line = status::status_line(
                    &self.tabs,
                    self.view.tab.as_deref(),
                    &self.marks,
                    &note,
                    width.saturating_sub(lead),
                );
                line.splice(0..0, place);
                let status = status::render(&line, width);
                if self.view.tab.is_none() {
                    overlay::page(
                        &[
                            "No tabs here yet.".into(),
                            String::new(),
                            format!("Press {} c to start an agent.", self.prefix_name),
                        ],
                        &status,
                        rows,
                        cols,
                    )
                } else {
                    self.view.paint(&status)
                }
            }
            Mode::Rename { .. } if self.view.tab.is_some() => {
                let line = self.mode.status_line().unwrap_or_default();
                let bar = [status::Span {
                    text: line,
                    look: status::Look::Bar,
                }];
                let status = status::render(&bar, cols as usize);
                self.view.paint(&status)
            }
            other => overlay::render(other, &self.prefix_name, rows, cols),
        };
        View::write(&bytes);
        self.acknowledge();
    }

    /// What came is drawn (or, under an overlay, dropped for a whole
    /// screen later): tell the core, when an acknowledgement is due, so
    /// it may send more (`protocol::acks`).
    ///
    /// Not while an earlier frame still waits to be written: the total is
    /// cumulative, so the next one says it all, and a far end that stops
    /// reading gets no queue of them.
    pub(super) fn acknowledge(&mut self) {
        if self.out.capacity() < self.out.max_capacity() {
            return;
        }
        if let Some(bytes) = self.acks.due() {
            self.send(ClientMsg::Ack { bytes });
        }
    }
}
