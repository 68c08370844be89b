//! The window's side of the diff view (prefix `g`): asking the core for
//! the shown tab's patch (the `diff` request, as `nerdr diff` asks; git
//! runs in the core, off the window's loop), opening the view on the
//! reply or on the core's refusal (a tab with no worktree says so in the
//! view), and delivering the view's comments to the tab as one message
//! through the `send` request, as `nerdr send` does. The window is the
//! person, so the message is typed at once: no approval queue.
//!
//! The view first asks for the tab's reviews (the `reviews` request, as
//! `nerdr reviews TAB`), then for its diff, and opens with both: the
//! review panel. Reviews that cannot be read do not keep the diff from
//! showing; the view says why.
//!
//! Comments not sent when the view closes are kept for the tab, in this
//! window, until the view opens again or they are sent.

use super::comments::Comment;
use super::diff_view::DiffView;
use super::overlay::Mode;
use super::review_rows::Reviews;
use super::Window;
use crate::client::patch;
use crate::protocol::api::{DiffTab, ListReviews, SendText, TabDiff};
use crate::protocol::printable;
use crate::protocol::replies::{Sent, TabReviews};

/// Comments the core was asked to type into `tab`.
pub struct Sending {
    pub id: u64,
    pub tab: String,
    /// The person's comments in it (none for review comments).
    pub comments: Vec<Comment>,
    /// What it is, in the person's words: `2 comments`, `review 1's
    /// comment 3`.
    pub what: String,
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
        self.ask_reviews(tab);
    }

    /// The view of `tab` asked for its diff again: its comments wait as
    /// drafts for the new view.
    pub(super) fn reload_diff(&mut self, tab: String, comments: Vec<Comment>) {
        if comments.is_empty() {
            self.drafts.remove(&tab);
        } else {
            self.drafts.insert(tab.clone(), comments);
        }
        self.ask_reviews(tab);
    }

    fn ask_reviews(&mut self, tab: String) {
        let id = self.request(
            ListReviews {
                tab: Some(tab.clone()),
                folder: None,
            },
            Window::got_reviews,
        );
        self.reviews_asked = Some((id, tab));
        self.await_overlay(Some(id));
    }

    fn got_reviews(&mut self, tabs: Vec<TabReviews>) {
        let Some((_, tab)) = self.reviews_asked.take() else {
            return;
        };
        let reviews = match tabs.into_iter().find(|t| t.tab == tab) {
            Some(t) => Reviews {
                not_sendable: crate::review::not_for_a_program(&t.tab, t.program.as_deref()),
                done: t.reviews.into_iter().map(|r| r.review).collect(),
                at_work: t.requested,
                unread: None,
            },
            None => Reviews::default(),
        };
        self.ask_diff(tab, reviews);
    }

    /// The core refused request `id`: when it asked for the reviews, the
    /// diff is asked for all the same. Whether it did.
    pub(super) fn reviews_refused(&mut self, id: u64, message: &str) -> bool {
        let tab = match self.reviews_asked.take() {
            Some((asked, tab)) if asked == id => tab,
            other => {
                self.reviews_asked = other;
                return false;
            }
        };
        let reviews = Reviews {
            unread: Some(message.to_string()),
            ..Reviews::default()
        };
        self.ask_diff(tab, reviews);
        true
    }

    fn ask_diff(&mut self, tab: String, reviews: Reviews) {
        let id = self.request(
            DiffTab {
                tab: tab.clone(),
                stat: false,
                folder: None,
            },
            Window::show_diff,
        );
        self.diff_asked = Some((id, tab, reviews));
        // The keys typed since the view was asked for wait on.
        match &mut self.awaiting {
            Some(a) => a.id = Some(id),
            None => self.await_overlay(Some(id)),
        }
    }

    fn show_diff(&mut self, d: TabDiff) {
        let reviews = match self.diff_asked.take() {
            Some((_, tab, reviews)) if tab == d.tab => reviews,
            _ => Reviews::default(),
        };
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
        self.open_view(d.tab, lines, patch, reviews);
    }

    fn open_view(
        &mut self,
        tab: String,
        title: Vec<String>,
        patch: patch::Patch,
        reviews: Reviews,
    ) {
        let comments = self.drafts.remove(&tab).unwrap_or_default();
        let height = self.view.term.0.saturating_sub(1) as usize;
        self.mode = Mode::Diff(Box::new(DiffView::new(
            tab, title, patch, comments, reviews, height,
        )));
        self.overlay_opened();
    }

    /// The core refused request `id`: when it asked for a diff, the view
    /// opens and says why (a tab with no worktree). Whether it did.
    pub(super) fn diff_refused(&mut self, id: u64, message: &str) -> bool {
        let (tab, reviews) = match self.diff_asked.take() {
            Some((asked, tab, reviews)) if asked == id => (tab, reviews),
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
        self.open_view(tab, title, patch::Patch::default(), reviews);
        true
    }

    pub(super) fn send_comments(&mut self, tab: String, text: String, comments: Vec<Comment>) {
        let n = comments.len();
        let what = format!("{n} comment{}", if n == 1 { "" } else { "s" });
        self.send_message(tab, text, comments, what);
    }

    /// Type `text` into `tab` as one message, as `nerdr send` does.
    pub(super) fn send_message(
        &mut self,
        tab: String,
        text: String,
        comments: Vec<Comment>,
        what: String,
    ) {
        if !self.connected {
            self.say_not_sent(
                &what,
                "not connected to the core; send again once it is back",
            );
            return;
        }
        let id = self.request(
            SendText {
                tab: tab.clone(),
                text,
                enter: true,
                folder: None,
            },
            Window::comments_sent,
        );
        if let Mode::Diff(v) = &mut self.mode {
            v.note = format!("sending {what}...");
        }
        self.sending = Some(Sending {
            id,
            tab,
            comments,
            what,
        });
    }

    fn comments_sent(&mut self, sent: Sent) {
        let Some(s) = self.sending.take() else {
            return;
        };
        let words = self.tab_words(&s.tab);
        let what = &s.what;
        let said = match sent {
            Sent::Typed {} => format!("sent {what} to {words} as one message"),
            Sent::Queued { queued, why } => {
                format!("{what} for {words} wait for approval as {queued}: {why}")
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
        let what = match self.sending.take() {
            Some(s) => s.what,
            None => "comments".into(),
        };
        self.say_not_sent(&what, &why);
    }

    fn say_not_sent(&mut self, what: &str, why: &str) {
        let said = format!("{what} not sent: {why}");
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
