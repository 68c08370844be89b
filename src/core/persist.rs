//! `tabs.json` in the state dir: what ran, so that after a full stop
//! (reboot, holder gone) `nerdr tabs` still shows it. Never holds secrets.

use std::path::Path;

use super::state::{Saved, State};

/// What `tabs.json` holds: taken under the state lock, written after.
pub fn snapshot(state: &State) -> Vec<Saved> {
    state.all_tabs().iter().map(|t| t.saved(false)).collect()
}

pub fn save(path: &Path, saved: &[Saved]) {
    super::held::assert_unlocked("writing tabs.json");
    let tmp = path.with_extension("json.tmp");
    let result = serde_json::to_vec_pretty(saved)
        .map_err(std::io::Error::other)
        .and_then(|bytes| std::fs::write(&tmp, bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        tracing::warn!(path = %path.display(), error = %e, "cannot save the tab list");
    }
}

/// The saved tabs, or none. A file that does not parse is kept aside as
/// `tabs.json.bad` rather than overwritten, and the log says so.
pub fn load(path: &Path) -> Vec<Saved> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "cannot read the tab list");
            return Vec::new();
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            let bad = path.with_extension("json.bad");
            let _ = std::fs::rename(path, &bad);
            tracing::warn!(path = %path.display(), kept = %bad.display(), error = %e, "the tab list does not parse; starting without it");
            Vec::new()
        }
    }
}
