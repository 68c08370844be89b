//! `nerdr handoff` and `nerdr handoffs`, the core's side (the pure parts
//! are `crate::handoff`). A handoff's text is the agent's own, else built
//! from its conversation (`handoff::find`, off the async workers). Then:
//! - `--to AGENT`: AGENT starts in a new tab of the same session, in the
//!   handing tab's worktree and branch (the worktree stays the first
//!   tab's: `shared_worktree` keeps it from being removed under another),
//!   and once idle gets the handoff typed as its first prompt, as a
//!   reviewer does (`first_prompt::type_first_prompt`);
//! - `--to-me`: kept in `handoffs.json` (`handoff::store`) and the tab is
//!   marked: `handed_to_you` (the window's `&`, mirrored in
//!   `State::handed`) until `nerdr handoffs --clear`, and its warning.
//!
//! A sandboxed agent's handoff to an agent outside every sandbox waits
//! for the person's yes (the privilege matrix queues it, [`queue_handoff`]
//! asks); the text then carries the sandbox note (`handoff::rules::note`).
//!
//! [`queue_handoff`]: Core::queue_handoff

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::caller::Caller;
use super::fresh_worktree::FreshWorktree;
use super::not_found::no_tab;
use super::privilege::{self, Target};
use super::question::{Approval, Asked, Said};
use super::state::Worktree;
use super::Core;
use crate::agents::Mode;
use crate::handoff::find::Conversation;
use crate::handoff::rules::{self, Reader};
use crate::handoff::store;
use crate::protocol::api::{ApiError, ErrorCode, Handoff, HandoffTo, ListHandoffs, TabKind};
use crate::protocol::replies::{HandedOff, HandoffInfo};

/// How long a queued handoff waits for the person's answer.
const APPROVAL_WAIT: Duration = Duration::from_secs(24 * 3600);

/// The tab handing off (or switched), as the handoff needs it.
#[derive(Debug, Clone)]
pub(super) struct Source {
    pub(super) id: String,
    pub(super) name: String,
    pub(super) agent: String,
    pub(super) program: bool,
    pub(super) sandboxed: bool,
    pub(super) folder: PathBuf,
    pub(super) cwd: PathBuf,
    pub(super) worktree: Option<Worktree>,
    pub(super) session_id: Option<String>,
}

impl Source {
    fn from(&self) -> crate::handoff::From {
        crate::handoff::From {
            tab: format!("{} ({})", self.name, self.id),
            agent: self.agent.clone(),
            worktree: self
                .worktree
                .as_ref()
                .map(|w| (w.path.clone(), w.branch.clone())),
        }
    }
}

impl Core {
    /// Who a handoff goes to, for the privilege matrix: the agent to
    /// start, the caller's own tab for its handoff to the person, nothing
    /// for another tab's conversation (which only the person and
    /// unsandboxed tabs may pass on).
    pub(super) async fn handoff_target(
        &self,
        caller: &Caller,
        h: &Handoff,
    ) -> Result<Target, ApiError> {
        let others = matches!((caller.tab(), h.tab.as_deref()), (Some(own), Some(t)) if own != t);
        if others {
            return Ok(Target::Nothing);
        }
        match &h.to {
            HandoffTo::Me if caller.tab().is_some() => Ok(Target::Own),
            HandoffTo::Me => Ok(Target::Nothing),
            HandoffTo::Agent { name } => {
                let start = match self.settings_of(name).await? {
                    Ok((a, _)) => privilege::Start::Agent {
                        sandboxed: a.sandboxed,
                    },
                    Err(_) => privilege::Start::Unresolved,
                };
                Ok(privilege::start_target(start))
            }
        }
    }

    /// `nerdr handoff`, allowed by the matrix.
    pub(super) async fn handoff(
        self: &Arc<Self>,
        caller: &Caller,
        h: Handoff,
    ) -> Result<HandedOff, ApiError> {
        let src = self.handoff_source(caller, h.tab.as_deref())?;
        let how = rules::give_one(asked(&h));
        let (text, built) = self
            .handoff_text(caller, &src, h.text, &h.env, &how)
            .await?;
        match h.to {
            HandoffTo::Me => self.keep_handoff(&src, text, built).await,
            HandoffTo::Agent { name } => {
                self.hand_to_agent(caller, &src, &name, text, built, h.env)
                    .await
            }
        }
    }

    /// A sandboxed agent's handoff to an agent outside every sandbox: the
    /// text is built now (so the person reads what would be typed), the
    /// agent starts once the person says yes.
    pub(super) async fn queue_handoff(
        self: &Arc<Self>,
        caller: &Caller,
        h: Handoff,
        why: &str,
    ) -> Result<HandedOff, ApiError> {
        let HandoffTo::Agent { name } = h.to.clone() else {
            return Err(ApiError::new(
                ErrorCode::Internal,
                "only a handoff to an agent waits for approval",
            ));
        };
        let src = self.handoff_source(caller, h.tab.as_deref())?;
        let how = rules::give_one(asked(&h));
        let (text, built) = self
            .handoff_text(caller, &src, h.text, &h.env, &how)
            .await?;
        self.room_in_queue(caller, privilege::Operation::Handoff, Some(&src.id))?;
        let id = self.new_approval_id();
        let question = format!(
            "handoff from sandboxed tab {} ({}) to {name} (outside every sandbox), to start in \
             {}, the sandboxed agent's worktree (what it wrote there, an agent's project \
             settings and hooks among it, applies to {name}): \"{}\"",
            src.id,
            src.agent,
            crate::protocol::printable(&src.cwd.display().to_string()),
            crate::protocol::printable(&text),
        );
        let approval = Approval {
            id: id.clone(),
            question,
            tab: src.id.clone(),
            asked: Asked::Handoff {
                agent: name.clone(),
            },
        };
        tracing::info!(from = %src.id, to = %name, approval = %id, "handoff waits for approval");
        let (core, caller2, src2, text2, env) = (
            self.clone(),
            caller.clone(),
            src.clone(),
            text.clone(),
            h.env,
        );
        // Asked here, under the queue's limits; waited for in a task.
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let answer = core.ask_and_wait(approval, APPROVAL_WAIT).await;
            let _ = tx.send(answer.as_ref().err().map(|w| w.to_string()));
            let said = match answer {
                Ok(Some(Said::Yes | Said::Session)) => true,
                Ok(Some(Said::No)) | Ok(None) | Err(_) => false,
            };
            if !said {
                tracing::info!(from = %src2.id, to = %name, "queued handoff not approved");
                return;
            }
            if let Err(e) = core
                .hand_to_agent(&caller2, &src2, &name, text2, built, env)
                .await
            {
                tracing::warn!(from = %src2.id, to = %name, error = %e.message, "approved handoff did not start");
                if let Some(t) = core.state.lock().unwrap().tabs.get_mut(&src2.id) {
                    t.warning = Some(format!(
                        "the approved handoff to {name} did not start: {}",
                        e.message
                    ));
                }
                core.changed();
            }
        });
        // The queue had no room: said at once, not after a day.
        if let Ok(Some(full)) = tokio::time::timeout(Duration::from_millis(200), rx)
            .await
            .map(|r| r.ok().flatten())
        {
            return Err(self.refuse(caller, privilege::Operation::Handoff, Some(&src.id), &full));
        }
        Ok(HandedOff {
            from: src.id,
            agent: None,
            queued: Some(id),
            why: Some(why.to_string()),
            built,
            text,
            ..HandedOff::default()
        })
    }

    /// The tab handing off: `named`, else the caller's own.
    pub(super) fn handoff_source(
        &self,
        caller: &Caller,
        named: Option<&str>,
    ) -> Result<Source, ApiError> {
        let id = named.or(caller.tab()).ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                "name the tab whose work is handed off: `nerdr handoff --from TAB ...` (from \
                 inside a tab, that tab is the default)",
            )
        })?;
        let state = self.state.lock().unwrap();
        let t = state.tabs.get(id).ok_or_else(|| no_tab(id))?;
        if t.kind != TabKind::Agent {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("tab {id} is a terminal: only an agent's conversation is handed off"),
            ));
        }
        Ok(Source {
            id: t.id.clone(),
            name: t.name.clone(),
            agent: t.agent.clone(),
            program: t.program,
            sandboxed: t.sandboxed,
            folder: t.folder.clone(),
            cwd: t.cwd.clone(),
            worktree: t.worktree.clone(),
            session_id: t.session_id.clone(),
        })
    }

    /// The handoff's text (under its heading), and whether nerdr built it.
    pub(super) async fn handoff_text(
        &self,
        caller: &Caller,
        src: &Source,
        written: Option<String>,
        env: &[(String, String)],
        how: &str,
    ) -> Result<(String, bool), ApiError> {
        if let Some(text) = written.filter(|t| !t.trim().is_empty()) {
            if text.len() > crate::handoff::MAX_WRITTEN {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!(
                        "the handoff is {} bytes; at most {} are typed as a prompt: shorten it",
                        text.len(),
                        crate::handoff::MAX_WRITTEN
                    ),
                ));
            }
            return Ok((crate::handoff::written(&src.from(), &text), false));
        }
        let (kind, program) = self.conversation_reader(src).await?;
        let core_env: Vec<(String, String)> = std::env::vars().collect();
        let homes = rules::homes(
            caller.kind() == privilege::CallerKind::Sandboxed,
            env,
            &core_env,
        )
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let conversation = Conversation {
            kind,
            session_id: src.session_id.clone(),
            cwd: src.cwd.clone(),
            program,
        };
        let from = src.from();
        let agent = src.agent.clone();
        let how = how.to_string();
        let built =
            super::edge::gather("reading an agent's conversation for a handoff", move || {
                crate::handoff::find::from_conversation(&conversation, &homes, &from, &how)
            })
            .await
            .map_err(|why| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    format!("no handoff from tab {} ({agent}): {why}", src.id),
                )
            })?;
        Ok((built, true))
    }

    /// Whose rules read the source's conversation (`None`: nobody's, a
    /// custom agent or a program run as it is), and opencode's program.
    pub(super) async fn conversation_reader(
        &self,
        src: &Source,
    ) -> Result<(Option<crate::agents::Kind>, Option<PathBuf>), ApiError> {
        // The agent's built-in rules only for a built-in agent as
        // configured: a custom agent named `claude-work` keeps its own.
        let resolved = match src.program {
            true => None,
            false => self.settings_of(&src.agent).await?.ok().map(|(a, _)| a),
        };
        let kind = resolved
            .as_ref()
            .filter(|a| a.builtin)
            .and_then(|a| crate::agents::Kind::of(&a.name));
        let program = resolved
            .as_ref()
            .and_then(|a| crate::agents::program_word(a).map(PathBuf::from));
        Ok((kind, program))
    }

    /// `--to-me`: kept for `nerdr handoffs`, and the tab marked.
    async fn keep_handoff(
        &self,
        src: &Source,
        text: String,
        built: bool,
    ) -> Result<HandedOff, ApiError> {
        let note = rules::note(src.sandboxed, Reader::Person).map(str::to_string);
        let at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let path = store::file(&self.paths.state_dir);
        let (s, t) = (src.clone(), text.clone());
        let (number, handed) = super::edge::gather("updating handoffs.json", move || {
            store::update(&path, |st| {
                let number = st.next_number();
                st.add(HandoffInfo {
                    number,
                    tab: s.id,
                    name: s.name,
                    agent: s.agent,
                    folder: s.folder,
                    at,
                    text: t,
                    note,
                });
                (number, st.tabs())
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        {
            let mut state = self.state.lock().unwrap();
            state.handed = handed;
            if let Some(t) = state.tabs.get_mut(&src.id) {
                t.warning = Some(handed_warning(number));
            }
        }
        self.changed();
        tracing::info!(from = %src.id, number, built, "handoff kept for the user");
        Ok(HandedOff {
            from: src.id.clone(),
            kept: Some(number),
            built,
            text,
            ..HandedOff::default()
        })
    }

    /// `--to AGENT`: AGENT in a new tab, in the source's worktree, the
    /// handoff typed once it is idle.
    async fn hand_to_agent(
        self: &Arc<Self>,
        caller: &Caller,
        src: &Source,
        name: &str,
        text: String,
        built: bool,
        env: Vec<(String, String)>,
    ) -> Result<HandedOff, ApiError> {
        let agent = match self.settings_of(name).await? {
            Ok((a, _)) => a,
            Err(e) => return Err(ApiError::new(ErrorCode::Config, e)),
        };
        let reader = match agent.sandboxed {
            true => Reader::SandboxedAgent,
            false => Reader::Agent,
        };
        let note = rules::note(src.sandboxed, reader);
        let caller_env = self.environment_for(caller, env);
        let id = self.new_tab_id();
        // From the session folder, as any launch's program is found (never
        // from the worktree, whose files may be a sandboxed agent's).
        let command = self
            .command_for(
                &agent,
                Vec::new(),
                Mode::New,
                None,
                &caller_env,
                &src.folder,
                false,
            )
            .await?;
        // Not this launch's worktree: a failed launch leaves it alone.
        let mut fresh = FreshWorktree::none();
        let started = self
            .launch(
                caller,
                command
                    .new_tab(
                        &id,
                        src.folder.clone(),
                        src.cwd.clone(),
                        src.worktree.clone(),
                        &agent,
                        caller_env,
                    )
                    // Its starter's, and the source's, whose conversation and
                    // worktree it carries on: an author's handoff is the
                    // author (F4 one hop away; SECURITY.md).
                    .started_by(self.line_of(caller.tab().into_iter().chain([src.id.as_str()]))),
                &mut fresh,
            )
            .await;
        let started = fresh.settle(started).await?;
        tracing::info!(from = %src.id, to = %started.tab, agent = %agent.name, built, "handed off");
        if started.refused.is_none() {
            let by = self.handed_by(caller, src, built);
            let prompt = crate::handoff::as_prompt_from(&text, note, by.as_deref());
            let (core, tab) = (self.clone(), started.tab.clone());
            tokio::spawn(async move {
                core.type_first_prompt(
                    &tab,
                    prompt,
                    "the handoff",
                    "`nerdr handoff --to-me` from the first tab keeps a copy to read",
                )
                .await
            });
        }
        Ok(HandedOff {
            from: src.id.clone(),
            tab: Some(started.tab),
            agent: Some(agent.name),
            built,
            text,
            refused: started.refused,
            ..HandedOff::default()
        })
    }

    /// Who hands the work over, for the receiving agent's first prompt:
    /// the agent whose conversation nerdr built it from, else the agent of
    /// the caller's tab that wrote it, else the person (`None`).
    pub(super) fn handed_by(&self, caller: &Caller, src: &Source, built: bool) -> Option<String> {
        if built {
            return Some(src.agent.clone());
        }
        let tab = caller.tab()?;
        let state = self.state.lock().unwrap();
        Some(state.tabs.get(tab).map_or(&src.agent, |t| &t.agent).clone())
    }

    /// `nerdr handoffs`: the person's, of the session (or all); `clear`
    /// forgets the ones listed.
    pub(super) async fn list_handoffs(
        &self,
        l: ListHandoffs,
    ) -> Result<Vec<HandoffInfo>, ApiError> {
        let path = store::file(&self.paths.state_dir);
        let session = match l.all {
            true => None,
            false => l.folder,
        };
        let clear = l.clear;
        let (listed, handed) = super::edge::gather("reading handoffs.json", move || {
            let mine = |h: &HandoffInfo| session.as_ref().is_none_or(|f| &h.folder == f);
            if !l.clear {
                let s = store::load(&path)?;
                let handed = s.tabs();
                return Ok((s.handoffs.into_iter().filter(|h| mine(h)).collect(), handed));
            }
            store::update(&path, |s| {
                let (gone, kept): (Vec<_>, Vec<_>) = s.handoffs.drain(..).partition(|h| mine(h));
                s.handoffs = kept;
                (gone, s.tabs())
            })
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let marks_moved = {
            let mut state = self.state.lock().unwrap();
            std::mem::replace(&mut state.handed, handed) != state.handed
        };
        if (clear && self.unmark_handed(&listed)) || marks_moved {
            self.changed();
        }
        Ok(listed)
    }

    /// A cleared handoff's mark goes with it: the tab's warning, when it
    /// still names that handoff (a later warning of another kind stays).
    fn unmark_handed(&self, cleared: &[HandoffInfo]) -> bool {
        let mut state = self.state.lock().unwrap();
        let mut changed = false;
        for h in cleared {
            if let Some(t) = state.tabs.get_mut(&h.tab) {
                if t.warning.as_deref() == Some(handed_warning(h.number).as_str()) {
                    t.warning = None;
                    changed = true;
                }
            }
        }
        changed
    }
}

/// A row of `nerdr tabs` (and of a window's list), marked when a handoff
/// of its tab to the person waits (`handed`, `handoffs.json`'s tabs).
pub(super) fn marked(
    handed: &std::collections::BTreeSet<String>,
    mut info: crate::protocol::api::TabInfo,
) -> crate::protocol::api::TabInfo {
    info.handed_to_you = handed.contains(&info.id);
    info
}

/// The mark of a tab whose handoff `number` waits in `nerdr handoffs`.
fn handed_warning(number: u64) -> String {
    format!("handed its work to you: `nerdr handoffs` shows it (number {number})")
}

/// What a `nerdr handoff` asked for, as its suggestions name it.
fn asked(h: &Handoff) -> rules::Asked<'_> {
    rules::Asked::Handoff {
        to: match &h.to {
            HandoffTo::Agent { name } => Some(name),
            HandoffTo::Me => None,
        },
        from: h.tab.as_deref(),
    }
}
