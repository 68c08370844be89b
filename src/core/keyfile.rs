//! The client key: random bytes in a 0600 file beside the client socket.
//! A client proves it could read the file, which only the user can.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Context;

use crate::protocol::handshake::random_hex;

/// Write a fresh key and return it. Written under a temporary name and
/// renamed, so a client never reads half a key.
pub fn refresh(path: &Path) -> anyhow::Result<Vec<u8>> {
    let key = random_hex(32).into_bytes();
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)
        .with_context(|| format!("cannot create the client key {}", tmp.display()))?;
    f.write_all(&key)?;
    f.sync_all()?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot put the client key at {}", path.display()))?;
    Ok(key)
}
