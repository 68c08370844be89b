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
//! Comments not sent when the view closes are kept for the tab until
//! the view opens again or they are sent: in this window, and in the
//! drafts file, so a detach or another window finds them (`super::drafts`,
//! which says why they are the window's and not the core's).

use super::comments::Comment;
use super::diff_view::DiffView;
use super::drafts::{self, Draft};
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
            Some(i) => format!(
                "tab {} ({})",
                self.tabs[i].number,
                printable(&self.tabs[i].name)
            ),
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
    pub(super) fn reload_diff(&mut self, tab: String, drafts: Vec<Draft>) {
        self.set_drafts(&tab, drafts);
        self.ask_reviews(tab);
    }

    /// Keep `drafts` as tab `tab`'s, here and in its file; what went
    /// wrong writing it, in words.
    fn set_drafts(&mut self, tab: &str, drafts: Vec<Draft>) -> Option<String> {
        let saved = match &self.drafts_dir {
            Some(dir) => drafts::save(dir, tab, &drafts).err(),
            None => None,
        };
        if saved.is_some() {
            self.window_only.insert(tab.to_string());
        } else {
            self.window_only.remove(tab);
        }
        if drafts.is_empty() {
            self.drafts.remove(tab);
        } else {
            self.drafts.insert(tab.to_string(), drafts);
        }
        saved.map(|e| format!("unsent comments kept in this window only: {e}"))
    }

    /// The drafts actually kept: those whose file went meanwhile (`nerdr
    /// clean` removed a closed tab's, another window sent them) are no
    /// longer this window's to count or show, so they go from it too;
    /// those kept here alone because the file could not be written stay.
    fn kept_count(&mut self) -> usize {
        if let Some(dir) = &self.drafts_dir {
            let gone: Vec<String> = self
                .drafts
                .keys()
                .filter(|t| !self.window_only.contains(*t))
                .filter(|t| drafts::load(dir, t).is_ok_and(|d| d.is_empty()))
                .cloned()
                .collect();
            for t in gone {
                self.drafts.remove(&t);
            }
        }
        self.drafts.values().map(Vec::len).sum()
    }

    /// Tab `tab`'s drafts: this window's, else those kept in its file (a
    /// detach, another window). Taken out: the view holds them now.
    fn take_drafts(&mut self, tab: &str) -> (Vec<Draft>, Option<String>) {
        if let Some(d) = self.drafts.remove(tab) {
            return (d, None);
        }
        match &self.drafts_dir {
            Some(dir) => match drafts::load(dir, tab) {
                Ok(d) => (d, None),
                Err(e) => (Vec::new(), Some(e)),
            },
            None => (Vec::new(), None),
        }
    }

    /// The window goes (a detach, the terminal closing): the open view's
    /// comments are kept with the rest; what to say of them, if any.
    pub(super) fn leaving(&mut self) -> Option<String> {
        if let Some(v) = self.mode.diff_mut() {
            let (tab, d) = (v.tab.clone(), v.drafts());
            if let Some(e) = self.set_drafts(&tab, d) {
                return Some(e);
            }
        }
        let n = self.kept_count();
        (n > 0).then(|| self.kept_words(n))
    }

    /// `2 unsent comments kept (C-b g to see them)`.
    fn kept_words(&self, n: usize) -> String {
        format!(
            "{n} unsent comment{} kept ({} g to see {})",
            if n == 1 { "" } else { "s" },
            self.prefix_name,
            if n == 1 { "it" } else { "them" }
        )
    }

    fn ask_reviews(&mut self, tab: String) {
        let id = self.request(
            ListReviews {
                tab: Some(tab.clone()),
                folder: None,
                // The panel shows them: the tab's review mark goes.
                mark_read: true,
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
                program: t.program,
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
            Ok(mut p) => {
                p.mark_uncommitted(&d.uncommitted);
                (p, true)
            }
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
        // Drafts are put on a diff that read, and only then.
        let made_on = read.then_some(d.base);
        self.open_view(d.tab, lines, patch, reviews, made_on);
    }

    /// Open the view; with `made_on`, the diff read and started from that
    /// commit: the tab's drafts are put on its lines, those whose line is
    /// gone dropped, saying so. Without, they are shown as they were.
    fn open_view(
        &mut self,
        tab: String,
        title: Vec<String>,
        patch: patch::Patch,
        reviews: Reviews,
        made_on: Option<String>,
    ) {
        let (kept, unread) = self.take_drafts(&tab);
        let (comments, note) = match &made_on {
            Some(_) => {
                let put = drafts::reanchor(kept, &patch);
                (put.kept, drafts::dropped_note(&put.dropped))
            }
            None => (kept.into_iter().map(|d| d.comment).collect(), None),
        };
        let dropped = note.is_some();
        let height = self.view.term.0.saturating_sub(1) as usize;
        let mut v = DiffView::new(tab, title, patch, comments, reviews, height);
        v.made_on = made_on.unwrap_or_default();
        let note = [unread, note].into_iter().flatten().collect::<Vec<_>>();
        if !note.is_empty() {
            v.note = note.join(" | ");
        }
        // What was dropped is gone from the file too.
        if dropped {
            let (tab, d) = (v.tab.clone(), v.drafts());
            self.set_drafts(&tab, d);
            self.drafts.remove(&tab);
        }
        self.mode = Mode::Diff(Box::new(v));
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
        self.open_view(tab, title, patch::Patch::default(), reviews, None);
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
                // Comments and reviews are for the agent: the core refuses
                // a program's tab too (`review::not_for_a_program`).
                agent_only: true,
                folder: None,
            },
            Window::comments_sent,
        );
        if let Some(v) = self.mode.diff_mut() {
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
        match self.mode.diff_mut() {
            Some(v) if v.tab == s.tab => {
                v.sent(&s.comments);
                v.note = said;
                // Sent: no draft in the file any more (the rest stays).
                let d = v.drafts();
                if !s.comments.is_empty() {
                    self.set_drafts(&s.tab, d);
                    self.drafts.remove(&s.tab);
                }
            }
            _ => {
                // The view closed meanwhile: they went, so they are no
                // draft any more.
                if let Some(mut d) = self.drafts.remove(&s.tab) {
                    d.retain(|d| !s.comments.contains(&d.comment));
                    self.set_drafts(&s.tab, d);
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
        match self.mode.diff_mut() {
            Some(v) => v.note = said,
            None => self.note = said,
        }
    }

    /// The view of `tab` closed: what was not sent waits for it, and the
    /// status line says so until the next key (a note left standing would
    /// go on counting drafts sent or cleaned since).
    pub(super) fn keep_drafts(&mut self, tab: String, drafts: Vec<Draft>) {
        let n = drafts.len();
        let failed = self.set_drafts(&tab, drafts);
        self.note = match failed {
            Some(e) => e,
            None if n > 0 => self.kept_words(n),
            None => String::new(),
        };
        self.note_for_a_key = n > 0;
    }
}
