//! Waiting on the manager: for a job to be removed (and its result), and
//! for a unit to end. Both listen to signals subscribed before the event
//! can happen, and bound the wait; a signal only wakes the waiter, the
//! state it then reads is the truth.

use std::time::Duration;

use futures_lite::StreamExt;
use tokio::time::{timeout_at, Instant};
use zbus::zvariant::OwnedObjectPath;

use super::proxy::JobRemovedStream;
use super::{SystemdError, UserManager, JOB_TIMEOUT};

/// Whether an `ActiveState` means the unit has no process left to wait for.
pub fn has_ended(state: Option<&str>) -> bool {
    matches!(state, None | Some("inactive") | Some("failed"))
}

impl UserManager {
    /// `JobRemoved` signals for jobs of unit `name` only (matched on the
    /// signal's third argument by the bus). Take it before queueing a job.
    pub(super) async fn job_signals(&self, name: &str) -> Result<JobRemovedStream, SystemdError> {
        self.manager
            .receive_job_removed_with_args(&[(2, name)])
            .await
            .map_err(|e| SystemdError::from_call(name, "AddMatch(JobRemoved)", e))
    }

    /// Wait for `job` to be removed; Ok when its result is "done".
    pub(super) async fn wait_job(
        &self,
        jobs: &mut JobRemovedStream,
        job: &OwnedObjectPath,
        unit: &str,
        kind: &'static str,
    ) -> Result<(), SystemdError> {
        let what = match kind {
            "start" => "the start job",
            _ => "the stop job",
        };
        let deadline = Instant::now() + JOB_TIMEOUT;
        loop {
            let signal = timeout_at(deadline, jobs.next())
                .await
                .map_err(|_| SystemdError::Timeout {
                    unit: unit.into(),
                    what,
                    after: JOB_TIMEOUT,
                })?
                .ok_or_else(|| SystemdError::Disconnected {
                    unit: unit.into(),
                    what,
                })?;
            let Ok(args) = signal.args() else {
                continue; // not the signature systemd sends: not ours
            };
            if args.job != *job {
                continue;
            }
            return match args.result.as_str() {
                "done" => Ok(()),
                _ => Err(SystemdError::JobFailed {
                    unit: unit.into(),
                    kind,
                    result: args.result,
                }),
            };
        }
    }

    /// Wait up to `limit` for unit `name` to end (inactive, failed, or
    /// unloaded). Returns whether it did.
    pub async fn wait_ended(&self, name: &str, limit: Duration) -> Result<bool, SystemdError> {
        let deadline = Instant::now() + limit;
        let add_match = |e| SystemdError::from_call(name, "AddMatch", e);
        let mut removed = self
            .manager
            .receive_unit_removed_with_args(&[(0, name)])
            .await
            .map_err(add_match)?;
        let Some(path) = self.unit_path(name).await? else {
            return Ok(true);
        };
        let props = zbus::fdo::PropertiesProxy::builder(&self.conn)
            .destination("org.freedesktop.systemd1")
            .and_then(|b| b.path(path))
            .map_err(add_match)?
            .cache_properties(zbus::proxy::CacheProperties::No)
            .build()
            .await
            .map_err(add_match)?;
        let mut changed = props
            .receive_properties_changed()
            .await
            .map_err(add_match)?;
        loop {
            // Read after subscribing, so a change in between still wakes us.
            if has_ended(self.active_state(name).await?.as_deref()) {
                return Ok(true);
            }
            let woke = tokio::select! {
                s = removed.next() => s.is_some(),
                s = changed.next() => s.is_some(),
                _ = tokio::time::sleep_until(deadline) => return Ok(false),
            };
            if !woke {
                return Err(SystemdError::Disconnected {
                    unit: name.into(),
                    what: "the end",
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::has_ended;

    #[test]
    fn a_unit_has_ended_when_inactive_failed_or_unloaded() {
        assert!(has_ended(None));
        assert!(has_ended(Some("inactive")));
        assert!(has_ended(Some("failed")));
        for running in ["active", "activating", "deactivating", "reloading"] {
            assert!(!has_ended(Some(running)), "{running}");
        }
    }
}
