//! The client socket's opening: the core speaks first with its version and a
//! fresh nonce; the client answers with its version and a proof that it read
//! the key file (which only the user can read); the core welcomes or refuses.
//! After that, both sides exchange [`ClientMsg`] / [`CoreMsg`] control frames.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::api::{ApiError, Request};

/// Core → client, first frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Challenge {
    pub version: u32,
    /// Hex, 32 random bytes, new for each connection.
    pub nonce: String,
}

/// Client → core, answer to the challenge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    pub version: u32,
    /// [`proof`] of the key file's bytes and the nonce.
    pub proof: String,
}

/// Core → client, end of the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Verdict {
    Welcome {
        core_pid: u32,
        /// The core takes paint acknowledgements (`protocol::acks`): a
        /// window that says so in its attach acknowledges its paint each
        /// time this many bytes of it are drawn and not acknowledged.
        /// Absent from a core that takes none (an earlier build), and
        /// ignored by a window that gives none.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ack_every: Option<u64>,
    },
    Refused {
        message: String,
    },
}

/// Control messages from the client after the handshake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ClientMsg {
    Request {
        id: u64,
        request: Request,
    },
    /// Become a window onto `folder`'s session (created if there is none).
    /// Data frames tagged with their tab then flow: keys to the core,
    /// painted screens to the window (never the program's own bytes).
    Attach {
        folder: std::path::PathBuf,
        rows: u16,
        cols: u16,
        env: Vec<(String, String)>,
        /// The window acknowledges its paint (`protocol::acks`): sent only
        /// to a core whose welcome offered it. Absent (false) from a
        /// window of an earlier build, which the core paces as before.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        acks: bool,
    },
    /// Show this tab: the core answers with its whole screen, then the
    /// differences as it changes.
    Select {
        tab: String,
    },
    /// Paint the shown tab's whole screen again: the window drew over it
    /// (an overlay closed, the person asked for a redraw).
    Repaint,
    /// The window's pane area changed size.
    Resize {
        rows: u16,
        cols: u16,
    },
    /// The tab's history, for scroll mode.
    History {
        tab: String,
    },
    /// The window has drawn `bytes` bytes of paint (data frames' bodies)
    /// since this connection opened (`protocol::acks`). Only to a core
    /// whose welcome offered acknowledgements: an older core closes the
    /// connection on a message it does not know.
    Ack {
        bytes: u64,
    },
}

/// Control messages from the core after the handshake.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CoreMsg {
    Reply {
        id: u64,
        #[serde(flatten)]
        outcome: Outcome,
    },
    /// The core is closing this connection, and why (a malformed frame, say).
    Closing { message: String },
    /// The attached session's tabs, sent on attach and whenever they change.
    Tabs {
        folder: std::path::PathBuf,
        tabs: Vec<super::api::TabInfo>,
        /// How many things wait for the person's approval (F3).
        #[serde(default)]
        approvals: usize,
    },
    /// The next data frame for `tab` paints its whole screen (contents,
    /// colours, cursor, modes) at this size; the data frames after it
    /// paint differences from it (`term::paint`).
    Redraw { tab: String, rows: u16, cols: u16 },
    /// A tab's history as text lines, oldest first, screen included.
    History { tab: String, lines: Vec<String> },
    /// A tab of the attached session became `blocked` or `done` while no
    /// window showed it: the window passes it on to the person's terminal
    /// as an OSC 9 / OSC 777 notification.
    Attention {
        tab: String,
        state: super::api::AgentState,
        /// One line for the person: `claude in tab ab12 needs you`.
        text: String,
    },
}

/// `{"result": ...}` or `{"error": {...}}`, as on the hook socket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Result(serde_json::Value),
    Error(ApiError),
}

impl From<super::api::Reply> for Outcome {
    fn from(r: super::api::Reply) -> Self {
        match r {
            Ok(v) => Outcome::Result(v),
            Err(e) => Outcome::Error(e),
        }
    }
}

impl From<Outcome> for super::api::Reply {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Result(v) => Ok(v),
            Outcome::Error(e) => Err(e),
        }
    }
}

/// The proof a client sends: SHA-256 over a domain tag, the key and the
/// nonce, hex-encoded. The key never crosses the socket.
pub fn proof(key: &[u8], nonce: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"nerdr-client-key-proof-v1\0");
    h.update(key);
    h.update(b"\0");
    h.update(nonce.as_bytes());
    hex(&h.finalize())
}

/// Whether `claimed` is the right proof, compared in constant time so the
/// comparison does not leak how much of it matched.
pub fn proof_matches(key: &[u8], nonce: &str, claimed: &str) -> bool {
    constant_time_eq(proof(key, nonce).as_bytes(), claimed.as_bytes())
}

pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Random bytes from the kernel, hex-encoded.
pub fn random_hex(n: usize) -> String {
    let mut buf = vec![0u8; n];
    getrandom::getrandom(&mut buf).expect("the kernel's random source is unavailable");
    hex(&buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proof_depends_on_key_and_nonce() {
        let p = proof(b"key", "n1");
        assert!(proof_matches(b"key", "n1", &p));
        assert!(!proof_matches(b"key2", "n1", &p));
        assert!(!proof_matches(b"key", "n2", &p));
        assert!(!proof_matches(b"key", "n1", &p[..10]));
        assert_eq!(p.len(), 64);
    }

    #[test]
    fn replies_read_like_the_hook_socket() {
        let m = CoreMsg::Reply {
            id: 3,
            outcome: Outcome::Result(serde_json::json!({"tab": "x"})),
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "reply", "id": 3, "result": {"tab": "x"}})
        );
        assert_eq!(serde_json::from_value::<CoreMsg>(v).unwrap(), m);
    }

    /// The welcome and the attach as a build of this protocol before paint
    /// acknowledgements knew them (`protocol::acks`), frozen here.
    mod before_acks {
        use serde::Deserialize;

        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum Verdict {
            Welcome { core_pid: u32 },
            Refused { message: String },
        }

        #[derive(Debug, Deserialize, PartialEq)]
        #[serde(tag = "type", rename_all = "snake_case")]
        pub enum ClientMsg {
            Attach {
                folder: std::path::PathBuf,
                rows: u16,
                cols: u16,
                env: Vec<(String, String)>,
            },
            Repaint,
        }
    }

    /// A minor-compatible pair keeps working: each end of an earlier build
    /// reads what this one sends it, and this one reads theirs as "no
    /// acknowledgements". The one message an earlier core cannot read is
    /// the acknowledgement itself, which is why a window sends it only to
    /// a core that offered.
    #[test]
    fn acknowledgements_are_offered_and_taken_without_breaking_an_earlier_build() {
        let welcome = serde_json::to_vec(&Verdict::Welcome {
            core_pid: 7,
            ack_every: Some(16384),
        })
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&welcome),
            r#"{"type":"welcome","core_pid":7,"ack_every":16384}"#
        );
        assert_eq!(
            serde_json::from_slice::<before_acks::Verdict>(&welcome).unwrap(),
            before_acks::Verdict::Welcome { core_pid: 7 },
            "an earlier window ignores the offer"
        );
        assert_eq!(
            serde_json::from_str::<Verdict>(r#"{"type":"welcome","core_pid":7}"#).unwrap(),
            Verdict::Welcome {
                core_pid: 7,
                ack_every: None
            },
            "an earlier core offers none"
        );
        let attach = |acks| ClientMsg::Attach {
            folder: "/p".into(),
            rows: 24,
            cols: 80,
            env: vec![],
            acks,
        };
        let taking = serde_json::to_vec(&attach(true)).unwrap();
        assert_eq!(
            serde_json::from_slice::<before_acks::ClientMsg>(&taking).unwrap(),
            before_acks::ClientMsg::Attach {
                folder: "/p".into(),
                rows: 24,
                cols: 80,
                env: vec![]
            },
            "an earlier core ignores the window's word"
        );
        let earlier = r#"{"type":"attach","folder":"/p","rows":24,"cols":80,"env":[]}"#;
        assert_eq!(
            serde_json::from_str::<ClientMsg>(earlier).unwrap(),
            attach(false),
            "an earlier window gives no acknowledgements"
        );
        assert_eq!(serde_json::to_string(&attach(false)).unwrap(), earlier);
        let ack = serde_json::to_vec(&ClientMsg::Ack { bytes: 5 }).unwrap();
        assert_eq!(String::from_utf8_lossy(&ack), r#"{"type":"ack","bytes":5}"#);
        assert!(
            serde_json::from_slice::<before_acks::ClientMsg>(&ack).is_err(),
            "an earlier core cannot read an acknowledgement"
        );
    }

    #[test]
    fn random_hex_is_fresh() {
        assert_ne!(random_hex(16), random_hex(16));
        assert_eq!(random_hex(4).len(), 8);
    }
}
