//! Handoffs to the person (`nerdr handoff --to-me`), kept in
//! `handoffs.json` in the state folder (0600: it holds what agents said),
//! each with the tab it came from, until `nerdr handoffs --clear`.
//! Blocking file I/O: the core calls it off its async workers.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The most handoffs kept: the oldest go first.
pub const MAX_KEPT: usize = 100;

/// One handoff to the person; the wire's type (`nerdr handoffs --json`).
pub use crate::protocol::replies::HandoffInfo as Kept;

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Store {
    #[serde(default)]
    pub handoffs: Vec<Kept>,
}

impl Store {
    /// Keep `h`, dropping the oldest past [`MAX_KEPT`].
    pub fn add(&mut self, h: Kept) {
        self.handoffs.push(h);
        let over = self.handoffs.len().saturating_sub(MAX_KEPT);
        self.handoffs.drain(..over);
    }

    /// The tabs with a handoff kept: the window marks them.
    pub fn tabs(&self) -> std::collections::BTreeSet<String> {
        self.handoffs.iter().map(|h| h.tab.clone()).collect()
    }

    /// The next number for a handoff.
    pub fn next_number(&self) -> u64 {
        self.handoffs.iter().map(|h| h.number).max().unwrap_or(0) + 1
    }
}

pub fn file(state_dir: &Path) -> PathBuf {
    state_dir.join("handoffs.json")
}

/// The store as written; none yet is empty. A file that does not read as
/// one is an error naming it (never dropped: it holds handoffs).
pub fn load(path: &Path) -> Result<Store, String> {
    crate::json_store::load(path, "a handoff store")
}

/// Read, change and write the store under one process-wide lock.
pub fn update<T>(path: &Path, change: impl FnOnce(&mut Store) -> T) -> Result<T, String> {
    static FILE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    crate::json_store::update(&FILE, path, "a handoff store", change)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(n: u64) -> Kept {
        Kept {
            number: n,
            tab: "ab12".into(),
            name: "claude-1".into(),
            agent: "claude".into(),
            folder: "/p".into(),
            at: 0,
            text: format!("h{n}"),
            note: None,
        }
    }

    #[test]
    fn the_store_is_private_and_keeps_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let path = file(dir.path());
        update(&path, |s| {
            for _ in 0..MAX_KEPT + 3 {
                let n = s.next_number();
                s.add(kept(n));
            }
        })
        .unwrap();
        let s = load(&path).unwrap();
        assert_eq!(s.handoffs.len(), MAX_KEPT);
        assert_eq!(s.handoffs[0].number, 4);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::write(&path, b"nope").unwrap();
        assert!(load(&path).unwrap_err().contains("handoffs.json"));
    }
}
