//! What to send for one state change, from the resolved `[notify]` config:
//! pure, so every row of the decision is a test.

use crate::config::{NotifyConfig, NotifyWhen};
use crate::protocol::api::AgentState;

use super::Event;

/// One thing to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `org.freedesktop.Notifications.Notify` on the session bus.
    Desktop { summary: String, body: String },
    /// OSC 9 / 777 through the session's windows.
    Terminal { text: String },
    /// The user's command; `env` is what nerdr adds to its environment,
    /// `key` the config key that named it (for log lines).
    Command {
        argv: Vec<String>,
        env: Vec<(String, String)>,
        key: String,
    },
}

/// The actions for `event`: none unless the tab just became `blocked` or
/// `done` and that state's key is not "off".
pub fn plan(config: &NotifyConfig, event: &Event) -> Vec<Action> {
    if event.from == event.to {
        return Vec::new();
    }
    let (setting, verb) = match event.to {
        AgentState::Blocked => (&config.blocked, "needs you"),
        AgentState::Done => (&config.done, "is done"),
        AgentState::Working | AgentState::Idle | AgentState::Unknown => return Vec::new(),
    };
    let text = format!("{} in tab {} {verb}", event.agent, event.tab);
    let mut actions = Vec::new();
    let command = match &setting.value {
        NotifyWhen::Off => return actions,
        NotifyWhen::On => None,
        NotifyWhen::Command(argv) => Some(argv),
    };
    if config.desktop.value {
        actions.push(Action::Desktop {
            summary: format!("{} {verb}", event.agent),
            body: format!("tab {} in {}", event.tab, event.folder.display()),
        });
    }
    if config.terminal.value {
        actions.push(Action::Terminal { text: text.clone() });
    }
    if let Some(argv) = command {
        let env = [
            ("NERDR_NOTIFY_TAB", event.tab.clone()),
            ("NERDR_NOTIFY_AGENT", event.agent.clone()),
            ("NERDR_NOTIFY_STATE", event.to.as_str().to_owned()),
            (
                "NERDR_NOTIFY_FOLDER",
                event.folder.to_string_lossy().into_owned(),
            ),
            ("NERDR_NOTIFY_TEXT", text),
        ];
        actions.push(Action::Command {
            argv: argv.clone(),
            env: env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
            key: setting.key.clone(),
        });
    }
    actions
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::NotifySettings;
    use AgentState::*;

    fn event(from: AgentState, to: AgentState) -> Event {
        Event {
            tab: "ab12".into(),
            agent: "claude".into(),
            folder: "/home/u/src/proj".into(),
            from,
            to,
        }
    }

    /// `blocked`, `desktop` and `terminal` from `[notify]`, `done` from
    /// `[agents.claude.notify]`, through the real resolution.
    fn config(
        blocked: NotifyWhen,
        done: NotifyWhen,
        desktop: bool,
        terminal: bool,
    ) -> NotifyConfig {
        let global = NotifySettings {
            blocked: Some(blocked),
            desktop: Some(desktop),
            terminal: Some(terminal),
            ..NotifySettings::default()
        };
        let own = NotifySettings {
            done: Some(done),
            ..NotifySettings::default()
        };
        NotifyConfig::resolve(&global, Some(("claude", &own)))
    }

    fn desktop(verb: &str) -> Action {
        Action::Desktop {
            summary: format!("claude {verb}"),
            body: "tab ab12 in /home/u/src/proj".into(),
        }
    }

    fn terminal(verb: &str) -> Action {
        Action::Terminal {
            text: format!("claude in tab ab12 {verb}"),
        }
    }

    fn command(argv: &[&str], state: &str, verb: &str, key: &str) -> Action {
        Action::Command {
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: vec![
                ("NERDR_NOTIFY_TAB".into(), "ab12".into()),
                ("NERDR_NOTIFY_AGENT".into(), "claude".into()),
                ("NERDR_NOTIFY_STATE".into(), state.into()),
                ("NERDR_NOTIFY_FOLDER".into(), "/home/u/src/proj".into()),
                (
                    "NERDR_NOTIFY_TEXT".into(),
                    format!("claude in tab ab12 {verb}"),
                ),
            ],
            key: key.into(),
        }
    }

    #[test]
    fn every_row_of_the_decision() {
        use NotifyWhen::{Off, On};
        let beep = || NotifyWhen::Command(vec!["beep".into(), "-f".into()]);
        let needs = "needs you";
        let done = "is done";
        #[rustfmt::skip]
        let rows: Vec<(&str, NotifyConfig, Event, Vec<Action>)> = vec![
            ("blocked, on: desktop and terminal",
             config(On, On, true, true), event(Working, Blocked),
             vec![desktop(needs), terminal(needs)]),
            ("done, on: desktop and terminal",
             config(On, On, true, true), event(Working, Done),
             vec![desktop(done), terminal(done)]),
            ("from any state, not only working",
             config(On, On, true, true), event(Unknown, Blocked),
             vec![desktop(needs), terminal(needs)]),
            ("blocked to done is news too",
             config(On, On, true, true), event(Blocked, Done),
             vec![desktop(done), terminal(done)]),
            ("blocked, off: nothing",
             config(Off, On, true, true), event(Idle, Blocked), vec![]),
            ("done, off: nothing",
             config(On, Off, true, true), event(Working, Done), vec![]),
            ("the other state's key does not matter",
             config(Off, On, true, true), event(Working, Done),
             vec![desktop(done), terminal(done)]),
            ("desktop = false: terminal only",
             config(On, On, false, true), event(Working, Blocked), vec![terminal(needs)]),
            ("terminal = false: desktop only",
             config(On, On, true, false), event(Working, Blocked), vec![desktop(needs)]),
            ("both channels off: on sends nothing",
             config(On, On, false, false), event(Working, Blocked), vec![]),
            ("a command runs besides desktop and terminal",
             config(beep(), On, true, true), event(Working, Blocked),
             vec![desktop(needs), terminal(needs),
                  command(&["beep", "-f"], "blocked", needs, "notify.blocked")]),
            ("a command alone when both channels are off",
             config(On, beep(), false, false), event(Working, Done),
             vec![command(&["beep", "-f"], "done", done, "agents.claude.notify.done")]),
            ("no change: nothing",
             config(On, On, true, true), event(Blocked, Blocked), vec![]),
            ("becoming working: nothing",
             config(On, On, true, true), event(Idle, Working), vec![]),
            ("becoming idle: nothing",
             config(On, On, true, true), event(Done, Idle), vec![]),
            ("becoming unknown: nothing",
             config(beep(), beep(), true, true), event(Working, Unknown), vec![]),
        ];
        for (name, config, event, want) in rows {
            assert_eq!(plan(&config, &event), want, "{name}");
        }
    }

    #[test]
    fn the_default_config_tells_of_blocked_and_done_everywhere() {
        let config = NotifyConfig::resolve(&NotifySettings::default(), None);
        assert_eq!(
            plan(&config, &event(Working, Blocked)),
            vec![desktop("needs you"), terminal("needs you")]
        );
        assert_eq!(
            plan(&config, &event(Working, Done)),
            vec![desktop("is done"), terminal("is done")]
        );
    }
}
