//! Wire formats between nerdr's processes. One module per message family,
//! encode and decode side by side:
//! - [`api`]: the requests every command sends, shared by both sockets,
//!   each tied to its reply type in [`replies`];
//! - [`frame`]: length-prefixed frames on the client socket;
//! - [`handshake`]: the client socket's versioned hello and key proof;
//! - [`acks`]: a window's acknowledgements of the paint it drew, offered
//!   in the welcome, so the core bounds what is in flight to it;
//! - [`bridge`]: what `nerdr bridge` says before it relays that socket
//!   over SSH;
//! - [`hook`]: newline-delimited JSON on the hook socket;
//! - [`holder`]: core ↔ holder, versioned; [`handover`]: its frozen part,
//!   by which any build takes over from any other.
//!
//! Bump [`PROTOCOL_VERSION`] when any of these change incompatibly.

pub mod acks;
pub mod api;
pub mod bridge;
pub mod frame;
pub mod handoffs;
pub mod handover;
pub mod handshake;
pub mod holder;
pub mod hook;
pub mod listing;
pub mod outbox;
pub mod quiet;
pub mod replies;
pub mod search;
pub mod spinoffs;
pub mod switching;
pub mod why;
pub mod work;

/// Version of the client-socket protocol, sent in the hello. 2: a window's
/// data frames are painted differences, not the program's output.
///
/// `NERDR_PROTOCOL_VERSION_FOR_TESTS`, read at compile time, builds the
/// same source under another number, as `holder::HOLDER_VERSION`'s does:
/// it exists only so the `--host` tests can make a second, real build
/// whose bridge speaks another protocol. No environment of a running nerdr
/// changes it.
pub const PROTOCOL_VERSION: u32 = match option_env!("NERDR_PROTOCOL_VERSION_FOR_TESTS") {
    Some(v) => holder::parse_version(v),
    None => 2,
};

/// Largest frame (client and holder sockets), in bytes. A redraw of the
/// largest screen allowed ([`MAX_ROWS`] x [`MAX_COLS`], every cell coloured)
/// and a scroll-mode history of the whole output log fit; anything larger is
/// an error that closes that one connection.
pub const MAX_FRAME: usize = 32 << 20;

/// Largest hook-socket line: requests from programs are small.
pub const MAX_LINE: usize = 1 << 20;

/// Largest request a client sends (either socket): the client refuses to
/// send a larger one ([`request_too_large`]) and the core reads no larger
/// one. The longest texts a request carries are far below it (a spinoff's
/// result, `spinoff::MAX_REPORT`; what `nerdr send` types fits the input
/// queue, `host::input::INPUT_CAP`).
pub const MAX_REQUEST: usize = MAX_LINE;

/// Why a request of `len` bytes (as JSON) is not sent, if it is too large.
pub fn request_too_large(len: usize) -> Option<String> {
    (len > MAX_REQUEST).then(|| {
        format!(
            "the request is {} ({len} bytes), over the {} limit of what nerdr sends its core: \
             give less text, or put the text in a file in the worktree, commit it, and give its \
             path instead",
            crate::sizes::size(len),
            crate::sizes::size(MAX_REQUEST)
        )
    })
}

/// Terminal sizes beyond these are clamped: a screen model's memory grows
/// with rows x columns, and no window is larger.
pub const MAX_ROWS: u16 = 500;
pub const MAX_COLS: u16 = 1000;

/// A requested terminal size, clamped to what nerdr serves.
/// Text from elsewhere made safe to show (`crate::printable`), where the
/// wire's users have always found it.
pub use crate::printable::printable;

pub fn clamp_size(rows: u16, cols: u16) -> (u16, u16) {
    (rows.clamp(2, MAX_ROWS), cols.clamp(2, MAX_COLS))
}

#[cfg(test)]
mod size_tests {
    use super::{request_too_large, MAX_REQUEST};

    #[test]
    fn a_request_over_the_limit_says_so() {
        assert_eq!(request_too_large(MAX_REQUEST), None);
        let why = request_too_large(MAX_REQUEST + 1).unwrap();
        assert!(
            why.contains("1048577 bytes") && why.contains("over the 1 MiB limit"),
            "{why}"
        );
    }
}
