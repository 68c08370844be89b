//! `nerdr core`: all state and policy. Takes its two sockets from socket
//! activation or binds them itself, serves both, and reports to the service
//! manager. Programs run on a [`Host`]; the core never owns a PTY directly.

pub mod activation;
mod agent;
mod answers;
mod api;
mod approvals;
mod attach;
mod caller;
mod client_conn;
mod close;
pub mod env;
mod fresh_worktree;
mod hook_conn;
mod hosting;
mod identity;
mod keyfile;
mod launch;
mod launch_plan;
mod lifecycle;
pub mod listen;
pub mod logging;
mod net_questions;
mod not_found;
pub mod notify;
mod outlog;
mod persist;
mod planning;
mod plugins;
mod privilege;
mod programs;
mod question;
mod reports;
mod sandbox_check;
mod setup;
pub mod state;
mod turns;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::net::UnixListener;

use crate::host::remote::Found;
use crate::host::{Host, HostEvent};
use crate::paths::Paths;
pub use caller::Caller;
use state::{Saved, State, Tab, DEFAULT_COLS, DEFAULT_ROWS};

pub struct Core {
    pub state: Mutex<State>,
    pub host: Arc<dyn Host>,
    pub paths: Paths,
    /// This executable, as programs find it in `NERDR_BIN`.
    pub bin: PathBuf,
    pub activated: bool,
    /// The client key's bytes; clients prove they read the same file.
    key: Vec<u8>,
    /// The environment of the last client that started a program: programs
    /// started from inside tabs build on it (docs/ARCHITECTURE.md, "What
    /// the agent sees").
    last_client_env: Mutex<Option<Vec<(String, String)>>>,
    /// Attached windows (`nerdr` with no command).
    windows: Mutex<attach::Windows>,
    /// What installed agents support, from their `--help`.
    detector: Arc<crate::agents::Detector>,
    /// What waits for the person's yes.
    approvals: Mutex<approvals::Approvals>,
    /// Turns of sandboxed agents, to notice reports that never arrive.
    turns: Mutex<turns::Turns>,
    /// Hook connections held per program scope.
    hook_slots: Mutex<std::collections::HashMap<String, usize>>,
    /// When each (tab, operation, reason) refusal was last journaled.
    refusals: Mutex<std::collections::HashMap<(String, &'static str, String), Instant>>,
}

impl Core {
    /// Tell the service manager what we are doing now, and write it down.
    fn changed(&self) {
        let state = self.state.lock().unwrap();
        notify::status(&state.status_text());
        persist::save(&self.paths.state_dir.join("tabs.json"), &state);
        let folders: std::collections::BTreeSet<PathBuf> = self
            .windows
            .lock()
            .unwrap()
            .by_id
            .values()
            .map(|w| w.folder.clone())
            .collect();
        for f in folders {
            self.send_tabs(&state, &f);
        }
    }

    fn on_event(&self, ev: HostEvent) {
        let mut state = self.state.lock().unwrap();
        match ev {
            HostEvent::Output { tab, bytes } => {
                if let Some(t) = state.tabs.get_mut(&tab) {
                    t.screen.process(&bytes);
                    t.log.push(&bytes);
                    if t.sandboxed {
                        self.turns.lock().unwrap().output(&tab, Instant::now());
                    }
                }
                // Under the state lock: a window switching to this tab gets
                // each byte either in its redraw or here, never both.
                self.forward_output(&tab, &bytes);
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
            HostEvent::Exited { tab, code } => {
                if let Some(t) = state.tabs.get_mut(&tab) {
                    if lifecycle::apply(t, lifecycle::Event::Exited { code }) {
                        tracing::info!(tab = %tab, agent = %t.agent, exit_code = code, "program exited");
                    }
                }
                drop(state);
                self.changed();
            }
        }
    }
}

/// Entry point. Runs before any thread exists so that the activation
/// variables can be read and cleared safely.
pub fn run() -> anyhow::Result<std::process::ExitCode> {
    let activated = activation::Activated::take_from_env()
        .context("cannot read the sockets passed by socket activation")?;
    let paths = Paths::from_process()?;
    listen::private_dir(&paths.state_dir)?;
    let logs_to_stderr = logging::init(&paths.core_log())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let result = rt.block_on(serve(paths, activated));
    // Programs of a local host are our children; do not wait for stragglers.
    rt.shutdown_timeout(Duration::from_millis(200));
    // main() prints the error on stderr; log it only where it would not
    // appear twice.
    if let (Err(e), false) = (&result, logs_to_stderr) {
        tracing::error!(error = %format!("{e:#}"), "core stopped on an error");
    }
    result.map(|()| std::process::ExitCode::SUCCESS)
}

async fn serve(paths: Paths, activated: activation::Activated) -> anyhow::Result<()> {
    let was_activated = !activated.is_empty();
    // Hand-bound sockets are removed when these guards drop; activated ones
    // belong to the service manager and are never unlinked or rebound.
    let mut _bound = Vec::new();
    let (hook, client) = if was_activated {
        let (h, c) = activated.hook_and_client()?;
        (
            std::os::unix::net::UnixListener::from(h),
            std::os::unix::net::UnixListener::from(c),
        )
    } else {
        let c = listen::bind(&paths.client_socket())?;
        let h = listen::bind(&paths.hook_socket())?;
        let pair = (c.listener.try_clone()?, h.listener.try_clone()?);
        _bound.push(c);
        _bound.push(h);
        (pair.1, pair.0)
    };
    for l in [&hook, &client] {
        l.set_nonblocking(true)?;
    }
    let hook = UnixListener::from_std(hook)?;
    let client = UnixListener::from_std(client)?;

    // From here on we are the core: the holder accepts only the process
    // recorded here.
    crate::holder::peer::record_self(&paths.state_dir.join("core.pid"))
        .context("cannot record the core in the state dir")?;
    listen::private_dir(&paths.run_dir)?;
    let key = keyfile::refresh(&paths.client_key())?;
    let bin = std::env::current_exe().context("cannot find this executable's path")?;
    let (events_tx, mut events_rx) = crate::host::events();
    let mut attached = hosting::attach(&paths, &bin, events_tx).await?;
    let holder_lost = attached.lost.take();
    let state = rebuild(&paths, attached.found);
    let core = Arc::new(Core {
        state: Mutex::new(state),
        host: attached.host,
        paths: paths.clone(),
        bin,
        activated: was_activated,
        key,
        last_client_env: Mutex::default(),
        windows: Mutex::default(),
        detector: Arc::new(crate::agents::Detector::new(&paths.state_dir)),
        approvals: Mutex::new(approvals::Approvals::load(
            &paths.state_dir.join("approvals.json"),
        )),
        turns: Mutex::default(),
        hook_slots: Mutex::default(),
        refusals: Mutex::default(),
    });
    core.changed();

    let c = core.clone();
    tokio::spawn(async move {
        while let Some(ev) = events_rx.recv().await {
            c.on_event(ev);
        }
    });
    // Logged before the first connection is served, so anything that
    // reached the core can find this line.
    tracing::info!(
        pid = std::process::id(),
        activated = was_activated,
        hook = %paths.hook_socket().display(),
        client = %paths.client_socket().display(),
        host = %core.host.mode(),
        "core ready"
    );
    tokio::spawn(accept_loop(core.clone(), client, Socket::Client));
    tokio::spawn(accept_loop(core.clone(), hook, Socket::Hook));
    let c = core.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_millis(50));
        loop {
            tick.tick().await;
            c.catch_up();
        }
    });
    let c = core.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        loop {
            tick.tick().await;
            c.warn_silent_turns();
        }
    });
    if let Some(every) = notify::watchdog_interval() {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                notify::watchdog();
            }
        });
    }

    notify::ready(&core.state.lock().unwrap().status_text());

    let lost = async move {
        match holder_lost {
            Some(rx) => rx
                .await
                .unwrap_or_else(|_| "the holder link dropped".into()),
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = shutdown_signal() => {}
        why = lost => {
            // Without its holder the core cannot start or reach programs; a
            // new core starts a new holder (systemd restarts us on failure;
            // without it, the next command starts a core).
            notify::stopping();
            core.changed();
            anyhow::bail!("lost the holder ({why}); exiting so a new core starts a new holder");
        }
    }
    notify::stopping();
    tracing::info!("core stopping");
    if core.host.programs_end_with_core() {
        // The programs are our children and end with us; tell them the way
        // a closing terminal would rather than leaving orphans.
        let folders: Vec<PathBuf> = core
            .state
            .lock()
            .unwrap()
            .sessions
            .keys()
            .cloned()
            .collect();
        for f in folders {
            core.quit_session(&f).await;
        }
    }
    Ok(())
}

/// The tabs a starting core knows: those `tabs.json` lists, made live where
/// the holder still runs them (with their screens), then any the holder has
/// that the list missed. A listed tab the holder lost shows as exited.
fn rebuild(paths: &Paths, found: Vec<Found>) -> State {
    let mut state = State::default();
    let mut found: std::collections::BTreeMap<String, Found> =
        found.into_iter().map(|f| (f.held.tab.clone(), f)).collect();
    let mut restore = |saved: Saved, f: Option<Found>| {
        let tab = match f {
            Some(f) => {
                let meta: Saved = serde_json::from_value(f.held.meta).unwrap_or(saved);
                let mut t = Tab::from_saved(meta, f.held.rows, f.held.cols);
                t.screen.process(&f.screen);
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

#[derive(Clone, Copy, Debug)]
enum Socket {
    Client,
    Hook,
}

/// Hook connections served at once: programs in tabs cannot use up the
/// core's descriptors (the client socket, the user's, has no such cap).
const MAX_HOOK_CONNECTIONS: usize = 512;

async fn accept_loop(core: Arc<Core>, listener: UnixListener, which: Socket) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_HOOK_CONNECTIONS));
    loop {
        // Full: stop accepting until a hook connection ends.
        let slot = match which {
            Socket::Hook => Some(slots.clone().acquire_owned().await.expect("never closed")),
            Socket::Client => None,
        };
        match listener.accept().await {
            Ok((stream, _)) => {
                let core = core.clone();
                tokio::spawn(async move {
                    let _slot = slot;
                    let r = match which {
                        Socket::Client => client_conn::serve(core, stream).await,
                        Socket::Hook => hook_conn::serve(core, stream).await,
                    };
                    if let Err(e) = r {
                        tracing::debug!(socket = ?which, error = %e, "connection ended");
                    }
                });
            }
            Err(e) => {
                // Out of descriptors or memory: keep serving the ones we
                // have, and try again shortly.
                tracing::warn!(socket = ?which, error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}
