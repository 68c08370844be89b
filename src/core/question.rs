//! What waits for the person's answer, and the answer: plain data shared
//! by the queue (`approvals`), the rule of what an answer does
//! (`answers`) and those who ask (`plugins`, `net_questions`, `api`).

/// A question and what it asks go on the wire (`nerdr approvals`), so
/// their types are the protocol's.
pub use crate::protocol::replies::{Approval, Asked};

/// The person's answer, as the one waiting for it gets it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Said {
    No,
    Yes,
    /// Yes for the rest of the asking sandbox's run (network questions).
    Session,
}
