//! The proxy's resource limits: how many client connections it serves at
//! once and how long an opened connection may stay idle.

use std::time::Duration;

/// Client connections one proxy serves at once. Each holds relay buffers
/// (2 x 64 KiB) in the outer nerdr process, so a sandbox cannot grow it
/// without bound.
pub const MAX_CONNECTIONS: usize = 256;
/// A tunnel or an absolute-URI exchange with no byte either way for this
/// long is closed.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// The proxy's resource limits; tests shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_connections: usize,
    pub idle: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_connections: MAX_CONNECTIONS,
            idle: IDLE_TIMEOUT,
        }
    }
}
