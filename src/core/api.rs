//! One dispatcher for both sockets: a [`Request`] from a [`Caller`] in, a
//! [`Reply`] out. Who the caller is was settled by the connection. Each
//! handler returns its method's typed reply; [`encode`] turns it into the
//! wire's JSON here, named by the method, so the compiler checks each
//! handler answers what its method promises.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::{self, CallerKind, Operation, Target, Verdict};
use super::question::{Approval, Asked};
use super::Core;
use crate::protocol::api::{
    encode, AskNetwork, CloseTab, Decide, ExplainTab, GetStatus, ListAgents, ListApprovals,
    ListSessions, ListTabs, OpenTerminal, QuitSession, ReadScreen, RenameTab, ReportAgent,
    ReportEvent, Request, Resize, RestartTab, RunPlugin, SendText, StartAgent, TabKind, WaitFor,
};
use crate::protocol::api::{ApiError, ErrorCode, Reply};
use crate::protocol::replies::{ScreenText, Sent, SessionQuit};

impl Core {
    /// Every request passes the privilege matrix first: refused ones are
    /// journaled, queued ones wait for the person.
    pub async fn handle(self: &Arc<Self>, caller: &Caller, req: Request) -> Reply {
        // Every folder the request names is its session's from here on
        // (a subfolder, a tab's worktree: `session_of`).
        let req = self.place_folders(caller, req).await;
        // A tab named by prefix, number or name is named by its id from
        // here on: in the privilege check, the journal and the handler.
        let req = self.resolve_handle(caller, req)?;
        let (op, target) = self.classify(caller, &req).await?;
        let foreign = self.foreign_tab(caller, &req);
        // Whether a restart would bring the tab's agent back outside a
        // sandbox, by the config as it is now: read off the async workers,
        // and before the state lock is taken for the extras.
        let restarts_unsandboxed = match &req {
            Request::Restart(RestartTab { tab, .. }) if !foreign => {
                let agent = self
                    .state
                    .lock()
                    .unwrap()
                    .tabs
                    .get(tab)
                    .map(|t| (t.agent.clone(), t.program));
                match agent {
                    // A program run as it is comes back as it was: unsandboxed.
                    Some((_, true)) => true,
                    Some((a, false)) => {
                        !self.settings_of(&a).await?.is_ok_and(|(a, _)| a.sandboxed)
                    }
                    None => false,
                }
            }
            _ => false,
        };
        // What waits for the person must also be within the caller's reach:
        // the extras hold for queued requests as for allowed ones.
        let verdict = match privilege::decide(caller.kind(), op, target) {
            Verdict::Refuse(why) => Verdict::Refuse(why),
            other => match privilege::decide_extras(
                caller.kind(),
                self.extras(caller, &req, target, foreign, restarts_unsandboxed),
            ) {
                Verdict::Allow => other,
                refused => refused,
            },
        };
        match verdict {
            Verdict::Allow => {
                let req = self.pinned(caller, req)?;
                self.dispatch(caller, req).await
            }
            Verdict::Refuse(why) => {
                let refused = self.refuse(caller, op, request_tab(&req), why);
                match request_tab(&req) {
                    // The journal has the real refusal; the caller learns
                    // no more than of a tab that does not exist.
                    Some(tab) if privilege::hides_tab(caller.kind(), target, foreign) => {
                        Err(no_tab(tab))
                    }
                    _ => Err(refused),
                }
            }
            Verdict::Queue(why) => self.queue(caller, req, why).await,
        }
    }

    /// Whether the tab the request names belongs to another session than
    /// the caller's (a caller whose tab is gone has none). State only: no
    /// I/O, so a refusal it leads to costs what "no such tab" costs.
    fn foreign_tab(&self, caller: &Caller, req: &Request) -> bool {
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
    fn extras(
        &self,
        caller: &Caller,
        req: &Request,
        target: Target,
        foreign: bool,
        restarts_unsandboxed: bool,
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
                ..
            }) => {
                // Placed already: canonical, its session's.
                e.foreign_folder = outside(folder);
                e.extra_args = !extra_args.is_empty();
                e.no_worktree = !worktree;
            }
            Request::Close(CloseTab {
                remove_worktree,
                force,
                ..
            }) => {
                e.removes_others_worktree = *remove_worktree && target != Target::Own;
                e.forced_removal = *remove_worktree && *force;
            }
            Request::Restart(_) => e.unsandboxed_launch = restarts_unsandboxed,
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
    async fn place_folders(&self, caller: &Caller, mut req: Request) -> Request {
        let sandboxed = caller.kind() == CallerKind::Sandboxed;
        let folder = match &mut req {
            Request::Agent(StartAgent { folder, .. }) | Request::Quit(QuitSession { folder }) => {
                Some(folder)
            }
            Request::Tabs(ListTabs { folder, .. }) | tab_requests!(_, folder) if sandboxed => {
                *folder = None;
                None
            }
            Request::Tabs(ListTabs { folder, .. }) | tab_requests!(_, folder) => folder.as_mut(),
            _ => None,
        };
        if let Some(folder) = folder {
            *folder = self.placed(std::mem::take(folder)).await;
        }
        req
    }

    /// A sandboxed caller's new agent goes in its own session's folder, as
    /// recorded, not as the request spells it (a path it could swap); its
    /// `nerdr tabs` lists that session too (from its worktree, the folder
    /// the request names is no session's).
    fn pinned(&self, caller: &Caller, req: Request) -> Result<Request, ApiError> {
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
                ..
            }) if caller.kind() == CallerKind::Sandboxed => Ok(Request::Agent(StartAgent {
                folder: own_folder()?,
                name,
                extra_args,
                env,
                worktree,
                program,
            })),
            other => Ok(other),
        }
    }

    /// The operation a request is, and what it is done to.
    async fn classify(
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
        Ok(target_kind(caller, t))
    }

    /// Whether this refusal (who, what, why) is the first of its kind this
    /// second: a refusal loop is journaled once a second, not once a
    /// request.
    pub(super) fn first_this_second(&self, tab: &str, op: &'static str, why: &str) -> bool {
        let key = (tab.to_string(), op, why.to_string());
        let now = std::time::Instant::now();
        let mut state = self.state.lock().unwrap();
        let seen = &mut state.refusals;
        seen.retain(|_, at| now.duration_since(*at) < std::time::Duration::from_secs(1));
        let fresh = !seen.contains_key(&key);
        if fresh {
            seen.insert(key, now);
        }
        fresh
    }

    /// The error a refused caller gets, and its journal entry.
    pub(super) fn refuse(
        &self,
        caller: &Caller,
        op: Operation,
        tab: Option<&str>,
        why: &str,
    ) -> ApiError {
        let on = tab.map(|t| format!(" on tab {t}")).unwrap_or_default();
        let message = format!("refused `nerdr {}`{on}: {why}", privilege::name(op));
        let tab = caller.tab().unwrap_or("-");
        if !self.first_this_second(tab, privilege::name(op), why) {
            return ApiError::new(ErrorCode::Denied, message);
        }
        let event = crate::audit::Event::new(crate::audit::Kind::HookRefused, message.clone())
            .field("NERDR_TAB", tab)
            .field("NERDR_OPERATION", privilege::name(op))
            .field("NERDR_REASON", why);
        let (paths, tab, name) = (self.paths.clone(), tab.to_string(), privilege::name(op));
        let why = why.to_string();
        let record = move || {
            tracing::warn!(tab = %tab, operation = name, reason = %why, "request refused");
            crate::audit::record(&paths, &event);
        };
        // Written off the request's path: the reply to a refusal that reads
        // as "no such tab" must not take longer than that answer does.
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(record)),
            Err(_) => record(),
        }
        ApiError::new(ErrorCode::Denied, message)
    }

    /// A request the matrix lets through only with the person's yes.
    async fn queue(self: &Arc<Self>, caller: &Caller, req: Request, why: &str) -> Reply {
        let from = caller.tab().unwrap_or("-").to_string();
        match req {
            Request::Send(SendText {
                tab, text, enter, ..
            }) => {
                let agent = self
                    .state
                    .lock()
                    .unwrap()
                    .tabs
                    .get(&tab)
                    .map(|t| t.agent.clone())
                    .ok_or_else(|| no_tab(&tab))?;
                if text.chars().count() > MAX_QUEUED_MESSAGE {
                    return Err(self.refuse(caller, Operation::Send, Some(&tab), TOO_LONG));
                }
                if !enter {
                    // Half a message left in the agent's input would be
                    // completed by the next approved one, unseen.
                    return Err(self.refuse(caller, Operation::Send, Some(&tab), WHOLE));
                }
                self.room_in_queue(caller, Operation::Send, Some(&tab))?;
                let id = self.new_approval_id();
                let question = format!(
                    "message from sandboxed tab {from} to tab {tab} ({agent}, outside every \
                     sandbox): \"{}\", then Enter",
                    crate::protocol::printable(&text),
                );
                let mut text = text;
                text.push('\r');
                tracing::info!(from = %from, to = %tab, approval = %id, "message waits for approval");
                self.ask(Approval {
                    id: id.clone(),
                    question,
                    tab: from,
                    asked: Asked::Message {
                        to: tab.clone(),
                        text,
                    },
                })
                .map_err(|full| self.refuse(caller, Operation::Send, Some(&tab), full))?;
                encode::<SendText>(Ok(Sent::Queued {
                    queued: id,
                    why: why.to_string(),
                }))
            }
            Request::Plugin(RunPlugin { name, args, folder }) => {
                encode::<RunPlugin>(self.run_plugin(caller, &name, args, &folder, true).await)
            }
            Request::AskNetwork(AskNetwork { host, port }) => {
                encode::<AskNetwork>(self.ask_network(caller, &host, port).await)
            }
            other => Err(ApiError::new(
                ErrorCode::Internal,
                format!("nothing can wait for approval as {other:?}"),
            )),
        }
    }

    async fn dispatch(self: &Arc<Self>, caller: &Caller, req: Request) -> Reply {
        match req {
            Request::Agent(StartAgent {
                folder,
                name,
                extra_args,
                env,
                worktree,
                program,
            }) => encode::<StartAgent>(
                self.start_agent(
                    caller,
                    &folder,
                    super::agent::Named { name, program },
                    extra_args,
                    env,
                    worktree,
                )
                .await,
            ),
            Request::Tabs(ListTabs { folder, all }) => {
                encode::<ListTabs>(self.tabs(caller, folder.as_deref(), all))
            }
            Request::Read(ReadScreen { tab, lines, .. }) => encode::<ReadScreen>({
                let state = self.state.lock().unwrap();
                state
                    .tabs
                    .get(&tab)
                    .ok_or_else(|| no_tab(&tab))
                    .map(|t| ScreenText {
                        text: t.screen_text(lines),
                    })
            }),
            Request::Send(SendText {
                tab, text, enter, ..
            }) => encode::<SendText>(
                self.type_text(&tab, text.into_bytes(), enter)
                    .await
                    .map(|()| Sent::Typed {}),
            ),
            Request::Resize(Resize {
                tab, rows, cols, ..
            }) => encode::<Resize>(self.resize(&tab, rows, cols)),
            Request::Terminal(OpenTerminal { tab, env, .. }) => {
                encode::<OpenTerminal>(self.start_terminal(caller, &tab, env).await)
            }
            Request::Restart(RestartTab { tab, env, .. }) => {
                encode::<RestartTab>(self.restart_tab(caller, &tab, env).await)
            }
            Request::Approvals => encode::<ListApprovals>(self.list_approvals()),
            Request::Decide(Decide {
                id,
                approve,
                session,
            }) => encode::<Decide>(self.decide(caller, &id, approve, session).await),
            Request::AskNetwork(_) => Err(ApiError::new(
                ErrorCode::BadRequest,
                "network questions come from `nerdr sandbox` in a tab, over the hook socket",
            )),
            Request::Plugin(RunPlugin { name, args, folder }) => {
                encode::<RunPlugin>(self.run_plugin(caller, &name, args, &folder, false).await)
            }
            Request::Close(CloseTab {
                tab,
                remove_worktree,
                force,
                ..
            }) => encode::<CloseTab>(self.close_tab(&tab, remove_worktree, force).await),
            Request::Rename(RenameTab { tab, name, .. }) => {
                encode::<RenameTab>(self.rename_tab(caller, &tab, &name))
            }
            Request::Quit(QuitSession { folder }) => {
                let closed = self.quit_session(&folder).await;
                encode::<QuitSession>(Ok(SessionQuit { closed }))
            }
            Request::Agents => encode::<ListAgents>(self.agent_names().await),
            Request::Report(ReportEvent {
                event,
                session_id,
                seq,
                ..
            }) => encode::<ReportEvent>(self.report(caller, &event, session_id, seq)),
            Request::Wait(WaitFor {
                tab,
                until,
                timeout_ms,
                ..
            }) => encode::<WaitFor>(
                self.wait_for(&tab, until, timeout_ms.map(Duration::from_millis))
                    .await,
            ),
            Request::Explain(ExplainTab { tab, .. }) => encode::<ExplainTab>(self.explain(&tab)),
            Request::ReportAgent(ReportAgent { tab, argv }) => {
                encode::<ReportAgent>(self.report_agent(caller, &tab, argv))
            }
            Request::Status => encode::<GetStatus>(Ok(self.status())),
            Request::Sessions => encode::<ListSessions>(Ok(self.sessions(caller))),
        }
    }

    /// Type `bytes` into a tab as a person would: text ending in Enter
    /// gets its Enter a moment after the text. Text and Enter in one write
    /// look like a paste to programs without bracketed paste that guess
    /// (codex's paste-burst check makes such an Enter a new line, so the
    /// prompt never goes).
    pub(super) async fn type_text(
        &self,
        tab: &str,
        text: Vec<u8>,
        enter: bool,
    ) -> Result<(), ApiError> {
        if !enter {
            return self.write_input(tab, text);
        }
        if !text.is_empty() {
            self.write_input(tab, text)?;
            tokio::time::sleep(ENTER_AFTER).await;
        }
        self.write_input(tab, b"\r".to_vec())
    }

    pub(super) fn write_input(&self, tab: &str, bytes: Vec<u8>) -> Result<(), ApiError> {
        if !self.state.lock().unwrap().tabs.contains_key(tab) {
            return Err(no_tab(tab));
        }
        self.typed(tab, &bytes);
        self.host.write(tab, bytes).map_err(|e| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("tab {tab} has no running program to type into ({e})"),
            )
        })
    }
}

/// How long after typed text its Enter follows: codex takes an Enter
/// within a few milliseconds of a burst of text for part of a paste (50 ms
/// was enough in a trial with codex-cli 0.171).
const ENTER_AFTER: Duration = Duration::from_millis(150);

/// The longest message a sandboxed agent may leave for an unsandboxed one:
/// all of it must fit where the person reads it before saying yes.
const MAX_QUEUED_MESSAGE: usize = 300;
const WHOLE: &str = "a message for an agent outside every sandbox is delivered whole, with \
                     Enter (leave out --no-enter)";
const TOO_LONG: &str = "a message for an agent outside every sandbox must fit in 300 characters, \
                        so the user can read all of it before approving";

/// The operation a request is, before its target is known.
fn op_of(req: &Request) -> Operation {
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
    }
}

/// What tab `t` is to `caller`.
pub(super) fn target_kind(caller: &Caller, t: &super::state::Tab) -> Target {
    match (t.kind, t.sandboxed) {
        _ if caller.tab() == Some(t.id.as_str()) => Target::Own,
        (TabKind::Terminal, _) => Target::Terminal,
        (TabKind::Agent, true) => Target::SandboxedAgent,
        (TabKind::Agent, false) => Target::Agent,
    }
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
        })
    };
}
pub(super) use tab_requests;

/// The tab a request names, if any (a hook's `ReportAgent` names its own).
fn request_tab(req: &Request) -> Option<&str> {
    match req {
        tab_requests!(tab) | Request::ReportAgent(ReportAgent { tab, .. }) => Some(tab),
        _ => None,
    }
}
