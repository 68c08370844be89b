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
/// Only a regular file, of at most [`MAX_READ`] bytes, and never waiting:
/// a worktree install reads files an agent could have replaced (a FIFO
/// would hang the install, a sparse file of terabytes fill the core's
/// memory).
pub fn read(path: &Path) -> anyhow::Result<Option<String>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let opened = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path);
    let f = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let meta = f
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.is_file() {
        bail!(
            "{} is not a regular file; nerdr edits settings files and leaves this one alone",
            path.display()
        );
    }
    let too_big = || {
        anyhow::anyhow!(
            "{} is larger than {} MiB; nerdr edits settings files and leaves this one alone",
            path.display(),
            MAX_READ >> 20
        )
    };
    if meta.len() > MAX_READ {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    f.take(MAX_READ + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MAX_READ {
        return Err(too_big());
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok(Some(s)),
        Err(_) => bail!(
            "{} is not UTF-8 text; nerdr edits settings files as text and leaves this one alone",
            path.display()
        ),
    }
}

/// The largest settings file [`read`] reads.
pub const MAX_READ: u64 = 64 << 20;

/// Replace the file's contents atomically (temporary file and rename in the
/// same folder), keeping the old file's permissions; a new file gets the
/// umask's, as the agent would give it.
pub fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = dir.join(format!(".{name}.nerdr-tmp"));
    let keep = fs::metadata(path).ok().map(|m| m.permissions());
    let result = (|| -> io::Result<()> {
        // A new file, never one already there: a link planted at the
        // temporary name (in a worktree an agent wrote) is removed, not
        // written through.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_at_the_temporary_name_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "the person's file").unwrap();
        let gone = dir.path().join("gone");
        let rows = [("a.json", &victim), ("b.json", &gone)];
        for (name, target) in rows {
            let file = dir.path().join("tree").join(name);
            fs::create_dir_all(file.parent().unwrap()).unwrap();
            let tmp = file.with_file_name(format!(".{name}.nerdr-tmp"));
            std::os::unix::fs::symlink(target, &tmp).unwrap();
            write(&file, "nerdr's text").unwrap();
            assert_eq!(fs::read_to_string(&file).unwrap(), "nerdr's text", "{name}");
            assert!(!fs::symlink_metadata(&file).unwrap().is_symlink(), "{name}");
        }
        assert_eq!(fs::read_to_string(&victim).unwrap(), "the person's file");
        assert!(
            !gone.exists(),
            "a file was made where a dangling link pointed"
        );
    }

    #[test]
    fn only_a_regular_file_of_bounded_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        fs::write(p("ok.json"), "{}").unwrap();
        nix::unistd::mkfifo(&p("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        fs::create_dir(p("dir")).unwrap();
        let big = fs::File::create(p("sparse")).unwrap();
        big.set_len(MAX_READ + 1).unwrap();
        #[rustfmt::skip]
        let rows: &[(&str, Result<Option<&str>, &str>)] = &[
            ("ok.json", Ok(Some("{}"))),
            ("absent", Ok(None)),
            // A FIFO would block the read until a writer came.
            ("fifo", Err("not a regular file")),
            ("dir", Err("not a regular file")),
            ("sparse", Err("larger than 64 MiB")),
        ];
        for (name, want) in rows {
            let got = read(&p(name)).map_err(|e| format!("{e:#}"));
            match (want, got) {
                (Ok(w), Ok(g)) => assert_eq!(g.as_deref(), *w, "{name}"),
                (Err(w), Err(g)) => assert!(g.contains(w), "{name}: {g}"),
                (w, g) => panic!("{name}: want {w:?}, got {g:?}"),
            }
        }
    }
}
