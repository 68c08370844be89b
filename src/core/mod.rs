//! `nerdr core`: all state and policy. Takes its two sockets from socket
//! activation or binds them itself, serves both, and reports to the service
//! manager. Programs run on a [`Host`]; the core never owns a PTY directly.

pub mod activation;
mod agent;
mod agent_program;
mod agent_states;
mod answers;
mod api;
mod approvals;
mod attach;
mod bell_lists;
mod caller;
mod clean_entry;
mod client_conn;
pub mod clock;
mod close;
mod detection;
mod diff;
mod edge;
pub mod env;
mod file_reports;
mod first_prompt;
mod fresh_worktree;
mod handles;
mod handoff;
mod held;
mod hook_conn;
mod hosting;
mod identity;
mod keyfile;
mod launch;
mod launch_plan;
mod lifecycle;
pub mod listen;
mod merge;
mod naming;
mod net_questions;
mod not_found;
mod outlog;
mod output;
mod painting;
mod persist;
mod planning;
mod plugins;
mod privilege;
mod programs;
mod question;
mod reports;
mod request_facts;
mod restart_tab;
mod review_auto;
mod review_links;
mod review_posts;
mod review_start;
mod sandbox_check;
mod sandbox_facts;
mod search;
mod send_rules;
mod serve;
mod session_list;
mod session_of;
mod sessions;
mod setup;
mod setup_gate;
mod shared_worktree;
mod snapshots;
mod spinoff;
mod spinoff_answer;
mod spinoff_later;
mod spinoff_results;
pub mod state;
mod switch;
mod turns;
mod typing;
mod waiting;
mod why;
mod window;
mod worktrees;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;

use crate::host::remote::Found;
use crate::host::{Host, HostEvent};
use crate::logging;
use crate::notify;
use crate::paths::Paths;
pub use caller::Caller;
use held::OneLock;
pub use serve::{serve, Listeners};
use state::{Saved, Tab, DEFAULT_COLS, DEFAULT_ROWS};

pub struct Core {
    /// Everything the core knows, behind its one lock: see [`held`].
    pub state: OneLock<State>,
    pub host: Arc<dyn Host>,
    pub paths: Paths,
    /// This executable, as programs find it in `NERDR_BIN`.
    pub bin: PathBuf,
    pub activated: bool,
    /// The client key's bytes; clients prove they read the same file.
    key: Vec<u8>,
    /// What installed agents support, from their `--help`.
    detector: Arc<crate::agents::Detector>,
    /// Wakes the tasks that run only while there is something to do: a
    /// turn to watch, a tab's state to look at again
    /// (idle, nothing polls).
    wake: Wake,
    /// Bumped by every change of an agent state or of the tab list: what
    /// `nerdr wait` waits on (`waiting`).
    states: tokio::sync::watch::Sender<u64>,
    /// Bumped by every chunk of any tab's output: what a wait for a screen
    /// to settle (`first_prompt`) waits on, for an agent whose screen
    /// tells no state. Nothing wakes while no one waits.
    outputs: tokio::sync::watch::Sender<u64>,
    /// The newest `tabs.json` written, so that a slower writer never puts
    /// an older list over a newer one. Held only around the file write,
    /// never with the state.
    saved_generation: std::sync::Mutex<u64>,
    /// What the service manager shows: set after the state lock drops, and
    /// sent by a thread of its own (a manager that stops reading its
    /// socket blocks that thread, not the core).
    status_line: notify::StatusLine,
    /// The reports files of tabs with a worktree install, watched.
    file_reports: file_reports::Watcher,
}

/// All the core knows, in one place, behind one lock (docs/ARCHITECTURE.md,
/// "One owner of the core's state"): plain data; queries over the tabs are
/// in `state`. Nothing waits on I/O while it is held.
#[derive(Default)]
pub struct State {
    pub tabs: std::collections::BTreeMap<String, Tab>,
    /// Sessions by canonical folder, each with its tabs in opening order.
    pub sessions: std::collections::BTreeMap<PathBuf, Vec<String>>,
    /// Attached windows (`nerdr` with no command).
    pub windows: attach::Windows,
    /// What waits for the person's yes.
    pub approvals: approvals::Approvals,
    /// Turns of sandboxed agents, to notice reports that never arrive.
    pub turns: turns::Turns,
    /// Hook connections held per program scope.
    pub hook_slots: std::collections::HashMap<String, usize>,
    /// When each (tab, operation, reason) refusal was last journaled.
    pub refusals: std::collections::HashMap<(String, &'static str, String), Instant>,
    /// The environment of the last client that started a program: programs
    /// started from inside tabs build on it (docs/ARCHITECTURE.md, "What
    /// the agent sees").
    pub last_client_env: Option<Vec<(String, String)>>,
    /// When the agent-state timer wakes next (`None`: it sleeps until
    /// told; see `agent_states`).
    pub detect_next: Option<Instant>,
    /// Each session's bell-driven tab lists (`bell_lists`), by folder.
    pub bell_lists: std::collections::HashMap<PathBuf, bell_lists::Throttle>,
    /// Bumped by every change `tabs.json` records.
    generation: u64,
    /// Names of tabs taken out to start again (`State::remove_keeping_place`).
    pub kept_names: std::collections::HashMap<String, String>,
    /// Numbers of tabs taken out to start again (`State::remove_keeping_place`).
    pub kept_numbers: std::collections::HashMap<String, usize>,
    /// The pid each tab ran before a restart or switch took it out: that
    /// program's exit may be reported after the new one started, and is
    /// not the new one's (`lifecycle::stale_exit`).
    pub replaced_pids: std::collections::HashMap<String, u32>,
    /// Agents waiting for their worktree's setup.
    pub setup_gates: setup_gate::Gates,
    /// What the holder has of each tab's screen.
    pub snapshots: snapshots::Snapshots,
    /// What the tab list shows of `spinoffs.json`: each spun-off tab's
    /// parent, each parent's waiting results (`spinoff_results`).
    pub spinoffs: crate::spinoff::store::Links,
    /// Which tab reviews which (`reviews.json`'s, mirrored).
    pub review_links: review_links::ReviewLinks,
    /// Each tab's switches (`switches.json`'s, mirrored).
    pub switches: std::collections::BTreeMap<String, Vec<crate::switch::store::Switch>>,
    /// Tabs whose handoff to the person waits in `handoffs.json`
    /// (mirrored): the window marks them `&`.
    pub handed: std::collections::BTreeSet<String>,
}

/// The background tasks' doorbells.
#[derive(Default)]
struct Wake {
    turns: tokio::sync::Notify,
    states: tokio::sync::Notify,
}

impl Core {
    /// Tell the service manager what we are doing now, write it down and
    /// show it to the windows. The list is taken under the lock and written
    /// after it: a newer list is never overwritten by an older one.
    fn changed(&self) {
        let (generation, saved, status) = {
            let mut state = self.state.lock().unwrap();
            let folders: std::collections::BTreeSet<PathBuf> = state
                .windows
                .by_id
                .values()
                .map(|w| w.folder.clone())
                .collect();
            for f in folders {
                self.send_tabs(&mut state, &f);
            }
            state.generation += 1;
            // A tab that started, exited or went: `nerdr wait` looks again.
            self.states.send_modify(|n| *n += 1);
            (
                state.generation,
                persist::snapshot(&state),
                state.status_text(),
            )
        };
        self.status_line.set(status);
        // Written before the request that changed the list is answered (a
        // core restarted right after still finds the tab), but where a
        // state dir on a slow disk costs no async worker: the writers wait
        // for the disk and each other, the other requests do not.
        off_the_workers(|| {
            let mut written = self.saved_generation.lock().unwrap();
            if *written < generation {
                persist::save(&self.paths.state_dir.join("tabs.json"), &saved);
                *written = generation;
            }
        });
    }

    fn on_event(self: &Arc<Self>, ev: HostEvent) {
        let mut state = self.state.lock().unwrap();
        match ev {
            HostEvent::Output {
                tab,
                bytes,
                generation,
            } => {
                let st = &mut *state;
                // The last output of the program a restart replaced: the
                // holder counted it for that one, so counted here for the
                // new one, it would put this core's snapshots ahead of the
                // holder's offsets and each would be refused.
                if st.snapshots.stale(&tab, generation) {
                    return;
                }
                let mut replies = Vec::new();
                if let Some(t) = st.tabs.get_mut(&tab) {
                    replies = output::take_in(t, &bytes);
                    st.snapshots.output(&tab, &bytes, Instant::now());
                    if t.sandboxed {
                        st.turns.output(&tab, Instant::now());
                    }
                }
                self.detect_output(st, &tab, &bytes);
                // Under the state lock: a window switching to this tab gets
                // each change either in its whole screen or in a difference
                // after it, never both.
                self.paint_windows(st, &tab);
                drop(state);
                self.outputs.send_modify(|n| *n = n.wrapping_add(1));
                output::answer(&*self.host, &tab, replies);
            }
            HostEvent::Started {
                tab,
                pid,
                start_time,
            } => {
                if let Some(t) = state.tabs.get_mut(&tab) {
                    lifecycle::apply(t, lifecycle::Event::Started { pid, start_time });
                }
                drop(state);
                self.changed();
            }
            HostEvent::Exited { tab, code, pid } => {
                let replaced = state.replaced_pids.get(&tab).copied();
                if let Some(t) = state.tabs.get_mut(&tab) {
                    if lifecycle::stale_exit(pid, t.pid, replaced) {
                        tracing::info!(tab = %tab, pid = ?pid, "the exit of the tab's previous program");
                        if pid == replaced {
                            state.replaced_pids.remove(&tab);
                        }
                        drop(state);
                        return;
                    }
                    if lifecycle::apply(t, lifecycle::Event::Exited { code }) {
                        tracing::info!(tab = %tab, agent = %t.agent, exit_code = code, "program exited");
                    }
                }
                drop(state);
                self.changed();
                self.setup_exited(&tab, code);
            }
        }
    }
}

/// Run `f`, which blocks, without taking an async worker out of service:
/// on one, the runtime moves the worker's other tasks to a fresh thread
/// first. Elsewhere (a blocking thread, no runtime) `f` just runs.
fn off_the_workers<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// Entry point. Runs before any thread exists so that the activation
/// variables can be read and cleared safely. Takes the sockets systemd
/// passed, or binds them itself, then serves them until SIGTERM or SIGINT.
pub fn run() -> anyhow::Result<std::process::ExitCode> {
    let activated = activation::Activated::take_from_env()
        .context("cannot read the sockets passed by socket activation")?;
    let paths = Paths::from_process()?;
    crate::private_dir::create(&paths.state_dir)?;
    let logs_to_stderr = logging::init(&paths.core_log())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = rt.block_on(async {
        // Hand-bound sockets are removed when these guards drop; activated
        // ones belong to the service manager and are never unlinked or
        // rebound.
        let mut _bound = Vec::new();
        let listeners = if activated.is_empty() {
            let client = listen::bind(&paths.client_socket())?;
            let hook = listen::bind(&paths.hook_socket())?;
            let l = Listeners {
                hook: hook.listener.try_clone()?,
                client: client.listener.try_clone()?,
                activated: false,
            };
            _bound.extend([client, hook]);
            l
        } else {
            let (hook, client) = activated.hook_and_client()?;
            Listeners {
                hook: hook.into(),
                client: client.into(),
                activated: true,
            }
        };
        serve(paths, listeners, shutdown_signal()).await
    });
    // Programs of a local host are our children; do not wait for stragglers.
    rt.shutdown_timeout(Duration::from_millis(200));
    // main() prints the error on stderr; log it only where it would not
    // appear twice.
    if let (Err(e), false) = (&result, logs_to_stderr) {
        tracing::error!(error = %format!("{e:#}"), "core stopped on an error");
    }
    result.map(|()| std::process::ExitCode::SUCCESS)
}

/// The tabs a starting core knows: those `tabs.json` lists, made live where
/// the holder still runs them (with their screens), then any the holder has
/// that the list missed. A listed tab the holder lost shows as exited.
fn rebuild(paths: &Paths, found: Vec<Found>, approvals: approvals::Approvals) -> State {
    // Unreadable, the links are empty: `nerdr spinoffs` names the file.
    let spinoffs = crate::spinoff::store::load(&crate::spinoff::store::file(&paths.state_dir))
        .map(|s| s.links())
        .unwrap_or_default();
    // Unreadable, the history is empty until the next switch says why.
    let switches = crate::switch::store::load(&crate::switch::store::file(&paths.state_dir))
        .map(|s| s.tabs)
        .unwrap_or_default();
    // Unreadable, no tab is marked: `nerdr handoffs` names the file.
    let handed = crate::handoff::store::load(&crate::handoff::store::file(&paths.state_dir))
        .map(|s| s.tabs())
        .unwrap_or_default();
    let mut state = State {
        approvals,
        spinoffs,
        switches,
        handed,
        ..State::default()
    };
    // Which rules each agent's tab is read by: the config as it is now
    // (read once, before the core serves anyone).
    let config = crate::config::load(&paths.config_file()).ok();
    let detection = |agent: &str, screen: &[u8]| {
        let name = config
            .as_ref()
            .and_then(|c| c.resolve_agent(agent).ok())
            .map_or_else(|| agent.to_string(), |a| a.detect);
        let mut d = detection::Detection::new(detection::load_rules(&name, &paths.detect_dir()));
        // The screen the holder kept: read as output, so the timer looks
        // at it once.
        let _ = d
            .tracker
            .output(screen, Instant::now(), std::time::SystemTime::now());
        d
    };
    let mut found: std::collections::BTreeMap<String, Found> =
        found.into_iter().map(|f| (f.held.tab.clone(), f)).collect();
    let mut restore = |saved: Saved, f: Option<Found>| {
        let tab = match f {
            Some(f) => {
                // The holder's record is from the program's start; a
                // rename since is in the list, and so is a base that
                // moved (a rebase: `core::worktrees`).
                let renamed = saved.name.clone();
                let listed_number = saved.number;
                let listed_worktree = saved.worktree.clone();
                let mut meta: Saved = serde_json::from_value(f.held.meta).unwrap_or(saved);
                meta.name = renamed.or(meta.name);
                // The holder's record may be from before the tab was numbered.
                meta.number = listed_number.or(meta.number);
                if let (Some(w), Some(listed)) = (meta.worktree.as_mut(), listed_worktree) {
                    if listed.path == w.path && listed.base.is_some() {
                        w.base = listed.base;
                        w.base_branch = listed.base_branch;
                    }
                }
                let mut t = Tab::from_saved(meta, f.held.rows, f.held.cols);
                t.screen.process(&f.screen);
                state
                    .snapshots
                    .found(&f.held.tab, f.held.offset, &f.screen, f.held.generation);
                if t.kind == crate::protocol::api::TabKind::Agent {
                    t.detection = Some(detection(&t.agent, &f.screen));
                }
                let found = lifecycle::Event::Found {
                    pid: f.held.pid,
                    start_time: f.held.start_time,
                    exit_code: f.held.exit_code,
                };
                lifecycle::apply(&mut t, found);
                t
            }
            None => {
                let mut t = Tab::from_saved(saved, DEFAULT_ROWS, DEFAULT_COLS);
                lifecycle::apply(&mut t, lifecycle::Event::Missing);
                t
            }
        };
        state.insert(tab);
    };
    for saved in persist::load(&paths.state_dir.join("tabs.json")) {
        let f = found.remove(&saved.id);
        restore(saved, f);
    }
    for (_, f) in std::mem::take(&mut found) {
        match serde_json::from_value::<Saved>(f.held.meta.clone()) {
            Ok(saved) => restore(saved, Some(f)),
            Err(e) => {
                tracing::warn!(tab = %f.held.tab, error = %e, "held program without a readable record")
            }
        }
    }
    // The tabs' unread review marks, as a restarted core left them.
    match crate::review::store::load(&crate::review::store::file(&paths.state_dir)) {
        Ok(store) => review_posts::note_unread(&mut state, &store.unread_counts()),
        Err(e) => tracing::warn!(error = %e, "reviews.json unread: no review marks"),
    }
    state
}

async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
