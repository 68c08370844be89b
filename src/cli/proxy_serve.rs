//! `nerdr proxy-serve` (internal): run the filtering proxy alone, for tests
//! and benchmarks. Reads the `network` block of the sandbox settings from a
//! JSON file, prints where it listens, then one JSON line per decision.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use serde::Deserialize;

use crate::proxy::dns::{DnsResolver, Resolver, SystemResolver};
use crate::proxy::policy::NetRules;
use crate::proxy::{presets, report, Decision, Limits, Proxy};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// JSON file holding the settings' `network` block
    /// (allowedDomains, deniedDomains, allowLocalBinding, allowLocalPorts)
    #[arg(long, value_name = "FILE")]
    pub network: PathBuf,
    /// Listen on this Unix socket
    #[arg(long, value_name = "PATH")]
    pub unix: Option<PathBuf>,
    /// Listen on this loopback TCP address (port 0: any free port)
    #[arg(long, value_name = "ADDR")]
    pub tcp: Option<SocketAddr>,
    /// Resolve names with this DNS server instead of the system resolver
    #[arg(long, value_name = "ADDR")]
    pub dns: Option<SocketAddr>,
    /// Also allow the package registries this machine is configured for
    #[arg(long)]
    pub presets: bool,
    /// Client connections served at once (tests lower it)
    #[arg(long, value_name = "N", default_value_t = crate::proxy::server::MAX_CONNECTIONS)]
    pub max_connections: usize,
    /// Close a tunnel or exchange idle this long, in milliseconds (tests
    /// shorten it)
    #[arg(long, value_name = "MS")]
    pub idle_timeout_ms: Option<u64>,
    /// Stop when standard input closes: write what is still open as open
    /// at exit, then end (as `nerdr sandbox` does when its program ends)
    #[arg(long)]
    pub until_stdin_closes: bool,
}

/// The `network` block of the common sandbox settings.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NetworkSettings {
    #[serde(default)]
    pub allowed_domains: Vec<String>,
    #[serde(default)]
    pub denied_domains: Vec<String>,
    pub allow_local_binding: Option<bool>,
    #[serde(default)]
    pub allow_local_ports: Vec<u16>,
}

pub fn run(a: Args) -> anyhow::Result<ExitCode> {
    let file = a.network.display().to_string();
    let text =
        std::fs::read_to_string(&a.network).with_context(|| format!("cannot read {file}"))?;
    let settings: NetworkSettings = serde_json::from_str(&text)
        .with_context(|| format!("{file}: not a network settings block"))?;
    let mut rules = NetRules::from_lists(&settings.allowed_domains, &settings.denied_domains)
        .with_context(|| format!("{file}: bad entry"))?;
    rules.allow_local_binding = settings.allow_local_binding.unwrap_or(true);
    rules.allow_local_ports = settings.allow_local_ports;
    if a.presets {
        let (hosts, warnings) = presets::from_machine();
        for w in warnings {
            eprintln!("nerdr proxy-serve: {w}");
        }
        rules.presets = hosts;
    }
    if a.unix.is_none() && a.tcp.is_none() {
        anyhow::bail!("give --unix PATH, --tcp ADDR or both");
    }
    let resolver: Arc<dyn Resolver> = match a.dns {
        Some(server) => Arc::new(DnsResolver {
            server,
            timeout: Duration::from_secs(3),
        }),
        None => Arc::new(SystemResolver),
    };
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async move {
        let tcp = match a.tcp {
            Some(addr) => {
                let l = tokio::net::TcpListener::bind(addr)
                    .await
                    .with_context(|| format!("cannot listen on {addr}"))?;
                rules.closed_local_ports.push(l.local_addr()?.port());
                Some(l)
            }
            None => None,
        };
        let unix = a
            .unix
            .as_deref()
            .map(crate::proxy::listen_unix)
            .transpose()?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Decision>();
        let limits = Limits {
            max_connections: a.max_connections,
            idle: a
                .idle_timeout_ms
                .map_or(crate::proxy::server::IDLE_TIMEOUT, Duration::from_millis),
        };
        let proxy = Proxy::with_limits(rules, resolver, tx, limits);
        let mut out = std::io::stdout();
        if let Some(l) = tcp {
            writeln!(out, "listening on tcp {}", l.local_addr()?)?;
            tokio::spawn(proxy.clone().serve_tcp(l, std::future::pending::<()>()));
        }
        if let Some(l) = unix {
            writeln!(
                out,
                "listening on unix {}",
                a.unix.as_deref().unwrap_or_else(|| "".as_ref()).display()
            )?;
            tokio::spawn(proxy.clone().serve_unix(l, std::future::pending::<()>()));
        }
        out.flush()?;
        drop(proxy);
        let stop = async {
            if a.until_stdin_closes {
                use tokio::io::AsyncReadExt;
                let mut sink = Vec::new();
                let _ = tokio::io::stdin().read_to_end(&mut sink).await;
            } else {
                std::future::pending::<()>().await
            }
        };
        let mut failed = None;
        report::forward(rx, stop, report::EXIT_GRACE, |d: &Decision| {
            let line = serde_json::to_string(d).expect("a decision serializes");
            if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
                failed.get_or_insert(e);
            }
        })
        .await;
        match failed {
            Some(e) => Err(anyhow::Error::new(e).context("cannot write decisions")),
            None => Ok(ExitCode::SUCCESS),
        }
    })
}
