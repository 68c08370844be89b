//! `nerdr holder`: small and boring on purpose. It owns every PTY, keeps
//! per program the last snapshot the core handed it plus the output after
//! it (`replay`, the only place it parses, rarely), so a restarted core can
//! redraw every screen, and outlives core restarts and upgrades. It serves only the recorded core, on an abstract
//! socket (no file to squat or delete).

mod handover;
pub mod replay;
mod scopes;
mod server;
mod state;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use crate::host::pty::PtyHost;
use crate::host::Scopes;
use crate::paths::Paths;
use crate::protocol::api::ProgramsMode;
use crate::protocol::holder::socket_name;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Put each program in its own transient systemd scope (the core passes
    /// this when it started the holder through the user manager)
    #[arg(long)]
    pub scopes: bool,
    /// Internal: the state a previous holder left when it re-executed as
    /// this build for a hand-over (see `protocol::handover`)
    #[arg(long, value_name = "FD")]
    pub handover_fd: Option<i32>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_process()?;
    crate::private_dir::create(&paths.state_dir)?;
    crate::logging::init(&paths.state_dir.join("holder.log"))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    // What a previous image of this process left, when it re-executed.
    let restored = args
        .handover_fd
        .map(|fd| handover::restore(fd, &socket_name(&paths)))
        .transpose()?;
    // Served on a thread of its own: the main thread forks the programs and
    // re-executes for a hand-over (`host::main_thread`).
    let handle = rt.handle().clone();
    crate::host::main_thread::serve(handle, move || {
        rt.block_on(async move {
            let name = socket_name(&paths);
            let listener = match &restored {
                // The same socket, never closed: cores connecting meanwhile wait.
                Some(r) => r.listener.try_clone()?,
                None => crate::platform::abstract_listener(&name).with_context(|| {
                    format!(
                        "cannot listen on @{name}: is another holder running for this state dir?"
                    )
                })?,
            };
            listener.set_nonblocking(true)?;
            let listener = tokio::net::UnixListener::from_std(listener)?;
            crate::peer::record_self(&paths.state_dir.join("holder.pid"))
                .context("cannot record the holder in the state dir")?;

            let (events_tx, events_rx) = crate::host::events();
            let with_scopes = restored.as_ref().map_or(args.scopes, |r| r.scopes);
            let (scopes, mode): (Option<Arc<dyn Scopes>>, _) = if with_scopes {
                let s = scopes::SystemdScopes::connect()
                    .await
                    .context("--scopes was given but the systemd user manager is unreachable")?;
                (Some(Arc::new(s)), ProgramsMode::HolderScopes)
            } else {
                (None, ProgramsMode::HolderSessions)
            };
            let host = PtyHost::new(events_tx, scopes, mode)?;
            let kept = match restored {
                Some(r) => {
                    tracing::info!(
                        from = r.from_version,
                        to = crate::protocol::holder::HOLDER_VERSION,
                        "re-executed for a hand-over; adopting the programs"
                    );
                    r.adopt(&host)
                }
                None => Default::default(),
            };
            server::serve(server::Served {
                paths,
                listener,
                host,
                events: events_rx,
                scopes: with_scopes,
                kept,
            })
            .await
        })
    })??;
    Ok(ExitCode::SUCCESS)
}
