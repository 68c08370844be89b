//! `[notify]` and `[agents.NAME.notify]`: what parses, how an agent's keys
//! override the global ones, and each error with its location.

use std::path::Path;

use super::{parse_ok, strings, PATH};
use crate::config::{parse, NotifyConfig, NotifySettings, NotifyWhen};

#[test]
fn nothing_written_means_blocked_and_done_on_both_channels() {
    let n = parse_ok("").notify_for("claude");
    assert_eq!(n, NotifyConfig::default());
    assert_eq!(
        (
            n.blocked.value,
            n.done.value,
            n.desktop.value,
            n.terminal.value
        ),
        (NotifyWhen::On, NotifyWhen::On, true, true)
    );
    assert_eq!(n.blocked.key, "default");
}

#[test]
fn the_global_table_and_an_agent_override_key_by_key() {
    let config = parse_ok(
        r#"
[notify]
blocked = "on"
done = ["paplay", "/usr/share/sounds/freedesktop/stereo/complete.oga"]
desktop = false

[agents.codex.notify]
done = "off"
desktop = true

[agents.my-agent]
command = ["my-agent"]
notify = { blocked = ["notify-send", "mine"] }
"#,
    );
    assert_eq!(
        config.notify,
        NotifySettings {
            blocked: Some(NotifyWhen::On),
            done: Some(NotifyWhen::Command(strings(&[
                "paplay",
                "/usr/share/sounds/freedesktop/stereo/complete.oga"
            ]))),
            desktop: Some(false),
            terminal: None,
        }
    );
    let claude = config.notify_for("claude");
    assert_eq!(
        (
            &claude.done.key[..],
            claude.desktop.value,
            &claude.desktop.key[..]
        ),
        ("notify.done", false, "notify.desktop")
    );
    assert!(matches!(claude.done.value, NotifyWhen::Command(_)));
    let codex = config.notify_for("codex");
    assert_eq!(
        (&codex.done.value, &codex.done.key[..]),
        (&NotifyWhen::Off, "agents.codex.notify.done")
    );
    assert_eq!(
        (codex.desktop.value, &codex.desktop.key[..]),
        (true, "agents.codex.notify.desktop")
    );
    assert_eq!(
        (&codex.blocked.value, &codex.blocked.key[..]),
        (&NotifyWhen::On, "notify.blocked")
    );
    assert_eq!(
        (codex.terminal.value, &codex.terminal.key[..]),
        (true, "default")
    );
    let mine = config.notify_for("my-agent");
    assert_eq!(
        (mine.blocked.value, &mine.blocked.key[..]),
        (
            NotifyWhen::Command(strings(&["notify-send", "mine"])),
            "agents.my-agent.notify.blocked"
        )
    );
}

#[test]
fn errors_name_file_line_column_and_key() {
    let cases: &[(&str, &str, String)] = &[
        (
            "unknown key",
            "[notify]\nworking = \"on\"\n",
            format!("{PATH}:2:1: unknown key `working` in [notify]; valid keys: blocked, done, desktop, terminal"),
        ),
        (
            "a word other than on or off",
            "[notify]\ndone = \"yes\"\n",
            format!("{PATH}:2:1: `notify.done` is \"yes\", which is neither \"on\" nor \"off\"; write \"on\", \"off\", or a command as an array of words, e.g. done = [\"notify-send\", \"nerdr\"]"),
        ),
        (
            "a boolean where on/off is meant",
            "[agents.claude.notify]\nblocked = true\n",
            format!("{PATH}:2:1: `agents.claude.notify.blocked` must be \"on\", \"off\" or a command (an array of strings), found a boolean (true); for example: blocked = \"on\""),
        ),
        (
            "an empty command",
            "[notify]\nblocked = []\n",
            format!("{PATH}:2:1: `notify.blocked` must start with the program to run; e.g. blocked = [\"paplay\", \"/usr/share/sounds/freedesktop/stereo/complete.oga\"]"),
        ),
        (
            "a command holding a number",
            "[notify]\ndone = [\"beep\", 3]\n",
            format!("{PATH}:2:1: `notify.done` must be an array of strings, found an array holding an integer (3) at index 1; for example: done = [\"--flag\", \"value\"]"),
        ),
        (
            "desktop is a boolean",
            "[notify]\ndesktop = \"on\"\n",
            format!("{PATH}:2:1: `notify.desktop` must be true or false, found a string (\"on\"); for example: desktop = true"),
        ),
        (
            "notify is a table",
            "notify = \"on\"\n",
            format!("{PATH}:1:1: `notify` must be a table, found a string (\"on\"); for example: [notify]"),
        ),
        (
            "an agent's unknown key names its section",
            "[agents.codex.notify]\nsound = \"on\"\n",
            format!("{PATH}:2:1: unknown key `sound` in [agents.codex.notify]; valid keys: blocked, done, desktop, terminal"),
        ),
    ];
    let mut failures = Vec::new();
    for (name, text, want) in cases {
        match parse(text, Path::new(PATH)) {
            Ok(config) => failures.push(format!("{name}: parsed, want error\n  got  {config:?}")),
            Err(e) if e.to_string() != *want => {
                failures.push(format!("{name}:\n  want {want}\n  got  {e}"))
            }
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}
