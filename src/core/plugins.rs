//! Plugins: executables the user put in `$XDG_CONFIG_HOME/nerdr/plugins/`,
//! run by the core (outside every sandbox) for the person or an agent. A
//! sandboxed agent's run waits for the person's yes each time, and does not
//! happen when no one answers in time.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::caller::Caller;
use super::not_found::no_tab;
use super::question::{Approval, Asked, Said};
use super::Core;
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::replies::PluginRan;

/// What a plugin may print before the rest is dropped.
const MAX_OUTPUT: u64 = 1 << 20;
/// The longest argument list (as JSON) a sandboxed agent's plugin run may
/// ask the person about.
const MAX_SHOWN_ARGS: usize = 300;
/// How long a plugin may run.
const RUN_LIMIT: Duration = Duration::from_secs(600);

/// A plugin name is one plain file name, never a path.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// What the plugin's path holds, as gathered from the disk.
#[derive(Clone, Copy)]
pub struct PluginFile {
    pub is_file: bool,
    pub mode: u32,
}

/// Why the file at `path` cannot be run as a plugin (and what to do), or
/// `None` when it can. A file that is there but not executable says so:
/// "put one there" would mislead someone who just did.
pub fn not_runnable(found: Option<PluginFile>, path: &Path) -> Option<String> {
    let path = path.display();
    match found {
        None => Some(format!(
            "{path} does not exist (put an executable file there to allow it)"
        )),
        Some(f) if !f.is_file => Some(format!(
            "{path} is not a regular file (put an executable file there to allow it)"
        )),
        Some(f) if f.mode & 0o111 == 0 => Some(format!(
            "{path} is not executable (`chmod +x {path}` to allow it)"
        )),
        Some(_) => None,
    }
}

impl Core {
    /// Plugin `name`'s file, if it is an executable one (looked at off the
    /// async workers).
    async fn plugin_path(&self, name: &str) -> Result<PathBuf, ApiError> {
        let dir = self.paths.config_dir.join("plugins");
        if !valid_name(name) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!(
                    "`{name}` is not a plugin name: use a file name from {}",
                    dir.display()
                ),
            ));
        }
        let path = dir.join(name);
        let found = {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                std::fs::metadata(&path).ok().map(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    PluginFile {
                        is_file: m.is_file(),
                        mode: m.permissions().mode(),
                    }
                })
            })
            .await
            .unwrap_or(None)
        };
        if let Some(why) = not_runnable(found, &path) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("no plugin `{name}`: {why}"),
            ));
        }
        Ok(path)
    }

    /// Run plugin `name`; with `ask`, only once the person says yes.
    pub async fn run_plugin(
        self: &Arc<Self>,
        caller: &Caller,
        name: &str,
        args: Vec<String>,
        folder: &Path,
        ask: bool,
    ) -> Result<PluginRan, ApiError> {
        let program = self.plugin_path(name).await?;
        // A tab's plugin runs in that tab's folder, whatever it claims.
        let cwd = match caller.tab() {
            Some(tab) => self
                .state
                .lock()
                .unwrap()
                .tabs
                .get(tab)
                .map(|t| t.cwd.clone())
                .ok_or_else(|| no_tab(tab))?,
            None => folder.to_path_buf(),
        };
        if ask {
            self.room_in_queue(caller, super::privilege::Operation::RunPlugin, None)?;
            let from = caller.tab().unwrap_or("-").to_string();
            let file = self.paths.config_file();
            let timeout = tokio::task::spawn_blocking(move || {
                crate::config::load(&file).map(|c| c.plugins.approval_timeout_secs)
            })
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or(120);
            // Arguments as a JSON array: unambiguous, and all of it shown.
            let shown = serde_json::to_string(&args).expect("strings serialize");
            if shown.chars().count() > MAX_SHOWN_ARGS {
                return Err(self.refuse(
                    caller,
                    super::privilege::Operation::RunPlugin,
                    None,
                    "a sandboxed agent's plugin arguments must fit in 300 characters, so the \
                     user can read all of them before approving",
                ));
            }
            let question = format!(
                "run plugin `{name}` with arguments {} in {} for sandboxed tab {from} (outside \
                 the sandbox)",
                crate::protocol::printable(&shown),
                crate::protocol::printable(&cwd.display().to_string())
            );
            let asked = Approval {
                id: self.new_approval_id(),
                question,
                tab: from.clone(),
                asked: Asked::Plugin {
                    name: name.to_string(),
                    args: args.clone(),
                },
            };
            let answer = self
                .ask_and_wait(asked, Duration::from_secs(timeout))
                .await
                .map_err(|full| {
                    self.refuse(caller, super::privilege::Operation::RunPlugin, None, full)
                })?;
            let why = match answer {
                Some(Said::Yes | Said::Session) => None,
                Some(Said::No) => Some("the user denied it".to_string()),
                None => Some(format!("no one answered within {timeout} s")),
            };
            if let Some(why) = why {
                let message = format!("plugin `{name}` did not run: {why}");
                let event =
                    crate::audit::Event::new(crate::audit::Kind::HookRefused, message.clone())
                        .field("NERDR_TAB", &from)
                        .field("NERDR_OPERATION", "plugin")
                        .field("NERDR_REASON", &why);
                super::edge::audit(&self.paths, event).await;
                return Err(ApiError::new(ErrorCode::Denied, message));
            }
        }
        let env = self.environment_for(caller, Vec::new());
        run(&program, &args, &cwd, env).await
    }
}

async fn run(
    program: &Path,
    args: &[String],
    cwd: &Path,
    env: Vec<(String, String)>,
) -> Result<PluginRan, ApiError> {
    let failed = |e: std::io::Error| {
        ApiError::new(
            ErrorCode::LaunchFailed,
            format!("cannot run plugin {}: {e}", program.display()),
        )
    };
    let mut child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .envs(env.into_iter().filter(|(k, _)| !k.starts_with("NERDR_")))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(failed)?;
    let stdout = child.stdout.take().expect("piped");
    let stderr = child.stderr.take().expect("piped");
    let finished = tokio::time::timeout(RUN_LIMIT, async {
        let (out, err) = tokio::join!(read_capped(stdout), read_capped(stderr));
        Ok::<_, std::io::Error>((out?, err?, child.wait().await?))
    })
    .await;
    let (out, err, status) = match finished {
        Ok(done) => done.map_err(failed)?,
        Err(_) => {
            return Err(ApiError::new(
                ErrorCode::LaunchFailed,
                format!(
                    "plugin {} ran longer than {} s and was stopped",
                    program.display(),
                    RUN_LIMIT.as_secs()
                ),
            ))
        }
    };
    Ok(PluginRan {
        code: status.code(),
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr: String::from_utf8_lossy(&err).into_owned(),
    })
}

/// All of a pipe, keeping the first [`MAX_OUTPUT`] bytes: reading on keeps
/// a chatty plugin from blocking on a full pipe.
async fn read_capped(mut r: impl tokio::io::AsyncRead + Unpin) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = r.read(&mut buf).await?;
        if n == 0 {
            return Ok(kept);
        }
        let room = (MAX_OUTPUT as usize).saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
}

#[cfg(test)]
mod tests {
    use super::{not_runnable, valid_name, PluginFile};
    use std::path::Path;

    #[test]
    fn an_unrunnable_plugin_says_what_to_do() {
        let p = Path::new("/c/plugins/x");
        let file = |mode| {
            Some(PluginFile {
                is_file: true,
                mode,
            })
        };
        let dir = Some(PluginFile {
            is_file: false,
            mode: 0o755,
        });
        for (found, want) in [
            (
                None,
                Some("/c/plugins/x does not exist (put an executable file there"),
            ),
            (dir, Some("/c/plugins/x is not a regular file")),
            (
                file(0o644),
                Some("not executable (`chmod +x /c/plugins/x` to allow it)"),
            ),
            (file(0o700), None),
            (file(0o755), None),
            (file(0o001), None),
        ] {
            let got = not_runnable(found, p);
            match want {
                None => assert_eq!(got, None),
                Some(w) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(w)),
                    "{got:?} lacks {w}"
                ),
            }
        }
    }

    #[test]
    fn plugin_names_are_plain_file_names() {
        for (name, ok) in [
            ("deploy", true),
            ("lint-all_2.sh", true),
            ("", false),
            (".hidden", false),
            ("..", false),
            ("../bin/sh", false),
            ("a/b", false),
            ("a b", false),
            (&"x".repeat(101), false),
        ] {
            assert_eq!(valid_name(name), ok, "{name}");
        }
    }
}
