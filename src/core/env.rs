//! The environment a program starts with (docs/ARCHITECTURE.md, "What the
//! agent sees"). Pure: the caller's environment and the tab's facts in, the complete
//! environment out. Nothing of the core's own environment leaks through.

use std::collections::BTreeMap;
use std::path::Path;

/// Variables naming the terminal or multiplexer nerdr was started from. A
/// program inside nerdr must not believe it runs in those. (The service
/// manager's hand-over and nerdr's own names go too: `crate::handed_env`.)
const DROPPED: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOW",
    "ZELLIJ",
    "ZELLIJ_PANE_ID",
    "ZELLIJ_SESSION_NAME",
    "KITTY_WINDOW_ID",
    "KITTY_PID",
    "KITTY_LISTEN_ON",
    "KITTY_PUBLIC_KEY",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "TERM_SESSION_ID",
    "ITERM_SESSION_ID",
    "ITERM_PROFILE",
    "WEZTERM_PANE",
    "WEZTERM_UNIX_SOCKET",
    "WEZTERM_EXECUTABLE",
    "ALACRITTY_WINDOW_ID",
    "ALACRITTY_SOCKET",
    "ALACRITTY_LOG",
    "WT_SESSION",
    "WT_PROFILE_ID",
    "WINDOWID",
    "VTE_VERSION",
    "GNOME_TERMINAL_SCREEN",
    "GNOME_TERMINAL_SERVICE",
    "KONSOLE_VERSION",
    "KONSOLE_DBUS_SESSION",
    "KONSOLE_DBUS_SERVICE",
    "KONSOLE_DBUS_WINDOW",
    "TERMINATOR_UUID",
    "COLUMNS",
    "LINES",
];

pub struct TabFacts<'a> {
    pub secret: &'a str,
    pub nerdr_bin: &'a Path,
    pub hook_socket: &'a Path,
    pub data_dir: &'a Path,
    pub sandboxed: bool,
}

pub fn is_dropped(name: &str) -> bool {
    DROPPED.contains(&name) || crate::handed_env::is_the_cores(name)
}

pub fn program_env(
    caller: &[(String, String)],
    agent_env: &BTreeMap<String, String>,
    tab: &TabFacts,
) -> Vec<(String, String)> {
    let mut env: BTreeMap<String, String> = caller
        .iter()
        .filter(|(k, _)| !is_dropped(k))
        .cloned()
        .collect();
    // Config cannot set reserved names (the config parser refuses them); the
    // filter here keeps that true even if a caller slips one through.
    for (k, v) in agent_env {
        if !is_dropped(k) {
            env.insert(k.clone(), v.clone());
        }
    }
    // nerdr's screen model speaks xterm; what the outer terminal was does
    // not matter to a program drawing on nerdr's PTY.
    env.insert("TERM".into(), "xterm-256color".into());
    env.insert("TERM_PROGRAM".into(), "nerdr".into());
    env.insert(
        "TERM_PROGRAM_VERSION".into(),
        env!("CARGO_PKG_VERSION").into(),
    );
    let path = |p: &Path| p.to_string_lossy().into_owned();
    env.insert("NERDR_TAB".into(), tab.secret.into());
    env.insert("NERDR_BIN".into(), path(tab.nerdr_bin));
    env.insert("NERDR_SOCKET".into(), path(tab.hook_socket));
    env.insert("NERDR_DATA_DIR".into(), path(tab.data_dir));
    if tab.sandboxed {
        env.insert("NERDR_SANDBOXED".into(), "1".into());
    }
    env.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(sandboxed: bool) -> TabFacts<'static> {
        TabFacts {
            secret: "s3cret",
            nerdr_bin: Path::new("/bin/nerdr"),
            hook_socket: Path::new("/s/nerdr.sock"),
            data_dir: Path::new("/d"),
            sandboxed,
        }
    }

    fn get<'a>(env: &'a [(String, String)], k: &str) -> Option<&'a str> {
        env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str())
    }

    #[test]
    fn each_rule_row() {
        let caller: Vec<(String, String)> = [
            ("PATH", "/usr/bin"),
            ("FOO", "client"),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("CLAUDECODE", "1"),
            ("TERM_PROGRAM", "iTerm.app"),
            ("NERDR_TAB", "stolen"),
            ("HERDR_X", "1"),
            ("LISTEN_FDS", "2"),
            ("NOTIFY_SOCKET", "/run/n"),
            ("INVOCATION_ID", "abc"),
            ("TERM", "screen"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let agent: BTreeMap<String, String> = [("FOO".to_string(), "agent".to_string())].into();
        let env = program_env(&caller, &agent, &facts(false));
        let rows: &[(&str, Option<&str>)] = &[
            ("PATH", Some("/usr/bin")),
            ("FOO", Some("agent")),
            ("TMUX", None),
            ("CLAUDECODE", None),
            ("TERM_PROGRAM", Some("nerdr")),
            ("NERDR_TAB", Some("s3cret")),
            ("HERDR_X", None),
            ("LISTEN_FDS", None),
            ("NOTIFY_SOCKET", None),
            ("INVOCATION_ID", None),
            ("TERM", Some("xterm-256color")),
            ("NERDR_BIN", Some("/bin/nerdr")),
            ("NERDR_SOCKET", Some("/s/nerdr.sock")),
            ("NERDR_DATA_DIR", Some("/d")),
            ("NERDR_SANDBOXED", None),
        ];
        for (k, want) in rows {
            assert_eq!(get(&env, k), *want, "{k}");
        }
        let env = program_env(&[], &BTreeMap::new(), &facts(true));
        assert_eq!(get(&env, "NERDR_SANDBOXED"), Some("1"));
    }
}
