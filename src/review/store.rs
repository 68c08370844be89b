//! Reviews kept with their author's tab, in `reviews.json` in the state
//! dir (0600; it outlives a core restart as `tabs.json` does): the reviews
//! each requested reviewer is to write (by the reviewer's tab), the posted
//! reviews (by the author's tab), and per author the last head a review
//! was asked for, so an automatic review comes once per new head.
//!
//! It is pruned at each change ([`Store::prune`]): what belongs to a tab
//! that is closed goes (a closed author's reviews, a closed reviewer's
//! record once it posted), and an author keeps its last [`KEEP`] reviews.
//! A closed tab's reviews could not be listed any more anyway (`nerdr
//! reviews` names a tab that is there). The
//! decisions over it are pure methods; [`load`] and [`save`] are the only
//! I/O, and the core runs them off its async workers, never under its
//! state lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::format::{Comment, Posted};

/// How many reviews an author tab keeps, the latest.
pub const KEEP: usize = 20;

/// A review nerdr asked a reviewer for, until it posts it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// The tab whose work is reviewed.
    pub author: String,
    /// The reviewer's agent (its config name).
    pub agent: String,
    /// The range reviewed: commits `base..head` of the author's branch.
    pub base: String,
    pub head: String,
    pub branch: String,
    /// The reviewer runs sandboxed.
    pub sandboxed: bool,
    /// Asked for by `[review] automatic`, not by anyone.
    #[serde(default)]
    pub automatic: bool,
    /// The review it posted, once it has (its number in the author's list).
    #[serde(default)]
    pub posted: Option<u32>,
    /// Its first prompt was typed: a reviewer restarted before that (its
    /// sandbox check refused it, say) gets it then.
    #[serde(default)]
    pub prompted: bool,
    /// The author tab's line of starters when the review was asked for
    /// (fixed when a tab starts): kept here, so the tabs that started the
    /// author still count as it once the author is closed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub author_line: Vec<String>,
}

/// A reviewer's author as the privilege model counts it
/// (`privilege::link`): the author tab and its line of starters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorLine {
    pub author: String,
    pub line: Vec<String>,
}

/// A posted review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    /// 1, 2, ... in the author tab's list.
    pub number: u32,
    pub reviewer_tab: String,
    pub agent: String,
    /// Written by an agent in a sandbox: whoever reads it outside one is
    /// told (it may carry that agent's instructions).
    pub written_in_sandbox: bool,
    pub base: String,
    pub head: String,
    pub summary: String,
    pub comments: Vec<Comment>,
    /// Shown to the person (the window's review panel, `nerdr reviews
    /// TAB`): until then the author's tab is marked (`super::unread`).
    /// Absent from files written before it: those count as read.
    #[serde(default = "read_before")]
    pub read: bool,
}

/// Reviews stored before the flag were there to see: read.
fn read_before() -> bool {
    true
}

/// One author tab's reviews.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorReviews {
    /// The head the last review was asked for.
    #[serde(default)]
    pub last_head: Option<String>,
    #[serde(default)]
    pub reviews: Vec<Review>,
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// By reviewer tab.
    #[serde(default)]
    pub pending: BTreeMap<String, Pending>,
    /// By author tab.
    #[serde(default)]
    pub authors: BTreeMap<String, AuthorReviews>,
}

/// Why a post is not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostRefused {
    /// The caller is not a reviewer nerdr started.
    NotAReviewer,
    /// It posted its review already, as this number of the author's.
    AlreadyPosted { author: String, number: u32 },
}

impl PostRefused {
    pub fn message(&self, tab: &str) -> String {
        match self {
            PostRefused::NotAReviewer => format!(
                "tab {tab} is not reviewing anything: `nerdr post-review` is run by a reviewer \
                 that `nerdr request-review` started, from its own tab"
            ),
            PostRefused::AlreadyPosted { author, number } => format!(
                "tab {tab} posted its review already (review {number} of tab {author}); ask \
                 for another with `nerdr request-review {author}`"
            ),
        }
    }
}

impl Store {
    /// Take reviewer tab `reviewer`'s review: only from a reviewer nerdr
    /// started, once. Returns the stored review.
    pub fn post(
        &mut self,
        reviewer: &str,
        sandboxed: bool,
        posted: Posted,
    ) -> Result<Review, PostRefused> {
        let pending = self
            .pending
            .get_mut(reviewer)
            .ok_or(PostRefused::NotAReviewer)?;
        if let Some(number) = pending.posted {
            return Err(PostRefused::AlreadyPosted {
                author: pending.author.clone(),
                number,
            });
        }
        let author = self.authors.entry(pending.author.clone()).or_default();
        let number = author.reviews.last().map_or(1, |r| r.number + 1);
        let review = Review {
            number,
            reviewer_tab: reviewer.to_owned(),
            agent: pending.agent.clone(),
            // Either says so: the tab's record or the caller's standing.
            written_in_sandbox: sandboxed || pending.sandboxed,
            base: pending.base.clone(),
            head: pending.head.clone(),
            summary: posted.summary,
            comments: posted.comments,
            read: false,
        };
        author.reviews.push(review.clone());
        pending.posted = Some(number);
        Ok(review)
    }

    /// Record a reviewer started for `pending.author` at `pending.head`.
    pub fn requested(&mut self, reviewer: &str, pending: Pending) {
        self.authors
            .entry(pending.author.clone())
            .or_default()
            .last_head = Some(pending.head.clone());
        self.pending.insert(reviewer.to_owned(), pending);
    }

    /// Whether an automatic review is due for `author` at `head`: not when
    /// one was asked for at that head already.
    pub fn due(&self, author: &str, head: &str) -> bool {
        self.authors
            .get(author)
            .and_then(|a| a.last_head.as_deref())
            != Some(head)
    }

    /// Mark `head` as asked for (a review that could not start is not
    /// tried again at the same head: the person was told why once).
    pub fn note_head(&mut self, author: &str, head: &str) {
        self.authors.entry(author.to_owned()).or_default().last_head = Some(head.to_owned());
    }

    /// Drop what belongs to closed tabs (`live`: the tabs there are) and
    /// all but an author's last [`KEEP`] reviews. A reviewer not posted
    /// yet stays while its author is there: it may be starting (not a tab
    /// yet), or closed, which its status then says.
    pub fn prune(&mut self, live: &std::collections::BTreeSet<String>) {
        self.authors.retain(|author, _| live.contains(author));
        for a in self.authors.values_mut() {
            let over = a.reviews.len().saturating_sub(KEEP);
            a.reviews.drain(..over);
        }
        self.pending.retain(|reviewer, p| {
            live.contains(&p.author) && (p.posted.is_none() || live.contains(reviewer))
        });
    }

    /// Note reviewer `reviewer`'s first prompt as typed.
    pub fn prompted(&mut self, reviewer: &str) {
        if let Some(p) = self.pending.get_mut(reviewer) {
            p.prompted = true;
        }
    }

    /// What reviewer `reviewer` still waits for its first prompt on: its
    /// pending review, not posted and never prompted.
    pub fn unprompted(&self, reviewer: &str) -> Option<&Pending> {
        self.pending
            .get(reviewer)
            .filter(|p| !p.prompted && p.posted.is_none())
    }

    /// Whether tab `tab` is a reviewer nerdr started.
    pub fn is_reviewer(&self, tab: &str) -> bool {
        self.pending.contains_key(tab)
    }

    /// Each reviewer tab's author: how tabs stand to each other
    /// (`privilege::link`). A reviewer stays its author's while either is
    /// open, posted or not.
    pub fn author_of(&self) -> BTreeMap<String, AuthorLine> {
        self.pending
            .iter()
            .map(|(reviewer, p)| {
                let author = AuthorLine {
                    author: p.author.clone(),
                    line: p.author_line.clone(),
                };
                (reviewer.clone(), author)
            })
            .collect()
    }

    pub fn reviews_of(&self, author: &str) -> &[Review] {
        self.authors.get(author).map_or(&[], |a| &a.reviews)
    }
}

/// `reviews.json` in `state_dir`.
pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("reviews.json")
}

/// The store as written; none yet is empty. A file that does not read as
/// a store is an error naming it (never silently dropped: it holds the
/// reviews).
pub fn load(path: &Path) -> Result<Store, String> {
    crate::json_store::load(path, "a review store")
}

/// The lock [`update`] and [`read`] hold around the file.
static FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Read, change and write the store under one process-wide lock, so two
/// requests never write over each other's change. Blocking: call it off
/// the async workers.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Store) -> T) -> Result<T, String> {
    crate::json_store::update(&FILE, path, "a review store", change)
}

/// Look at the store under [`update`]'s lock, between two writes.
/// Blocking: call it off the async workers.
pub fn read<T>(path: &Path, look: impl FnOnce(&Store) -> T) -> Result<T, String> {
    let _held = FILE.lock().unwrap_or_else(|p| p.into_inner());
    Ok(look(&load(path)?))
}

#[cfg(test)]
mod tests {
    use super::super::format::Severity;
    use super::*;

    fn pending(author: &str, head: &str, sandboxed: bool) -> Pending {
        Pending {
            author: author.into(),
            agent: "claude".into(),
            base: "b0".into(),
            head: head.into(),
            branch: format!("nerdr/{author}"),
            sandboxed,
            automatic: false,
            posted: None,
            prompted: false,
            author_line: Vec::new(),
        }
    }

    fn posted(summary: &str) -> Posted {
        Posted {
            summary: summary.into(),
            comments: vec![Comment {
                file: "a.rs".into(),
                line: 1,
                severity: Severity::Note,
                text: "t".into(),
            }],
            lines: vec![2],
        }
    }

    #[test]
    fn only_a_requested_reviewer_posts_and_only_once() {
        let mut s = Store::default();
        assert_eq!(
            s.post("r1", false, posted("x")),
            Err(PostRefused::NotAReviewer)
        );
        s.requested("r1", pending("a1", "h1", false));
        s.requested("r2", pending("a1", "h2", true));
        let first = s.post("r1", false, posted("one")).unwrap();
        assert_eq!((first.number, first.written_in_sandbox), (1, false));
        assert_eq!(
            s.post("r1", false, posted("again")),
            Err(PostRefused::AlreadyPosted {
                author: "a1".into(),
                number: 1
            })
        );
        // The tab's record says sandboxed, whatever the caller's standing.
        let second = s.post("r2", false, posted("two")).unwrap();
        assert_eq!((second.number, second.written_in_sandbox), (2, true));
        assert_eq!(s.reviews_of("a1").len(), 2);
        assert!(s.reviews_of("a2").is_empty());
        assert!(PostRefused::NotAReviewer
            .message("r9")
            .contains("not reviewing anything"));
    }

    #[test]
    fn an_automatic_review_is_due_once_per_head() {
        let mut s = Store::default();
        assert!(s.due("a1", "h1"));
        s.requested("r1", pending("a1", "h1", false));
        assert!(!s.due("a1", "h1"));
        assert!(s.due("a1", "h2"));
        s.note_head("a1", "h2");
        assert!(!s.due("a1", "h2"));
        assert!(s.due("a2", "h2"));
    }

    #[test]
    fn the_store_survives_a_round_trip_and_a_bad_file_is_named() {
        let dir = std::env::temp_dir().join(format!("nerdr-review-store-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = file(&dir);
        let _ = std::fs::remove_file(&path);
        assert_eq!(load(&path).unwrap(), Store::default());
        let number = update(&path, |s| {
            s.requested("r1", pending("a1", "h1", false));
            s.post("r1", true, posted("kept")).unwrap().number
        })
        .unwrap();
        assert_eq!(number, 1);
        let back = load(&path).unwrap();
        assert_eq!(back.reviews_of("a1")[0].summary, "kept");
        assert!(back.reviews_of("a1")[0].written_in_sandbox);
        std::fs::write(&path, "{not json").unwrap();
        assert!(load(&path).unwrap_err().contains("is not a review store"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_closed_tabs_records_go_and_an_author_keeps_its_last_reviews() {
        let live = |tabs: &[&str]| tabs.iter().map(|t| t.to_string()).collect();
        let mut s = Store::default();
        s.requested("r1", pending("a1", "h1", false));
        s.post("r1", false, posted("one")).unwrap();
        s.requested("r2", pending("a1", "h2", false));
        s.requested("r3", pending("a2", "h3", false));
        s.post("r3", false, posted("three")).unwrap();
        s.requested("r4", pending("a1", "h4", false));
        // r1 posted and closed: its record goes, its review stays; r2 is
        // closed unposted (its status says so) and r4 not a tab yet: both
        // stay; a2 is closed: all of it goes.
        s.prune(&live(&["a1", "r4"]));
        assert_eq!(
            s.pending.keys().collect::<Vec<_>>(),
            vec!["r2", "r4"],
            "{s:?}"
        );
        assert_eq!(s.reviews_of("a1").len(), 1);
        assert!(!s.authors.contains_key("a2"));
        for i in 0..KEEP + 3 {
            let r = format!("x{i}");
            s.requested(&r, pending("a1", &format!("h{i}"), false));
            s.post(&r, false, posted(&format!("s{i}"))).unwrap();
        }
        s.prune(&live(&["a1"]));
        let kept = s.reviews_of("a1");
        assert_eq!(kept.len(), KEEP);
        // The latest, numbered on from the ones before.
        assert_eq!(kept.last().unwrap().number, KEEP as u32 + 4);
        assert_eq!(kept.last().unwrap().summary, format!("s{}", KEEP + 2));
    }

    #[test]
    fn a_reviewer_waits_for_its_first_prompt_until_it_is_typed() {
        let mut s = Store::default();
        s.requested("r1", pending("a1", "h1", false));
        assert!(s.unprompted("r1").is_some());
        s.prompted("r1");
        assert!(s.unprompted("r1").is_none());
        s.requested("r2", pending("a1", "h2", false));
        s.post("r2", false, posted("done")).unwrap();
        assert!(s.unprompted("r2").is_none());
        assert!(s.unprompted("r9").is_none());
    }
}
