//! Renders the unit templates in `units/` and the plist in `launchd/` with
//! real paths. Pure: no file is read or written here (the templates are
//! compiled in), so tests can assert the whole text.
//!
//! Placeholders are `@NAME@`, filled in one pass: a value that happens to
//! contain `@BIN@` is never expanded again. Each template variable is escaped for
//! the one place it stands in (see `escape.rs`).

use std::path::{Path, PathBuf};

use crate::paths::Paths;

use super::escape::{self, EscapeError};

pub use crate::unit_names::{
    CLIENT_SOCKET_UNIT, HOOK_SOCKET_UNIT, SERVICE_UNIT, SOCKET_UNITS, UNIT_NAMES,
};

/// launchd job label; the plist is `<label>.plist` by convention.
pub const LAUNCHD_LABEL: &str = "com.nerdr.core";
pub const PLIST_NAME: &str = "com.nerdr.core.plist";

const HOOK_SOCKET_TEMPLATE: &str = include_str!("../../units/nerdr-hook.socket");
const CLIENT_SOCKET_TEMPLATE: &str = include_str!("../../units/nerdr-client.socket");
const SERVICE_TEMPLATE: &str = include_str!("../../units/nerdr.service");
const PLIST_TEMPLATE: &str = include_str!("../../launchd/com.nerdr.core.plist");

/// One rendered file: its name in the target directory and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFile {
    pub name: &'static str,
    pub contents: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Escape(#[from] EscapeError),
    #[error(
        "the state directory {0:?} has no parent, so XDG_STATE_HOME cannot be derived from it"
    )]
    NoStateHome(PathBuf),
}

/// `XDG_STATE_HOME` as the core must see it: `Paths` keeps only its `nerdr/`.
fn state_home(paths: &Paths) -> Result<&Path, RenderError> {
    paths
        .state_dir
        .parent()
        .ok_or_else(|| RenderError::NoStateHome(paths.state_dir.clone()))
}

/// The three systemd user units, ready to be written to
/// `paths.systemd_user_dir()`, in [`UNIT_NAMES`] order.
pub fn render_units(bin: &Path, paths: &Paths) -> Result<Vec<UnitFile>, RenderError> {
    let max = escape::MAX_SOCKET_PATH;
    let hook = escape::socket_path("the hook socket path", &paths.hook_socket(), max)?;
    let client = escape::socket_path("the client socket path", &paths.client_socket(), max)?;
    let bin = escape::exec_path("the nerdr binary", bin)?;
    let config_home = escape::quoted_value("XDG_CONFIG_HOME", &paths.config_home)?;
    let state_home = escape::quoted_value("XDG_STATE_HOME", state_home(paths)?)?;
    let data_dir = escape::quoted_value("the data directory", &paths.data_dir)?;
    Ok(fill_units(
        &hook,
        &client,
        &bin,
        &config_home,
        &state_home,
        &data_dir,
    ))
}

/// The three units with each template variable's value, already escaped
/// (or a specifier, for the package's: see `packaged.rs`).
pub(super) fn fill_units(
    hook: &str,
    client: &str,
    bin: &str,
    config_home: &str,
    state_home: &str,
    data_dir: &str,
) -> Vec<UnitFile> {
    vec![
        UnitFile {
            name: HOOK_SOCKET_UNIT,
            contents: fill(HOOK_SOCKET_TEMPLATE, &[("HOOK_SOCKET", hook)]),
        },
        UnitFile {
            name: CLIENT_SOCKET_UNIT,
            contents: fill(CLIENT_SOCKET_TEMPLATE, &[("CLIENT_SOCKET", client)]),
        },
        UnitFile {
            name: SERVICE_UNIT,
            contents: fill(
                SERVICE_TEMPLATE,
                &[
                    ("BIN", bin),
                    ("CONFIG_HOME", config_home),
                    ("STATE_HOME", state_home),
                    ("DATA_DIR", data_dir),
                ],
            ),
        },
    ]
}

/// The launchd agent, ready to be written to `~/Library/LaunchAgents`.
pub fn render_plist(bin: &Path, paths: &Paths) -> Result<UnitFile, RenderError> {
    let max = escape::MAX_SOCKET_PATH;
    // Length first (launchd binds these), then XML escaping.
    escape::socket_path("the hook socket path", &paths.hook_socket(), max)?;
    escape::socket_path("the client socket path", &paths.client_socket(), max)?;
    let x = escape::xml_text;
    let values = [
        ("BIN", x("the nerdr binary", bin)?),
        ("CONFIG_HOME", x("XDG_CONFIG_HOME", &paths.config_home)?),
        ("STATE_HOME", x("XDG_STATE_HOME", state_home(paths)?)?),
        ("DATA_DIR", x("the data directory", &paths.data_dir)?),
        (
            "HOOK_SOCKET",
            x("the hook socket path", &paths.hook_socket())?,
        ),
        (
            "CLIENT_SOCKET",
            x("the client socket path", &paths.client_socket())?,
        ),
        ("CORE_LOG", x("the core log", &paths.core_log())?),
    ];
    let values: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Ok(UnitFile {
        name: PLIST_NAME,
        contents: fill(PLIST_TEMPLATE, &values),
    })
}

/// The executable an installed `nerdr.service` runs (first word of its
/// `ExecStart=`), so status and doctor can re-render with the same binary.
pub fn installed_bin(service_text: &str) -> Option<PathBuf> {
    service_text
        .lines()
        .rev()
        .find_map(|l| l.trim_start().strip_prefix("ExecStart="))
        .and_then(escape::unexec_path)
        .map(PathBuf::from)
}

/// The socket path an installed socket unit listens on (its last
/// `ListenStream=`), to clean up after a path change.
pub fn listen_path(socket_text: &str) -> Option<PathBuf> {
    let value = socket_text
        .lines()
        .rev()
        .find_map(|l| l.trim_start().strip_prefix("ListenStream="))?
        .trim();
    (!value.is_empty()).then(|| PathBuf::from(value.replace("%%", "%")))
}

/// The executable an installed plist runs (first `ProgramArguments` string).
pub fn installed_plist_bin(plist_text: &str) -> Option<PathBuf> {
    let after = plist_text.split_once("<key>ProgramArguments</key>")?.1;
    let after = after.split_once("<string>")?.1;
    let text = after.split_once("</string>")?.0;
    Some(PathBuf::from(escape::unxml_text(text)))
}

/// Replaces each `@NAME@` in `template` by its value, in one pass.
///
/// Panics on a template variable with no value: the templates are compiled in, so
/// that is a bug the tests catch, never a user error.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len() + 256);
    let mut rest = template;
    while let Some(start) = rest.find('@') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
            .unwrap_or(after.len());
        if name_len > 0 && after[name_len..].starts_with('@') {
            let name = &after[..name_len];
            let value = values
                .iter()
                .find(|(k, _)| *k == name)
                .unwrap_or_else(|| panic!("template variable @{name}@ has no value"))
                .1;
            out.push_str(value);
            rest = &after[name_len + 1..];
        } else {
            out.push('@');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Env;

    fn sample_paths() -> Paths {
        Paths::resolve(&Env {
            home: Some("/home/ann".into()),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            ..Env::default()
        })
        .unwrap()
    }

    fn unit<'a>(units: &'a [UnitFile], name: &str) -> &'a str {
        &units.iter().find(|u| u.name == name).unwrap().contents
    }

    #[test]
    fn renders_the_three_units_in_install_order() {
        let units = render_units(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap();
        let names: Vec<_> = units.iter().map(|u| u.name).collect();
        assert_eq!(names, UNIT_NAMES);
    }

    #[test]
    fn the_hook_socket_renders_in_full() {
        let units = render_units(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap();
        assert_eq!(
            unit(&units, HOOK_SOCKET_UNIT),
            "\
# nerdr hook socket: agents' hooks and `nerdr` commands run inside tabs talk
# to the core here (docs/ARCHITECTURE.md, \"Sockets and protocols\").
# Rendered from a template in nerdr's source: by a package into
# /usr/lib/systemd/user, for every user, or by `nerdr service install` into
# the user's own ~/.config/systemd/user, which wins. An upgrade or reinstall
# overwrites edits, so use `systemctl --user edit` for drop-ins.

[Unit]
Description=nerdr hook socket

[Socket]
# $XDG_STATE_HOME/nerdr/nerdr.sock. No specifier names the state directory
# (in a systemd 252 user unit %S is $XDG_CONFIG_HOME), so the package's copy
# says %h/.local/state, XDG's default, and `nerdr service install` adds a
# drop-in for a user whose XDG_STATE_HOME is elsewhere; the user's own copy
# has the real path.
ListenStream=/home/ann/.local/state/nerdr/nerdr.sock
# The core looks its sockets up by name in LISTEN_FDNAMES, not by position.
FileDescriptorName=hook
# Only this user may connect. The core still decides who a caller is from
# SO_PEERCRED; this keeps other users from reaching it at all.
SocketMode=0600
# Parent directories systemd has to create (the state directory) are private too.
DirectoryMode=0700
# Both sockets start the one core; there is no nerdr-hook.service.
Service=nerdr.service
# RemoveOnStop= stays at its default (no), deliberately. Stopping a socket unit
# does not stop the core, which keeps serving on its copy of the listening fd;
# removing the path then would cut off every new connection to a live core.
# A stale file left after a stop is harmless: when the socket starts again
# systemd unlinks it and binds anew. `nerdr service uninstall` removes the
# file itself once nothing listens on it.

[Install]
WantedBy=sockets.target
"
        );
    }

    #[test]
    fn the_client_socket_renders_in_full() {
        let units = render_units(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap();
        assert_eq!(
            unit(&units, CLIENT_SOCKET_UNIT),
            "\
# nerdr client socket: the `nerdr` client and the user's own `nerdr` commands
# talk to the core here, proving they can read the key file beside it
# (docs/ARCHITECTURE.md, \"Sockets and protocols\").
# Rendered from a template in nerdr's source: by a package into
# /usr/lib/systemd/user, for every user, or by `nerdr service install` into
# the user's own ~/.config/systemd/user, which wins. An upgrade or reinstall
# overwrites edits, so use `systemctl --user edit` for drop-ins.

[Unit]
Description=nerdr client socket

[Socket]
# $XDG_RUNTIME_DIR/nerdr/client.sock, the path the client computes: %t in
# the package's copy (the manager's XDG_RUNTIME_DIR, the login's), the real
# path in the user's own.
ListenStream=/run/user/1000/nerdr/client.sock
# The core looks its sockets up by name in LISTEN_FDNAMES, not by position.
FileDescriptorName=client
# Only this user may connect; the key file is the second gate.
SocketMode=0600
# The run directory holds the key file: it must be private
# (docs/ARCHITECTURE.md, \"Paths\").
DirectoryMode=0700
# Both sockets start the one core; there is no nerdr-client.service.
Service=nerdr.service
# RemoveOnStop= stays at its default (no): see nerdr-hook.socket.

[Install]
WantedBy=sockets.target
"
        );
    }

    #[test]
    fn the_service_renders_in_full() {
        let units = render_units(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap();
        assert_eq!(
            unit(&units, SERVICE_UNIT),
            "\
# nerdr core: all state and policy (docs/ARCHITECTURE.md, \"Processes\").
# Started by socket activation from nerdr-hook.socket or nerdr-client.socket.
# Rendered from a template in nerdr's source: by a package into
# /usr/lib/systemd/user, for every user, or by `nerdr service install` into
# the user's own ~/.config/systemd/user, which wins. An upgrade or reinstall
# overwrites edits, so use `systemctl --user edit` for drop-ins.

[Unit]
Description=nerdr core (coding agents in persistent terminal tabs)
# No [Install] section: the sockets are enabled, and the first connection
# starts the core. Sockets= below also pulls both sockets in (Wants=, After=)
# when the service is started by hand.

[Service]
# The core sends READY=1 once both sockets serve and the holder is re-attached,
# so clients activated meanwhile wait instead of failing.
Type=notify
ExecStart=/usr/bin/nerdr core
# Only the core itself may send READY, STATUS and WATCHDOG; the holder and the
# agents run elsewhere and must not be able to speak for it.
NotifyAccess=main
# The core pings at half this interval; a hung core is killed (SIGABRT) and,
# as a failure, restarted. Agents live in the holder and survive it.
WatchdogSec=30s
Restart=on-failure
# The holder and every agent run in their own transient units, so this cgroup
# holds only the core and short-lived helpers it runs (git, probes). \"mixed\"
# lets the core end those in order on SIGTERM; whatever is left is killed
# once it exits, so nothing outlives it.
KillMode=mixed
# The paths the sockets were rendered with. The user manager's own
# environment often lacks variables set in a shell profile, and the core must
# agree with the units on where its state and data live. The package's copy
# says XDG's defaults under %h; `nerdr service install` adds a drop-in with
# the user's own when they differ.
Environment=\"XDG_CONFIG_HOME=/home/ann/.config\"
Environment=\"XDG_STATE_HOME=/home/ann/.local/state\"
Environment=\"NERDR_DATA_DIR=/home/ann/.local/share/nerdr\"
# The listening sockets handed over on start, found by FileDescriptorName.
Sockets=nerdr-hook.socket nerdr-client.socket
"
        );
    }

    fn awkward_paths() -> Paths {
        Paths::resolve(&Env {
            home: Some("/home/ann".into()),
            xdg_config_home: Some("/home/ann/my config".into()),
            xdg_state_home: Some("/home/ann/st%ate \"q\"".into()),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            nerdr_data_dir: Some("/data/a\\b $x".into()),
            ..Env::default()
        })
        .unwrap()
    }

    #[test]
    fn awkward_paths_are_escaped_for_each_setting() {
        let bin = Path::new("/opt/my tools/100%/nerdr");
        let units = render_units(bin, &awkward_paths()).unwrap();
        let service = unit(&units, SERVICE_UNIT);
        assert!(
            service.contains("\nExecStart=\"/opt/my tools/100%%/nerdr\" core\n"),
            "{service}"
        );
        assert!(
            service.contains("\nEnvironment=\"XDG_CONFIG_HOME=/home/ann/my config\"\n"),
            "{service}"
        );
        assert!(
            service.contains("\nEnvironment=\"XDG_STATE_HOME=/home/ann/st%%ate \\\"q\\\"\"\n"),
            "{service}"
        );
        assert!(
            service.contains("\nEnvironment=\"NERDR_DATA_DIR=/data/a\\\\b $x\"\n"),
            "{service}"
        );
        let hook = unit(&units, HOOK_SOCKET_UNIT);
        assert!(
            hook.contains("\nListenStream=/home/ann/st%%ate \"q\"/nerdr/nerdr.sock\n"),
            "{hook}"
        );
        assert_eq!(installed_bin(service).as_deref(), Some(bin));
    }

    #[test]
    fn a_value_holding_a_template_variable_is_not_expanded_again() {
        let bin = Path::new("/opt/@CONFIG_HOME@/nerdr");
        let units = render_units(bin, &sample_paths()).unwrap();
        assert!(unit(&units, SERVICE_UNIT).contains("\nExecStart=/opt/@CONFIG_HOME@/nerdr core\n"));
    }

    #[test]
    fn no_template_variable_is_left_in_any_rendered_file() {
        let mut files = render_units(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap();
        files.push(render_plist(Path::new("/usr/bin/nerdr"), &sample_paths()).unwrap());
        for f in files {
            let mut rest = f.contents.as_str();
            while let Some(at) = rest.find('@') {
                rest = &rest[at + 1..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || *c == '_')
                    .collect();
                let closed = rest[name.len()..].starts_with('@');
                assert!(name.is_empty() || !closed, "{}: @{name}@ left", f.name);
            }
        }
    }

    #[test]
    fn a_bin_systemd_would_refuse_fails_rendering_not_starting() {
        let err = render_units(Path::new("/home/o'brien/nerdr"), &sample_paths()).unwrap_err();
        assert!(
            err.to_string()
                .contains("Executable name contains special characters"),
            "{err}"
        );
    }

    #[test]
    fn a_socket_path_too_long_for_bind_fails_rendering() {
        let paths = Paths::resolve(&Env {
            home: Some("/home/ann".into()),
            xdg_state_home: Some(format!("/home/ann/{}", "s".repeat(100)).into()),
            ..Env::default()
        })
        .unwrap();
        let err = render_units(Path::new("/usr/bin/nerdr"), &paths).unwrap_err();
        assert!(err.to_string().contains("the hook socket path"), "{err}");
    }

    #[test]
    fn listen_path_reads_back_the_rendered_path() {
        let units = render_units(Path::new("/usr/bin/nerdr"), &awkward_paths()).unwrap();
        assert_eq!(
            listen_path(unit(&units, HOOK_SOCKET_UNIT)),
            Some(awkward_paths().hook_socket())
        );
        assert_eq!(listen_path("[Socket]\n"), None);
    }

    #[test]
    fn installed_bin_reads_the_last_exec_start() {
        let text = "[Service]\nExecStart=\nExecStart=\"/a b/nerdr\" core\n";
        assert_eq!(
            installed_bin(text).as_deref(),
            Some(Path::new("/a b/nerdr"))
        );
        assert_eq!(installed_bin("[Service]\nType=notify\n"), None);
    }

    #[test]
    fn the_plist_renders_in_full() {
        let paths = Paths::resolve(&Env {
            home: Some("/Users/ann".into()),
            xdg_runtime_dir: Some("/Users/ann/Library/Application Support/nerdr & co".into()),
            ..Env::default()
        })
        .unwrap();
        let plist = render_plist(Path::new("/opt/homebrew/bin/nerdr"), &paths).unwrap();
        assert_eq!(plist.name, "com.nerdr.core.plist");
        assert_eq!(
            plist.contents,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!--
  nerdr core as a per-user launchd agent (launchd.plist(5)): the macOS
  counterpart of units/nerdr.service with its two socket units.
  Written by `nerdr service install` from a template in nerdr's source; a
  reinstall overwrites edits.
-->
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>com.nerdr.core</string>
	<key>ProgramArguments</key>
	<array>
		<string>/opt/homebrew/bin/nerdr</string>
		<string>core</string>
	</array>
	<!-- The paths these sockets were rendered with, so the core agrees with
	     them whatever launchd's own environment says. -->
	<key>EnvironmentVariables</key>
	<dict>
		<key>XDG_CONFIG_HOME</key>
		<string>/Users/ann/.config</string>
		<key>XDG_STATE_HOME</key>
		<string>/Users/ann/.local/state</string>
		<key>NERDR_DATA_DIR</key>
		<string>/Users/ann/.local/share/nerdr</string>
	</dict>
	<!-- launchd listens and starts the core on the first connection; the core
	     gets each group with launch_activate_socket("hook" / "client"). -->
	<key>Sockets</key>
	<dict>
		<key>hook</key>
		<dict>
			<key>SockPathName</key>
			<string>/Users/ann/.local/state/nerdr/nerdr.sock</string>
			<!-- 0600: plists have no octal, so the mode is written in decimal. -->
			<key>SockPathMode</key>
			<integer>384</integer>
		</dict>
		<key>client</key>
		<dict>
			<key>SockPathName</key>
			<string>/Users/ann/Library/Application Support/nerdr &amp; co/nerdr/client.sock</string>
			<key>SockPathMode</key>
			<integer>384</integer>
		</dict>
	</dict>
	<!-- On demand only: started by the sockets, not at load, and not
	     restarted just because it exited. -->
	<key>RunAtLoad</key>
	<false/>
	<key>KeepAlive</key>
	<false/>
	<key>StandardErrorPath</key>
	<string>/Users/ann/.local/state/nerdr/core.log</string>
</dict>
</plist>
"#
        );
        assert_eq!(
            installed_plist_bin(&plist.contents).as_deref(),
            Some(Path::new("/opt/homebrew/bin/nerdr"))
        );
    }
}
