//! Binding the two sockets ourselves when nobody activated us.
//!
//! A socket file is a claim: if something answers on it, another core owns it
//! and we leave it alone; only a file nobody listens on (connection refused)
//! is stale and replaced.

use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use crate::platform;
use crate::private_dir::{self, PrivateDirError};

#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error(
        "another nerdr core owns {path} ({owner}); this one will not take its socket. \
         Use that core, or stop it first (`systemctl --user stop nerdr.service nerdr-hook.socket nerdr-client.socket`, or kill {pid_hint})"
    )]
    Owned {
        path: PathBuf,
        owner: String,
        pid_hint: String,
    },
    #[error(transparent)]
    Dir(#[from] PrivateDirError),
    #[error("cannot bind {path}: {source}")]
    Bind { path: PathBuf, source: io::Error },
    #[error("{path} is not a socket; move it away, nerdr will not delete a file it did not make")]
    NotASocket { path: PathBuf },
}

/// A socket file we created, removed when dropped if it is still ours.
pub struct BoundSocket {
    pub listener: UnixListener,
    path: PathBuf,
    ino: u64,
}

impl Drop for BoundSocket {
    fn drop(&mut self) {
        // Only unlink the file if it is still the one we bound: a newer core
        // may have replaced it after we stopped answering.
        if std::fs::symlink_metadata(&self.path).map(|m| m.ino()).ok() == Some(self.ino) {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

pub fn bind(path: &Path) -> Result<BoundSocket, BindError> {
    if let Some(dir) = path.parent() {
        private_dir::create(dir)?;
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(BindError::Bind {
                path: path.into(),
                source,
            })
        }
        Ok(meta) => {
            use std::os::unix::fs::FileTypeExt;
            if !meta.file_type().is_socket() {
                return Err(BindError::NotASocket { path: path.into() });
            }
            match UnixStream::connect(path) {
                Ok(conn) => return Err(owned_error(path, &conn)),
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    let _ = std::fs::remove_file(path);
                }
                Err(source) => {
                    return Err(BindError::Bind {
                        path: path.into(),
                        source,
                    })
                }
            }
        }
    }
    let listener = UnixListener::bind(path).map_err(|source| BindError::Bind {
        path: path.into(),
        source,
    })?;
    // The directory is 0700 already, so the window before chmod exposes
    // nothing; the mode is for tools that check the file itself.
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|source| {
        BindError::Bind {
            path: path.into(),
            source,
        }
    })?;
    let ino = std::fs::symlink_metadata(path)
        .map(|m| m.ino())
        .unwrap_or(0);
    Ok(BoundSocket {
        listener,
        path: path.into(),
        ino,
    })
}

/// Name the live owner of a socket from the kernel's record of who listens.
fn owned_error(path: &Path, conn: &impl AsFd) -> BindError {
    let (owner, pid_hint) = match platform::peer_pid(conn) {
        Ok(pid) => {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "?".into());
            let what = if comm == "systemd" {
                "systemd socket activation".to_string()
            } else {
                format!("pid {pid}, {comm}")
            };
            (what, format!("pid {pid}"))
        }
        Err(_) => ("a process that did not say who it is".into(), "it".into()),
    };
    BindError::Owned {
        path: path.into(),
        owner,
        pid_hint,
    }
}
