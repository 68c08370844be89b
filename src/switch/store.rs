//! Each tab's switches, kept in `switches.json` in the state folder (0600;
//! it outlives a core restart as `tabs.json` does), so `nerdr tabs` shows
//! a tab's history after one. Blocking file I/O: the core calls it off its
//! async workers and keeps a copy in its state for the tab list.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The most switches kept per tab: the oldest go first.
pub const MAX_KEPT: usize = 50;

/// One switch of a tab's agent as the file keeps it (`at` in seconds
/// since the epoch); the core gives it to `nerdr tabs --json` as a
/// [`crate::protocol::listing::SwitchInfo`], `at` in RFC 3339.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Switch {
    /// The agent stopped.
    pub from: String,
    /// The agent started in its place.
    pub to: String,
    /// When, in seconds since the epoch.
    pub at: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Store {
    /// By tab id, oldest first.
    #[serde(default)]
    pub tabs: BTreeMap<String, Vec<Switch>>,
}

impl Store {
    /// Tab `tab` switched; tabs not in `open` are forgotten (closed).
    pub fn add(&mut self, tab: &str, s: Switch, open: &[String]) {
        self.tabs.retain(|t, _| t == tab || open.contains(t));
        let list = self.tabs.entry(tab.to_string()).or_default();
        list.push(s);
        let over = list.len().saturating_sub(MAX_KEPT);
        list.drain(..over);
    }
}

pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("switches.json")
}

/// The store as written; none yet is empty. A file that does not read as
/// one is an error naming it.
pub fn load(path: &Path) -> Result<Store, String> {
    crate::json_store::load(path, "a switch store")
}

/// Read, change and write the store under one process-wide lock.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Store) -> T) -> Result<T, String> {
    static FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    crate::json_store::update(&FILE, path, "a switch store", change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(to: &str) -> Switch {
        Switch {
            from: "claude".into(),
            to: to.into(),
            at: 7,
        }
    }

    #[test]
    fn a_tab_keeps_its_latest_switches_and_closed_tabs_go() {
        let mut st = Store::default();
        st.add("gone", s("codex"), &[]);
        for _ in 0..MAX_KEPT + 3 {
            st.add("ab12", s("codex"), &["ab12".into()]);
        }
        st.add("ab12", s("opencode"), &["ab12".into()]);
        assert!(!st.tabs.contains_key("gone"), "a closed tab's history went");
        let list = &st.tabs["ab12"];
        assert_eq!(list.len(), MAX_KEPT);
        assert_eq!(list.last().unwrap().to, "opencode");
    }

    #[test]
    fn written_and_read_back_survive_a_core_restart() {
        let dir = tempfile::tempdir().unwrap();
        let path = file(dir.path());
        update(&path, |st| st.add("ab12", s("codex"), &[])).unwrap();
        let back = load(&path).unwrap();
        assert_eq!(back.tabs["ab12"], vec![s("codex")]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
