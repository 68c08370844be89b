//! `nerdr attach [NAME|DIR]`: the window bare `nerdr` opens, onto any
//! session from anywhere: a folder (an existing path: the session it is in,
//! placed by the core as every folder is) or a session's name as `nerdr
//! sessions` lists it. Over `--host` ([`remote`]) the same, with the
//! other host's sessions and folders.

use std::path::PathBuf;
use std::process::ExitCode;

use super::Folder;
use crate::client;
use crate::protocol::api::{ListSessions, SessionInfo};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A session's name (see `nerdr sessions`) or a folder in it (default: --folder, else the current folder)
    #[arg(value_name = "NAME|DIR")]
    pub session: Option<String>,
}

pub fn run(args: Args, folder: &Folder) -> anyhow::Result<ExitCode> {
    let dir = match (args.session, folder.given()) {
        (None, _) => folder.resolve()?,
        (Some(s), Some(f)) => {
            anyhow::bail!("name the session once: `{s}` or --folder {}", f.display())
        }
        // A path that exists is a folder, whatever sessions are called.
        (Some(s), None) => match std::fs::canonicalize(&s) {
            Ok(dir) => dir,
            Err(_) => by_name(&s, &client::call(ListSessions)?)?,
        },
    };
    crate::client::attach::run(dir)
}

/// `nerdr --host HOST [attach [NAME|DIR]]`: the window onto HOST's
/// session, over the link `cli::on_host` opened. A name is one of HOST's
/// sessions; what looks like a path (`/`, `~`, `.` in it) is a folder
/// there, as `--folder` is read (`remote::folder`); none: `folder`, which
/// holds `--folder`, the host's folder or the remote home.
pub fn remote(
    session: Option<String>,
    folder: &Folder,
    home: Option<&std::path::Path>,
) -> anyhow::Result<ExitCode> {
    let dir = match (session, folder.given()) {
        (None, _) => folder.resolve()?,
        (Some(s), Some(f)) => {
            anyhow::bail!("name the session once: `{s}` or --folder {}", f.display())
        }
        (Some(s), None) if s.contains('/') || s.starts_with(['~', '.']) => {
            crate::remote::folder::resolve(Some(s.as_ref()), None, home)
                .map_err(|e| anyhow::anyhow!(e))?
        }
        (Some(s), None) => by_name(&s, &client::call(ListSessions)?)?,
    };
    let link = client::over_ssh::take().ok_or_else(|| anyhow::anyhow!("no --host link is open"))?;
    crate::client::attach::run_remote(dir, link)
}

/// The folder of the session named `name`; the error lists the sessions.
fn by_name(name: &str, sessions: &[SessionInfo]) -> anyhow::Result<PathBuf> {
    if let Some(s) = sessions.iter().find(|s| s.name == name) {
        return Ok(s.folder.clone());
    }
    if sessions.is_empty() {
        anyhow::bail!(
            "no session `{name}` and no folder of that name: there are no sessions yet (run \
             `nerdr` in a folder to start one)"
        );
    }
    let list: Vec<String> = sessions
        .iter()
        .map(|s| format!("{} ({})", s.name, s.folder.display()))
        .collect();
    anyhow::bail!(
        "no session `{name}` and no folder of that name; the sessions are: {}",
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str, folder: &str) -> SessionInfo {
        SessionInfo {
            folder: folder.into(),
            name: name.into(),
            tabs: 1,
            running: 1,
            blocked: 0,
            done: 0,
        }
    }

    #[test]
    fn a_name_is_found_or_the_sessions_are_listed() {
        let all = [session("proj", "/a/proj"), session("proj-2", "/b/proj")];
        assert_eq!(by_name("proj-2", &all).unwrap(), PathBuf::from("/b/proj"));
        let e = by_name("nope", &all).unwrap_err().to_string();
        assert_eq!(
            e,
            "no session `nope` and no folder of that name; the sessions are: proj (/a/proj), \
             proj-2 (/b/proj)"
        );
        let e = by_name("nope", &[]).unwrap_err().to_string();
        assert!(e.contains("there are no sessions yet"), "{e}");
    }
}
