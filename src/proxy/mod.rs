//! The filtering network proxy of `nerdr sandbox`: the policy (pure), the
//! package-registry presets, the proxy server (HTTP CONNECT, absolute-URI
//! HTTP, SOCKS5), what its decisions become in a trail (`report`) and the
//! bridge that carries a sandbox's loopback connections to the proxy's
//! Unix socket. It does not build the sandbox.
//!
//! Wiring, outside the sandbox (inside a tokio runtime):
//! ```ignore
//! let mut rules = policy::NetRules::from_lists(&allowed_domains, &denied_domains)?;
//! rules.allow_local_binding = allow_local_binding.unwrap_or(true);
//! rules.allow_local_ports = allow_local_ports;
//! let (presets, warnings) = presets::from_machine(); // warn about each
//! rules.presets = presets;
//! let listener = proxy::listen_unix(&socket_path)?;          // 0600
//! let (tx, decisions) = tokio::sync::mpsc::unbounded_channel::<proxy::Decision>();
//! let proxy = proxy::Proxy::with_asker(rules, Arc::new(dns::SystemResolver), tx,
//!     proxy::Limits::default(), asker);
//! tokio::spawn(proxy.serve_unix(listener, shutdown_future));
//! // Opened/closed lines, repeated refusals merged, open-at-exit lines
//! // once `stop` completes:
//! report::forward(decisions, stop, report::EXIT_GRACE, |d| audit(d)).await;
//! ```
//! `Proxy::with_limits` sets the connection limit and idle timeout
//! (`limits::MAX_CONNECTIONS`, `limits::IDLE_TIMEOUT` by default);
//! `Proxy::with_asker` also gives it an `asking::Asker` for hosts on
//! neither list (without one they are refused, the 403 body saying which
//! setting opens them: `advice`).
//! Inside the sandbox's network namespace (loopback up, the socket bound
//! in), the inner init runs `bridge::run_blocking("127.0.0.1:PORT", &sock)`
//! or `nerdr proxy-bridge --listen 127.0.0.1:PORT --to SOCK`, and the
//! command gets `HTTP_PROXY`/`HTTPS_PROXY`=`http://127.0.0.1:PORT` and
//! `ALL_PROXY`=`socks5h://127.0.0.1:PORT` (lower-case too).

pub mod advice;
pub mod answers;
pub mod asking;
pub mod bridge;
mod connector;
mod counted;
pub mod decision;
pub mod dns;
mod forward;
pub mod http;
mod idle;
pub mod limits;
pub mod policy;
pub mod presets;
pub mod report;
pub mod server;
mod socks;

pub use decision::{Decision, Phase};
pub use limits::Limits;
pub use server::{listen_unix, Proxy};
