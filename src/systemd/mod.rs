//! The systemd user manager over the user bus (D-Bus, via `zbus` on tokio):
//! transient scopes for the programs the holder starts, a transient
//! `Type=notify` service for the holder itself, and the unit queries and
//! signals both need. Owns the property lists (`props`), unit names and the
//! bus address (`names`), and waiting for jobs and states (`wait`). Does not
//! own when to use them: the holder decides, and `nerdr service` (which
//! installs the core's unit files with `systemctl`) is a separate module.
//!
//! How a program gets its scope before its own code runs: the holder spawns
//! a shim that blocks on a pipe, calls [`UserManager::start_scope`] with the
//! shim's PID (which waits for the start job's `JobRemoved` and requires
//! "done"), then releases the shim to exec the program. Closing a tab is
//! [`stop_scope_gracefully`]: SIGHUP, a grace, then systemd's SIGTERM and,
//! after the scope's stop timeout, SIGKILL.
//!
//! Seen on systemd 252: moving a PID works only when the caller runs inside
//! the user manager's cgroup tree (else the start job ends "failed"); a PID
//! that is already gone is refused by the call itself; a `Type=notify`
//! start that times out also ends "failed", not "timeout".

mod error;
pub mod names;
pub mod props;
mod proxy;
mod wait;

use std::time::Duration;

use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, Value};

pub use error::SystemdError;
pub use props::{ScopeProps, ServiceSpec};
use proxy::{ManagerProxy, ServiceProxy, UnitProxy};

/// How long any one job (start or stop) or manager call may take before
/// nerdr gives up on it and says so.
pub const JOB_TIMEOUT: Duration = Duration::from_secs(30);

/// A connection to the user's systemd manager. Cheap to clone; every clone
/// shares the one connection and its subscription to the manager's signals.
#[derive(Clone)]
pub struct UserManager {
    conn: zbus::Connection,
    manager: ManagerProxy<'static>,
}

impl UserManager {
    /// Connect to the user bus (`DBUS_SESSION_BUS_ADDRESS`, else
    /// `unix:path=$XDG_RUNTIME_DIR/bus`) and subscribe to the manager's
    /// signals. Fails with [`SystemdError::Unreachable`] naming the address
    /// when there is no bus or no `systemd --user` on it.
    pub async fn connect() -> Result<Self, SystemdError> {
        let address = names::bus_address(
            std::env::var_os("DBUS_SESSION_BUS_ADDRESS").as_deref(),
            std::env::var_os("XDG_RUNTIME_DIR").as_deref(),
        )?;
        Self::connect_to(&address).await
    }

    /// [`connect`](Self::connect) to an explicit D-Bus address.
    pub async fn connect_to(address: &str) -> Result<Self, SystemdError> {
        let unreachable = |source| SystemdError::Unreachable {
            address: address.to_owned(),
            source: Box::new(source),
        };
        let conn = zbus::connection::Builder::address(address)
            .map_err(unreachable)?
            .method_timeout(JOB_TIMEOUT)
            .build()
            .await
            .map_err(unreachable)?;
        let manager = ManagerProxy::new(&conn).await.map_err(unreachable)?;
        // Also the proof that a manager is there: without one the bus
        // answers ServiceUnknown.
        manager.subscribe().await.map_err(unreachable)?;
        Ok(UserManager { conn, manager })
    }

    /// Put `pid` into a new transient scope `name` in `nerdr.slice`, wait
    /// for the start job to end, and fail unless its result is "done".
    /// `pid` must exist and belong to the user, and `name` must be free.
    pub async fn start_scope(
        &self,
        name: &str,
        pid: u32,
        props: &ScopeProps,
    ) -> Result<(), SystemdError> {
        self.start_transient(name, props::scope_props(pid, props))
            .await
    }

    /// Start a transient `Type=notify` service `name` running `spec`, and
    /// wait until its start job ends, that is until the program sent
    /// `READY=1` (or failed, or its start timeout passed). Fails unless the
    /// result is "done".
    pub async fn start_service(&self, name: &str, spec: &ServiceSpec) -> Result<(), SystemdError> {
        self.start_transient(name, props::service_props(name, spec)?)
            .await
    }

    async fn start_transient(&self, name: &str, props: props::Props) -> Result<(), SystemdError> {
        // Subscribed before the call, so the job cannot end unseen.
        let mut jobs = self.job_signals(name).await?;
        let values: Vec<(&str, Value<'_>)> =
            props.iter().map(|(k, v)| (*k, v.to_value())).collect();
        let job = self
            .manager
            .start_transient_unit(name, "fail", &values, &[])
            .await
            .map_err(|e| SystemdError::from_call(name, "StartTransientUnit", e))?;
        self.wait_job(&mut jobs, &job, name, "start").await
    }

    /// Send `signal` to every process of unit `name` (`KillUnit`, who=all).
    pub async fn kill_unit(&self, name: &str, signal: i32) -> Result<(), SystemdError> {
        self.manager
            .kill_unit(name, "all", signal)
            .await
            .map_err(|e| SystemdError::from_call(name, "KillUnit", e))
    }

    /// Start unit `name` (an installed one, e.g. a socket a person
    /// stopped) and wait for the start job; fails unless it is "done".
    pub async fn start_unit(&self, name: &str) -> Result<(), SystemdError> {
        let mut jobs = self.job_signals(name).await?;
        let job = self
            .manager
            .start_unit(name, "replace")
            .await
            .map_err(|e| SystemdError::from_call(name, "StartUnit", e))?;
        self.wait_job(&mut jobs, &job, name, "start").await
    }

    /// Stop unit `name` and wait for the stop job; fails unless it is
    /// "done". For a scope this is SIGTERM, then SIGKILL after its stop
    /// timeout, so that timeout must stay well under [`JOB_TIMEOUT`] / 2.
    pub async fn stop_unit(&self, name: &str) -> Result<(), SystemdError> {
        let mut jobs = self.job_signals(name).await?;
        let job = self
            .manager
            .stop_unit(name, "replace")
            .await
            .map_err(|e| SystemdError::from_call(name, "StopUnit", e))?;
        self.wait_job(&mut jobs, &job, name, "stop").await
    }

    /// The unit's `ActiveState` ("active", "inactive", "failed", ...), or
    /// `None` when it is not loaded (for nerdr's units: ended and collected).
    pub async fn active_state(&self, name: &str) -> Result<Option<String>, SystemdError> {
        let Some(path) = self.unit_path(name).await? else {
            return Ok(None);
        };
        let get = |e| SystemdError::from_call(name, "Get(ActiveState)", e);
        let unit = UnitProxy::builder(&self.conn)
            .path(path)
            .map_err(get)?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(get)?;
        Ok(Some(unit.active_state().await.map_err(get)?))
    }

    /// Loaded units whose names match the glob `pattern` (e.g. "nerdr-*"),
    /// each with its `ActiveState`.
    pub async fn list_units(&self, pattern: &str) -> Result<Vec<(String, String)>, SystemdError> {
        let rows = self
            .manager
            .list_units_by_patterns(&[], &[pattern])
            .await
            .map_err(|e| SystemdError::from_call(pattern, "ListUnitsByPatterns", e))?;
        Ok(rows.into_iter().map(|r| (r.0, r.3)).collect())
    }

    /// The main PID of service `name`, or `None` when it is not loaded or
    /// has no main process (systemd reports 0).
    pub async fn main_pid(&self, name: &str) -> Result<Option<u32>, SystemdError> {
        let Some(path) = self.unit_path(name).await? else {
            return Ok(None);
        };
        let get = |e| SystemdError::from_call(name, "Get(MainPID)", e);
        let service = ServiceProxy::builder(&self.conn)
            .path(path)
            .map_err(get)?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(get)?;
        let pid = service.main_pid().await.map_err(get)?;
        Ok((pid != 0).then_some(pid))
    }

    /// The object path of the loaded unit `name`, or `None` when it is not
    /// loaded. Asked by `GetUnit`, which (unlike reading properties at a
    /// path built from the name) never loads a unit that is gone.
    async fn unit_path(&self, name: &str) -> Result<Option<OwnedObjectPath>, SystemdError> {
        match self.manager.get_unit(name).await {
            Ok(path) => Ok(Some(path)),
            Err(e) => match SystemdError::from_call(name, "GetUnit", e) {
                SystemdError::NotLoaded { .. } => Ok(None),
                e => Err(e),
            },
        }
    }
}

/// Stop scope `name` the nerdr way: SIGHUP (and SIGCONT, so stopped jobs
/// see it) to all its processes; wait up to `grace` for the scope to end;
/// then `StopUnit`, which is systemd's SIGTERM and, after the scope's
/// [`ScopeProps::stop_timeout`], SIGKILL; returns once the scope is
/// inactive (and, with `CollectMode=inactive-or-failed`, collected). A
/// scope that is already gone is success.
pub async fn stop_scope_gracefully(
    mgr: &UserManager,
    name: &str,
    grace: Duration,
) -> Result<(), SystemdError> {
    // Shells ignore SIGTERM but end on SIGHUP, as when their terminal closes.
    for signal in [libc::SIGHUP, libc::SIGCONT] {
        match mgr.kill_unit(name, signal).await {
            Ok(()) | Err(SystemdError::NoProcess { .. }) => {}
            Err(SystemdError::NotLoaded { .. }) => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    if mgr.wait_ended(name, grace).await? {
        return Ok(());
    }
    match mgr.stop_unit(name).await {
        Ok(()) | Err(SystemdError::NotLoaded { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}
