//! What a request is, gathered before the privilege matrix decides it: the
//! folders it names placed in their sessions (and a sandboxed caller's
//! pinned to its own), its operation and target, whether its tab is in
//! another session, and what it asks beyond its operation. The decisions
//! themselves are `privilege`'s pure functions; this is the edge that
//! reads the core's state (and the config) for them.

use std::path::Path;

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::{self, CallerKind, Operation, Target};
use super::Core;
use crate::protocol::api::{
    ApiError, CloseTab, DiffTab, ErrorCode, ExplainTab, ListReviews, ListSpinoffs, ListTabs,
    MergeTab, OpenTerminal, QuitSession, ReadScreen, RenameTab, ReportAgent, Request,
    RequestReview, Resize, RestartTab, SendText, SpinOff, StartAgent, TabKind, WaitFor,
};

impl Core {
    /// Whether the tab the request names belongs to another session than
    /// the caller's (a caller whose tab is gone has none). State only: no
    /// I/O, so a refusal it leads to costs what "no such tab" costs.
    pub(super) fn foreign_tab(&self, caller: &Caller, req: &Request) -> bool {
        let Some(own) = caller.tab() else {
            return false;
        };
        let state = self.state.lock().unwrap();
        let own = state.tabs.get(own).map(|t| &t.folder);
        match request_tab(req).and_then(|t| state.tabs.get(t)) {
            Some(t) => own != Some(&t.folder),
            None => false,
        }
    }

    /// What the request asks beyond its operation (see [`privilege::Extras`]).
    pub(super) fn extras(
        &self,
        caller: &Caller,
        req: &Request,
        target: Target,
        foreign: bool,
        launches_unsandboxed: bool,
    ) -> privilege::Extras {
        let mut e = privilege::Extras {
            foreign_folder: foreign,
            ..Default::default()
        };
        if foreign {
            // Refused whatever else it asks: look no further (no config
            // read for a restart), so it costs what a missing tab costs.
            return e;
        }
        let state = self.state.lock().unwrap();
        // A caller whose tab is gone has no session of its own.
        let own = caller
            .tab()
            .map(|id| state.tabs.get(id).map(|t| t.folder.clone()));
        let outside = |folder: &Path| match &own {
            Some(Some(own)) => own != folder,
            Some(None) => true,
            None => false,
        };
        match req {
            Request::Agent(StartAgent {
                folder,
                extra_args,
                worktree,
                resume,
                ..
            }) => {
                // Placed already: canonical, its session's.
                e.foreign_folder = outside(folder);
                e.extra_args = !extra_args.is_empty();
                e.no_worktree = !worktree;
                e.resumes_conversation = resume.is_some();
            }
            Request::Close(CloseTab {
                remove_worktree,
                force,
                ..
            }) => {
                e.removes_others_worktree = *remove_worktree && target != Target::Own;
                e.forced_removal = *remove_worktree && *force;
            }
            Request::Restart(_) | Request::Switch(_) => e.unsandboxed_launch = launches_unsandboxed,
            _ => {}
        }
        e
    }

    /// `req` with each folder it names replaced by its session's folder
    /// ([`Core::placed`]): `cd proj/src && nerdr tabs` lists proj's tabs,
    /// and so does `nerdr tabs` in a tab's worktree. A plugin's folder is
    /// where it runs, not a session: it stays. A sandboxed caller's tab list
    /// and handles are its own session's whatever folder it names
    /// (`pinned`, `naming`): that folder is dropped unlooked-at.
    pub(super) async fn place_folders(
        &self,
        caller: &Caller,
        mut req: Request,
    ) -> Result<Request, ApiError> {
        let sandboxed = caller.kind() == CallerKind::Sandboxed;
        // A start or quit keeps a folder that does not resolve, for its
        // handler's own answer (a sandboxed caller's is its own session's
        // anyway, `pinned`); a folder naming the session of a tab, a list
        // or a review is an error here, before a tab is looked up in the
        // wrong session (over `--host`, nothing on this side checked it).
        let (folder, must_exist) = match &mut req {
            Request::Agent(StartAgent { folder, .. }) | Request::Quit(QuitSession { folder }) => {
                (Some(folder), false)
            }
            Request::Tabs(ListTabs { folder, .. })
            | tab_requests!(_, folder)
            | review_requests!(folder)
            | handoff_requests!(folder)
                if sandboxed =>
            {
                *folder = None;
                (None, false)
            }
            Request::Tabs(ListTabs { folder, .. })
            | tab_requests!(_, folder)
            | review_requests!(folder)
            | handoff_requests!(folder) => (folder.as_mut(), true),
            _ => (None, false),
        };
        if let Some(folder) = folder {
            *folder = match self.placed(std::mem::take(folder)).await {
                Ok(placed) => placed,
                Err(asked) if must_exist => {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        format!(
                            "folder {} does not exist or is not a folder",
                            asked.display()
                        ),
                    ))
                }
                Err(asked) => asked,
            };
        }
        Ok(req)
    }

    /// A sandboxed caller's new agent goes in its own session's folder, as
    /// recorded, not as the request spells it (a path it could swap); its
    /// `nerdr tabs` lists that session too (from its worktree, the folder
    /// the request names is no session's).
    pub(super) fn pinned(&self, caller: &Caller, req: Request) -> Result<Request, ApiError> {
        let own_folder = || {
            let id = caller.tab().unwrap_or_default();
            self.state
                .lock()
                .unwrap()
                .tabs
                .get(id)
                .map(|t| t.folder.clone())
                .ok_or_else(|| no_tab(id))
        };
        match req {
            Request::Tabs(ListTabs { all: false, .. })
                if caller.kind() == CallerKind::Sandboxed =>
            {
                Ok(Request::Tabs(ListTabs {
                    folder: Some(own_folder()?),
                    all: false,
                }))
            }
            Request::Agent(StartAgent {
                name,
                extra_args,
                env,
                worktree,
                program,
                tab_name,
                resume,
                ..
            }) if caller.kind() == CallerKind::Sandboxed => Ok(Request::Agent(StartAgent {
                folder: own_folder()?,
                name,
                extra_args,
                env,
                worktree,
                program,
                tab_name,
                resume,
            })),
            other => Ok(other),
        }
    }

    /// The operation a request is, and what it is done to.
    pub(super) async fn classify(
        &self,
        caller: &Caller,
        req: &Request,
    ) -> Result<(Operation, Target), ApiError> {
        let on = |tab: &str| self.target_of(caller, tab).map(|t| (op_of(req), t));
        match req {
            Request::Agent(StartAgent { name, program, .. }) => {
                let start = match program {
                    true => privilege::Start::Program,
                    false => match self.settings_of(name).await? {
                        Ok((a, _)) => privilege::Start::Agent {
                            sandboxed: a.sandboxed,
                        },
                        Err(_) => privilege::Start::Unresolved,
                    },
                };
                Ok((Operation::StartAgent, privilege::start_target(start)))
            }
            // --- handoffs ---
            Request::Handoff(h) => Ok((Operation::Handoff, self.handoff_target(caller, h).await?)),
            // No open tab of that name: a closed tab's worktree, perhaps
            // (`Core::named_worktree`), which is no tab's: the reach of
            // `nerdr worktrees` (a sandboxed caller is refused).
            Request::Diff(DiffTab { tab, .. }) | Request::Merge(MergeTab { tab, .. })
                if !self.state.lock().unwrap().tabs.contains_key(tab.as_str()) =>
            {
                Ok((op_of(req), Target::Nothing))
            }
            _ if request_tab(req).is_some() => on(request_tab(req).expect("matched")),
            Request::Report(_) => Ok((Operation::Report, Target::Own)),
            // Only the tab's program itself (`nerdr sandbox`, whose proxy
            // asks) asks about its own sandbox; see `Operation::AskNetwork`.
            Request::AskNetwork(_) => Ok((
                Operation::AskNetwork,
                if caller.is_program() {
                    Target::Own
                } else {
                    Target::Nothing
                },
            )),
            Request::Plugin(_) => Ok((Operation::RunPlugin, Target::Nothing)),
            // No tab named: the caller's own (from a terminal, none).
            Request::RequestReview(_)
            | Request::Reviews(_)
            | Request::PostReview(_)
            | Request::SpinOff(_)
            | Request::ReportResult(_)
            | Request::AddWhy(_)
            | Request::Why(_)
                if caller.tab().is_some() =>
            {
                Ok((op_of(req), Target::Own))
            }
            _ => Ok((op_of(req), Target::Nothing)),
        }
    }

    /// What tab `tab` is to `caller`.
    pub(super) fn target_of(&self, caller: &Caller, tab: &str) -> Result<Target, ApiError> {
        if caller.tab() == Some(tab) {
            return Ok(Target::Own);
        }
        let state = self.state.lock().unwrap();
        let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
        Ok(target_kind(caller, t, &state))
    }
}

/// The operation a request is, before its target is known.
pub(super) fn op_of(req: &Request) -> Operation {
    match req {
        Request::Agent(_) => Operation::StartAgent,
        Request::Tabs(_) => Operation::Query,
        // Waiting on a tab's state and asking why it is in it tell what
        // reading its screen tells: the same reach.
        Request::Read(_) | Request::Wait(_) | Request::Explain(_) => Operation::Read,
        Request::Send(_) => Operation::Send,
        Request::Resize(_) => Operation::Resize,
        Request::Terminal(_) => Operation::OpenTerminal,
        Request::Restart(_) => Operation::Restart,
        Request::Close(_) => Operation::Close,
        Request::Rename(_) => Operation::Rename,
        Request::Quit(_) => Operation::Quit,
        Request::Approvals => Operation::ListApprovals,
        Request::Decide(_) => Operation::Decide,
        Request::AskNetwork(_) => Operation::AskNetwork,
        Request::Plugin(_) => Operation::RunPlugin,
        Request::Report(_) | Request::ReportAgent(_) => Operation::Report,
        // Each session and tab in the list is the caller's to see
        // (`session_list`): asking is harmless.
        Request::Status | Request::Agents | Request::Sessions => Operation::Query,
        Request::Diff(_) => Operation::Diff,
        Request::Worktrees => Operation::ListWorktrees,
        Request::Merge(_) => Operation::Merge,
        Request::Clean(_) => Operation::Clean,
        Request::RequestReview(_) => Operation::RequestReview,
        Request::PostReview(_) => Operation::PostReview,
        // A tab's reviews tell what reading its work tells: the same reach.
        Request::Reviews(ListReviews { tab: Some(_), .. }) => Operation::Read,
        // Every reviewed tab of a session: the person's (from a terminal).
        Request::Reviews(ListReviews { tab: None, .. }) => Operation::Query,
        Request::SpinOff(_) => Operation::SpinOff,
        Request::ReportResult(_) => Operation::ReportResult,
        // What a sandboxed caller sees of it is its own tab's (`spinoff_results`).
        Request::Spinoffs(_) => Operation::Query,
        // --- handoffs ---
        Request::Handoff(_) => Operation::Handoff,
        Request::Handoffs(_) => Operation::ListHandoffs,
        Request::Switch(_) => Operation::Switch,
        // --- reasons ---
        // A tab's reason is its report about its own work (`why` keeps
        // it with its own worktree's commits, whatever it names).
        Request::AddWhy(_) => Operation::Report,
        // What `why` shows tells what reading the work tells; a tab asks
        // only of its own worktree's files (`why_of`).
        Request::Why(_) => Operation::Read,
        // --- search ---
        // What a sandboxed caller finds is its own tab's conversation
        // only (`search::visible`): asking is harmless.
        Request::Search(_) => Operation::Query,
    }
}

/// What tab `t` is to `caller`, who reviews whom as `state`'s mirror of
/// the reviews has it, each tab counted as every tab of its line of
/// starters (`privilege::link`).
pub(super) fn target_kind(caller: &Caller, t: &super::state::Tab, state: &super::State) -> Target {
    let link = caller.tab().map_or(privilege::Link::None, |own| {
        // A caller whose tab is gone has no line left to count.
        let line = state
            .tabs
            .get(own)
            .map_or(&[][..], |o| o.started_by.as_slice());
        privilege::link(
            &state.review_links.author_of,
            privilege::Lined { id: own, line },
            privilege::Lined {
                id: &t.id,
                line: &t.started_by,
            },
        )
    });
    privilege::tab_target(
        caller.kind(),
        privilege::TabFacts {
            own: caller.tab() == Some(t.id.as_str()),
            terminal: t.kind == TabKind::Terminal,
            sandboxed: t.sandboxed,
            link,
        },
    )
}

/// The requests that name a tab the person chose (by id or any handle:
/// `core::naming`), as one pattern binding its `tab` field to `$tab` (and
/// its `folder`, the caller's, to `$folder`); written once, so a new such
/// request cannot be missed in one place.
macro_rules! tab_requests {
    ($tab:ident) => {
        tab_requests!($tab, _)
    };
    ($tab:pat, $folder:pat) => {
        Request::Read(ReadScreen {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Wait(WaitFor {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Explain(ExplainTab {
            tab: $tab,
            folder: $folder,
        }) | Request::Send(SendText {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Resize(Resize {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Terminal(OpenTerminal {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Restart(RestartTab {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Close(CloseTab {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Rename(RenameTab {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Diff(DiffTab {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Merge(MergeTab {
            tab: $tab,
            folder: $folder,
            ..
        }) | Request::Switch(crate::protocol::api::SwitchTab {
            tab: $tab,
            folder: $folder,
            ..
        })
    };
}
pub(super) use tab_requests;

/// The review requests, which name a tab only when the caller gives one
/// (else their caller's own), as one pattern binding their `folder`.
macro_rules! review_requests {
    ($folder:pat) => {
        Request::RequestReview(RequestReview {
            folder: $folder,
            ..
        }) | Request::Reviews(ListReviews {
            folder: $folder,
            ..
        }) | Request::SpinOff(SpinOff {
            folder: $folder,
            ..
        }) | Request::Spinoffs(ListSpinoffs { folder: $folder })
            | Request::ReportResult(crate::protocol::api::ReportResult {
                folder: $folder,
                ..
            })
    };
}
pub(super) use review_requests;

/// The handoff requests, as one pattern binding their `folder`.
macro_rules! handoff_requests {
    ($folder:pat) => {
        Request::Handoff(crate::protocol::api::Handoff {
            folder: $folder,
            ..
        }) | Request::Handoffs(crate::protocol::api::ListHandoffs {
            folder: $folder,
            ..
        })
    };
}
pub(super) use handoff_requests;

/// The tab a request names, if any (a hook's `ReportAgent` names its own).
pub(super) fn request_tab(req: &Request) -> Option<&str> {
    match req {
        tab_requests!(tab)
        | Request::ReportAgent(ReportAgent { tab, .. })
        | Request::RequestReview(RequestReview { tab: Some(tab), .. })
        | Request::Reviews(ListReviews { tab: Some(tab), .. })
        | Request::SpinOff(SpinOff {
            from: Some(tab), ..
        })
        | Request::Handoff(crate::protocol::api::Handoff { tab: Some(tab), .. })
        // A result for a named spun-off tab: the person's for any, a
        // program's only for its own (the tab is then `Own` to it).
        | Request::ReportResult(crate::protocol::api::ReportResult { tab: Some(tab), .. }) => {
            Some(tab)
        }
        _ => None,
    }
}
