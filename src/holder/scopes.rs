//! [`Scopes`] over the systemd user manager: each program in its own
//! transient scope in `nerdr.slice`, ended SIGHUP → SIGTERM → SIGKILL.

use crate::host::pty::GRACE;
use crate::host::{BoxFuture, Scopes};
use crate::systemd::{stop_scope_gracefully, ScopeProps, SystemdError, UserManager};

pub struct SystemdScopes {
    mgr: UserManager,
}

impl SystemdScopes {
    pub async fn connect() -> Result<Self, SystemdError> {
        Ok(SystemdScopes {
            mgr: UserManager::connect().await?,
        })
    }
}

impl Scopes for SystemdScopes {
    fn place(&self, scope: String, pid: u32) -> BoxFuture<Result<(), String>> {
        let mgr = self.mgr.clone();
        Box::pin(async move {
            let props = ScopeProps {
                description: format!("nerdr program ({scope})"),
                stop_timeout: GRACE,
            };
            mgr.start_scope(&scope, pid, &props)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn stop(&self, scope: String) -> BoxFuture<Result<(), String>> {
        let mgr = self.mgr.clone();
        Box::pin(async move {
            stop_scope_gracefully(&mgr, &scope, GRACE)
                .await
                .map_err(|e| e.to_string())
        })
    }
}
