//! Wire formats between nerdr's processes. One module per message family,
//! encode and decode side by side:
//! - [`api`]: the requests every command sends, shared by both sockets;
//! - [`frame`]: length-prefixed frames on the client socket;
//! - [`handshake`]: the client socket's versioned hello and key proof;
//! - [`hook`]: newline-delimited JSON on the hook socket.
//!
//! Bump [`PROTOCOL_VERSION`] when any of these change incompatibly.

pub mod api;
pub mod frame;
pub mod handshake;
pub mod holder;
pub mod hook;
pub mod outbox;

/// Version of the client-socket protocol, sent in the hello.
pub const PROTOCOL_VERSION: u32 = 1;

/// Largest frame (client socket) or line (hook socket) accepted, in bytes.
/// Screens and requests are far smaller; anything larger is an error that
/// closes that one connection.
pub const MAX_FRAME: usize = 1 << 20;
