//! What installing and uninstalling share on every platform: finding and
//! checking the binary the units will run, writing a rendered file only when
//! it differs, removing exactly the files written, and probing a socket path.
//! The platform flows (`systemd.rs`, `launchd.rs`) call these.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use super::facts::{FileState, Installed, SocketProbe};
use super::units::{RenderError, UnitFile};
use crate::executable::{self, NotRunnable};

#[derive(Debug, thiserror::Error)]
pub enum BinError {
    #[error("cannot tell where this nerdr binary is ({0}); pass --bin PATH")]
    CurrentExe(io::Error),
    #[error("cannot use {path:?}: {error}; pass --bin with the path of an installed nerdr")]
    Missing { path: PathBuf, error: io::Error },
    #[error("{path:?} is not a regular file; pass --bin with the path of the nerdr binary")]
    NotAFile { path: PathBuf },
    #[error(
        "{path:?} is not executable (mode {mode:o}); `chmod +x` it or pass --bin with another path"
    )]
    NotExecutable { path: PathBuf, mode: u32 },
}

/// The binary the units will run.
///
/// Without `bin`: the running executable, canonicalized (on Linux the kernel
/// already reports it with every symlink resolved).
///
/// With `bin`: its directory is canonicalized (systemd wants a normalized
/// absolute path) but a symlink in the last component is kept, so a
/// `~/.local/bin/nerdr` pointing at a versioned build keeps working after an
/// upgrade moves the link.
pub fn resolve_bin(bin: Option<PathBuf>) -> Result<PathBuf, BinError> {
    let path = match bin {
        None => {
            let exe = std::env::current_exe().map_err(BinError::CurrentExe)?;
            fs::canonicalize(&exe).map_err(|error| BinError::Missing { path: exe, error })?
        }
        Some(p) => {
            let name = p
                .file_name()
                .ok_or_else(|| BinError::NotAFile { path: p.clone() })?;
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let dir = fs::canonicalize(dir).map_err(|error| BinError::Missing {
                path: p.clone(),
                error,
            })?;
            dir.join(name)
        }
    };
    check_bin(&path)?;
    Ok(path)
}

/// Refuses a path that is not an executable regular file. A binary under a
/// cargo `target/` directory is allowed: developers install from there.
pub fn check_bin(path: &Path) -> Result<(), BinError> {
    executable::check(path).map_err(|why| match why {
        NotRunnable::Missing(error) => BinError::Missing {
            path: path.to_owned(),
            error,
        },
        NotRunnable::NotAFile => BinError::NotAFile {
            path: path.to_owned(),
        },
        NotRunnable::NotExecutable { mode } => BinError::NotExecutable {
            path: path.to_owned(),
            mode,
        },
    })
}

/// The text of `dir/name`, or `None` when there is no such file.
pub fn read_installed(dir: &Path, name: &str) -> io::Result<Option<String>> {
    match fs::read_to_string(dir.join(name)) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes `unit` into `dir` unless the file there already has exactly this
/// text; returns how it compared before. The write is atomic (temporary file
/// and rename), so a manager reloading meanwhile never reads half a unit.
pub fn write_if_changed(dir: &Path, unit: &UnitFile) -> io::Result<FileState> {
    let before = FileState::of(&unit.contents, read_installed(dir, unit.name)?.as_deref());
    if before == FileState::Current {
        return Ok(before);
    }
    let tmp = dir.join(format!(".{}.nerdr-tmp", unit.name));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(unit.contents.as_bytes())?;
        f.set_permissions(fs::Permissions::from_mode(0o644))?;
        f.sync_all()?;
        fs::rename(&tmp, dir.join(unit.name))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp); // best effort; the error below is the news
    }
    result.map(|()| before)
}

/// Removes `dir/name` if present; true when something was removed.
pub fn remove_if_present(path: &Path) -> io::Result<bool> {
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Removes `dir` if it is empty (and exists); true when it was removed.
pub fn remove_dir_if_empty(dir: &Path) -> bool {
    // rmdir refuses a non-empty directory, which is exactly the test wanted.
    fs::remove_dir(dir).is_ok()
}

pub fn probe_socket(path: &Path) -> SocketProbe {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return SocketProbe::Missing,
        Err(e) => return SocketProbe::Error(e.to_string()),
        Ok(m) if !m.file_type().is_socket() => return SocketProbe::NotASocket,
        Ok(_) => {}
    }
    match UnixStream::connect(path) {
        Ok(_) => SocketProbe::Listening,
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => SocketProbe::Stale,
        Err(e) if e.kind() == io::ErrorKind::NotFound => SocketProbe::Missing,
        Err(e) => SocketProbe::Error(e.to_string()),
    }
}

/// Removes a socket file nothing listens on; leaves anything else alone.
/// Returns the probe that decided.
pub fn remove_stale_socket(path: &Path) -> io::Result<SocketProbe> {
    let probe = probe_socket(path);
    if probe == SocketProbe::Stale {
        remove_if_present(path)?;
    }
    Ok(probe)
}

/// This user's login name, for `loginctl` and the linger file.
pub fn user_name() -> String {
    let uid = nix::unistd::getuid();
    match nix::unistd::User::from_uid(uid) {
        Ok(Some(u)) => u.name,
        _ => std::env::var("USER").unwrap_or_else(|_| uid.to_string()),
    }
}

/// Compares the files in `dir` (`on_disk`, in render order) with what
/// `render` writes for the binary the installed service runs, or for this
/// executable when no installed service names one.
pub fn compare_installed(
    dir: PathBuf,
    on_disk: &[(&'static str, Option<String>)],
    installed_bin: Option<PathBuf>,
    render: impl Fn(&Path) -> Result<Vec<UnitFile>, RenderError>,
) -> Installed {
    let bin_from_installed = installed_bin.is_some();
    let (bin, bin_problem) = match installed_bin {
        Some(b) => {
            let problem = check_bin(&b).err().map(|e| e.to_string());
            (Some(b), problem)
        }
        None => match resolve_bin(None) {
            Ok(b) => (Some(b), None),
            Err(e) => (None, Some(e.to_string())),
        },
    };
    let by_presence = || {
        on_disk
            .iter()
            .map(|(n, d)| {
                (
                    *n,
                    if d.is_some() {
                        FileState::Different
                    } else {
                        FileState::Missing
                    },
                )
            })
            .collect()
    };
    let (render_error, files) = match bin.as_deref().map(&render) {
        Some(Ok(rendered)) => {
            let files = on_disk
                .iter()
                .map(|(name, disk)| {
                    let r = rendered
                        .iter()
                        .find(|u| u.name == *name)
                        .map(|u| u.contents.as_str());
                    (
                        *name,
                        r.map_or(FileState::Different, |r| FileState::of(r, disk.as_deref())),
                    )
                })
                .collect();
            (None, files)
        }
        Some(Err(e)) => (Some(e.to_string()), by_presence()),
        None => (None, by_presence()),
    };
    Installed {
        dir,
        bin,
        bin_from_installed,
        bin_problem,
        render_error,
        files,
        unread: None,
        package: None,
    }
}

/// Reads each named file in `dir`. A file that exists but cannot be read
/// counts as present with unknown text (so it compares as different).
pub fn read_all(dir: &Path, names: &[&'static str]) -> Vec<(&'static str, Option<String>)> {
    names
        .iter()
        .map(|n| {
            (
                *n,
                read_installed(dir, n).unwrap_or_else(|_| Some(String::new())),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    fn unit(contents: &str) -> UnitFile {
        UnitFile {
            name: "nerdr.service",
            contents: contents.into(),
        }
    }

    #[test]
    fn compare_installed_uses_the_installed_bin_and_reports_each_file() {
        let render = |bin: &Path| -> Result<Vec<UnitFile>, RenderError> {
            Ok(vec![
                UnitFile {
                    name: "a",
                    contents: format!("a {}", bin.display()),
                },
                UnitFile {
                    name: "b",
                    contents: "b".into(),
                },
            ])
        };
        let disk = [
            ("a", Some("a /gone/nerdr".to_string())),
            ("b", Some("old".to_string())),
        ];
        let got = compare_installed("/u".into(), &disk, Some("/gone/nerdr".into()), render);
        assert_eq!(got.bin.as_deref(), Some(Path::new("/gone/nerdr")));
        assert!(got.bin_from_installed);
        assert!(
            got.bin_problem.as_deref().unwrap().contains("No such file"),
            "{got:?}"
        );
        assert_eq!(
            got.files,
            [("a", FileState::Current), ("b", FileState::Different)]
        );

        let none = [("a", None), ("b", None)];
        let got = compare_installed("/u".into(), &none, None, render);
        assert!(!got.bin_from_installed);
        assert!(got.bin_problem.is_none(), "this test binary is executable");
        assert!(got.none_present());
    }

    #[test]
    fn file_state_compares_exact_text() {
        assert_eq!(FileState::of("a\n", None), FileState::Missing);
        assert_eq!(FileState::of("a\n", Some("a\n")), FileState::Current);
        assert_eq!(FileState::of("a\n", Some("a")), FileState::Different);
    }

    #[test]
    fn writing_twice_changes_nothing_the_second_time() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            write_if_changed(dir.path(), &unit("x\n")).unwrap(),
            FileState::Missing
        );
        let path = dir.path().join("nerdr.service");
        let mtime = fs::metadata(&path).unwrap().modified().unwrap();
        assert_eq!(
            write_if_changed(dir.path(), &unit("x\n")).unwrap(),
            FileState::Current
        );
        assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        assert_eq!(
            write_if_changed(dir.path(), &unit("y\n")).unwrap(),
            FileState::Different
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), "y\n");
        assert_eq!(
            fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o644
        );
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["nerdr.service"], "no temporary file is left behind");
    }

    #[test]
    fn a_missing_or_non_executable_bin_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = resolve_bin(Some(dir.path().join("nope"))).unwrap_err();
        assert!(matches!(err, BinError::Missing { .. }), "{err}");
        let err = resolve_bin(Some(dir.path().to_owned())).unwrap_err();
        assert!(matches!(err, BinError::NotAFile { .. }), "{err}");
        let f = dir.path().join("nerdr");
        fs::write(&f, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).unwrap();
        let err = resolve_bin(Some(f.clone())).unwrap_err();
        assert!(err.to_string().contains("mode 644"), "{err}");
        fs::set_permissions(&f, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(
            resolve_bin(Some(f.clone())).unwrap(),
            fs::canonicalize(&f).unwrap()
        );
    }

    #[test]
    fn a_given_bin_keeps_its_last_symlink_but_not_its_directory_links() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("nerdr-0.1");
        fs::write(&real, "#!/bin/sh\n").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("nerdr")).unwrap();
        std::os::unix::fs::symlink(dir.path(), dir.path().join("bin")).unwrap();
        let canon = fs::canonicalize(dir.path()).unwrap();
        let given = dir.path().join("bin/./nerdr");
        assert_eq!(resolve_bin(Some(given)).unwrap(), canon.join("nerdr"));
        let err = resolve_bin(Some(dir.path().join("nowhere/nerdr"))).unwrap_err();
        assert!(matches!(err, BinError::Missing { .. }), "{err}");
    }

    #[test]
    fn the_default_bin_is_this_executable() {
        let exe = fs::canonicalize(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(resolve_bin(None).unwrap(), exe);
    }

    #[test]
    fn probes_tell_listening_stale_missing_and_not_a_socket_apart() {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s.sock");
        assert_eq!(probe_socket(&sock), SocketProbe::Missing);
        let listener = UnixListener::bind(&sock).unwrap();
        assert_eq!(probe_socket(&sock), SocketProbe::Listening);
        assert_eq!(remove_stale_socket(&sock).unwrap(), SocketProbe::Listening);
        assert!(sock.exists(), "a live socket is never removed");
        drop(listener);
        assert_eq!(probe_socket(&sock), SocketProbe::Stale);
        assert_eq!(remove_stale_socket(&sock).unwrap(), SocketProbe::Stale);
        assert!(!sock.exists());
        fs::write(&sock, "").unwrap();
        assert_eq!(remove_stale_socket(&sock).unwrap(), SocketProbe::NotASocket);
        assert!(sock.exists(), "a regular file is never removed");
    }
}
