//! The few methods, signals and properties of systemd's D-Bus API that
//! nerdr uses, hand-written (see `org.freedesktop.systemd1(5)`). Nothing
//! else: each one here has a caller in `mod.rs` or `wait.rs`.

use zbus::zvariant::{OwnedObjectPath, Value};

/// One row of `ListUnitsByPatterns`: name, description, load state, active
/// state, sub state, followed unit, unit path, job id, job type, job path.
pub type UnitRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    OwnedObjectPath,
    u32,
    String,
    OwnedObjectPath,
);

#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Manager",
    default_service = "org.freedesktop.systemd1",
    default_path = "/org/freedesktop/systemd1",
    gen_blocking = false
)]
pub trait Manager {
    /// Ask for the manager's signals. `JobRemoved` reaches the client that
    /// queued the job regardless, but unit changes (`PropertiesChanged`,
    /// `UnitRemoved`) go to subscribers only: without this a wait for a
    /// unit to end never wakes (checked on systemd 252).
    fn subscribe(&self) -> zbus::Result<()>;

    fn start_transient_unit(
        &self,
        name: &str,
        mode: &str,
        properties: &[(&str, Value<'_>)],
        aux: &[(&str, &[(&str, Value<'_>)])],
    ) -> zbus::Result<OwnedObjectPath>;

    fn start_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    fn stop_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    fn kill_unit(&self, name: &str, who: &str, signal: i32) -> zbus::Result<()>;

    /// The unit's object path; fails with `NoSuchUnit` when it is not loaded.
    fn get_unit(&self, name: &str) -> zbus::Result<OwnedObjectPath>;

    fn list_units_by_patterns(
        &self,
        states: &[&str],
        patterns: &[&str],
    ) -> zbus::Result<Vec<UnitRow>>;

    /// A job ended: its id, path, unit and result ("done", "failed", ...).
    #[zbus(signal)]
    fn job_removed(&self, id: u32, job: OwnedObjectPath, unit: String, result: String);

    /// A unit was unloaded (for nerdr's units: collected after it ended).
    #[zbus(signal)]
    fn unit_removed(&self, unit: String, path: OwnedObjectPath);
}

#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Unit",
    default_service = "org.freedesktop.systemd1",
    gen_blocking = false
)]
pub trait Unit {
    #[zbus(property)]
    fn active_state(&self) -> zbus::Result<String>;
}

#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Service",
    default_service = "org.freedesktop.systemd1",
    gen_blocking = false
)]
pub trait Service {
    #[zbus(property, name = "MainPID")]
    fn main_pid(&self) -> zbus::Result<u32>;
}
