//! Whether this user can run a file, and which file a command name runs on
//! a `PATH`. `nerdr service install` checks the binary its units will run;
//! the sandbox and `nerdr doctor` look for bwrap.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Why a path cannot be run.
#[derive(Debug)]
pub enum NotRunnable {
    Missing(io::Error),
    NotAFile,
    /// The permission bits (`mode & 0o7777`), which may allow it while the
    /// kernel does not (ACLs, a noexec mount).
    NotExecutable {
        mode: u32,
    },
}

/// Refuses a path that is not a regular file this user may execute.
pub fn check(path: &Path) -> Result<(), NotRunnable> {
    let meta = std::fs::metadata(path).map_err(NotRunnable::Missing)?;
    if !meta.is_file() {
        return Err(NotRunnable::NotAFile);
    }
    let mode = meta.permissions().mode();
    // The mode bits first (clear message), then the kernel's own answer for
    // this user (ACLs, noexec mounts).
    let executable =
        mode & 0o111 != 0 && nix::unistd::access(path, nix::unistd::AccessFlags::X_OK).is_ok();
    if !executable {
        return Err(NotRunnable::NotExecutable {
            mode: mode & 0o7777,
        });
    }
    Ok(())
}

/// The first executable file called `name` in the directories of `path_var`
/// (a `PATH` value).
pub fn find_on_path(name: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path_var?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| check(p).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn find_on_path_skips_relative_and_non_executable_entries() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        fs::create_dir_all(&a).unwrap();
        fs::create_dir_all(&b).unwrap();
        fs::write(a.join("bwrap"), "").unwrap();
        fs::write(b.join("bwrap"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(b.join("bwrap"), fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths(["relative".into(), a.clone(), b.clone()]).unwrap();
        assert_eq!(find_on_path("bwrap", Some(&path)), Some(b.join("bwrap")));
        assert_eq!(find_on_path("bwrap", None), None);
    }
}
