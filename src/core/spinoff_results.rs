//! Results coming back from spinoffs: `nerdr report-result` (taken only
//! from a tab `nerdr spinoff` started, about itself), carried to its
//! parent as a message the way `nerdr send` types one, or kept with the
//! parent's record until `nerdr restart` starts it again, or put to the
//! user first (`spinoff::delivery` decides); and `nerdr spinoffs`.

use std::path::PathBuf;
use std::sync::Arc;

use super::caller::Caller;
use super::privilege::CallerKind;
use super::question::{Approval, Asked};
use super::Core;
use crate::protocol::api::{AgentState, ApiError, ErrorCode, ReportResult, TabKind, TabState};
use crate::protocol::spinoffs::{ResultTaken, SpinoffInfo};
use crate::spinoff::delivery::{self, Delivery, Parent};
use crate::spinoff::store::{Held, Spinoff};

impl Core {
    /// `nerdr report-result`: from spun-off tab `caller` about itself, or
    /// (`req.tab`) for the spun-off tab named, by the person for any, by a
    /// program only for its own (the privilege matrix checked it). With
    /// no text, a named tab's result is its agent's last answer.
    pub(super) async fn report_result(
        self: &Arc<Self>,
        caller: &Caller,
        req: ReportResult,
    ) -> Result<ResultTaken, ApiError> {
        // The client refuses it too; a caller need not be nerdr's client.
        if let Some(why) = crate::spinoff::report_too_long(req.text.len()) {
            return Err(ApiError::new(ErrorCode::BadRequest, why));
        }
        let store = self.load_spinoffs().await?;
        let tab = match &req.tab {
            Some(named) => Some(named.clone()),
            // A terminal of the spun-off tab reports for it.
            None => caller.tab().map(|own| {
                let state = self.state.lock().unwrap();
                match state.tabs.get(own) {
                    Some(t) if t.kind == TabKind::Terminal => t.parent.clone(),
                    _ => None,
                }
                .unwrap_or_else(|| own.to_string())
            }),
        };
        let tab = tab.as_deref();
        let record = tab.and_then(|t| store.spinoffs.get(t)).cloned();
        delivery::may_report(tab, record.is_some())
            .map_err(|why| ApiError::new(ErrorCode::Denied, why))?;
        let (tab, record) = (tab.expect("checked").to_string(), record.expect("checked"));
        let by_person = caller.kind() == CallerKind::User;
        let last_words = req.text.trim().is_empty() && req.tab.is_some();
        let tab_now = self
            .state
            .lock()
            .unwrap()
            .tabs
            .get(&tab)
            .is_some_and(|t| t.sandboxed);
        let text = match (req.text.trim().is_empty(), &req.tab) {
            (false, _) => req.text,
            (true, Some(_)) => {
                crate::spinoff::last_words_text(&self.last_words(&tab, &req.env).await)
            }
            (true, None) => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "the result is empty: say what was done and found",
                ))
            }
        };
        let text = text.as_str();
        let sandboxed = delivery::reported_from_sandbox(
            record.sandboxed,
            caller.kind() == CallerKind::Sandboxed,
            tab_now,
            last_words,
        );
        let (commits, diffstat) = self.work_of(&tab, &record).await;
        let (text, key) = (text.to_string(), tab.clone());
        let (agent, branch, base) = (
            record.agent.clone(),
            record.branch.clone(),
            record.base.clone(),
        );
        let (number, message) = self
            .update_spinoffs(move |s| {
                let mut message = String::new();
                let number = s.report(&key, sandboxed, |number| {
                    message = crate::spinoff::result_message(&crate::spinoff::Result {
                        number,
                        tab: &key,
                        agent: &agent,
                        branch: &branch,
                        base: &base,
                        sandboxed,
                        by_person,
                        text: &text,
                        commits: &commits,
                        diffstat: &diffstat,
                    });
                    message.clone()
                });
                (number, message)
            })
            .await?;
        let number = number.ok_or_else(|| {
            ApiError::new(
                ErrorCode::Denied,
                format!("tab {tab}'s spinoff record is gone (its parent was closed)"),
            )
        })?;
        tracing::info!(tab = %tab, parent = %record.parent, number, sandboxed, by_person,
            "spinoff result reported");
        let (held, why) = self
            .deliver_result(&tab, &record.parent, number, message, sandboxed)
            .await;
        Ok(ResultTaken {
            parent: record.parent,
            number,
            held,
            why,
        })
    }

    /// Carry result `number` of spun-off tab `tab` to `parent` as the
    /// parent is now; where it is after, and why when not delivered.
    pub(super) async fn deliver_result(
        self: &Arc<Self>,
        tab: &str,
        parent: &str,
        number: u32,
        message: String,
        sandboxed: bool,
    ) -> (Held, Option<String>) {
        // An agent nerdr has no screen rules for may be a shell, which runs
        // what is typed: the person approving is told (the recheck found a
        // sandboxed result run as a command line in a shell parent).
        let unknown_agent = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .get(parent)
                .filter(|t| {
                    t.detection
                        .as_ref()
                        .and_then(|d| d.tracker.rules())
                        .is_none()
                })
                .map(|t| t.agent.clone())
        };
        let (seen, parent_sandboxed) = {
            let state = self.state.lock().unwrap();
            match state.tabs.get(parent) {
                None => (Parent::Closed, false),
                Some(t) if t.program || t.kind == TabKind::Terminal => {
                    (Parent::Program, t.sandboxed)
                }
                Some(t) if matches!(t.state, TabState::Exited | TabState::Refused) => {
                    (Parent::Stopped, t.sandboxed)
                }
                Some(t) if t.agent_state() == Some(AgentState::Blocked) => {
                    (Parent::Blocked, t.sandboxed)
                }
                Some(t) => (Parent::Running, t.sandboxed),
            }
        };
        let (held, why) = match delivery::deliver(seen, parent_sandboxed, sandboxed) {
            Delivery::Type => match self.type_message(parent, &message).await {
                Ok(()) => (Held::Delivered, None),
                // Ended meanwhile: kept for its restart.
                Err(e) => (Held::Waiting, Some(e.message)),
            },
            Delivery::Approve(why) => {
                let id = self.new_approval_id();
                let shell = unknown_agent.map_or(String::new(), |a| {
                    format!(
                        " (nerdr has no screen rules for {a}: if it is a shell, this runs as a \
                         command line)"
                    )
                });
                let question = format!(
                    "result {number} from sandboxed spun-off tab {tab} for tab {parent} (outside \
                     every sandbox): \"{}\", then Enter{shell}",
                    crate::protocol::printable(&message)
                );
                let approval = Approval {
                    id: id.clone(),
                    question,
                    tab: tab.to_string(),
                    asked: Asked::Message {
                        to: parent.to_string(),
                        text: format!("{message}\r"),
                    },
                };
                match self.ask(approval) {
                    Ok(()) => (Held::Approval(id), Some(why.to_string())),
                    Err(full) => (Held::Waiting, Some(full.to_string())),
                }
            }
            Delivery::Later(why) => {
                self.deliver_later(tab, parent, number);
                (Held::Waiting, Some(why.to_string()))
            }
            Delivery::Wait(why) => (Held::Waiting, Some(why.to_string())),
        };
        if held != Held::Waiting {
            let (key, to) = (tab.to_string(), held.clone());
            let _ = self.update_spinoffs(move |s| s.set(&key, number, to)).await;
        }
        (held, why)
    }

    /// The person answered approval `id`, a message: a spinoff's result put
    /// to them under it is `held` now (`nerdr spinoffs` said "put to the
    /// user" for ever before).
    pub(super) async fn result_answered(&self, id: &str, held: Held) {
        let id = id.to_string();
        if let Err(e) = self.update_spinoffs(move |s| s.answered(&id, held)).await {
            tracing::warn!(error = %e.message, "a spinoff result's answer is not recorded");
        }
    }

    /// Parent `parent` was started again: once it waits at its prompt,
    /// the results kept for it go to it, oldest first.
    pub(super) async fn deliver_waiting(self: &Arc<Self>, parent: &str) {
        if !self.ready_for_prompt(parent).await {
            tracing::warn!(parent = %parent, "results kept: the restarted parent never reached its prompt");
            return;
        }
        let Ok(store) = self.load_spinoffs().await else {
            return;
        };
        // Each as it was written (recorded with it), whatever its tab runs
        // now or whether it is still open.
        for w in store.waiting_for(parent) {
            let (tab, number) = (w.tab.clone(), w.number);
            // One at a time: each is a turn of the parent's.
            let _ = self.ready_for_prompt(parent).await;
            let (held, _) = self
                .deliver_result(&tab, parent, number, w.message, w.sandboxed)
                .await;
            tracing::info!(parent = %parent, tab = %tab, number, ?held, "kept result carried");
        }
    }

    /// The spun-off tab's commits since its spinoff point and their
    /// diffstat, off the async workers (host git, through the guard). A
    /// git that fails says so in the message rather than holding the
    /// result back.
    async fn work_of(&self, tab: &str, record: &Spinoff) -> (Vec<String>, Vec<String>) {
        let repo = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .get(tab)
                .and_then(|t| t.worktree.as_ref())
                .map(|w| w.repo.clone())
        };
        let Some(repo) = repo else {
            return (Vec::new(), Vec::new());
        };
        let (paths, base, branch) = (
            self.paths.clone(),
            record.base.clone(),
            record.branch.clone(),
        );
        super::edge::gather("reading a spinoff's commits", move || {
            let range = format!("{base}..refs/heads/{branch}");
            let limit = (crate::spinoff::MAX_COMMITS + 1).to_string();
            let lines = |out: String| -> Vec<String> { out.lines().map(str::to_owned).collect() };
            let commits = crate::git::run(
                &paths,
                &repo,
                &[
                    "log",
                    "--oneline",
                    "--no-decorate",
                    "--no-color",
                    "-n",
                    &limit,
                    &range,
                ],
            )
            .map(lines)
            .unwrap_or_else(|e| vec![format!("(git log failed: {e})")]);
            let stat = crate::git::run(
                &paths,
                &repo,
                &[
                    "diff",
                    "--stat=100",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    &base,
                    &format!("refs/heads/{branch}"),
                    "--",
                ],
            )
            .map(lines)
            .unwrap_or_else(|e| vec![format!("(git diff failed: {e})")]);
            (commits, stat)
        })
        .await
    }

    /// `nerdr spinoffs`: the spinoffs of `folder`'s session (every
    /// session's without one); a sandboxed caller's, only those of its own
    /// tab (as parent or spinoff).
    pub(super) async fn list_spinoffs(
        &self,
        caller: &Caller,
        folder: Option<PathBuf>,
    ) -> Result<Vec<SpinoffInfo>, ApiError> {
        let store = self.load_spinoffs().await?;
        let state = self.state.lock().unwrap();
        let own = caller.tab();
        let sandboxed = caller.kind() == CallerKind::Sandboxed;
        let in_session = |id: &str| match &folder {
            Some(f) => state.tabs.get(id).is_some_and(|t| &t.folder == f),
            None => true,
        };
        Ok(store
            .spinoffs
            .into_iter()
            .filter(|(tab, s)| match sandboxed {
                true => own == Some(tab.as_str()) || own == Some(s.parent.as_str()),
                false => in_session(tab) || in_session(&s.parent),
            })
            .map(|(tab, s)| SpinoffInfo {
                open: state.tabs.contains_key(&tab),
                parent_open: state.tabs.contains_key(&s.parent),
                tab,
                parent: s.parent,
                agent: s.agent,
                sandboxed: s.sandboxed,
                branch: s.branch,
                base: s.base,
                task: s.task,
                results: s.results,
            })
            .collect())
    }
}
