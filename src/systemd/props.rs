//! The property lists nerdr hands to `StartTransientUnit`, as plain data: a
//! scope for one program, a `Type=notify` service for the holder. Building
//! them touches nothing, so the tests assert whole lists. Every property
//! carries its reason in one line; [`super::UserManager`] only converts the
//! list to D-Bus variants and sends it.
//!
//! Deliberately absent from both: `PartOf=`/`BindsTo=` (or any dependency on
//! `nerdr.service`), so `systemctl --user restart nerdr` leaves the holder
//! and every program running.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::time::Duration;

use zbus::zvariant::Value;

use super::SystemdError;

/// The slice every nerdr unit lives in: `systemctl --user status nerdr.slice`
/// shows the holder and all programs, and limits can be set on it once.
pub const SLICE: &str = "nerdr.slice";

/// One property's value, in the D-Bus type systemd expects for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropValue {
    /// `s`
    Str(String),
    /// `b`
    Bool(bool),
    /// `i`
    Int(i32),
    /// `t` (systemd's `…USec` properties are microseconds)
    U64(u64),
    /// `au`
    Pids(Vec<u32>),
    /// `as`
    Strs(Vec<String>),
    /// `a(sasb)`: (path, argv including argv[0], ignore failure)
    Exec(Vec<(String, Vec<String>, bool)>),
}

pub type Props = Vec<(&'static str, PropValue)>;

impl PropValue {
    /// The D-Bus variant systemd reads.
    pub fn to_value(&self) -> Value<'static> {
        match self {
            PropValue::Str(s) => Value::from(s.clone()),
            PropValue::Bool(b) => Value::from(*b),
            PropValue::Int(i) => Value::from(*i),
            PropValue::U64(n) => Value::from(*n),
            PropValue::Pids(p) => Value::from(p.clone()),
            PropValue::Strs(v) => Value::from(v.clone()),
            PropValue::Exec(cmds) => Value::from(cmds.clone()),
        }
    }
}

/// What a program's scope needs besides its name and PID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeProps {
    /// Shown by `systemctl --user status` ("nerdr agent claude in tab 1a2b3c4d").
    pub description: String,
    /// How long systemd waits after its SIGTERM before it sends SIGKILL
    /// (the second grace of [`super::stop_scope_gracefully`]).
    pub stop_timeout: Duration,
}

/// The holder (or any nerdr service) to start as a transient `Type=notify`
/// service. Paths and strings stay `OsString` until [`service_props`], which
/// refuses what D-Bus cannot carry instead of converting it lossily.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSpec {
    pub description: String,
    /// Absolute path of the program: transient units get no `PATH` search.
    pub program: PathBuf,
    /// The full argument vector, `argv[0]` included.
    pub argv: Vec<OsString>,
    /// Set on top of the user manager's own environment block (systemd
    /// always starts from that; it cannot be cleared from here).
    pub env: Vec<(OsString, OsString)>,
    /// Absolute working directory.
    pub cwd: PathBuf,
    /// How long systemd waits for `READY=1` before it fails the start job.
    /// Keep it below [`super::JOB_TIMEOUT`] so systemd's verdict ("timeout")
    /// arrives before ours.
    pub start_timeout: Duration,
}

fn usec(d: Duration) -> PropValue {
    PropValue::U64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

/// The properties of the scope that holds one program.
pub fn scope_props(pid: u32, props: &ScopeProps) -> Props {
    vec![
        // Shown by `systemctl --user status`, so a person can tell tabs apart.
        ("Description", PropValue::Str(props.description.clone())),
        // The shim, moved while it waits on its pipe: the program never runs outside its scope.
        ("PIDs", PropValue::Pids(vec![pid])),
        // All of nerdr in one slice, apart from the core's service (not PartOf it).
        ("Slice", PropValue::Str(SLICE.into())),
        // Collect failed scopes too (a stop that needed SIGKILL), so no nerdr-* unit lingers and the name is free again.
        ("CollectMode", PropValue::Str("inactive-or-failed".into())),
        // Stopping reaches every process of the program (its children too), not just the first.
        ("KillMode", PropValue::Str("control-group".into())),
        // nerdr sends SIGHUP itself, a grace before SIGTERM; systemd's would come with SIGTERM, at once.
        ("SendSIGHUP", PropValue::Bool(false)),
        // StopUnit's signal is the ladder's second step: shells ignore it, but they have had SIGHUP already.
        ("KillSignal", PropValue::Int(libc::SIGTERM)),
        // The last step: whatever survived SIGTERM for `stop_timeout` is killed.
        ("SendSIGKILL", PropValue::Bool(true)),
        // The grace between systemd's SIGTERM and its SIGKILL.
        ("TimeoutStopUSec", usec(props.stop_timeout)),
    ]
}

/// The properties of a transient `Type=notify` service running `spec`.
/// `unit` is the unit's name, for errors.
pub fn service_props(unit: &str, spec: &ServiceSpec) -> Result<Props, SystemdError> {
    if !spec.program.is_absolute() {
        return Err(SystemdError::InvalidSpec {
            unit: unit.into(),
            reason: format!(
                "the program {} is not an absolute path (systemd does not search PATH for transient units)",
                spec.program.display()
            ),
        });
    }
    if !spec.cwd.is_absolute() {
        return Err(SystemdError::InvalidSpec {
            unit: unit.into(),
            reason: format!(
                "the working directory {} is not absolute",
                spec.cwd.display()
            ),
        });
    }
    if spec.argv.is_empty() {
        return Err(SystemdError::InvalidSpec {
            unit: unit.into(),
            reason: "the argument vector is empty (it must hold argv[0])".into(),
        });
    }
    let text = |what: &str, s: &std::ffi::OsStr| utf8(unit, what, s);
    let program = text("program path", spec.program.as_os_str())?;
    let argv = spec
        .argv
        .iter()
        .map(|a| text("argument", a))
        .collect::<Result<Vec<_>, _>>()?;
    let mut env = Vec::with_capacity(spec.env.len());
    for (k, v) in &spec.env {
        let k = text("environment variable name", k)?;
        if k.is_empty() || k.contains('=') {
            return Err(SystemdError::InvalidSpec {
                unit: unit.into(),
                reason: format!("the environment variable name {k:?} is empty or contains '='"),
            });
        }
        env.push(format!("{k}={}", text("environment value", v)?));
    }
    let cwd = text("working directory", spec.cwd.as_os_str())?;
    Ok(vec![
        // Shown by `systemctl --user status`.
        ("Description", PropValue::Str(spec.description.clone())),
        // The holder's command line; a non-zero exit is a failure, not ignored.
        ("ExecStart", PropValue::Exec(vec![(program, argv, false)])),
        // The start job ends only once the program says READY=1, so "done" means it serves.
        ("Type", PropValue::Str("notify".into())),
        // Only the main process may report readiness, not a shim that is briefly in its cgroup.
        ("NotifyAccess", PropValue::Str("main".into())),
        // What the core decided; merged over the user manager's environment block.
        ("Environment", PropValue::Strs(env)),
        ("WorkingDirectory", PropValue::Str(cwd)),
        // Beside the programs' scopes, apart from the core's service (not PartOf it).
        ("Slice", PropValue::Str(SLICE.into())),
        // A holder that crashed is collected too, so the next one can take the same name.
        ("CollectMode", PropValue::Str("inactive-or-failed".into())),
        // The service holds only the holder and shims not yet moved to a scope; stopping it ends those too.
        ("KillMode", PropValue::Str("control-group".into())),
        // systemd fails a start that never reports READY=1, before the caller stops waiting.
        ("TimeoutStartUSec", usec(spec.start_timeout)),
    ])
}

fn utf8(unit: &str, what: &str, s: &std::ffi::OsStr) -> Result<String, SystemdError> {
    s.to_str()
        .map(str::to_owned)
        .ok_or_else(|| SystemdError::InvalidSpec {
            unit: unit.into(),
            reason: format!(
                "the {what} {:?} is not UTF-8, and D-Bus carries only UTF-8 strings",
                String::from_utf8_lossy(s.as_bytes())
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStringExt;

    fn spec() -> ServiceSpec {
        ServiceSpec {
            description: "nerdr holder".into(),
            program: "/usr/bin/nerdr".into(),
            argv: vec!["nerdr".into(), "holder".into()],
            env: vec![("NERDR_X".into(), "a=b".into())],
            cwd: "/home/u".into(),
            start_timeout: Duration::from_secs(20),
        }
    }

    #[test]
    fn a_scope_moves_the_pid_into_nerdr_slice_and_stops_by_the_ladder() {
        let p = scope_props(
            4242,
            &ScopeProps {
                description: "nerdr agent claude in tab 1a2b3c4d".into(),
                stop_timeout: Duration::from_millis(1500),
            },
        );
        assert_eq!(
            p,
            vec![
                (
                    "Description",
                    PropValue::Str("nerdr agent claude in tab 1a2b3c4d".into())
                ),
                ("PIDs", PropValue::Pids(vec![4242])),
                ("Slice", PropValue::Str("nerdr.slice".into())),
                ("CollectMode", PropValue::Str("inactive-or-failed".into())),
                ("KillMode", PropValue::Str("control-group".into())),
                ("SendSIGHUP", PropValue::Bool(false)),
                ("KillSignal", PropValue::Int(15)),
                ("SendSIGKILL", PropValue::Bool(true)),
                ("TimeoutStopUSec", PropValue::U64(1_500_000)),
            ]
        );
    }

    #[test]
    fn neither_list_ties_the_unit_to_the_core_service() {
        let scope = scope_props(
            1,
            &ScopeProps {
                description: String::new(),
                stop_timeout: Duration::ZERO,
            },
        );
        let service = service_props("nerdr-holder.service", &spec()).unwrap();
        for (name, _) in scope.iter().chain(service.iter()) {
            assert!(
                !["PartOf", "BindsTo", "Requires", "Requisite", "After"].contains(name),
                "{name} would tie the unit to nerdr.service"
            );
        }
    }

    #[test]
    fn a_service_is_notify_with_main_access_and_its_own_command_line() {
        let p = service_props("nerdr-holder.service", &spec()).unwrap();
        assert_eq!(
            p,
            vec![
                ("Description", PropValue::Str("nerdr holder".into())),
                (
                    "ExecStart",
                    PropValue::Exec(vec![(
                        "/usr/bin/nerdr".into(),
                        vec!["nerdr".into(), "holder".into()],
                        false
                    )])
                ),
                ("Type", PropValue::Str("notify".into())),
                ("NotifyAccess", PropValue::Str("main".into())),
                ("Environment", PropValue::Strs(vec!["NERDR_X=a=b".into()])),
                ("WorkingDirectory", PropValue::Str("/home/u".into())),
                ("Slice", PropValue::Str("nerdr.slice".into())),
                ("CollectMode", PropValue::Str("inactive-or-failed".into())),
                ("KillMode", PropValue::Str("control-group".into())),
                ("TimeoutStartUSec", PropValue::U64(20_000_000)),
            ]
        );
    }

    #[test]
    fn each_value_has_the_dbus_type_systemd_expects() {
        let sig = |v: PropValue| v.to_value().value_signature().to_string();
        assert_eq!(sig(PropValue::Str("x".into())), "s");
        assert_eq!(sig(PropValue::Bool(true)), "b");
        assert_eq!(sig(PropValue::Int(1)), "i");
        assert_eq!(sig(PropValue::U64(1)), "t");
        assert_eq!(sig(PropValue::Pids(vec![1])), "au");
        assert_eq!(sig(PropValue::Strs(vec![])), "as");
        assert_eq!(
            sig(PropValue::Exec(vec![(
                "/bin/x".into(),
                vec!["x".into()],
                false
            )])),
            "a(sasb)"
        );
    }

    #[test]
    fn a_relative_program_is_refused_with_the_reason() {
        let mut s = spec();
        s.program = "nerdr".into();
        let err = service_props("nerdr-holder.service", &s).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("nerdr-holder.service"), "{msg}");
        assert!(msg.contains("not an absolute path"), "{msg}");
    }

    #[test]
    fn a_relative_working_directory_is_refused() {
        let mut s = spec();
        s.cwd = "home".into();
        assert!(service_props("x.service", &s)
            .unwrap_err()
            .to_string()
            .contains("working directory"));
    }

    #[test]
    fn an_empty_argv_is_refused() {
        let mut s = spec();
        s.argv.clear();
        assert!(service_props("x.service", &s)
            .unwrap_err()
            .to_string()
            .contains("argv[0]"));
    }

    #[test]
    fn a_non_utf8_argument_is_refused_not_mangled() {
        let mut s = spec();
        s.argv.push(OsString::from_vec(vec![b'a', 0xff]));
        let msg = service_props("x.service", &s).unwrap_err().to_string();
        assert!(msg.contains("not UTF-8"), "{msg}");
    }

    #[test]
    fn an_environment_name_with_equals_is_refused() {
        let mut s = spec();
        s.env.push(("A=B".into(), "c".into()));
        assert!(service_props("x.service", &s)
            .unwrap_err()
            .to_string()
            .contains("contains '='"));
    }
}
