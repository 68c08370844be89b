//! What the proxy reports about each connection: the [`Decision`] lines
//! (opened, closed, refused, asked, ...) and the [`Trail`] they are sent
//! on. `report` turns them into the audit trail.

use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    HttpConnect,
    Http,
    Socks5,
}

/// Where a connection is in its life, as one decision line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Allowed and connected; a `Closed` line with the same id follows.
    Opened,
    /// Ended; the byte counts are final.
    Closed,
    /// Refused by the policy or the connection limit.
    Refused,
    /// Allowed, but no connection could be made.
    Unreachable,
    /// Still open when the sandbox ended (from `report::Merger`).
    OpenAtExit,
    /// A host on neither list: the person is being asked.
    Asked,
    /// What became of the question (`rule` says: allowed once, ...).
    Answered,
}

/// One decision: a refusal at once, an allowed connection when it opens
/// and again when it closes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub phase: Phase,
    /// Pairs an `Opened` line with its `Closed` one; 0 for refusals.
    pub id: u64,
    pub protocol: Protocol,
    /// The host as the client wrote it.
    pub host: String,
    pub port: u16,
    pub allowed: bool,
    pub rule: String,
    /// Why it was refused, or why an allowed connection could not be made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// How many identical refusals this line stands for (see `report`).
    pub count: u64,
}

impl Decision {
    /// A line with no connection behind it (a refusal, a question): id 0,
    /// no bytes, standing for itself alone.
    pub(super) fn unconnected(
        phase: Phase,
        protocol: Protocol,
        host: &str,
        port: u16,
        allowed: bool,
        rule: String,
        why: Option<String>,
    ) -> Decision {
        Decision {
            phase,
            id: 0,
            protocol,
            host: host.to_string(),
            port,
            allowed,
            rule,
            why,
            bytes_up: 0,
            bytes_down: 0,
            count: 1,
        }
    }
}

/// Where the proxy's decisions go.
pub(super) struct Trail(UnboundedSender<Decision>);

impl Trail {
    pub(super) fn new(decisions: UnboundedSender<Decision>) -> Trail {
        Trail(decisions)
    }

    pub(super) fn send(&self, d: Decision) {
        // A closed receiver means nobody audits any more; the proxy still
        // enforces, so the send error is not fatal.
        let _ = self.0.send(d);
    }
}
