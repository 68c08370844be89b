//! Telling the person that a tab needs them (docs/NOTIFICATIONS.md):
//! when a tab becomes `blocked` or `done` and no window shows it, the core
//! calls [`deliver`]. What to send is decided by the pure [`plan`] from the
//! `[notify]` config; this module then sends it: a desktop notification
//! over D-Bus (`desktop`), the user's command (`command`), and it tells the
//! core whether its windows should pass on a terminal notification (the
//! window writes OSC 9, 777 or 99, on `CoreMsg::Attention`).
//!
//! One tab tells of one state at most once in ten seconds (`throttle`),
//! and its desktop notification replaces its previous one (`desktop`).
//!
//! Nothing here can hold the core up: the config is read on the blocking
//! pool, and the desktop notification and the command run as tasks of
//! their own with bounded time, so [`deliver`] returns once they are
//! started. A missing notification daemon, or a failing command, is a log
//! line, never an error for the caller.

mod command;
mod desktop;
mod plan;
mod throttle;

use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};
use std::time::Instant;

use crate::config::NotifyConfig;
use crate::paths::Paths;
use crate::protocol::api::AgentState;

pub use plan::{plan, Action};

/// A tab's agent changed state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The tab's id (as `nerdr tabs` shows it).
    pub tab: String,
    /// The agent's name (its `[agents.NAME]` section, or the built-in).
    pub agent: String,
    /// The tab's folder (its worktree, if it has one).
    pub folder: PathBuf,
    pub from: AgentState,
    pub to: AgentState,
}

/// What [`deliver`] leaves to the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Delivered {
    /// Send `CoreMsg::Attention` to the session's windows, which pass it
    /// on to the person's terminal.
    pub terminal: bool,
}

/// Tell the person about `event` as the config says. Returns once the
/// desktop notification and any command are started (they finish, or are
/// given up on, in the background).
pub async fn deliver(paths: Paths, event: Event) -> Delivered {
    let mut delivered = Delivered::default();
    // The throttle before anything else: a program that flickers between a
    // dialog and work (OSC 7501 or its screen, on every write) would
    // otherwise have the config read and parsed, and a broken one logged,
    // on every flicker. A state whose setting is off takes its place in
    // the throttle for nothing, which is harmless.
    if event.from == event.to || !admit(&event) {
        return delivered;
    }
    let config = load(&paths, &event.agent).await;
    let actions = plan(&config, &event);
    for action in actions {
        match action {
            Action::Desktop { summary, body } => {
                tokio::spawn(desktop::send_to_session_bus(
                    event.tab.clone(),
                    summary,
                    body,
                ));
            }
            Action::Terminal { .. } => delivered.terminal = true,
            Action::Command { argv, env, key } => command::spawn(argv, env, key),
        }
    }
    delivered
}

/// [`throttle`] across every session of this core.
fn admit(event: &Event) -> bool {
    static RECENT: LazyLock<Mutex<throttle::Recent>> = LazyLock::new(Mutex::default);
    let admitted = RECENT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .admit(&event.tab, event.to, Instant::now());
    if !admitted {
        tracing::debug!(
            tab = %event.tab,
            state = event.to.as_str(),
            "not told again within {} s",
            throttle::QUIET.as_secs()
        );
    }
    admitted
}

/// The warning for a config whose `[notify]` cannot be used: what is
/// wrong (file, line, key) and what nerdr does meanwhile.
fn unreadable(error: &dyn std::fmt::Display) -> String {
    format!("cannot read [notify]: {error}; notifying with the defaults until it is fixed")
}

/// The agent's `[notify]` settings, read off the async workers. A config
/// that cannot be read or parsed means the defaults (everything on): a
/// mistake in the file should not silence "claude needs you".
async fn load(paths: &Paths, agent: &str) -> NotifyConfig {
    let file = paths.config_file();
    let agent = agent.to_owned();
    let read = tokio::task::spawn_blocking(move || {
        crate::config::load(&file).map(|c| c.notify_for(&agent))
    })
    .await;
    match read {
        Ok(Ok(config)) => config,
        Ok(Err(error)) => {
            // In the message itself: `journalctl -t nerdr`, where the
            // README sends people, shows no fields.
            tracing::warn!(error = %error, "{}", unreadable(&error));
            NotifyConfig::default()
        }
        Err(error) => {
            tracing::warn!(error = %error, "reading [notify] failed; notifying with the defaults");
            NotifyConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NotifyWhen;

    fn paths(dir: &std::path::Path) -> Paths {
        Paths {
            config_home: dir.to_owned(),
            config_dir: dir.join("nerdr"),
            state_dir: dir.join("state"),
            data_dir: dir.join("data"),
            run_dir: dir.join("run"),
        }
    }

    #[tokio::test]
    async fn the_agents_settings_are_read_from_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(
            paths.config_file(),
            "[notify]\ndone = \"off\"\n[agents.codex.notify]\ndone = \"on\"\n",
        )
        .unwrap();
        assert_eq!(load(&paths, "claude").await.done.value, NotifyWhen::Off);
        assert_eq!(load(&paths, "codex").await.done.value, NotifyWhen::On);
    }

    #[tokio::test]
    async fn a_missing_or_broken_config_means_the_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        assert_eq!(load(&paths, "claude").await, NotifyConfig::default());
        std::fs::create_dir_all(&paths.config_dir).unwrap();
        std::fs::write(paths.config_file(), "[notify]\ndone = \"off\"\nbogus = 1\n").unwrap();
        assert_eq!(load(&paths, "claude").await, NotifyConfig::default());
    }

    /// The warning carries the config error in its text (the journal's
    /// default view shows no fields), and says what nerdr does meanwhile.
    #[test]
    fn the_warning_for_a_broken_config_says_what_is_wrong() {
        let error =
            "config.toml:9:1: `notify.done` is \"yes\", which is neither \"on\" nor \"off\"";
        let text = unreadable(&error);
        assert!(text.contains(error), "{text}");
        assert!(text.contains("notifying with the defaults"), "{text}");
    }
}
