//! What `nerdr bridge` says on its stdout before it relays the client
//! socket (docs/ARCHITECTURE.md, "nerdr over SSH").
//!
//! The bridge runs on another host, started by `ssh HOST nerdr bridge`.
//! It speaks first, twice, in client-socket frames (`protocol::frame`):
//!
//! 1. a [`Greeting`]: which nerdr it is, the client protocol it speaks,
//!    the folder ssh started it in and its environment (the one a command
//!    typed in a shell there would have, for the agents a remote `nerdr
//!    agent` starts);
//! 2. the core's [`Verdict`](super::handshake::Verdict) on the bridge's
//!    own key handshake there: `welcome` or `refused` with the reason.
//!
//! After a welcome every byte is the client socket's, both ways, exactly
//! as a local client would read and write it after its handshake.
//!
//! The greeting is how two builds tell each other's versions, so any build
//! must be able to read any other's: its framing (length, kind 1) and the
//! fields `bridge`, `protocol` and `nerdr` never change. Fields may be
//! added; a reader ignores those it does not know and defaults the ones it
//! does not find. A change the old fields cannot carry takes a new value
//! of `bridge` (a greeting of a `bridge` this build does not know is
//! another version, said as such).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The greeting's own format, [`Greeting::bridge`]. Frozen at 1 until the
/// greeting itself must change shape.
pub const BRIDGE_FORMAT: u32 = 1;

/// The bridge's first frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Greeting {
    /// [`BRIDGE_FORMAT`]: marks the frame as a bridge's greeting.
    pub bridge: u32,
    /// The client protocol it relays (`protocol::PROTOCOL_VERSION`).
    pub protocol: u32,
    /// `nerdr --version` of the bridge's build: `0.1.0 (07d2338)`.
    pub nerdr: String,
    /// The folder ssh started the bridge in (the remote home): where a
    /// relative `--folder` counts from.
    #[serde(default)]
    pub home: Option<PathBuf>,
    /// The bridge's environment, as a command run there would send it.
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

impl Greeting {
    /// This build's greeting, for a bridge started in `home` with `env`.
    pub fn ours(home: Option<PathBuf>, env: Vec<(String, String)>) -> Self {
        Greeting {
            bridge: BRIDGE_FORMAT,
            protocol: super::PROTOCOL_VERSION,
            nerdr: crate::VERSION.to_owned(),
            home,
            env,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The frozen fields, byte for byte: any later build reads these.
    #[test]
    fn the_greetings_frozen_fields_are_pinned() {
        let g = Greeting {
            bridge: 1,
            protocol: 2,
            nerdr: "0.1.0 (07d2338)".into(),
            home: Some("/home/u".into()),
            env: vec![("PATH".into(), "/usr/bin".into())],
        };
        assert_eq!(
            serde_json::to_string(&g).unwrap(),
            r#"{"bridge":1,"protocol":2,"nerdr":"0.1.0 (07d2338)","home":"/home/u","env":[["PATH","/usr/bin"]]}"#
        );
        // An older or newer bridge's greeting: only the frozen fields, or
        // fields this build does not know.
        let old: Greeting =
            serde_json::from_str(r#"{"bridge":1,"protocol":7,"nerdr":"9.0.0 (x)","later":true}"#)
                .unwrap();
        assert_eq!(
            (old.protocol, old.nerdr.as_str(), old.home, old.env.len()),
            (7, "9.0.0 (x)", None, 0)
        );
    }
}
