//! `[notify]` and `[agents.NAME.notify]`: whom nerdr tells when a tab
//! becomes `blocked` or `done`, as plain data (docs/NOTIFICATIONS.md).
//! Owns what the keys hold and how an agent's section overrides the
//! global one key by key; their checks are in `schema.rs`, with every
//! other section's, and what is then sent is `crate::alerts`.

use super::error::dotted;

/// What one state's key says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotifyWhen {
    /// `"off"`: nothing.
    Off,
    /// `"on"`: the desktop notification and the terminal one (each unless
    /// its own key, `desktop` or `terminal`, is false).
    On,
    /// A command (argv, never a shell string): run it, besides what `"on"`
    /// sends.
    Command(Vec<String>),
}

/// One `[notify]` or `[agents.NAME.notify]` table as written: `None` is a
/// key left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotifySettings {
    pub blocked: Option<NotifyWhen>,
    pub done: Option<NotifyWhen>,
    /// Whether "on" includes the desktop notification (D-Bus).
    pub desktop: Option<bool>,
    /// Whether "on" includes the terminal notification (OSC 9/777 through
    /// the session's windows).
    pub terminal: Option<bool>,
}

/// What applies to one agent's tabs, overrides resolved, each value with
/// the key that set it (for log lines about a failing command).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    pub blocked: Setting<NotifyWhen>,
    pub done: Setting<NotifyWhen>,
    pub desktop: Setting<bool>,
    pub terminal: Setting<bool>,
}

/// A resolved value and where it came from: `notify.done`,
/// `agents.claude.notify.done`, or `default` when no key set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setting<T> {
    pub value: T,
    pub key: String,
}

impl NotifyConfig {
    /// `agent`'s settings: its own key if written, else the global one,
    /// else the default (everything on).
    pub fn resolve(global: &NotifySettings, agent: Option<(&str, &NotifySettings)>) -> Self {
        fn pick<T: Clone>(
            field: &str,
            get: impl Fn(&NotifySettings) -> &Option<T>,
            global: &NotifySettings,
            agent: Option<(&str, &NotifySettings)>,
            default: T,
        ) -> Setting<T> {
            if let Some((name, own)) = agent {
                if let Some(value) = get(own) {
                    return Setting {
                        value: value.clone(),
                        key: dotted(&["agents", name, "notify", field]),
                    };
                }
            }
            match get(global) {
                Some(value) => Setting {
                    value: value.clone(),
                    key: format!("notify.{field}"),
                },
                None => Setting {
                    value: default,
                    key: "default".to_owned(),
                },
            }
        }
        NotifyConfig {
            blocked: pick("blocked", |s| &s.blocked, global, agent, NotifyWhen::On),
            done: pick("done", |s| &s.done, global, agent, NotifyWhen::On),
            desktop: pick("desktop", |s| &s.desktop, global, agent, true),
            terminal: pick("terminal", |s| &s.terminal, global, agent, true),
        }
    }
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig::resolve(&NotifySettings::default(), None)
    }
}
