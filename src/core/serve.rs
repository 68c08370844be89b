//! Serving the core's two sockets: [`serve`] takes listeners already bound
//! (by systemd's socket activation or by `run`) and a shutdown signal, as
//! the holder and the proxy do, so a test or another entry point can drive
//! it without the process's environment.

use std::future::Future;
use std::os::unix::net::UnixListener as StdListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::net::UnixListener;

use super::{approvals, client_conn, hook_conn, hosting, keyfile, Core, Wake};
use crate::notify;
use crate::paths::Paths;

/// The core's two sockets, bound.
pub struct Listeners {
    /// Where programs in tabs reach the core (`nerdr hook`, `nerdr` inside
    /// a tab).
    pub hook: StdListener,
    /// Where the person's windows and commands reach it.
    pub client: StdListener,
    /// Passed by socket activation (for `nerdr status`).
    pub activated: bool,
}

/// Serve until `shutdown` completes or the holder is lost (an error: a new
/// core starts a new holder).
pub async fn serve(
    paths: Paths,
    listeners: Listeners,
    shutdown: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    for l in [&listeners.hook, &listeners.client] {
        l.set_nonblocking(true)?;
    }
    let hook = UnixListener::from_std(listeners.hook)?;
    let client = UnixListener::from_std(listeners.client)?;

    // From here on we are the core: the holder accepts only the process
    // recorded here.
    crate::peer::record_self(&paths.state_dir.join("core.pid"))
        .context("cannot record the core in the state dir")?;
    crate::private_dir::create(&paths.run_dir)?;
    let key = keyfile::refresh(&paths.client_key())?;
    let bin = std::env::current_exe().context("cannot find this executable's path")?;
    let (events_tx, mut events_rx) = crate::host::events();
    let mut attached = hosting::attach(&paths, &bin, events_tx).await?;
    let holder_lost = attached.lost.take();
    let approvals = approvals::Approvals::load(&paths.state_dir.join("approvals.json"));
    let state = super::rebuild(&paths, attached.found, approvals);
    let core = Arc::new(Core {
        state: super::OneLock::new(state),
        host: attached.host,
        paths: paths.clone(),
        bin,
        activated: listeners.activated,
        key,
        detector: Arc::new(crate::agents::Detector::new(&paths.state_dir)),
        wake: Wake::default(),
        states: tokio::sync::watch::Sender::new(0),
        outputs: tokio::sync::watch::Sender::new(0),
        saved_generation: Default::default(),
        status_line: notify::StatusLine::start().context("cannot start the status thread")?,
        file_reports: Default::default(),
    });
    core.changed();
    let c = core.clone();
    tokio::spawn(async move { c.watch_adopted_reports().await });
    // Before any request is served: the privilege model reads it.
    core.mirror_review_links().await;

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
        activated = listeners.activated,
        hook = %paths.hook_socket().display(),
        client = %paths.client_socket().display(),
        host = %core.host.mode(),
        "core ready"
    );
    spawn_tasks(&core, client, hook);

    // Bound first: a guard in the argument would live through the send.
    let status = core.state.lock().unwrap().status_text();
    notify::ready(&status);

    let lost = async move {
        match holder_lost {
            Some(rx) => rx
                .await
                .unwrap_or_else(|_| "the holder link dropped".into()),
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = shutdown => {}
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
    end_programs(&core).await;
    Ok(())
}

/// The connections and the background tasks.
fn spawn_tasks(core: &Arc<Core>, client: UnixListener, hook: UnixListener) {
    tokio::spawn(accept_loop(core.clone(), client, Socket::Client));
    tokio::spawn(accept_loop(core.clone(), hook, Socket::Hook));
    if !core.host.programs_end_with_core() {
        tokio::spawn(super::snapshots::keep_sending(core.clone()));
    }
    tokio::spawn(watch_turns(core.clone()));
    tokio::spawn(watch_states(core.clone()));
    tokio::spawn(super::review_auto::watch_turn_ends(core.clone()));
    if let Some(every) = notify::watchdog_interval() {
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                notify::watchdog();
            }
        });
    }
}

/// Programs that are the core's own children end with it.
async fn end_programs(core: &Core) {
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
}

/// Sandboxed agents' turns are watched for missing reports only while a
/// turn is open.
async fn watch_turns(core: Arc<Core>) {
    loop {
        core.wake.turns.notified().await;
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.tick().await;
        loop {
            tick.tick().await;
            if !core.warn_silent_turns() {
                break;
            }
        }
    }
}

/// Agent states are looked at again when a tracker asks (a quiet period
/// to end, a screen that changed to read): the task sleeps until the
/// earliest such deadline, and without one until output or a report
/// brings one. An idle core does not wake for it.
async fn watch_states(core: Arc<Core>) {
    loop {
        match core.evaluate_due() {
            None => core.wake.states.notified().await,
            Some(at) => {
                tokio::select! {
                    () = tokio::time::sleep_until(at.into()) => {}
                    () = core.wake.states.notified() => {}
                }
            }
        }
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
