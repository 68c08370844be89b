//! How the sandbox reaches the network: its own network namespace
//! (`--unshare-net`: loopback only) whose one way out is nerdr's filtering
//! proxy (`src/proxy/`).
//!
//! 1. Before bwrap starts, [`plan`] starts the proxy on a Unix socket
//!    outside (`$XDG_STATE_HOME/nerdr/sandbox/<session>.sock`, beside the
//!    hook socket; the runtime dir stays hidden), deciding with the
//!    settings' network rules and reporting each decision to the audit
//!    trail; the socket is bound into the sandbox at the same path.
//! 2. `nerdr sandbox-init` (`init.rs`), first inside the namespace, opens
//!    the bridge on 127.0.0.1:[`PORT`] to that socket before it execs CMD.
//! 3. CMD gets `HTTP_PROXY`/`HTTPS_PROXY` (`http://127.0.0.1:PORT`) and
//!    `ALL_PROXY` (`socks5h://...`), lower-case too.
//!
//! A host on neither list is asked about through the asker `plan` is
//! given (`ask_person`: the person, when `nerdr sandbox` runs in a tab).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use super::audit_trail::{NetDecision, Trail};
use super::settings::NetworkSettings;
use crate::proxy::asking::Asker;
use crate::proxy::dns::SystemResolver;
use crate::proxy::policy::NetRules;
use crate::proxy::{presets, report, Decision, Phase, Proxy};

/// The bridge's port inside the sandbox's own network namespace (free:
/// nothing else listens there).
pub const PORT: u16 = 3128;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    /// Unix sockets to bind into the sandbox at the same path.
    pub binds: Vec<PathBuf>,
    /// Variables to set inside.
    pub env: Vec<(OsString, OsString)>,
    /// Arguments for `nerdr sandbox-init`, before its `--`.
    pub inner_init: Vec<OsString>,
    /// What the proxy lets through, in words (for the limits file).
    pub allowed: String,
    /// Whether hosts on neither list are asked about.
    pub asks: bool,
}

/// The running proxy. Dropping it (when the sandbox's program has ended,
/// before the trail's exit line) stops it: the decisions still queued are
/// written, connections still open are written as open at exit, and the
/// socket file is removed.
pub struct Running {
    socket: PathBuf,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
            // Bounded: the proxy's thread waits `EXIT_GRACE` at most.
            let _ = self
                .done
                .recv_timeout(report::EXIT_GRACE + Duration::from_secs(2));
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// Start the proxy for these settings and say how the sandbox reaches it.
/// The proxy serves from a thread of its own until the process ends.
pub fn plan(
    settings: &NetworkSettings,
    trail: &Arc<Trail>,
    session: &str,
    state_dir: &Path,
    asker: Option<Arc<dyn Asker>>,
) -> anyhow::Result<(Network, Running)> {
    use anyhow::Context;
    let mut rules = NetRules::from_lists(&settings.allowed_domains, &settings.denied_domains)
        .map_err(|e| anyhow::anyhow!("sandbox settings: {e}"))?;
    rules.allow_local_binding = settings.allow_local_binding;
    rules.allow_local_ports = settings.allow_local_ports.clone();
    let (presets, warnings) = presets::from_machine();
    for w in &warnings {
        eprintln!("nerdr sandbox: warning: {w}");
        trail.setting(w);
    }
    rules.presets = presets;
    let allowed = crate::proxy::advice::allowed_summary(&rules);
    let asks = asker.is_some();

    // Beside the hook socket, in nerdr's state folder: read-only inside,
    // and not in the runtime dir, which the sandbox sees empty.
    let dir = state_dir.join("sandbox");
    crate::private_dir::create(&dir)
        .with_context(|| format!("cannot make the proxy's folder {}", dir.display()))?;
    let socket = dir.join(format!("{session}.sock"));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<std::io::Result<()>>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let (trail, path) = (trail.clone(), socket.clone());
    std::thread::Builder::new()
        .name("proxy".into())
        .spawn(move || {
            serve(rules, asker, &path, trail, ready_tx, stop_rx);
            let _ = done_tx.send(());
        })
        .context("cannot start the proxy's thread")?;
    ready_rx
        .recv()
        .context("the proxy stopped before it listened")?
        .with_context(|| format!("the proxy cannot listen on {}", socket.display()))?;
    let network = Network {
        binds: vec![socket.clone()],
        env: proxy_env(PORT),
        inner_init: vec![
            "--bridge-socket".into(),
            socket.clone().into(),
            "--bridge-port".into(),
            PORT.to_string().into(),
        ],
        allowed,
        asks,
    };
    let running = Running {
        socket,
        stop: Some(stop_tx),
        done: done_rx,
    };
    Ok((network, running))
}

fn serve(
    rules: NetRules,
    asker: Option<Arc<dyn Asker>>,
    socket: &Path,
    trail: Arc<Trail>,
    ready: std::sync::mpsc::Sender<std::io::Result<()>>,
    stop: tokio::sync::oneshot::Receiver<()>,
) {
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    rt.block_on(async move {
        let listener = match crate::proxy::listen_unix(socket) {
            Ok(l) => l,
            Err(e) => {
                let _ = ready.send(Err(e));
                return;
            }
        };
        let (tx, decisions) = tokio::sync::mpsc::unbounded_channel::<Decision>();
        let proxy = Proxy::with_asker(
            rules,
            Arc::new(SystemResolver),
            tx,
            crate::proxy::Limits::default(),
            asker,
        );
        tokio::spawn(proxy.serve_unix(listener, std::future::pending::<()>()));
        let _ = ready.send(Ok(()));
        report::forward(decisions, stop, report::EXIT_GRACE, |d| {
            trail.net(&net_decision(d))
        })
        .await;
    });
    // Connections still open end with the runtime, unrecorded: their
    // open-at-exit lines are written.
    rt.shutdown_background();
}

/// A proxy decision as the audit trail writes it.
fn net_decision(d: &Decision) -> NetDecision {
    let phase = match d.phase {
        Phase::Opened => "opened",
        Phase::Closed => "closed",
        Phase::Refused => "refused",
        Phase::Unreachable => "unreachable",
        Phase::OpenAtExit => "open-at-exit",
        Phase::Asked => "asked",
        Phase::Answered => "answered",
    };
    NetDecision {
        phase,
        connection: d.id,
        host: d.host.clone(),
        port: d.port,
        rule: d.rule.clone(),
        allowed: d.allowed,
        why: d.why.clone(),
        count: d.count,
        bytes_up: d.bytes_up,
        bytes_down: d.bytes_down,
    }
}

/// The proxy variables for a bridge on 127.0.0.1:`port`, every case
/// programs look for.
pub fn proxy_env(port: u16) -> Vec<(OsString, OsString)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut v = Vec::new();
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
        v.push((name.into(), http.clone().into()));
    }
    for name in ["ALL_PROXY", "all_proxy"] {
        v.push((name.into(), socks.clone().into()));
    }
    v.push(("NO_PROXY".into(), "".into()));
    v.push(("no_proxy".into(), "".into()));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_variables_in_every_case() {
        let env = proxy_env(3128);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        assert_eq!(get("HTTPS_PROXY").unwrap(), "http://127.0.0.1:3128");
        assert_eq!(get("http_proxy").unwrap(), "http://127.0.0.1:3128");
        assert_eq!(get("ALL_PROXY").unwrap(), "socks5h://127.0.0.1:3128");
        assert_eq!(get("all_proxy").unwrap(), "socks5h://127.0.0.1:3128");
    }
}
