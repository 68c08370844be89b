//! Who sent a request: the person, or a program in a tab. Settled by the
//! connection (see `client_conn`, `hook_conn`); plain data that every
//! handler reads, so it depends on nothing but the privilege model.

use super::privilege::CallerKind;

/// Who sent a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The person: their window or CLI on the client socket, key proven.
    User,
    /// A program nerdr started, on the hook socket, in tab `id`;
    /// `sandboxed` when the tab is, or when the kernel could not show the
    /// caller to be the tab's own program. `program`: the caller is the
    /// tab's program itself, not a process under it (the kernel's record).
    Tab {
        id: String,
        sandboxed: bool,
        program: bool,
    },
}

impl Caller {
    pub fn kind(&self) -> CallerKind {
        match self {
            Caller::User => CallerKind::User,
            Caller::Tab {
                sandboxed: false, ..
            } => CallerKind::Tab,
            Caller::Tab {
                sandboxed: true, ..
            } => CallerKind::Sandboxed,
        }
    }

    /// The tab's program itself, as the kernel recorded the connection.
    pub fn is_program(&self) -> bool {
        matches!(self, Caller::Tab { program: true, .. })
    }

    pub fn tab(&self) -> Option<&str> {
        match self {
            Caller::User => None,
            Caller::Tab { id, .. } => Some(id),
        }
    }
}
