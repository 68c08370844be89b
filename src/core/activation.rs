//! Listening sockets handed over by systemd (or launchd) by name.
//!
//! Must run before any thread starts: it reads and clears `LISTEN_PID`,
//! `LISTEN_FDS` and `LISTEN_FDNAMES` so no child ever sees them, and marks the
//! descriptors close-on-exec.

use std::collections::BTreeMap;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// The activated sockets, by their `FileDescriptorName=`.
#[derive(Debug, Default)]
pub struct Activated {
    pub fds: BTreeMap<String, OwnedFd>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ActivationError {
    #[error(
        "socket activation passed {found:?} but not `{missing}`; \
         check FileDescriptorName= in nerdr-{missing}.socket (`nerdr doctor` compares the installed units)"
    )]
    Missing {
        missing: &'static str,
        found: Vec<String>,
    },
}

impl Activated {
    /// Take the activated descriptors from the environment and clear it.
    pub fn take_from_env() -> std::io::Result<Self> {
        let mut fds = BTreeMap::new();
        for (fd, name) in sd_notify::listen_fds_with_names(true)? {
            set_cloexec(fd);
            // SAFETY: systemd passed this descriptor to us alone (LISTEN_PID
            // was checked by sd_notify) and nothing else has wrapped it.
            fds.insert(name, unsafe { OwnedFd::from_raw_fd(fd) });
        }
        Ok(Activated { fds })
    }

    pub fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }

    /// The `hook` and `client` sockets, or which one is missing.
    pub fn hook_and_client(mut self) -> Result<(OwnedFd, OwnedFd), ActivationError> {
        let found: Vec<String> = self.fds.keys().cloned().collect();
        let hook = self.fds.remove("hook");
        let client = self.fds.remove("client");
        match (hook, client) {
            (Some(h), Some(c)) => Ok((h, c)),
            (None, _) => Err(ActivationError::Missing {
                missing: "hook",
                found,
            }),
            (_, None) => Err(ActivationError::Missing {
                missing: "client",
                found,
            }),
        }
    }
}

fn set_cloexec(fd: RawFd) {
    use nix::fcntl::{fcntl, FcntlArg, FdFlag};
    // An fd we cannot flag would leak into agents; failing to read the flags
    // means the fd is not valid, which the listener setup reports later.
    let _ = fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd() -> OwnedFd {
        std::fs::File::open("/dev/null").unwrap().into()
    }

    #[test]
    fn both_names_are_required() {
        let cases: Vec<(&[&str], Result<(), &str>)> = vec![
            (&["hook", "client"], Ok(())),
            (&["client", "hook", "extra"], Ok(())),
            (&["client"], Err("hook")),
            (&["hook"], Err("client")),
            (&["unknown", "unknown"], Err("hook")),
        ];
        for (names, want) in cases {
            let mut a = Activated::default();
            for n in names {
                a.fds.insert(n.to_string(), fd());
            }
            match (a.hook_and_client(), want) {
                (Ok(_), Ok(())) => {}
                (Err(ActivationError::Missing { missing, .. }), Err(w)) => {
                    assert_eq!(missing, w, "{names:?}")
                }
                (got, want) => panic!("{names:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
