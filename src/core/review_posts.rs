//! Reviews coming in and going out: `nerdr post-review` (a reviewer's
//! review, taken only from a tab `request-review` started, once, with its
//! comments on the reviewed range as `review::range` rules over what git
//! says of the range here, and kept with the author's tab in
//! `reviews.json`) and `nerdr reviews` (a tab's
//! reviews and the reviewers still at work: the request the window's review
//! panel reads too).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::CallerKind;
use super::Core;
use crate::protocol::api::TabState;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::replies::{ReviewPosted, ReviewRequested, ShownReview, TabReviews};
use crate::review::store::{PostRefused, Review};
use crate::review::{format, range, status};

impl Core {
    /// `nerdr post-review`, from reviewer tab `caller`.
    pub(super) async fn post_review(
        &self,
        caller: &Caller,
        text: &str,
    ) -> Result<ReviewPosted, ApiError> {
        let Some(tab) = caller.tab().map(str::to_owned) else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                "`nerdr post-review` is run by a reviewer agent, in the tab `nerdr \
                 request-review` started for it",
            ));
        };
        let posted = format::parse(text).map_err(|e| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!("the review was not taken: {e}"),
            )
        })?;
        self.on_the_range(&tab, &posted).await?;
        // Either says so: the caller's standing, or the tab's.
        let sandboxed = caller.kind() == CallerKind::Sandboxed
            || self
                .state
                .lock()
                .unwrap()
                .tabs
                .get(&tab)
                .is_some_and(|t| t.sandboxed);
        let reviewer = tab.clone();
        let taken = self
            .update_reviews(move |s| -> Result<(Review, String), PostRefused> {
                let review = s.post(&reviewer, sandboxed, posted)?;
                let author = s.pending.get(&reviewer).map(|p| p.author.clone());
                Ok((review, author.unwrap_or_default()))
            })
            .await?;
        let (review, author) =
            taken.map_err(|refused| ApiError::new(ErrorCode::Denied, refused.message(&tab)))?;
        tracing::info!(reviewer = %tab, author = %author, number = review.number,
            comments = review.comments.len(), sandboxed, "review posted");
        // The windows' tab lists and `nerdr wait` look again.
        self.changed();
        Ok(ReviewPosted {
            author,
            number: review.number,
        })
    }

    /// Whether reviewer `tab`'s comments are on the range it was asked to
    /// review (`review::range`): the store and the tab's repository read
    /// first, git run off the async workers and outside the state lock. A
    /// tab that is no reviewer, or posted already, is refused by the post
    /// itself.
    async fn on_the_range(&self, tab: &str, posted: &format::Posted) -> Result<(), ApiError> {
        let store = self.load_reviews().await?;
        let Some(pending) = store.pending.get(tab).filter(|p| p.posted.is_none()) else {
            return Ok(());
        };
        let repo = {
            let state = self.state.lock().unwrap();
            [tab, pending.author.as_str()].iter().find_map(|t| {
                state
                    .tabs
                    .get(*t)?
                    .worktree
                    .as_ref()
                    .map(|w| w.repo.clone())
            })
        };
        let Some(repo) = repo else {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "the review was not taken: neither tab {tab} nor its author's tab {} has a \
                     worktree to check its comments against",
                    pending.author
                ),
            ));
        };
        let (base, head, asked) = (pending.base.clone(), pending.head.clone(), posted.clone());
        let facts = super::edge::gather("reading a reviewed range's files", move || {
            range_facts(&repo, &base, &head, &asked)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        range::check(posted, &facts).map_err(|e| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!("the review was not taken: {e}"),
            )
        })
    }

    /// `nerdr reviews [TAB]`: tab `tab`'s reviews (the caller's own tab
    /// when `None`); from a terminal with no tab, every tab of `folder`'s
    /// session (every session's without one) that has a review or a
    /// reviewer at work.
    pub(super) async fn list_reviews(
        &self,
        caller: &Caller,
        tab: Option<String>,
        folder: Option<PathBuf>,
        mark_read: bool,
    ) -> Result<Vec<TabReviews>, ApiError> {
        // Read by the person only: an agent listing reviews (its own, or
        // another tab's) leaves the person's marks as they are.
        let mark_read = mark_read && caller.tab().is_none();
        let named = tab.or_else(|| caller.tab().map(str::to_owned));
        type Named = (String, String, Option<String>);
        let (tabs, reviewers): (Vec<Named>, BTreeMap<String, ReviewerTab>) = {
            let state = self.state.lock().unwrap();
            let reviewers = state
                .tabs
                .values()
                .map(|t| {
                    let seen = ReviewerTab {
                        state: t.state,
                        exit_code: t.exit_code,
                        sandboxed: t.sandboxed,
                        nerdr_missing: t.nerdr_missing.clone(),
                    };
                    (t.id.clone(), seen)
                })
                .collect();
            let tabs = match (&named, &folder) {
                (Some(t), _) => {
                    let found = state.tabs.get(t).ok_or_else(|| no_tab(t))?;
                    vec![named_tab(found)]
                }
                (None, Some(f)) => state.session_tabs(f).into_iter().map(named_tab).collect(),
                (None, None) => state.tabs.values().map(named_tab).collect(),
            };
            (tabs, reviewers)
        };
        let store = self.load_reviews().await?;
        let out = tabs
            .into_iter()
            .map(|(id, name, program)| TabReviews {
                program,
                // The reviewer's words made printable: the person's
                // terminal, a JSON reader and the author never get them raw.
                reviews: store.reviews_of(&id).iter().map(ShownReview::of).collect(),
                requested: store
                    .pending
                    .iter()
                    // Posted, it is among the reviews.
                    .filter(|(_, p)| p.author == id && p.posted.is_none())
                    .map(|(reviewer, p)| {
                        let facts = status::Facts {
                            posted: p.posted,
                            reviewer: reviewers.get(reviewer).map(|t| status::Reviewer {
                                tab: reviewer,
                                agent: &p.agent,
                                state: run_of(t.state),
                                exit_code: t.exit_code,
                                sandboxed: t.sandboxed,
                                nerdr_missing: t.nerdr_missing.as_deref(),
                            }),
                        };
                        let status = status::status(&facts);
                        ReviewRequested {
                            reviewer_tab: reviewer.clone(),
                            agent: p.agent.clone(),
                            base: p.base.clone(),
                            head: p.head.clone(),
                            automatic: p.automatic,
                            state: status.state,
                            status: status.words,
                        }
                    })
                    .collect(),
                tab: id,
                name,
            })
            .filter(|r| named.is_some() || !r.reviews.is_empty() || !r.requested.is_empty())
            .collect();
        if let Some(tab) = named.filter(|t| mark_read && store.unread(t) > 0) {
            self.update_reviews(move |s| s.mark_read(&tab)).await?;
            // The windows' marks go.
            self.changed();
        }
        Ok(out)
    }
}

/// Set each tab's unread review count from `unread` (by author tab; a tab
/// not in it has none).
pub(super) fn note_unread(
    state: &mut super::State,
    unread: &std::collections::BTreeMap<String, usize>,
) {
    for (id, t) in state.tabs.iter_mut() {
        t.unread_reviews = unread.get(id).copied().unwrap_or(0);
    }
}

/// What `review::range` checks `posted`'s comments against, for
/// `base..head` in `repo` (blocking git queries).
fn range_facts(
    repo: &Path,
    base: &str,
    head: &str,
    posted: &format::Posted,
) -> Result<range::Facts, String> {
    let tree = |commit: &str| {
        crate::git::query_bytes(repo, &["ls-tree", "-r", "-z", "-l", "--full-tree", commit])
            .map(|b| range::parse_tree(&b))
            .map_err(|e| {
                format!(
                    "cannot read commit {} of the reviewed range in {}: {e}",
                    crate::review::short(commit),
                    repo.display()
                )
            })
    };
    let (base_tree, head_tree) = (tree(base)?, tree(head)?);
    let changed = range::changed(&base_tree, &head_tree);
    let mut at_head = BTreeMap::new();
    for file in posted.comments.iter().map(|c| &c.file) {
        if at_head.contains_key(file) || !changed.contains(file) {
            continue;
        }
        let Some(entry) = head_tree.get(file) else {
            continue;
        };
        let count = match entry.size {
            Some(size) if entry.kind == "blob" && size <= range::MAX_COUNTED => {
                let bytes = crate::git::query_bytes(repo, &["cat-file", "blob", &entry.object])
                    .map_err(|e| {
                        format!(
                            "cannot read {file:?} at {}: {e}",
                            crate::review::short(head)
                        )
                    })?;
                Some(range::count_lines(&bytes))
            }
            _ => None,
        };
        at_head.insert(file.clone(), count);
    }
    Ok(range::Facts {
        base: base.to_string(),
        head: head.to_string(),
        changed,
        at_head,
    })
}

/// What a review's status reads of a reviewer's tab.
struct ReviewerTab {
    state: TabState,
    exit_code: Option<i32>,
    sandboxed: bool,
    nerdr_missing: Option<String>,
}

/// A tab's id, name, and the program it runs when it is one.
fn named_tab(t: &super::state::Tab) -> (String, String, Option<String>) {
    let program = t.program.then(|| t.agent.clone());
    (t.id.clone(), t.name.clone(), program)
}

/// A tab's state as `review::status` reads it.
fn run_of(state: TabState) -> status::Run {
    match state {
        TabState::Starting => status::Run::Starting,
        TabState::Running => status::Run::Running,
        TabState::Exited => status::Run::Exited,
        TabState::Refused => status::Run::Refused,
    }
}
