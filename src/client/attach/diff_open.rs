//! The window's side of the diff view (prefix `g`): asking the core for
//! the shown tab's patch (the `diff` request, as `nerdr diff` asks; git
//! runs in the core, off the window's loop), opening the view on the
//! reply or on the core's refusal (a tab with no worktree says so in the
//! view), and delivering the view's comments to the tab as one message
//! through the `send` request, as `nerdr send` does. The window is the
//! person, so the message is typed at once: no approval queue.
//!
//! Comments not sent when the view closes are kept for the tab, in this
//! window, until the view opens again or they are sent.

use super::comments::Comment;
use super::diff_view::DiffView;
use super::overlay::Mode;
use super::Window;
use crate::client::patch;
use crate::protocol::api::{DiffTab, SendText, TabDiff};
use crate::protocol::printable;
use crate::protocol::replies::Sent;

/// Comments the core was asked to type into `tab`.
pub struct Sending {
    pub id: u64,
    pub tab: String,
    pub comments: Vec<Comment>,
}

/// The first line of the view: which tab, what against what.
fn title(tab: &str, d: &TabDiff) -> Vec<String> {
    let base: String = d.base.chars().take(10).collect();
    let onto = match &d.base_branch {
        Some(b) => format!("{base} ({b})"),
        None => base,
    };
    let mut head = format!("diff of {tab}: {} against {onto}", d.branch);
    if !d.base_recorded {
        head.push_str(", the base guessed by git merge-base");
    }
    let mut lines = vec![head];
    lines.push(if d.worktree_missing {
        "The worktree is gone: its branch's commits only.".into()
    } else {
        format!("Commits and uncommitted work of {}", d.worktree.display())
    });
    lines
}

impl Window {
    /// The shown tab, as the person knows it: `tab 2 (claude-1)`.
    fn tab_words(&self, tab: &str) -> String {
        match self.index_of(tab) {
            Some(i) => format!("tab {} ({})", i + 1, printable(&self.tabs[i].name)),
            None => format!("tab {tab}"),
        }
    }

    pub(super) fn open_diff(&mut self) {
        let Some(tab) = self.view.tab.clone() else {
            self.note = "no tab shown: no diff to show".into();
            self.note_for_a_key = true;
            return;
        };
        self.ask_diff(tab);
    }

    /// The view of `tab` asked for its diff again: its comments wait as
    /// drafts for the new view.
    pub(super) fn reload_diff(&mut self, tab: String, comments: Vec<Comment>) {
        if comments.is_empty() {
            self.drafts.remove(&tab);
        } else {
            self.drafts.insert(tab.clone(), comments);
        }
        self.ask_diff(tab);
    }

    fn ask_diff(&mut self, tab: String) {
        let id = self.request(
            DiffTab {
                tab: tab.clone(),
                stat: false,
                folder: None,
            },
            Window::show_diff,
        );
        self.diff_asked = Some((id, tab));
        self.await_overlay(Some(id));
    }

    fn show_diff(&mut self, d: TabDiff) {
        self.diff_asked = None;
        let words = self.tab_words(&d.tab);
        let mut lines = title(&words, &d);
        let (patch, read) = match patch::parse(&d.patch) {
            Ok(p) => (p, true),
            Err(e) => {
                lines.push(String::new());
                lines.push(format!("The patch does not read: {e}"));
                (patch::Patch::default(), false)
            }
        };
        if patch.is_empty() && read {
            lines.push(String::new());
            lines.push(format!(
                "No changes: {} is at its base and its worktree is clean.",
                d.branch
            ));
        }
        self.open_view(d.tab, lines, patch);
    }

    fn open_view(&mut self, tab: String, title: Vec<String>, patch: patch::Patch) {
        let comments = self.drafts.remove(&tab).unwrap_or_default();
        let height = self.view.term.0.saturating_sub(1) as usize;
        self.mode = Mode::Diff(Box::new(DiffView::new(tab, title, patch, comments, height)));
        self.overlay_opened();
    }

    /// The core refused request `id`: when it asked for a diff, the view
    /// opens and says why (a tab with no worktree). Whether it did.
    pub(super) fn diff_refused(&mut self, id: u64, message: &str) -> bool {
        let tab = match self.diff_asked.take() {
            Some((asked, tab)) if asked == id => tab,
            other => {
                self.diff_asked = other;
                return false;
            }
        };
        let title = vec![
            format!("diff of {}", self.tab_words(&tab)),
            String::new(),
            printable(message),
        ];
        self.open_view(tab, title, patch::Patch::default());
        true
    }

    pub(super) fn send_comments(&mut self, tab: String, text: String, comments: Vec<Comment>) {
        if !self.connected {
            self.not_sent("not connected to the core; S sends them once it is back".into());
            return;
        }
        let n = comments.len();
        let id = self.request(
            SendText {
                tab: tab.clone(),
                text,
                enter: true,
                folder: None,
            },
            Window::comments_sent,
        );
        self.sending = Some(Sending { id, tab, comments });
        if let Mode::Diff(v) = &mut self.mode {
            v.note = format!("sending {n} comment{}...", if n == 1 { "" } else { "s" });
        }
    }

    fn comments_sent(&mut self, sent: Sent) {
        let Some(s) = self.sending.take() else {
            return;
        };
        let n = s.comments.len();
        let plural = if n == 1 { "" } else { "s" };
        let words = self.tab_words(&s.tab);
        let said = match sent {
            Sent::Typed {} => format!("sent {n} comment{plural} to {words} as one message"),
            Sent::Queued { queued, why } => {
                format!("{n} comment{plural} for {words} wait for approval as {queued}: {why}")
            }
        };
        match &mut self.mode {
            Mode::Diff(v) if v.tab == s.tab => {
                v.sent(&s.comments);
                v.note = said;
            }
            _ => {
                // The view closed meanwhile: they went, so they are no
                // draft any more.
                if let Some(d) = self.drafts.get_mut(&s.tab) {
                    d.retain(|c| !s.comments.contains(c));
                    if d.is_empty() {
                        self.drafts.remove(&s.tab);
                    }
                }
                self.note = said;
            }
        }
    }

    /// The core refused to type the comments: they stay, and the view
    /// (or the status line) says why.
    pub(super) fn not_sent(&mut self, why: String) {
        self.sending = None;
        let said = format!("comments not sent: {why}");
        match &mut self.mode {
            Mode::Diff(v) => v.note = said,
            _ => self.note = said,
        }
    }

    /// The view of `tab` closed: what was not sent waits for it.
    pub(super) fn keep_drafts(&mut self, tab: String, comments: Vec<Comment>) {
        if comments.is_empty() {
            self.drafts.remove(&tab);
            return;
        }
        let n = comments.len();
        self.note = format!(
            "{n} comment{} on {} not sent yet: {} g shows {}",
            if n == 1 { "" } else { "s" },
            self.tab_words(&tab),
            self.prefix_name,
            if n == 1 { "it" } else { "them" }
        );
        self.drafts.insert(tab, comments);
    }
}
