//! PROXY SEAM: how the sandbox reaches the network. The sandbox always
//! gets its own network namespace (`--unshare-net`: loopback only). The
//! filtering proxy (`src/proxy/`, built separately) plugs in here:
//!
//! 1. before bwrap starts, `plan` starts the proxy on a Unix socket outside
//!    (deciding with [`NetworkSettings`], reporting each decision through
//!    [`Trail::net`](super::audit_trail::Trail::net)) and returns its socket
//!    path in `binds`, which the bwrap builder binds into the sandbox (not
//!    inside nerdr's client socket folder, which is hidden after the binds:
//!    e.g. `$XDG_RUNTIME_DIR/nerdr-sandbox/<session>.sock`);
//! 2. `nerdr sandbox-init` (`init.rs`) already runs first inside the
//!    namespace; `inner_init` holds the arguments it is to get before `--`
//!    (`--bridge-socket S --bridge-port P`), so that it brings up the
//!    bridge on 127.0.0.1:P forwarding to S before it execs CMD;
//! 3. `env` sets `HTTP_PROXY`/`HTTPS_PROXY`/`http_proxy`/`https_proxy` to
//!    `http://127.0.0.1:P` and `ALL_PROXY`/`all_proxy` to
//!    `socks5h://127.0.0.1:P`.
//!
//! Until then [`plan`] returns [`Network::loopback_only`]: no way out.

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use super::audit_trail::Trail;
use super::settings::NetworkSettings;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Network {
    /// Unix sockets to bind into the sandbox at the same path.
    pub binds: Vec<PathBuf>,
    /// Variables to set inside.
    pub env: Vec<(OsString, OsString)>,
    /// Arguments for `nerdr sandbox-init`, before its `--`.
    pub inner_init: Vec<OsString>,
}

impl Network {
    pub fn loopback_only() -> Self {
        Network::default()
    }
}

/// The network plan for these settings. PROXY SEAM: start the proxy here,
/// handing it `trail` (a clone of the `Arc`) for its decisions.
pub fn plan(_settings: &NetworkSettings, _trail: &Arc<Trail>) -> Network {
    Network::loopback_only()
}

/// The proxy variables for a bridge on 127.0.0.1:`port`, every case
/// programs look for.
#[allow(dead_code)] // for `plan`, once the proxy is merged
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
