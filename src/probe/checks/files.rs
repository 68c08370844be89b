//! The probe's attempts on files, folders and sockets: each first makes
//! sure the path inside the sandbox is the file the core meant (a tmpfs or
//! an empty bind in its place reaches nothing of nerdr's), and leaves
//! nothing behind.

use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use super::{errno, Got};
use crate::probe::plan::FileId;

/// A running program cannot be opened for writing (`ETXTBSY`), but the
/// kernel says so only after the permission check passed (and before the
/// mount's read-only flag is looked at): on a writable mount, it can be
/// written once it stops. The error text is what `open_same` gave.
pub(super) fn busy_but_writable(path: &Path) -> impl FnOnce(String) -> Result<Got, String> + '_ {
    move |e| {
        let busy = std::io::Error::from_raw_os_error(libc::ETXTBSY).to_string();
        if e == busy && !read_only_mount(path) {
            Ok((true, "writable (busy running now)".into()))
        } else {
            Err(e)
        }
    }
}

/// Is the path inside the sandbox the one the core meant? A different
/// folder in its place (a tmpfs, an empty bind) is not nerdr's, and what
/// the probe can do there reaches nothing.
pub(super) fn same(want: &FileId) -> Result<(), String> {
    let m = std::fs::symlink_metadata(&want.path).map_err(errno)?;
    if (m.dev(), m.ino()) == (want.dev, want.ino) {
        Ok(())
    } else {
        Err("not the same file as outside the sandbox".into())
    }
}

pub(super) fn open_same(want: &FileId, opts: &std::fs::OpenOptions) -> Result<File, String> {
    same(want)?;
    let f = opts.open(&want.path).map_err(errno)?;
    let m = f.metadata().map_err(errno)?;
    if (m.dev(), m.ino()) == (want.dev, want.ino) {
        Ok(f)
    } else {
        Err("not the same file as outside the sandbox".into())
    }
}

pub(super) fn create_and_remove(dir: &Path, nonce: &str) -> Result<Got, String> {
    let name = dir.join(format!(".nerdr-probe-{nonce}"));
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&name)
        .map_err(errno)?;
    drop(made);
    match std::fs::remove_file(&name) {
        Ok(()) => Ok((true, "created a file and removed it".into())),
        Err(e) => Ok((
            true,
            format!("created {} and could not remove it: {e}", name.display()),
        )),
    }
}

/// What is not writable as it stands but is the sandbox's own to change: a
/// file or folder it owns, on a mount it may write, can be given back its
/// write permission (`chmod`), so a read-only mode is no protection.
pub(super) fn changeable(path: &Path) -> Option<Got> {
    let m = std::fs::symlink_metadata(path).ok()?;
    let owner = m.uid() == nix::unistd::geteuid().as_raw();
    (owner && !read_only_mount(path)).then(|| {
        (
            true,
            "its owner here, on a writable mount: its mode can be changed".into(),
        )
    })
}

/// A file whose folder the sandbox may write can be replaced (a new file
/// renamed over it) unless it is a mount of its own, which cannot be.
pub(super) fn replaceable(path: &Path) -> Option<Got> {
    let parent = path.parent()?;
    // access(2) also says EROFS for a read-only mount.
    nix::unistd::access(parent, nix::unistd::AccessFlags::W_OK).ok()?;
    (!mount_root(path)).then(|| {
        (
            true,
            "its folder is writable: the file can be replaced".into(),
        )
    })
}

fn read_only_mount(path: &Path) -> bool {
    nix::sys::statvfs::statvfs(path)
        .map(|s| s.flags().contains(nix::sys::statvfs::FsFlags::ST_RDONLY))
        // Unknown: assume writable, so the check errs towards refusing.
        .unwrap_or(false)
}

/// Whether `path` is itself a mount point (a file bound read-only over the
/// real one, as a sandbox does for `.git/config`).
#[cfg(target_os = "linux")]
fn mount_root(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statx fills `buf`, a zeroed plain struct; `c` is a valid C string.
    let mut buf: libc::statx = unsafe { std::mem::zeroed() };
    let r = unsafe {
        libc::statx(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::AT_SYMLINK_NOFOLLOW,
            0,
            &mut buf,
        )
    };
    let bit = libc::STATX_ATTR_MOUNT_ROOT as u64;
    // Unsupported (older kernels): assume not, so the check errs towards refusing.
    r == 0 && buf.stx_attributes_mask & bit != 0 && buf.stx_attributes & bit != 0
}

#[cfg(not(target_os = "linux"))]
fn mount_root(_path: &Path) -> bool {
    false
}
