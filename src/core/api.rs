//! One dispatcher for both sockets: a [`Request`] from a [`Caller`] in, a
//! [`Reply`] out. Who the caller is was settled by the connection. Each
//! handler returns its method's typed reply; [`encode`] turns it into the
//! wire's JSON here, named by the method, so the compiler checks each
//! handler answers what its method promises.

use std::sync::Arc;
use std::time::Duration;

use super::caller::Caller;
use super::not_found::no_tab;
use super::privilege::{self, Operation, Verdict};
use super::question::{Approval, Asked};
use super::request_facts::request_tab;
use super::Core;
use crate::host::HostError;
use crate::protocol::api::SearchLogs;
use crate::protocol::api::SwitchTab;
use crate::protocol::api::{
    encode, AskNetwork, CloseTab, Decide, ExplainTab, GetStatus, ListAgents, ListApprovals,
    ListSessions, ListTabs, OpenTerminal, QuitSession, ReadScreen, RenameTab, ReportAgent,
    ReportEvent, Request, Resize, RestartTab, RunPlugin, SendText, StartAgent, WaitFor,
};
use crate::protocol::api::{AddWhy, AskWhy};
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabState};
use crate::protocol::api::{CleanWorktrees, DiffTab, ListWorktrees, MergeTab};
use crate::protocol::api::{Handoff, ListHandoffs};
use crate::protocol::api::{ListReviews, PostReview, RequestReview};
use crate::protocol::api::{ListSpinoffs, ReportResult, SpinOff};
use crate::protocol::replies::{ScreenText, Sent, SessionQuit};

impl Core {
    /// Every request passes the privilege matrix first: refused ones are
    /// journaled, queued ones wait for the person.
    pub async fn handle(self: &Arc<Self>, caller: &Caller, req: Request) -> Reply {
        // Every folder the request names is its session's from here on
        // (a subfolder, a tab's worktree: `session_of`).
        let req = self.place_folders(caller, req).await?;
        // A tab named by prefix, number or name is named by its id from
        // here on: in the privilege check, the journal and the handler.
        let req = self.resolve_handle(caller, req)?;
        let (op, target) = self.classify(caller, &req).await?;
        let foreign = self.foreign_tab(caller, &req);
        // Whether a restart would bring the tab's agent back outside a
        // sandbox (a switch start one there), by the config as it is now:
        // read off the async workers, and before the state lock is taken
        // for the extras.
        let launches_unsandboxed = match &req {
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
            Request::Switch(SwitchTab { agent, .. }) if !foreign => !self
                .settings_of(agent)
                .await?
                .is_ok_and(|(a, _)| a.sandboxed),
            _ => false,
        };
        // What waits for the person must also be within the caller's reach:
        // the extras hold for queued requests as for allowed ones.
        let verdict = match privilege::decide(caller.kind(), op, target) {
            Verdict::Refuse(why) => Verdict::Refuse(why),
            other => match privilege::decide_extras(
                caller.kind(),
                self.extras(caller, &req, target, foreign, launches_unsandboxed),
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
                tab,
                text,
                enter,
                agent_only,
                ..
            }) => {
                self.agent_only(&tab, agent_only)?;
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
                // Text, never keys (`send_rules`): what the person reads
                // in the question is what is typed.
                let mut text = crate::printable::typeable(&text);
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
            // --- handoffs ---
            Request::Handoff(h) => encode::<Handoff>(self.queue_handoff(caller, h, why).await),
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
                tab_name,
                resume,
            }) => encode::<StartAgent>(
                self.start_agent(
                    caller,
                    &folder,
                    super::agent::Named {
                        name,
                        program,
                        tab_name,
                        resume,
                    },
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
                tab,
                text,
                enter,
                agent_only,
                ..
            }) => encode::<SendText>(
                match self.agent_only(&tab, agent_only).and_then(|()| {
                    let own = caller.tab() == Some(tab.as_str());
                    super::send_rules::sent_text(caller.kind(), own, enter, text)
                        .map_err(|why| self.refuse(caller, Operation::Send, Some(&tab), why))
                }) {
                    Err(e) => Err(e),
                    // A message for an agent goes whole (`typing`).
                    Ok(text) if enter && self.is_agent(&tab) => self
                        .type_message(&tab, &text)
                        .await
                        .map(|()| Sent::Typed {}),
                    Ok(text) => self
                        .type_text(&tab, text.into_bytes(), enter)
                        .await
                        .map(|()| Sent::Typed {}),
                },
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
                let (closed, left) = self.quit_session(&folder).await;
                encode::<QuitSession>(Ok(SessionQuit { closed, left }))
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
            Request::Diff(DiffTab { tab, stat, .. }) => {
                encode::<DiffTab>(self.diff_tab(&tab, stat).await)
            }
            Request::Worktrees => encode::<ListWorktrees>(self.list_worktrees().await),
            Request::Merge(MergeTab {
                tab,
                into,
                how,
                identity,
                ..
            }) => encode::<MergeTab>(self.merge_tab(&tab, into, how, identity).await),
            Request::Clean(CleanWorktrees { merged, dry_run }) => {
                encode::<CleanWorktrees>(self.clean_worktrees(merged, dry_run).await)
            }
            Request::RequestReview(RequestReview {
                tab, reviewer, env, ..
            }) => encode::<RequestReview>(self.request_review(caller, tab, reviewer, env).await),
            Request::PostReview(PostReview { text }) => {
                encode::<PostReview>(self.post_review(caller, &text).await)
            }
            Request::Reviews(ListReviews {
                tab,
                folder,
                mark_read,
            }) => encode::<ListReviews>(self.list_reviews(caller, tab, folder, mark_read).await),
            Request::SpinOff(req) => encode::<SpinOff>(self.spin_off(caller, req).await),
            Request::ReportResult(r) => encode::<ReportResult>(self.report_result(caller, r).await),
            Request::Spinoffs(ListSpinoffs { folder }) => {
                encode::<ListSpinoffs>(self.list_spinoffs(caller, folder).await)
            }
            // --- handoffs ---
            Request::Handoff(h) => encode::<Handoff>(self.handoff(caller, h).await),
            Request::Handoffs(l) => encode::<ListHandoffs>(self.list_handoffs(l).await),
            Request::Switch(s) => encode::<SwitchTab>(self.switch_tab(caller, s).await),
            // --- reasons ---
            Request::AddWhy(w) => encode::<AddWhy>(self.add_why(caller, w).await),
            Request::Why(w) => encode::<AskWhy>(self.why_of(caller, w).await),
            Request::Search(s) => encode::<SearchLogs>(self.search(caller, s).await),
        }
    }

    /// Type `bytes` into a tab as a person would: text ending in Enter
    /// gets its Enter a moment after the text. Text and Enter in one write
    /// look like a paste to programs without bracketed paste that guess
    /// (codex's paste-burst check makes such an Enter a new line, so the
    /// prompt never goes).
    /// Text meant for an agent (`SendText::agent_only`) is refused when
    /// tab `tab` runs a program: the core's word, whatever the client
    /// checked.
    fn agent_only(&self, tab: &str, agent_only: bool) -> Result<(), ApiError> {
        if !agent_only {
            return Ok(());
        }
        let program = {
            let st = self.state.lock().unwrap();
            let t = st.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            t.program.then(|| t.agent.clone())
        };
        match crate::review::not_for_a_program(
            tab,
            program.as_deref(),
            crate::review::Meant::ForAnAgent,
        ) {
            Some(why) => Err(ApiError::new(ErrorCode::BadRequest, why)),
            None => Ok(()),
        }
    }

    pub(super) async fn type_text(
        &self,
        tab: &str,
        text: Vec<u8>,
        enter: bool,
    ) -> Result<(), ApiError> {
        if !enter {
            return self.write_input(tab, text).await;
        }
        if !text.is_empty() {
            self.write_input(tab, text).await?;
            tokio::time::sleep(ENTER_AFTER).await;
        }
        self.write_input(tab, b"\r".to_vec()).await
    }

    /// Type `bytes` and wait to hear they were taken: a program that reads
    /// nothing refuses them once its input queue is full (`host::input`).
    pub(super) async fn write_input(&self, tab: &str, bytes: Vec<u8>) -> Result<(), ApiError> {
        let ended = {
            let st = self.state.lock().unwrap();
            let t = st.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
            ended_tab(tab, t.state, t.exit_code)
        };
        // The holder keeps an ended program's terminal until the tab is
        // forgotten and would take the bytes; nobody would ever read them.
        if let Some(why) = ended {
            return Err(ApiError::new(ErrorCode::NotFound, why));
        }
        self.typed(tab, &bytes);
        let verdict = self.host.type_in(tab, bytes);
        match verdict
            .await
            .unwrap_or_else(|_| Err(HostError::NoSuchTab(tab.into())))
        {
            Ok(()) => Ok(()),
            Err(e @ HostError::InputFull(_)) => {
                Err(ApiError::new(ErrorCode::Denied, e.to_string()))
            }
            Err(e) => Err(ApiError::new(
                ErrorCode::NotFound,
                format!("tab {tab} has no running program to type into ({e})"),
            )),
        }
    }
}

/// Why typing into tab `tab` in `state` cannot reach a program, if it
/// cannot.
fn ended_tab(tab: &str, state: TabState, exit_code: Option<i32>) -> Option<String> {
    let how = match (state, exit_code) {
        (TabState::Exited, Some(code)) => format!("its program exited with code {code}"),
        (TabState::Exited, None) => "its program has ended".to_string(),
        (TabState::Refused, _) => "its sandbox check refused to start its program".to_string(),
        (TabState::Starting | TabState::Running, _) => return None,
    };
    Some(format!(
        "tab {tab}: {how}, so nothing was typed; `nerdr restart {tab}` starts it again"
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typing_into_an_ended_program_is_refused_and_says_how_to_restart() {
        for (state, code, want) in [
            (TabState::Running, None, None),
            (TabState::Starting, None, None),
            (TabState::Exited, Some(3), Some("exited with code 3")),
            (TabState::Exited, None, Some("has ended")),
            (TabState::Refused, None, Some("sandbox check refused")),
        ] {
            let got = ended_tab("ab12", state, code);
            match (want, &got) {
                (None, None) => {}
                (Some(w), Some(g)) => {
                    assert!(g.contains(w), "{state:?}: {g}");
                    assert!(g.contains("nothing was typed"), "{g}");
                    assert!(g.contains("`nerdr restart ab12`"), "{g}");
                }
                _ => panic!("{state:?} {code:?}: {got:?}"),
            }
        }
    }
}
