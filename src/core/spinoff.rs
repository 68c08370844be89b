//! Starting a spinoff (`nerdr spinoff`): gather the facts off the async
//! workers (the parent's worktree, HEAD and uncommitted changes, the
//! config's agents), let the pure `spinoff::choice` pick the agent, then
//! start it as any agent is started, in a tab of its own in the parent's
//! session, on a new branch `nerdr/<tab>` at the parent's HEAD (its base
//! recorded as that commit and the parent's branch, so `nerdr merge` of
//! the spinoff takes its work to the parent's branch). The task is typed
//! as its first prompt once it is idle (`first_prompt`); the record in
//! `spinoffs.json` ties it to its parent, for its results
//! (`spinoff_results`).

use std::path::PathBuf;
use std::sync::Arc;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::not_found::no_tab;
use super::privilege::CallerKind;
use super::state::Worktree;
use super::Core;
use crate::agents::Mode;
use crate::protocol::api::{ApiError, ErrorCode, SpinOff, TabInfo, TabKind};
use crate::protocol::spinoffs::SpunOff;
use crate::spinoff::choice::{self, Choice};
use crate::spinoff::store::{self, Spinoff};

/// The parent tab as the spinoff needs it.
struct Parent {
    id: String,
    agent: String,
    program: bool,
    sandboxed: bool,
    folder: PathBuf,
    worktree: Worktree,
}

/// The parent's worktree as it is now.
struct Head {
    commit: String,
    uncommitted: usize,
}

impl Core {
    /// `nerdr spinoff [--from TAB] [--agent NAME] [--name N] TASK`.
    pub(super) async fn spin_off(
        self: &Arc<Self>,
        caller: &Caller,
        req: SpinOff,
    ) -> Result<SpunOff, ApiError> {
        if let Some(why) = crate::spinoff::task_refused(&req.task) {
            return Err(ApiError::new(ErrorCode::BadRequest, why));
        }
        let from = req
            .from
            .clone()
            .or_else(|| caller.tab().map(str::to_owned))
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    "name the tab to spin off from: `nerdr spinoff --from TAB TASK` (from inside \
                     a tab, that tab is the default)",
                )
            })?;
        let parent = self.spinoff_parent(&from)?;
        let head = self.parent_head(&parent).await?;
        let file = self.paths.config_file();
        let config = super::edge::gather("reading the config for a spinoff", move || {
            crate::config::load(&file).map_err(|e| e.to_string())
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Config, e))?;
        let agents = super::review_start::available(&config);
        let own_kind = agents
            .iter()
            .find(|a| a.name == parent.agent)
            .map(|a| a.kind.clone());
        // The caller's standing counts as much as the parent's: a
        // sandboxed caller is never the way to an unsandboxed agent.
        let sandboxed = parent.sandboxed || caller.kind() == CallerKind::Sandboxed;
        let choice = choice::choose(&choice::Facts {
            parent_sandboxed: sandboxed,
            parent_agent: (!parent.program).then_some(parent.agent.as_str()),
            parent_kind: own_kind.as_deref(),
            asked: req.agent.as_deref(),
            agents: &agents,
        });
        let (name, instead) = match choice {
            Choice::Start { agent, instead } => (agent, instead),
            Choice::Refuse(why) => {
                return Err(ApiError::new(
                    ErrorCode::Denied,
                    format!("no spinoff of tab {}: {why}", parent.id),
                ))
            }
        };
        let agent = config
            .resolve_agent(&name)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let caller_env = self.environment_for(caller, req.env.clone());
        let id = self.new_tab_id();
        if let Some(n) = &req.name {
            let state = self.state.lock().unwrap();
            let taken: Vec<&str> = state
                .session_tabs(&parent.folder)
                .into_iter()
                .map(|t| t.name.as_str())
                .collect();
            let by_sandboxed = caller.kind() == CallerKind::Sandboxed;
            super::handles::check_name(n, &taken, by_sandboxed)?;
        }
        // From the session folder, as any launch there: never from the
        // parent's worktree, where a sandboxed parent's files would pass
        // for the person's.
        let command = self
            .command_for(
                &agent,
                Vec::new(),
                Mode::New,
                None,
                &caller_env,
                &parent.folder,
                false,
            )
            .await?;
        let branch = crate::git::worktree::branch(&id);
        // Recorded before it starts: its results have a parent from the
        // first moment it could report.
        let record = Spinoff {
            parent: parent.id.clone(),
            agent: agent.name.clone(),
            sandboxed: agent.sandboxed,
            base: head.commit.clone(),
            branch: branch.clone(),
            task: req.task.clone(),
            prompted: false,
            prompted_at: None,
            results: Vec::new(),
        };
        let key = id.clone();
        self.update_spinoffs(move |s| s.started(&key, record))
            .await?;
        let worktree = {
            let (paths, repo, commit, on, tab) = (
                self.paths.clone(),
                parent.worktree.repo.clone(),
                head.commit.clone(),
                parent.worktree.branch.clone(),
                id.clone(),
            );
            super::edge::gather("making a spinoff's worktree", move || {
                super::review_start::review_worktree(&paths, &repo, &commit, &on, &tab)
            })
            .await
            .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("worktree: {e}")))
        };
        let worktree = match worktree {
            Ok(w) => w,
            Err(e) => {
                self.forget_spinoff(&id).await;
                return Err(e);
            }
        };
        if let Some(n) = &req.name {
            self.state
                .lock()
                .unwrap()
                .kept_names
                .insert(id.clone(), n.clone());
        }
        let mut fresh = FreshWorktree::new(self, &id, Some(worktree.clone()));
        let started = self
            .launch(
                caller,
                command
                    .new_tab(
                        &id,
                        parent.folder.clone(),
                        worktree.path.clone(),
                        Some(worktree),
                        &agent,
                        caller_env,
                    )
                    // Its starter's, and its parent's, whose work it carries
                    // on and to whom it reports: a spinoff of an author is the
                    // author (F4 one hop away; SECURITY.md).
                    .started_by(self.line_of(caller.tab().into_iter().chain([parent.id.as_str()]))),
                &mut fresh,
            )
            .await;
        // Refused by its sandbox check: the tab stays (for `nerdr restart`,
        // which types its first prompt then), and so does its record.
        let started = match self.kept_if_refused(&id, fresh.settle(started).await) {
            Ok(s) => s,
            Err(e) => {
                self.forget_spinoff(&id).await;
                return Err(e);
            }
        };
        tracing::info!(parent = %parent.id, tab = %started.tab, agent = %agent.name,
            base = %head.commit, uncommitted = head.uncommitted, "spun off");
        if started.refused.is_none() {
            let prompt = crate::spinoff::first_prompt(&req.task, &parent.id, &branch);
            let (core, tab) = (self.clone(), started.tab.clone());
            tokio::spawn(async move { core.type_spinoff_prompt(&tab, prompt).await });
        }
        Ok(SpunOff {
            tab: started.tab,
            agent: agent.name,
            parent: parent.id,
            branch,
            base: head.commit,
            uncommitted: head.uncommitted,
            instead,
            refused: started.refused,
        })
    }

    /// The agent tab `tab` (for a terminal, the agent tab it was opened
    /// in), if it has a worktree of its own to branch from.
    fn spinoff_parent(&self, tab: &str) -> Result<Parent, ApiError> {
        let state = self.state.lock().unwrap();
        let mut t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
        if t.kind == TabKind::Terminal {
            let parent = t.parent.as_deref().unwrap_or_default();
            t = state.tabs.get(parent).ok_or_else(|| no_tab(parent))?;
        }
        let worktree = t.worktree.clone().ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "tab {} has no worktree of its own (started outside a git repository, or \
                     with --no-worktree): there is no branch to spin off from",
                    t.id
                ),
            )
        })?;
        Ok(Parent {
            id: t.id.clone(),
            agent: t.agent.clone(),
            program: t.program,
            sandboxed: t.sandboxed,
            folder: t.folder.clone(),
            worktree,
        })
    }

    /// The parent's HEAD and its uncommitted paths, off the async workers
    /// (host git, through the guard where the repository needs it).
    async fn parent_head(&self, parent: &Parent) -> Result<Head, ApiError> {
        let (paths, dir, tab) = (
            self.paths.clone(),
            parent.worktree.path.clone(),
            parent.id.clone(),
        );
        let ignore_base = parent.worktree.ignore_base();
        super::edge::gather("reading a spinoff's parent worktree", move || {
            let commit = crate::git::query(&dir, &["rev-parse", "--verify", "HEAD^{commit}"])
                .map_err(|e| format!("tab {tab}'s worktree {} has no HEAD: {e}", dir.display()))?;
            let uncommitted = crate::git::unsaved::changes(&paths, &dir, ignore_base.as_deref())
                .map_err(|e| format!("cannot read tab {tab}'s uncommitted changes: {e}"))?
                .len();
            Ok(Head {
                commit,
                uncommitted,
            })
        })
        .await
        .map_err(|why: String| ApiError::new(ErrorCode::BadRequest, why))
    }

    /// Once spun-off tab `tab` waits at its prompt, type its task, and
    /// record that it was.
    async fn type_spinoff_prompt(self: Arc<Self>, tab: &str, prompt: String) {
        let typed = self
            .type_first_prompt_at(
                tab,
                prompt,
                "the spinoff's task",
                "`nerdr spinoffs` shows the task",
            )
            .await;
        if let Some(at) = typed {
            let key = tab.to_string();
            let _ = self
                .update_spinoffs(move |s| {
                    if let Some(r) = s.spinoffs.get_mut(&key) {
                        r.prompted = true;
                        r.prompted_at = Some(crate::spinoff::due::millis(at));
                    }
                })
                .await;
        }
    }

    /// Tab `tab` started again (`nerdr restart`): a spinoff that never got
    /// its task gets it now, and a parent gets the results waiting for it.
    pub(super) fn spinoff_restarted(self: &Arc<Self>, tab: &str) {
        let (core, tab) = (self.clone(), tab.to_string());
        tokio::spawn(async move {
            let store = match core.load_spinoffs().await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(tab = %tab, error = %e.message, "spinoffs.json unread after a restart");
                    return;
                }
            };
            if let Some(s) = store.spinoffs.get(&tab).filter(|s| !s.prompted) {
                let prompt = crate::spinoff::first_prompt(&s.task, &s.parent, &s.branch);
                core.clone().type_spinoff_prompt(&tab, prompt).await;
            }
            if !store.waiting_for(&tab).is_empty() {
                core.deliver_waiting(&tab).await;
            }
        });
    }

    /// Tab `tab` runs a new agent (`nerdr switch`): the results kept for
    /// it go to the new agent once it waits at its prompt.
    pub(super) async fn deliver_waiting_if_any(self: &Arc<Self>, tab: &str) {
        match self.load_spinoffs().await {
            Ok(store) if !store.waiting_for(tab).is_empty() => self.deliver_waiting(tab).await,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(tab = %tab, error = %e.message, "spinoffs.json unread after a switch")
            }
        }
    }

    /// Read, change and write `spinoffs.json`, off the async workers; the
    /// tab list's links follow.
    pub(super) async fn update_spinoffs<T: Send + 'static>(
        &self,
        change: impl FnOnce(&mut store::Store) -> T + Send + 'static,
    ) -> Result<T, ApiError> {
        let path = store::file(&self.paths.state_dir);
        let live: std::collections::BTreeSet<String> =
            self.state.lock().unwrap().tabs.keys().cloned().collect();
        let (out, links) = super::edge::gather("updating spinoffs.json", move || {
            store::update(&path, |s| {
                s.prune(&live);
                let out = change(s);
                (out, s.links())
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        self.state.lock().unwrap().spinoffs = links;
        self.changed();
        Ok(out)
    }

    /// The spinoffs as they are on disk, off the async workers.
    pub(super) async fn load_spinoffs(&self) -> Result<store::Store, ApiError> {
        let path = store::file(&self.paths.state_dir);
        super::edge::gather("reading spinoffs.json", move || store::load(&path))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))
    }

    /// A spinoff that never started is no spinoff.
    async fn forget_spinoff(&self, tab: &str) {
        self.state.lock().unwrap().kept_names.remove(tab);
        let tab = tab.to_string();
        let _ = self
            .update_spinoffs(move |s| {
                s.spinoffs.remove(&tab);
            })
            .await;
    }
}

/// A row of `nerdr tabs` (and of a window's list) for tab `t`, with what
/// `links` has of spinoffs for it: its parent, the results waiting for it,
/// and whether its turn ended with no report (`spinoff::due`).
pub(super) fn marked(links: &store::Links, t: &super::state::Tab) -> TabInfo {
    let mut info = t.info();
    info.spun_off_from = links.parent_of.get(&info.id).cloned();
    info.results_waiting = links.waiting.get(&info.id).copied().unwrap_or(0);
    info.report_due = crate::spinoff::due::report_due(&crate::spinoff::due::Facts {
        spun_off: info.spun_off_from.is_some(),
        prompted_at: links.unreported.get(&info.id).copied(),
        // Only the unreported are listed with when their task was typed.
        reported: !links.unreported.contains_key(&info.id),
        turn_ended: matches!(
            t.agent_state(),
            Some(crate::protocol::api::AgentState::Idle | crate::protocol::api::AgentState::Done)
        ),
        ended: t.detection.as_ref().and_then(|d| d.tracker.turn_ended_at()),
    });
    info
}
