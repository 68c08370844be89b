//! The file operations of install and uninstall: read settings as text,
//! write them atomically in place (through a symlink, keeping the mode),
//! make and remove the folders install needed.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// The file to edit: `path` itself, or what it links to (dotfile managers
/// link settings files; replacing the link would detach it from theirs).
pub fn resolve(path: &Path) -> anyhow::Result<PathBuf> {
    let path = std::path::absolute(path)
        .with_context(|| format!("cannot make {} absolute", path.display()))?;
    match fs::symlink_metadata(&path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(&path).with_context(|| {
            format!(
                "{} is a symlink to a file that does not exist; create the target or remove the link",
                path.display()
            )
        }),
        _ => Ok(path),
    }
}

/// The file's text, `None` when there is no file.
pub fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(s) => Ok(Some(s)),
            Err(_) => bail!(
                "{} is not UTF-8 text; nerdr edits settings files as text and leaves this one alone",
                path.display()
            ),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Replace the file's contents atomically (temporary file and rename in the
/// same folder), keeping the old file's permissions; a new file gets the
/// umask's, as the agent would give it.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.nerdr-tmp"));
    let keep = fs::metadata(path).ok().map(|m| m.permissions());
    let result = (|| -> io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        if let Some(p) = keep {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp); // best effort; the error below is the news
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

pub fn remove(path: &Path) -> anyhow::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// The folders above `file` that do not exist yet, outermost first.
pub fn missing_dirs(file: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = file
        .ancestors()
        .skip(1)
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}

pub fn make_dirs(dirs: &[PathBuf]) -> anyhow::Result<()> {
    for d in dirs {
        fs::create_dir(d).with_context(|| format!("cannot create {}", d.display()))?;
    }
    Ok(())
}

/// Remove the folders install made, innermost first, while they are empty.
pub fn remove_empty_dirs(dirs: &[PathBuf]) {
    for d in dirs.iter().rev() {
        // rmdir refuses a folder with anything in it: exactly the test wanted.
        if fs::remove_dir(d).is_err() {
            break;
        }
    }
}
