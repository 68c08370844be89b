//! The state dir's small JSON stores (reviews, spinoffs, handoffs): read
//! whole, written whole (a new 0600 file, synced, renamed over the old),
//! and changed under a lock of the store's own so two requests never write
//! over each other's change. A file that does not parse is an error naming
//! it, never silently dropped: it holds the person's records. Blocking:
//! call these off the async workers.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// The store in `path`, `what` naming its kind in errors ("a review
/// store"); none yet is the empty store.
pub fn load<T: serde::de::DeserializeOwned + Default>(
    path: &Path,
    what: &str,
) -> Result<T, String> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "{} is not {what} ({e}); move it aside to start afresh",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(T::default()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Write `store` whole to `path`: a new 0600 file renamed over the old.
pub fn save<T: serde::Serialize>(path: &Path, store: &T) -> Result<(), String> {
    use std::os::unix::fs::OpenOptionsExt;
    let json = serde_json::to_vec_pretty(store).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    let write = || -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(&json)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Load, change and save under `lock` (the store's own).
pub fn update<T, R>(
    lock: &Mutex<()>,
    path: &Path,
    what: &str,
    change: impl FnOnce(&mut T) -> R,
) -> Result<R, String>
where
    T: serde::de::DeserializeOwned + serde::Serialize + Default,
{
    let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
    let mut store = load(path, what)?;
    let out = change(&mut store);
    save(path, &store)?;
    Ok(out)
}
