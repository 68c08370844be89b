//! `[agents.NAME.notify]` through the running core: two bash agents read
//! by the same rules file turn `blocked` in tabs no window shows; the one
//! whose own section says "off" is not told, the other is.

use std::time::Duration;

use crate::suites::state_mechanics::{ASK, RULES};
use crate::support::fake_notifications::FakeNotifications;
use crate::support::sysenv::SystemdEnv;
use crate::support::wait_until;

/// Two agents alike but for their `notify` section: bash whose prompt is
/// `READY> `, read by the `mine` rules.
const CONFIG: &str = "[agents.loud]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
    env = { PS1 = \"READY> \" }\ndetect = \"mine\"\n\n\
    [agents.quiet]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
    env = { PS1 = \"READY> \" }\ndetect = \"mine\"\nnotify = { blocked = \"off\" }\n";

fn nerdr(env: &SystemdEnv, args: &[&str]) -> String {
    let out = env.run(&[&["nerdr"], args].concat());
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn agent_state(env: &SystemdEnv, tab: &str) -> serde_json::Value {
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&nerdr(env, &["tabs", "--json"])).unwrap();
    tabs.into_iter()
        .find(|t| t["id"] == tab)
        .map_or(serde_json::Value::Null, |t| t["agent_state"].clone())
}

fn wait_blocked(env: &SystemdEnv, tab: &str) {
    wait_until(
        &format!("tab {tab} blocked"),
        Duration::from_secs(30),
        || agent_state(env, tab) == "blocked",
    );
}

#[test]
fn an_agents_own_notify_section_overrides_the_global_one() {
    let Some(env) = SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    env.write_user_file(".config/nerdr/config.toml", CONFIG);
    env.write_user_file(".config/nerdr/detect/mine.toml", RULES);
    let fake = FakeNotifications::start(&env);

    // The silenced one first: were it told, its call would come first.
    let quiet = nerdr(&env, &["agent", "quiet"]);
    wait_until("quiet at its prompt", Duration::from_secs(30), || {
        agent_state(&env, &quiet) == "idle"
    });
    nerdr(&env, &["send", &quiet, ASK]);
    wait_blocked(&env, &quiet);

    let loud = nerdr(&env, &["agent", "loud"]);
    wait_until("loud at its prompt", Duration::from_secs(30), || {
        agent_state(&env, &loud) == "idle"
    });
    nerdr(&env, &["send", &loud, ASK]);
    wait_blocked(&env, &loud);

    let told = fake.wait_for("loud's", Duration::from_secs(30), |n| {
        n.summary == "loud needs you"
    });
    assert!(
        told.body.starts_with(&format!("tab {loud} in ")),
        "{told:?}"
    );
    // An absence cannot be waited for: give a stray call for quiet (whose
    // change came first) a second more to land.
    std::thread::sleep(Duration::from_secs(1));
    let calls = fake.calls();
    assert!(
        calls.iter().all(|n| !n.summary.starts_with("quiet")),
        "`agents.quiet.notify.blocked = \"off\"` was not heeded: {calls:#?}"
    );
}
