//! The folder a command sent to another host acts on (pure). ssh runs the
//! bridge in the remote home, so a folder there is written as it would be
//! in a shell there: absolute, `~` or `~/...` (quote it, or the local
//! shell makes it the local home), or relative to the remote home. Without
//! `--folder`: the host's `[hosts.NAME] folder`, else the remote home
//! itself (as `ssh HOST nerdr tabs` would act on it).

use std::path::{Path, PathBuf};

/// The remote folder for `given` (`--folder`), else `default` (the host's
/// config), else `home` (the bridge's greeting).
pub fn resolve(
    given: Option<&Path>,
    default: Option<&str>,
    home: Option<&Path>,
) -> Result<PathBuf, String> {
    let written = given
        .map(|p| p.to_string_lossy().into_owned())
        .or_else(|| default.map(str::to_owned));
    let from_home = |rest: &str| -> Result<PathBuf, String> {
        let home = home.ok_or_else(|| {
            "the remote nerdr did not say its home folder; give an absolute --folder".to_owned()
        })?;
        Ok(match rest {
            "" => home.to_path_buf(),
            rest => home.join(rest),
        })
    };
    let Some(written) = written else {
        return from_home("");
    };
    if written == "~" {
        return from_home("");
    }
    if let Some(rest) = written.strip_prefix("~/") {
        return from_home(rest);
    }
    if written.starts_with('~') {
        return Err(format!(
            "folder {written}: another user's home (`~name`) is not looked up on the remote \
             host; write the path"
        ));
    }
    if written.is_empty() {
        return Err("the folder is empty".into());
    }
    match Path::new(&written).is_absolute() {
        true => Ok(PathBuf::from(written)),
        false => from_home(&written),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_folder_is_written_as_in_a_shell_there() {
        let home = Some(Path::new("/home/me"));
        #[rustfmt::skip]
        type Row<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a Path>, Result<&'a str, &'a str>);
        let rows: &[Row] = &[
            (None, None, home, Ok("/home/me")),
            (None, Some("~/src/shop"), home, Ok("/home/me/src/shop")),
            (None, Some("/srv/work"), home, Ok("/srv/work")),
            // --folder wins over the host's folder.
            (Some("/tmp/x"), Some("~/src/shop"), home, Ok("/tmp/x")),
            (Some("~"), Some("/srv"), home, Ok("/home/me")),
            (Some("proj"), None, home, Ok("/home/me/proj")),
            (Some("~/a/b"), None, home, Ok("/home/me/a/b")),
            (Some("~bob/x"), None, home, Err("`~name`")),
            (Some(""), None, home, Err("empty")),
            // A bridge that said no home: only absolute folders.
            (Some("/abs"), None, None, Ok("/abs")),
            (Some("rel"), None, None, Err("did not say its home")),
            (None, None, None, Err("did not say its home")),
        ];
        for (given, default, home, want) in rows {
            let got = resolve(given.map(Path::new), *default, *home);
            match (got, want) {
                (Ok(p), Ok(w)) => assert_eq!(p, Path::new(w), "{given:?} {default:?}"),
                (Err(e), Err(part)) => assert!(e.contains(part), "{given:?}: {e}"),
                (got, want) => panic!("{given:?} {default:?}: got {got:?}, want {want:?}"),
            }
        }
    }
}
