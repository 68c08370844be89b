//! The filtering network proxy of `nerdr sandbox`: the policy (pure), the
//! package-registry presets, the proxy server (HTTP CONNECT, absolute-URI
//! HTTP, SOCKS5) and the bridge that carries a sandbox's loopback
//! connections to the proxy's Unix socket. It does not build the sandbox.

pub mod bridge;
pub mod dns;
mod forward;
pub mod http;
pub mod policy;
pub mod presets;
pub mod server;
mod socks;

pub use server::{listen_unix, Decision, Proxy};
