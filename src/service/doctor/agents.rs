//! What the agents get from the system: lingering (they outlive a logout),
//! bubblewrap (`nerdr sandbox`) and journald (audit events).

use std::path::PathBuf;

use super::report::{check, Check, Status};

pub fn check_linger(on: bool, user: &str) -> Check {
    if on {
        check(
            "lingering",
            Status::Ok,
            format!("on for {user}: agents keep running after logout"),
            None,
        )
    } else {
        check(
            "lingering",
            Status::Warn,
            format!(
                "off for {user}: your user manager, the core and every agent stop when you log out"
            ),
            Some(format!("`loginctl enable-linger {user}`")),
        )
    }
}

pub fn check_bwrap(found: Option<&PathBuf>) -> Check {
    match found {
        Some(p) => check("bubblewrap", Status::Ok, format!("bwrap at {}", p.display()), None),
        None => check(
            "bubblewrap",
            Status::Warn,
            "bwrap is not on PATH: `nerdr sandbox` refuses to start agents without it".into(),
            Some("install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`, `pacman -S bubblewrap`)".into()),
        ),
    }
}

pub fn check_journald(present: bool) -> Check {
    if present {
        check(
            "journald",
            Status::Ok,
            "reachable at /run/systemd/journal/socket".into(),
            None,
        )
    } else {
        check(
            "journald",
            Status::Warn,
            "no /run/systemd/journal/socket: audit events go to core.log only".into(),
            Some("run under systemd-journald to get audit events in the journal; `nerdr log` still reads core.log".into()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::doctor::report::table::{assert_verdicts, Case};

    #[test]
    fn verdicts() {
        let cases: &[Case] = &[
            (
                "lingering off warns with the loginctl command",
                |f| f.linger = Some(false),
                "lingering",
                Status::Warn,
                "off for ann",
                "loginctl enable-linger ann",
                1,
            ),
            (
                "a missing bwrap warns",
                |f| f.bwrap = Some(None),
                "bubblewrap",
                Status::Warn,
                "nerdr sandbox",
                "install bubblewrap",
                1,
            ),
            (
                "no journald warns",
                |f| f.journald = Some(false),
                "journald",
                Status::Warn,
                "core.log only",
                "systemd-journald",
                1,
            ),
        ];
        assert_verdicts(cases);
    }
}
