//! The real claude (against the fake model, under `nerdr sandbox`) stops
//! at its permission prompt in a tab no window shows: the desktop hears of
//! it, and so does the user's notify command; once approved, the turn's
//! end is told too, in place of the first notification.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::suites::agent_turns::Turns;
use crate::support::agent_home;
use crate::support::fake_model::Turn;
use crate::support::fake_notifications::FakeNotifications;
use crate::support::wait_until;

/// The model's answer, the CLI's prompt, the core's look at the screen.
const TURN: Duration = Duration::from_secs(90);

/// The permission prompt of Claude Code 2.1 before a `Bash` command.
const PERMISSION: &str = "Do you want to proceed?";

/// What the core itself was handed (by systemd, or by the unit file) and
/// must not pass on to the notify command.
const CORES_OWN: &[&str] = &[
    "NOTIFY_SOCKET",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
    "INVOCATION_ID",
    "NERDR_DATA_DIR",
];

#[test]
fn a_blocked_claude_no_window_shows_is_told_to_the_desktop_and_the_notify_command() {
    let Some(t) = Turns::setup("claude", agent_home::claude) else {
        return;
    };
    // Without `permissions.allow`, claude asks before its Bash tool runs.
    t.env.write_user_file(".claude/settings.json", "{}\n");
    let config = t.home_file(".config/nerdr/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(
        "\n[notify]\nblocked = [\"sh\", \"-c\", \"env > \\\"$HOME/notified-$NERDR_NOTIFY_STATE\\\"\"]\n",
    );
    t.env.write_user_file(".config/nerdr/config.toml", text);
    let fake = FakeNotifications::start(&t.env);

    t.model
        .when_user_says("make the file", Turn::run("echo ran > asked.txt"));
    let tab = t.start();
    t.wait_idle(&tab);
    t.prompt(&tab, "Please make the file");
    t.wait_screen(&tab, "the permission prompt", TURN, |s| {
        s.contains(PERMISSION)
    });

    let blocked = fake.wait_for("`claude needs you`", TURN, |n| {
        n.summary == "claude needs you"
    });
    assert_eq!(blocked.app_name, "nerdr");
    let folder = t.tab_json(&tab)["folder"].as_str().map(str::to_owned);
    assert!(
        blocked.body.starts_with(&format!("tab {tab} in ")),
        "{blocked:?} (tab {tab}, folder {folder:?})"
    );

    // The command ran with the facts, and without the core's own variables.
    let env_file = t.home_file("notified-blocked");
    wait_until("the notify command's output", TURN, || env_file.is_file());
    wait_until("the notify command's whole output", TURN, || {
        std::fs::read_to_string(&env_file).is_ok_and(|s| s.contains("NERDR_NOTIFY_TEXT="))
    });
    let seen: BTreeMap<String, String> = std::fs::read_to_string(&env_file)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let get = |k: &str| seen.get(k).map(String::as_str);
    assert_eq!(get("NERDR_NOTIFY_TAB"), Some(tab.as_str()), "{seen:#?}");
    assert_eq!(get("NERDR_NOTIFY_AGENT"), Some("claude"), "{seen:#?}");
    assert_eq!(get("NERDR_NOTIFY_STATE"), Some("blocked"), "{seen:#?}");
    let text = format!("claude in tab {tab} needs you");
    assert_eq!(get("NERDR_NOTIFY_TEXT"), Some(text.as_str()), "{seen:#?}");
    let notified_folder = get("NERDR_NOTIFY_FOLDER").unwrap_or_default();
    assert!(
        blocked.body.ends_with(notified_folder) && !notified_folder.is_empty(),
        "{seen:#?}\n{blocked:?}"
    );
    let leaked: Vec<&String> = seen
        .keys()
        .filter(|k| CORES_OWN.contains(&k.as_str()))
        .collect();
    assert!(
        leaked.is_empty(),
        "the core's own variables leaked: {leaked:?}"
    );
    // What the command should have: the user's session (notify-send and
    // paplay need it).
    assert!(get("XDG_RUNTIME_DIR").is_some(), "{seen:#?}");

    // Approve (Enter: the first choice); the tool runs, the turn ends.
    t.ok(&["send", &tab, ""]);
    let done = fake.wait_for("`claude is done`", TURN, |n| n.summary == "claude is done");
    assert_eq!(
        done.replaces_id,
        blocked.id,
        "`done` should take the place of the tab's `needs you`: {:#?}",
        fake.calls()
    );
    assert!(
        !t.home_file("notified-done").exists(),
        "`done` is \"on\" (no command): nothing should have run for it"
    );
}
