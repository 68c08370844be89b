//! The names of nerdr's systemd user units: what `nerdr service install`
//! writes and what a client starts when it finds the sockets stopped. A
//! module of their own so both can name them without depending on each
//! other.

pub const HOOK_SOCKET_UNIT: &str = "nerdr-hook.socket";
pub const CLIENT_SOCKET_UNIT: &str = "nerdr-client.socket";
pub const SERVICE_UNIT: &str = "nerdr.service";
/// The sockets, which are what `install` enables and starts.
pub const SOCKET_UNITS: [&str; 2] = [HOOK_SOCKET_UNIT, CLIENT_SOCKET_UNIT];
/// Every file `install` writes on Linux, in the order it writes them.
pub const UNIT_NAMES: [&str; 3] = [HOOK_SOCKET_UNIT, CLIENT_SOCKET_UNIT, SERVICE_UNIT];
/// Where packages put user units; every user's manager reads it, after the
/// user's own `~/.config/systemd/user` (whose units win).
pub const PACKAGE_UNIT_DIR: &str = "/usr/lib/systemd/user";
