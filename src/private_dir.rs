//! Folders only the user may enter: the state dir, the runtime dir's
//! sockets, the proxy's folder. Made with mode 0700 for every part created,
//! and the folder itself tightened to 0700 if it was there already.

use std::io;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("cannot create {path}: {source}")]
pub struct PrivateDirError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Make `dir` (and parents) with mode 0700 for the parts we create, and
/// tighten `dir` itself to 0700.
pub fn create(dir: &Path) -> Result<(), PrivateDirError> {
    let err = |source| PrivateDirError {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(err)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(err)
}
