//! What a command does when nothing answers at the client socket: one
//! core, always. With nerdr's systemd units installed the core runs only
//! as `nerdr.service`, so a command starts the stopped socket units through
//! the user manager (and says so), or fails naming the `systemctl` command
//! to run; it never starts a core of its own beside them, which would be a
//! second core the moment the sockets start again. Without the units (no
//! systemd, or `nerdr service install` never ran) it starts a core by hand,
//! as tmux starts its server. Pure: [`decide`] reads facts gathered by
//! `autostart`.

use std::path::PathBuf;

use crate::service::units::SOCKET_UNITS;

/// What was found after a connection to the client socket failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartFacts {
    /// The user unit folder that holds nerdr's unit files, if any does.
    pub units: Option<PathBuf>,
    /// The user manager answered on the user bus, or why it did not.
    /// `None` when it was not asked (no units).
    pub manager: Option<Result<(), String>>,
    /// Each socket unit's `ActiveState` (`None`: not loaded), in
    /// [`SOCKET_UNITS`] order.
    pub sockets: Vec<(&'static str, Option<String>)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Start {
    /// No units: start `nerdr core` in the background.
    ByHand,
    /// Start these socket units through the user manager, then connect:
    /// the first connection activates `nerdr.service`.
    Sockets(Vec<&'static str>),
    /// Start nothing; fail with this message.
    Fail(String),
}

/// The command that starts the sockets, for messages.
pub fn start_command() -> String {
    format!("systemctl --user start {}", SOCKET_UNITS.join(" "))
}

/// Pure: what to do about a client socket nobody answers at.
pub fn decide(f: &StartFacts) -> Start {
    let Some(dir) = &f.units else {
        return Start::ByHand;
    };
    let unanswered = match &f.manager {
        Some(Ok(())) => None,
        Some(Err(why)) => Some(why.as_str()),
        None => Some("it was not asked"),
    };
    if let Some(why) = unanswered {
        return Start::Fail(format!(
            "nerdr's systemd units are installed in {} but the user manager does \
             not answer ({why}); nerdr starts no core outside systemd while they are. \
             Start the sockets: `{}` (or remove the units: `nerdr service uninstall`)",
            dir.display(),
            start_command()
        ));
    }
    let stopped: Vec<&'static str> = f
        .sockets
        .iter()
        .filter(|(_, state)| state.as_deref() != Some("active"))
        .map(|(unit, _)| *unit)
        .collect();
    if stopped.is_empty() {
        // The manager listens there, yet the connection was refused: the
        // socket file was replaced or removed behind its back.
        return Start::Fail(format!(
            "{} are active but nothing answers at the client socket; \
             restart them: `systemctl --user restart {}`",
            SOCKET_UNITS.join(" and "),
            SOCKET_UNITS.join(" ")
        ));
    }
    Start::Sockets(stopped)
}

/// The line a command prints after starting `units`.
pub fn started_line(units: &[&str]) -> String {
    let (pronoun, verb) = if units.len() == 1 {
        ("it", "was")
    } else {
        ("they", "were")
    };
    format!(
        "nerdr: started {} ({pronoun} {verb} stopped)",
        units.join(" ")
    )
}

/// The error when starting `units` failed.
pub fn start_failed(units: &[&str], why: &str) -> String {
    format!(
        "cannot start {} through systemd ({why}); start {}: `{}`",
        units.join(" "),
        if units.len() == 1 { "it" } else { "them" },
        start_command()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::units::{CLIENT_SOCKET_UNIT as CLIENT, HOOK_SOCKET_UNIT as HOOK};

    fn facts(
        units: bool,
        manager: Option<Result<(), &str>>,
        hook: Option<&str>,
        client: Option<&str>,
    ) -> StartFacts {
        StartFacts {
            units: units.then(|| PathBuf::from("/h/.config/systemd/user")),
            manager: manager.map(|m| m.map_err(str::to_string)),
            sockets: vec![
                (HOOK, hook.map(str::to_string)),
                (CLIENT, client.map(str::to_string)),
            ],
        }
    }

    #[test]
    fn every_row_of_the_start_table() {
        let unreachable = Some(Err("no bus at unix:path=/run/user/1000/bus"));
        let up = Some(Ok(()));
        type Row = (
            &'static str,
            StartFacts,
            fn(&Start) -> bool,
            &'static [&'static str],
        );
        let rows: &[Row] = &[
            (
                "no units: by hand, without asking systemd",
                facts(false, None, None, None),
                |s| *s == Start::ByHand,
                &[],
            ),
            (
                "no units, even with a manager: by hand",
                facts(false, up, Some("active"), Some("active")),
                |s| *s == Start::ByHand,
                &[],
            ),
            (
                "units, manager unreachable: fail with the command",
                facts(true, unreachable, None, None),
                |s| matches!(s, Start::Fail(_)),
                &[
                    "/h/.config/systemd/user",
                    "no bus at",
                    "`systemctl --user start nerdr-hook.socket nerdr-client.socket`",
                    "nerdr service uninstall",
                ],
            ),
            (
                "units, manager not asked: fail",
                facts(true, None, None, None),
                |s| matches!(s, Start::Fail(_)),
                &["systemctl --user start"],
            ),
            (
                "both sockets stopped: start both",
                facts(true, up, Some("inactive"), Some("inactive")),
                |s| *s == Start::Sockets(vec![HOOK, CLIENT]),
                &[],
            ),
            (
                "client socket failed: start it",
                facts(true, up, Some("active"), Some("failed")),
                |s| *s == Start::Sockets(vec![CLIENT]),
                &[],
            ),
            (
                "sockets not loaded: start both (loading them)",
                facts(true, up, None, None),
                |s| *s == Start::Sockets(vec![HOOK, CLIENT]),
                &[],
            ),
            (
                "a socket still starting: start (waits for its job)",
                facts(true, up, Some("activating"), Some("active")),
                |s| *s == Start::Sockets(vec![HOOK]),
                &[],
            ),
            (
                "both active yet refused: fail, restart them",
                facts(true, up, Some("active"), Some("active")),
                |s| matches!(s, Start::Fail(_)),
                &["systemctl --user restart nerdr-hook.socket nerdr-client.socket"],
            ),
        ];
        for (case, f, ok, words) in rows {
            let got = decide(f);
            assert!(ok(&got), "{case}: {got:?}");
            if let Start::Fail(msg) = &got {
                for w in *words {
                    assert!(msg.contains(w), "{case}: {w:?} not in {msg:?}");
                }
            }
        }
    }

    #[test]
    fn the_lines_name_the_units() {
        assert_eq!(
            started_line(&[CLIENT]),
            "nerdr: started nerdr-client.socket (it was stopped)"
        );
        assert_eq!(
            started_line(&[HOOK, CLIENT]),
            "nerdr: started nerdr-hook.socket nerdr-client.socket (they were stopped)"
        );
        let e = start_failed(&[CLIENT], "Unit nerdr-client.socket not found.");
        assert!(e.contains("cannot start nerdr-client.socket through systemd"));
        assert!(e.contains("`systemctl --user start nerdr-hook.socket nerdr-client.socket`"));
    }
}
