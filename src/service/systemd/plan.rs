//! Pure decisions for the systemd flows in `mod.rs`: how changed units take
//! effect, whether the manager reads our unit directory, and what
//! `install` prints (`status.rs` has what `status` prints). Everything here takes plain data (`systemctl show`
//! output, file states) and was checked against systemd 252 where it
//! encodes its behaviour.

use std::path::Path;

use crate::service::systemctl::Props;
use crate::service::units::{HOOK_SOCKET_UNIT, SERVICE_UNIT, SOCKET_UNITS};

/// Whether a manager whose `UnitPath` is `unit_path` (space-separated, as
/// `systemctl show` prints it) reads units from `dir`.
///
/// The manager computes its unit path from its own environment when it
/// starts, so a shell whose XDG_CONFIG_HOME differs writes where it never
/// looks (measured: `enable` then says "Unit file ... does not exist").
pub fn manager_reads(dir: &Path, unit_path: &str) -> bool {
    format!(" {unit_path} ").contains(&format!(" {} ", dir.display()))
}

/// The refusal when the manager does not read `dir`.
pub fn unread_dir_message(dir: &Path, unit_path: &str) -> String {
    // The manager's own config directory is the first `.../systemd/user` in
    // its search order (only `.control`, transient and generator dirs, none
    // of them for hand-written units, come before it).
    let theirs = unit_path
        .split(' ')
        .find(|p| p.ends_with("/systemd/user"))
        .unwrap_or(unit_path);
    format!(
        "the systemd user manager does not read units from {} (it was started with another \
         XDG_CONFIG_HOME than this shell; it reads {theirs}). Run this with XDG_CONFIG_HOME set as \
         the manager has it (or unset, for ~/.config)",
        dir.display(),
    )
}

pub fn prop<'a>(states: &'a [Props], unit: &str, key: &str) -> &'a str {
    states
        .iter()
        .find(|p| p.get("Id").map(String::as_str) == Some(unit))
        .and_then(|p| p.get(key))
        .map_or("", String::as_str)
}

/// The path a socket unit listens at, as the manager has it (`Listen=PATH
/// (Stream)`); read before a reload, where the running core listens.
pub fn listening_at(states: &[Props], unit: &str) -> Option<std::path::PathBuf> {
    let listen = prop(states, unit, "Listen");
    let path = listen.rsplit_once(" (").map_or(listen, |(p, _)| p);
    (!path.is_empty()).then(|| path.into())
}

/// The state folder a hook socket path lies in, for messages.
fn state_folder(hook: &Path) -> String {
    hook.parent().unwrap_or(hook).display().to_string()
}

pub fn active_state<'a>(states: &'a [Props], unit: &str) -> &'a str {
    prop(states, unit, "ActiveState")
}

pub fn load_state<'a>(states: &'a [Props], unit: &str) -> &'a str {
    match prop(states, unit, "LoadState") {
        "" => "not-found",
        s => s,
    }
}

/// What `install` does after writing units and enabling the sockets.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Followup {
    /// Sockets to clear of a failed state (a start limit hit by quick
    /// reinstalls blocks `start` until reset).
    pub reset_failed: Vec<&'static str>,
    /// Listening sockets whose unit changed.
    pub restart: Vec<&'static str>,
    /// Sockets not listening.
    pub start: Vec<&'static str>,
    /// What to tell the user when the running core keeps the old units.
    pub advice: Option<String>,
}

/// The command that applies new units while the core runs. Measured on
/// systemd 252: `restart` of the sockets and the service in one call fails
/// ("Job failed": a socket's restart job runs before the service's and is
/// refused while the service still runs), and `stop nerdr.service` alone
/// races with any client, whose connection re-activates the old core.
/// Stopping all three leaves nothing that could activate the core; then the
/// sockets start with the new units and the next connection starts the core.
pub const APPLY_ALL: &str = "systemctl --user stop nerdr.service nerdr-hook.socket nerdr-client.socket && systemctl --user start nerdr-hook.socket nerdr-client.socket";

/// Decides how changed units take effect, from the unit states read before
/// install wrote anything.
///
/// Measured on systemd 252: after `daemon-reload`, a listening socket whose
/// `ListenStream=` changed stays "active (listening)" but serves neither the
/// old path nor the new one until restarted; and systemd refuses to start a
/// socket unit while its service runs. So with the core stopped, changed
/// sockets are restarted and idle ones started; with the core running,
/// nothing is touched and the user is told the command. (Restarting the core
/// is safe, agents live in the holder, but it is the user's call for now.)
pub fn followup(changed: &[&'static str], before: &[Props], new_hook: &Path) -> Followup {
    let core_running = matches!(
        active_state(before, SERVICE_UNIT),
        "active" | "activating" | "reloading" | "deactivating"
    );
    if core_running {
        let sockets_off = SOCKET_UNITS
            .iter()
            .any(|n| changed.contains(n) || active_state(before, n) != "active");
        let moved = listening_at(before, HOOK_SOCKET_UNIT).filter(|old| old != new_hook);
        let advice = if sockets_off {
            Some(match moved {
                // The client socket under XDG_RUNTIME_DIR stays put, so
                // `nerdr quit` reaches the running core until the stop.
                Some(old) => format!(
                    "your state folder changes from {} to {}: a core over the new one cannot \
                     reach the agents the running core holds (it leaves them running). End \
                     them first, while the running core still answers: `nerdr quit` in each \
                     session (or keep them: go back to the old paths and run `nerdr service \
                     install` again). Then `{APPLY_ALL}` applies the new units; the next \
                     connection starts the core.",
                    state_folder(&old),
                    state_folder(new_hook),
                ),
                None => format!(
                    "the running core still serves the previous sockets, and a socket unit \
                     cannot restart under a running core; `{APPLY_ALL}` applies the new units \
                     (agents keep running in the holder; the next connection starts the core). \
                     Until then, nothing listens once the core stops."
                ),
            })
        } else if changed.contains(&SERVICE_UNIT) {
            Some(
                "the running core was started from the previous nerdr.service; \
                 `systemctl --user restart nerdr.service` applies the new one \
                 (agents keep running in the holder)."
                    .to_owned(),
            )
        } else {
            None
        };
        return Followup {
            advice,
            ..Followup::default()
        };
    }
    let mut next = Followup::default();
    for unit in SOCKET_UNITS {
        match active_state(before, unit) {
            "active" if changed.contains(&unit) => next.restart.push(unit),
            "active" => {}
            "failed" => {
                next.reset_failed.push(unit);
                next.start.push(unit);
            }
            _ => next.start.push(unit),
        }
    }
    next
}

/// What `install` says of the core once the units are in place: a core
/// that still runs was started from the units before (and, when
/// `advised`, serves what they said until the advice is followed).
pub fn core_line(after: &[Props], advised: bool, bin: &Path) -> String {
    match active_state(after, SERVICE_UNIT) {
        "active" | "activating" | "reloading" if advised => {
            "the core that runs now keeps the previous units until you do the above; \
             the next connection after that starts the new core."
                .to_owned()
        }
        "active" | "activating" | "reloading" => {
            "the core runs, from these units; nothing to restart.".to_owned()
        }
        _ => format!("the first connection starts the core ({}).", bin.display()),
    }
}

/// The lingering sentence `install` ends with.
pub fn linger_line(user: &str, on: bool) -> String {
    if on {
        format!("lingering is on for {user}: the core and agents keep running after you log out.")
    } else {
        format!(
            "lingering is off for {user}: the core and every agent stop when you log out. \
             `loginctl enable-linger {user}` keeps them running."
        )
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::service::units::{CLIENT_SOCKET_UNIT, UNIT_NAMES};

    const HOOK: &str = "/h/.local/state/nerdr/nerdr.sock";

    pub(in crate::service::systemd) fn states(
        service: &str,
        hook: &str,
        client: &str,
    ) -> Vec<Props> {
        [
            (SERVICE_UNIT, service),
            (HOOK_SOCKET_UNIT, hook),
            (CLIENT_SOCKET_UNIT, client),
        ]
        .into_iter()
        .map(|(id, active)| {
            let mut p = Props::new();
            p.insert("Id".into(), id.into());
            p.insert("LoadState".into(), "loaded".into());
            p.insert("ActiveState".into(), active.into());
            p
        })
        .collect()
    }

    #[test]
    fn what_install_says_of_the_core() {
        let bin = Path::new("/usr/bin/nerdr");
        let rows: &[(&str, &str, bool, &str)] = &[
            (
                "stopped",
                "inactive",
                false,
                "the first connection starts the core (/usr/bin/nerdr)",
            ),
            (
                "failed",
                "failed",
                false,
                "the first connection starts the core",
            ),
            (
                "running, advised",
                "active",
                true,
                "keeps the previous units until you do the above",
            ),
            (
                "starting, advised",
                "activating",
                true,
                "keeps the previous units",
            ),
            (
                "running, current",
                "active",
                false,
                "the core runs, from these units",
            ),
        ];
        for (case, core, advised, want) in rows {
            let got = core_line(&states(core, "active", "active"), *advised, bin);
            assert!(got.contains(want), "{case}: {got}");
            if *core == "active" || *core == "activating" {
                assert!(!got.contains("first connection"), "{case}: {got}");
            }
        }
    }

    #[test]
    fn a_fresh_install_starts_both_sockets() {
        let before: Vec<Props> = Vec::new(); // `show` knew no unit yet
        let next = followup(&UNIT_NAMES, &before, Path::new(HOOK));
        assert_eq!(next.start, SOCKET_UNITS);
        assert!(next.restart.is_empty() && next.reset_failed.is_empty() && next.advice.is_none());
    }

    #[test]
    fn an_unchanged_reinstall_does_nothing() {
        for core in ["active", "inactive"] {
            let before = states(core, "active", "active");
            assert_eq!(
                followup(&[], &before, Path::new(HOOK)),
                Followup::default(),
                "core {core}"
            );
        }
    }

    #[test]
    fn changed_sockets_are_restarted_and_idle_ones_started_when_the_core_is_stopped() {
        let before = states("inactive", "active", "inactive");
        let next = followup(
            &[HOOK_SOCKET_UNIT, CLIENT_SOCKET_UNIT],
            &before,
            Path::new(HOOK),
        );
        assert_eq!(next.restart, [HOOK_SOCKET_UNIT]);
        assert_eq!(next.start, [CLIENT_SOCKET_UNIT]);
        assert_eq!(next.advice, None);
    }

    #[test]
    fn a_failed_socket_is_reset_before_it_is_started() {
        let before = states("failed", "failed", "active");
        let next = followup(&[], &before, Path::new(HOOK));
        assert_eq!(next.reset_failed, [HOOK_SOCKET_UNIT]);
        assert_eq!(next.start, [HOOK_SOCKET_UNIT]);
    }

    #[test]
    fn changed_sockets_with_a_running_core_are_left_with_the_stop_then_start_command() {
        let before = states("active", "active", "active");
        let next = followup(&[CLIENT_SOCKET_UNIT], &before, Path::new(HOOK));
        assert!(next.restart.is_empty() && next.start.is_empty());
        let advice = next.advice.unwrap();
        assert!(advice.contains(&format!("`{APPLY_ALL}`")), "{advice}");
    }

    #[test]
    fn a_stopped_socket_under_a_running_core_is_not_started_but_explained() {
        // Starting it would fail: "Socket service nerdr.service already active, refusing".
        let before = states("active", "inactive", "active");
        let next = followup(&[], &before, Path::new(HOOK));
        assert!(next.start.is_empty());
        assert!(next.advice.unwrap().contains(APPLY_ALL));
    }

    #[test]
    fn a_moved_state_folder_under_a_running_core_says_to_end_the_tabs_first() {
        let mut before = states("active", "active", "active");
        before[1].insert("Listen".into(), format!("{HOOK} (Stream)"));
        let moved = Path::new("/h/st/nerdr/nerdr.sock");
        let advice = followup(&[HOOK_SOCKET_UNIT], &before, moved)
            .advice
            .unwrap();
        let quit = advice.find("`nerdr quit`").expect("nerdr quit");
        let apply = advice.find(APPLY_ALL).expect("the apply command");
        assert!(quit < apply, "the quit must come before the stop: {advice}");
        assert!(
            advice.contains("changes from /h/.local/state/nerdr to /h/st/nerdr"),
            "{advice}"
        );
        // The same path: no word of a move.
        let advice = followup(&[HOOK_SOCKET_UNIT], &before, Path::new(HOOK))
            .advice
            .unwrap();
        assert!(!advice.contains("state folder"), "{advice}");
    }

    #[test]
    fn listening_at_reads_the_managers_listen_property() {
        let mut s = states("active", "active", "active");
        s[1].insert("Listen".into(), "/a b/nerdr.sock (Stream)".into());
        assert_eq!(
            listening_at(&s, HOOK_SOCKET_UNIT),
            Some("/a b/nerdr.sock".into())
        );
        assert_eq!(listening_at(&s, CLIENT_SOCKET_UNIT), None);
    }

    #[test]
    fn a_changed_service_with_a_running_core_advises_a_restart() {
        let before = states("active", "active", "active");
        let next = followup(&[SERVICE_UNIT], &before, Path::new(HOOK));
        assert!(next.restart.is_empty());
        assert!(next
            .advice
            .unwrap()
            .contains("`systemctl --user restart nerdr.service`"));
    }

    #[test]
    fn the_manager_must_read_the_unit_dir() {
        let unit_path = "/home/ann/.config/systemd/user.control /run/user/1000/systemd/transient \
                         /home/ann/.config/systemd/user /etc/systemd/user /usr/lib/systemd/user";
        assert!(manager_reads(
            Path::new("/home/ann/.config/systemd/user"),
            unit_path
        ));
        let mine = Path::new("/home/ann/cfg/systemd/user");
        assert!(!manager_reads(mine, unit_path));
        assert!(!manager_reads(
            Path::new("/home/ann/.config/systemd"),
            unit_path
        ));
        let msg = unread_dir_message(mine, unit_path);
        assert!(
            msg.contains("it reads /home/ann/.config/systemd/user)"),
            "{msg}"
        );
        let spaced = "/a /home/my user/.config/systemd/user /b";
        assert!(manager_reads(
            Path::new("/home/my user/.config/systemd/user"),
            spaced
        ));
    }

    #[test]
    fn linger_off_says_how_to_turn_it_on() {
        assert!(linger_line("ann", false).contains("`loginctl enable-linger ann`"));
        assert!(!linger_line("ann", true).contains("loginctl"));
    }
}
