//! Runs `systemctl --user` and turns its failures into errors that name the
//! command, quote its stderr and say what to do next. The classification of
//! a failure and the parsing of `systemctl show` are pure and tested here;
//! only [`run`] touches the system. Linux only in practice (macOS has no
//! systemctl), but it compiles everywhere.

use std::collections::BTreeMap;
use std::io;
use std::process::{Command, Output};

/// What went wrong with one `systemctl` call, with the next step.
#[derive(Debug, thiserror::Error)]
pub enum SystemctlError {
    #[error("could not run `{command}`: {source}\n{hint}")]
    Spawn {
        command: String,
        source: io::Error,
        hint: &'static str,
    },
    #[error("`{command}` failed ({status}){}\n{hint}", quote_stderr(stderr))]
    Failed {
        command: String,
        status: String,
        stderr: String,
        hint: &'static str,
    },
}

impl SystemctlError {
    /// One line: the command and the first line of what it said.
    pub fn brief(&self) -> String {
        match self {
            SystemctlError::Spawn {
                command, source, ..
            } => format!("could not run `{command}`: {source}"),
            SystemctlError::Failed {
                command,
                status,
                stderr,
                ..
            } => match stderr.lines().map(str::trim).find(|l| !l.is_empty()) {
                Some(first) => format!("`{command}` failed: {first}"),
                None => format!("`{command}` failed ({status})"),
            },
        }
    }

    pub fn hint(&self) -> &'static str {
        match self {
            SystemctlError::Spawn { hint, .. } | SystemctlError::Failed { hint, .. } => hint,
        }
    }
}

fn quote_stderr(stderr: &str) -> String {
    let s = stderr.trim();
    if s.is_empty() {
        String::new()
    } else {
        format!(":\n  {}", s.replace('\n', "\n  "))
    }
}

pub const NO_SYSTEMCTL: &str = "systemctl is not installed, so this system does not run systemd: start the core by hand with `nerdr core` (it binds its own sockets).";
pub const NO_MANAGER: &str = "No systemd user manager is reachable. Check that XDG_RUNTIME_DIR is set (and DBUS_SESSION_BUS_ADDRESS, if your systemctl uses the bus) and that you are in a login session (`loginctl enable-linger $USER` keeps a manager running without one). On a system without systemd, run `nerdr core` by hand.";
pub const JOB_FAILED: &str = "A unit failed to start: see `systemctl --user status nerdr-hook.socket nerdr-client.socket nerdr.service` and `journalctl --user -u nerdr.service -e`.";
pub const NOT_LOADED: &str = "The unit is not loaded: run `nerdr service install` first.";
pub const OTHER: &str = "Run the command yourself for more detail, or `nerdr doctor`.";

/// The next step for a failed `systemctl` run, from its stderr.
pub fn hint_for(stderr: &str) -> &'static str {
    if stderr.contains("Failed to connect to bus")
        || stderr.contains("Failed to connect to user scope bus")
        || stderr.contains("$DBUS_SESSION_BUS_ADDRESS and $XDG_RUNTIME_DIR not defined")
        || stderr.contains("Transport endpoint is not connected")
    {
        NO_MANAGER
    } else if stderr.contains("Job for ") || stderr.contains("Job failed") {
        JOB_FAILED
    } else if stderr.contains("not loaded") || stderr.contains("does not exist") {
        NOT_LOADED
    } else {
        OTHER
    }
}

/// The command line as the user would type it.
pub fn command_line(args: &[&str]) -> String {
    let mut s = String::from("systemctl --user");
    for a in args {
        s.push(' ');
        s.push_str(a);
    }
    s
}

fn spawn(args: &[&str]) -> Result<Output, SystemctlError> {
    Command::new("systemctl")
        .arg("--user")
        .arg("--no-pager")
        .args(args)
        // Messages we classify must not be translated.
        .env("LC_ALL", "C")
        .output()
        .map_err(|source| SystemctlError::Spawn {
            command: command_line(args),
            hint: if source.kind() == io::ErrorKind::NotFound {
                NO_SYSTEMCTL
            } else {
                OTHER
            },
            source,
        })
}

fn failed(args: &[&str], out: &Output) -> SystemctlError {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    SystemctlError::Failed {
        command: command_line(args),
        status: out.status.to_string(),
        hint: hint_for(&stderr),
        stderr,
    }
}

/// Runs `systemctl --user ARGS`; its stdout when it exits 0.
pub fn run(args: &[&str]) -> Result<String, SystemctlError> {
    let out = spawn(args)?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(failed(args, &out))
    }
}

/// Properties of one unit as `systemctl show` prints them.
pub type Props = BTreeMap<String, String>;

/// The properties we read for status and doctor.
pub const STATE_PROPS: &str =
    "Id,LoadState,ActiveState,SubState,UnitFileState,StatusText,NeedDaemonReload,Listen";

/// `systemctl --user show -p PROPS UNITS...`, one map per unit in order.
///
/// `show` exits 0 for units it does not know (LoadState=not-found), so a
/// failure here means the manager itself did not answer.
pub fn show(units: &[&str], props: &str) -> Result<Vec<Props>, SystemctlError> {
    let mut args = vec!["show", "-p", props];
    args.extend_from_slice(units);
    let out = run(&args)?;
    Ok(parse_show(&out))
}

/// Parses `systemctl show` output: `Key=Value` lines, units separated by a
/// blank line. Values may contain `=`.
pub fn parse_show(stdout: &str) -> Vec<Props> {
    let mut all = Vec::new();
    let mut cur = Props::new();
    for line in stdout.lines() {
        if line.is_empty() {
            if !cur.is_empty() {
                all.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            cur.insert(k.to_owned(), v.to_owned());
        }
    }
    if !cur.is_empty() {
        all.push(cur);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_the_cause() {
        let cases = [
            ("Failed to connect to bus: No medium found", NO_MANAGER),
            ("Failed to connect to bus: No such file or directory", NO_MANAGER),
            (
                "Job for nerdr-hook.socket failed.\nSee \"systemctl --user status nerdr-hook.socket\" and \"journalctl --user -xeu nerdr-hook.socket\" for details.",
                JOB_FAILED,
            ),
            ("Job failed. See \"journalctl -xe\" for details.", JOB_FAILED),
            ("Failed to disable unit: Unit file nerdr-hook.socket does not exist.", NOT_LOADED),
            ("Failed to reset failed state of unit nerdr.service: Unit nerdr.service not loaded.", NOT_LOADED),
            ("something new", OTHER),
        ];
        for (stderr, hint) in cases {
            assert_eq!(hint_for(stderr), hint, "{stderr}");
        }
    }

    #[test]
    fn a_failure_names_the_command_its_stderr_and_the_remedy() {
        let err = SystemctlError::Failed {
            command: command_line(&["enable", "--now", "nerdr-hook.socket"]),
            status: "exit status: 1".into(),
            stderr: "Failed to connect to bus: No medium found\n".into(),
            hint: NO_MANAGER,
        };
        assert_eq!(
            err.brief(),
            "`systemctl --user enable --now nerdr-hook.socket` failed: Failed to connect to bus: No medium found"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "`systemctl --user enable --now nerdr-hook.socket` failed (exit status: 1):\n  \
                 Failed to connect to bus: No medium found\n{NO_MANAGER}"
            )
        );
    }

    #[test]
    fn show_output_splits_per_unit() {
        let out = "Id=nerdr-hook.socket\nActiveState=active\nStatusText=\n\n\
                   Id=nerdr.service\nActiveState=active\nStatusText=3 agents, a=b\n";
        let units = parse_show(out);
        assert_eq!(units.len(), 2);
        assert_eq!(units[0]["ActiveState"], "active");
        assert_eq!(units[0]["StatusText"], "");
        assert_eq!(units[1]["StatusText"], "3 agents, a=b");
    }
}
