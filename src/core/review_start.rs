//! Starting a reviewer on an author tab's work (`nerdr request-review`, and
//! `[review] automatic`): gather the facts off the async workers (the
//! author's branch and range, the config's agents), let the pure
//! `review::choice` pick the reviewer, then start it as any agent is
//! started, in a tab of its own in the author's session.
//!
//! The reviewer's view of the work: a worktree of its own on a new branch
//! `nerdr/<reviewer tab>` at the author's head (made through the git guard,
//! like every tab's), so it reads exactly the commits reviewed, nothing it
//! does touches the author's worktree or branch, and removing it follows
//! the rules of any tab's worktree (`nerdr close --remove-worktree`).
//! Uncommitted changes of the author are not in it: a review is of
//! commits. The range is `base..head`: `head` the author's branch, `base`
//! where it forked from the main checkout's `HEAD` (`git merge-base`).
//!
//! Once the reviewer waits at its prompt its first prompt is typed
//! (`review::first_prompt`, by `super::first_prompt`): the range and how
//! to answer with `nerdr post-review`. A reviewer that never got it (its sandbox check refused
//! it) gets it when `nerdr restart` starts it again. Its tab is named
//! after the author's name and id (`review::reviewer_name`:
//! `review-claude-1-ab12`), so it points at the right tab after the
//! author closes and another takes its name.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::not_found::no_tab;
use super::state::Worktree;
use super::Core;
use crate::agents::Mode;
use crate::protocol::api::{ApiError, ErrorCode, TabKind};
use crate::protocol::replies::ReviewStarted;
use crate::review::choice::{self, Available, Choice};
use crate::review::store::{self, Pending};

/// The author tab as the review needs it.
pub(super) struct Author {
    pub(super) id: String,
    /// What the person calls it: the reviewer is named after it.
    pub(super) name: String,
    pub(super) agent: String,
    pub(super) sandboxed: bool,
    pub(super) folder: PathBuf,
    pub(super) worktree: Worktree,
    /// Its line of starters (`privilege::link`).
    pub(super) line: Vec<String>,
}

/// What is reviewed: commits `base..head` of `branch`.
#[derive(Debug, Clone)]
pub(super) struct Range {
    pub(super) base: String,
    pub(super) head: String,
}

impl Core {
    /// `nerdr request-review [TAB] [--reviewer AGENT]`.
    pub(super) async fn request_review(
        self: &Arc<Self>,
        caller: &Caller,
        tab: Option<String>,
        asked: Option<String>,
        env: Vec<(String, String)>,
    ) -> Result<ReviewStarted, ApiError> {
        let tab = tab
            .or_else(|| caller.tab().map(str::to_owned))
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    "name the tab whose work is to be reviewed: `nerdr request-review TAB` (from \
                 inside a tab, that tab is the default)",
                )
            })?;
        self.start_review(caller, &tab, asked, env, false).await
    }

    /// The author tab `tab`, if it is an agent with a worktree of its own.
    pub(super) fn author_of(&self, tab: &str) -> Result<Author, ApiError> {
        let state = self.state.lock().unwrap();
        let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
        if t.kind != TabKind::Agent {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("tab {tab} is a terminal: only an agent's work is reviewed"),
            ));
        }
        let worktree = t.worktree.clone().ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "tab {tab} has no worktree of its own (started outside a git repository, \
                     or with --no-worktree): there is no branch of its work to review"
                ),
            )
        })?;
        Ok(Author {
            id: t.id.clone(),
            name: t.name.clone(),
            agent: t.agent.clone(),
            sandboxed: t.sandboxed,
            folder: t.folder.clone(),
            worktree,
            line: t.started_by.clone(),
        })
    }

    /// Why tab `author` cannot get another reviewer now: one of its
    /// reviewers still runs without having posted. One at a time per
    /// author, so an agent committing in a loop cannot start reviewer
    /// after reviewer (review finding F3).
    pub(super) async fn review_under_way(&self, author: &str) -> Result<Option<String>, ApiError> {
        let store = self.load_reviews().await?;
        let state = self.state.lock().unwrap();
        Ok(store
            .pending
            .iter()
            .filter(|(_, p)| p.author == author && p.posted.is_none())
            .find_map(|(reviewer, p)| {
                let t = state.tabs.get(reviewer)?;
                matches!(
                    t.state,
                    crate::protocol::api::TabState::Starting
                        | crate::protocol::api::TabState::Running
                )
                .then(|| {
                    format!(
                        "tab {author} is being reviewed already, by tab {reviewer} ({}); \
                         one reviewer at a time: wait for its review (`nerdr reviews \
                         {author}`), or close tab {reviewer} (the user can: an author's \
                         agent may not close its reviewer)",
                        p.agent
                    )
                })
            }))
    }

    /// The author's range, read off the async workers.
    pub(super) async fn range_of(&self, author: &Author) -> Result<Range, ApiError> {
        let (repo, branch, tab) = (
            author.worktree.repo.clone(),
            author.worktree.branch.clone(),
            author.id.clone(),
        );
        let recorded = author.worktree.recorded_base();
        let read = super::edge::gather("reading a tab's branch for a review", move || {
            range(&repo, &branch, &tab, recorded)
        })
        .await;
        read.map_err(|why| ApiError::new(ErrorCode::BadRequest, why))
    }

    /// Start a reviewer on tab `tab`'s work; `automatic` when
    /// `[review] automatic` asked, not a person or an agent.
    pub(super) async fn start_review(
        self: &Arc<Self>,
        caller: &Caller,
        tab: &str,
        asked: Option<String>,
        env: Vec<(String, String)>,
        automatic: bool,
    ) -> Result<ReviewStarted, ApiError> {
        let author = self.author_of(tab)?;
        let range = self.range_of(&author).await?;
        if let Some(why) = self.review_under_way(&author.id).await? {
            return Err(ApiError::new(ErrorCode::Denied, why));
        }
        let file = self.paths.config_file();
        let config = super::edge::gather("reading the config for a review", move || {
            crate::config::load(&file).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Config, e))?;
        let agents = available(&config);
        let choice = choice::choose(&choice::Facts {
            author_sandboxed: author.sandboxed,
            author_agent: &author.agent,
            configured: config.review.agent.as_deref(),
            asked: asked.as_deref(),
            agents: &agents,
        });
        let (name, replaced) = match choice {
            Choice::Start { agent, replaced } => (agent, replaced),
            Choice::Refuse(why) => {
                return Err(ApiError::new(
                    ErrorCode::Denied,
                    format!("no review of tab {tab}: {why}"),
                ))
            }
        };
        let agent = config
            .resolve_agent(&name)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let extra = config.review.args_for(&name).to_vec();
        let caller_env = self.environment_for(caller, env);
        let id = self.new_tab_id();
        // Decided before a worktree is made, from the session folder as a
        // launch there is: never from the author's worktree, where a
        // sandboxed author's files would pass for the person's (a relative
        // wrapper there ran on the host: review finding F1).
        let command = self
            .command_for(
                &agent,
                extra,
                Mode::New,
                None,
                &caller_env,
                &author.folder,
                false,
            )
            .await?;
        // Recorded before it starts: a reviewer that goes idle at once is
        // never taken for an author with new commits.
        let pending = Pending {
            author: author.id.clone(),
            agent: agent.name.clone(),
            base: range.base.clone(),
            head: range.head.clone(),
            branch: author.worktree.branch.clone(),
            sandboxed: agent.sandboxed,
            automatic,
            posted: None,
            prompted: false,
            author_line: author.line.clone(),
        };
        let key = id.clone();
        self.update_reviews(move |s| s.requested(&key, pending))
            .await?;
        let worktree = self
            .review_worktree(
                &author.worktree.repo,
                &range.head,
                &author.worktree.branch,
                &id,
            )
            .await;
        let worktree = match worktree {
            Ok(w) => w,
            Err(e) => {
                self.forget_review(&id).await;
                return Err(e);
            }
        };
        // Named after the author's tab (`review-claude-1-ab12`), not as any
        // agent's next tab: the name the new tab takes when it is recorded.
        {
            let mut state = self.state.lock().unwrap();
            let taken: Vec<String> = state
                .session_tabs(&author.folder)
                .into_iter()
                .map(|t| t.name.clone())
                .collect();
            let name = crate::review::reviewer_name(
                &author.name,
                &author.id,
                taken.iter().map(String::as_str),
            );
            state.kept_names.insert(id.clone(), name);
        }
        let mut fresh = FreshWorktree::new(self, &id, Some(worktree.clone()));
        let started = self
            .launch(
                caller,
                command.new_tab(
                    &id,
                    author.folder.clone(),
                    worktree.path.clone(),
                    Some(worktree),
                    &agent,
                    caller_env,
                ),
                &mut fresh,
            )
            .await;
        // Refused by its sandbox check: the tab stays (for `nerdr restart`,
        // which types its first prompt then), and so does its record.
        let started = match self.kept_if_refused(&id, fresh.settle(started).await) {
            Ok(s) => s,
            Err(e) => {
                self.forget_review(&id).await;
                return Err(e);
            }
        };
        tracing::info!(author = %author.id, reviewer = %started.tab, agent = %agent.name,
            base = %range.base, head = %range.head, automatic, "review requested");
        // A reviewer its sandbox check refused gets it once restarted.
        if started.refused.is_none() {
            let prompt = crate::review::first_prompt(
                &author.id,
                &author.worktree.branch,
                &range.base,
                &range.head,
            );
            let (core, tab) = (self.clone(), started.tab.clone());
            tokio::spawn(async move { core.type_review_prompt(&tab, prompt).await });
        }
        Ok(ReviewStarted {
            tab: started.tab,
            agent: agent.name,
            author: author.id,
            base: range.base,
            head: range.head,
            replaced,
            refused: started.refused,
        })
    }

    /// Tab `tab` started again (`nerdr restart`): a reviewer that never
    /// got its first prompt (its sandbox check refused it, or it never
    /// reached its prompt) gets it now.
    pub(super) fn review_restarted(self: &Arc<Self>, tab: &str) {
        let (core, tab) = (self.clone(), tab.to_string());
        tokio::spawn(async move {
            let store = match core.load_reviews().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(tab = %tab, error = %e.message, "reviews.json unread after a restart");
                    return;
                }
            };
            let Some(p) = store.unprompted(&tab) else {
                return;
            };
            tracing::info!(reviewer = %tab, author = %p.author, "typing a restarted reviewer's first prompt");
            let prompt = crate::review::first_prompt(&p.author, &p.branch, &p.base, &p.head);
            core.type_review_prompt(&tab, prompt).await;
        });
    }

    /// A launch's answer where a start its sandbox check refused counts as
    /// started (`refused` says why): the tab is there for `nerdr restart`.
    pub(super) fn kept_if_refused(
        &self,
        id: &str,
        launched: Result<crate::protocol::replies::Started, ApiError>,
    ) -> Result<crate::protocol::replies::Started, ApiError> {
        match launched {
            Err(e) if self.is_refused_tab(id) => Ok(crate::protocol::replies::Started {
                tab: id.to_string(),
                refused: Some(e.message),
                session: None,
            }),
            launched => launched,
        }
    }

    /// Whether tab `id` is there, left refused by its sandbox check.
    fn is_refused_tab(&self, id: &str) -> bool {
        let state = self.state.lock().unwrap();
        state
            .tabs
            .get(id)
            .is_some_and(|t| t.state == crate::protocol::api::TabState::Refused)
    }

    /// The reviewer's own worktree at `head`, on branch `nerdr/<tab>`.
    async fn review_worktree(
        &self,
        repo: &Path,
        head: &str,
        branch: &str,
        tab: &str,
    ) -> Result<Worktree, ApiError> {
        let (paths, repo, head, branch, tab) = (
            self.paths.clone(),
            repo.to_path_buf(),
            head.to_string(),
            branch.to_string(),
            tab.to_string(),
        );
        super::edge::gather("making a reviewer's worktree", move || {
            review_worktree(&paths, &repo, &head, &branch, &tab)
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("worktree: {e}")))
    }

    /// Once reviewer `tab` waits at its prompt, type its first prompt
    /// (`first_prompt`), and record that it was.
    async fn type_review_prompt(self: Arc<Self>, tab: &str, prompt: String) {
        let typed = self
            .type_first_prompt(
                tab,
                prompt,
                "the review's first prompt",
                "`nerdr reviews` shows the range",
            )
            .await;
        if typed {
            let key = tab.to_string();
            let _ = self.update_reviews(move |s| s.prompted(&key)).await;
        }
    }

    /// Read, change and write `reviews.json`, off the async workers; the
    /// state's mirror of who reviews whom follows (`review_links`).
    pub(super) async fn update_reviews<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut store::Store) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let path = store::file(&self.paths.state_dir);
        // Pruned first: a reviewer recorded now is not a tab yet.
        let live: std::collections::BTreeSet<String> =
            self.state.lock().unwrap().tabs.keys().cloned().collect();
        let (out, unread, seq, links) = super::edge::gather("updating reviews.json", move || {
            store::update(&path, |s| {
                s.prune(&live);
                let out = change(s);
                (
                    out,
                    s.unread_counts(),
                    super::review_links::next_seq(),
                    s.author_of(),
                )
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        {
            let mut state = self.state.lock().unwrap();
            super::review_posts::note_unread(&mut state, &unread);
            state.review_links.set(seq, links);
        }
        Ok(out)
    }

    /// Mirror who reviews whom from `reviews.json` as it is (at start: a
    /// restarted core's reviewers stay their authors'). A store that does
    /// not read leaves none, and says why.
    pub(super) async fn mirror_review_links(&self) {
        let path = store::file(&self.paths.state_dir);
        let read = super::edge::gather("reading reviews.json", move || {
            store::read(&path, |s| (super::review_links::next_seq(), s.author_of()))
        })
        .await;
        match read {
            Ok((seq, links)) => self.state.lock().unwrap().review_links.set(seq, links),
            Err(e) => {
                tracing::warn!(error = %e, "reviews.json unread: no reviewer is known as one")
            }
        }
    }

    /// The reviews as they are on disk, off the async workers.
    pub(super) async fn load_reviews(&self) -> Result<store::Store, ApiError> {
        let path = store::file(&self.paths.state_dir);
        super::edge::gather("reading reviews.json", move || store::load(&path))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))
    }

    /// A reviewer that never started is no reviewer.
    async fn forget_review(&self, reviewer: &str) {
        self.state.lock().unwrap().kept_names.remove(reviewer);
        let reviewer = reviewer.to_string();
        let _ = self
            .update_reviews(move |s| {
                s.pending.remove(&reviewer);
            })
            .await;
    }
}

/// Every agent the config can start, for the choice.
pub(super) fn available(config: &crate::config::Config) -> Vec<Available> {
    let mut names: Vec<String> = crate::config::builtin_names()
        .iter()
        .map(|n| n.to_string())
        .collect();
    let configured: Vec<String> = config
        .agents
        .keys()
        .filter(|k| !names.contains(k))
        .cloned()
        .collect();
    names.extend(configured);
    names
        .into_iter()
        .filter_map(|name| {
            let a = config.resolve_agent(&name).ok()?;
            Some(Available {
                name,
                sandboxed: a.sandboxed,
                kind: a.detect,
            })
        })
        .collect()
}

/// `base..head` of tab `tab`'s `branch` in `repo` (blocking git): from
/// the commit its worktree was made from when that was recorded
/// (`git::base`), else from its merge base with the main checkout's HEAD.
fn range(
    repo: &Path,
    branch: &str,
    tab: &str,
    recorded: Option<crate::git::base::Recorded>,
) -> Result<Range, String> {
    let spec = format!("refs/heads/{branch}^{{commit}}");
    let head =
        crate::git::query(repo, &["rev-parse", "--verify", "--quiet", &spec]).map_err(|_| {
            format!(
                "tab {tab}'s branch {branch} is gone from {}",
                repo.display()
            )
        })?;
    let base = crate::git::base::resolve(recorded, repo, branch)
        .map_err(|e| {
            format!(
                "tab {tab}'s branch {branch} shares no history with {}'s HEAD: {e}",
                repo.display()
            )
        })?
        .commit;
    if base == head {
        return Err(format!(
            "tab {tab} has no commits of its own on {branch} yet: nothing to review (a review \
             is of commits; uncommitted changes are not in it)"
        ));
    }
    Ok(Range { base, head })
}

/// Make the reviewer's worktree at the author's `head` (blocking git,
/// through the guard). Its base is that head and the author's `branch`:
/// `nerdr diff` of the reviewer shows only what the reviewer changed, and
/// a reviewer that changed nothing counts as merged, so `nerdr clean` can
/// take its worktree once it is closed.
pub(super) fn review_worktree(
    paths: &crate::paths::Paths,
    repo: &Path,
    head: &str,
    branch: &str,
    tab: &str,
) -> Result<Worktree, String> {
    let found = crate::git::worktree::repo_of(repo)
        .ok_or_else(|| format!("{} is no git repository any more", repo.display()))?;
    let base = crate::git::base::Recorded {
        commit: head.to_string(),
        branch: Some(branch.to_string()),
    };
    let made =
        crate::git::worktree::create_at(paths, &found, tab, base).map_err(|e| e.to_string())?;
    Ok(Worktree {
        path: made.path,
        repo: found.toplevel,
        branch: crate::git::worktree::branch(tab),
        base: Some(made.base.commit),
        base_branch: made.base.branch,
    })
}
