//! Starting an agent in a new tab: resolve it from config, decide its
//! command line and environment, then ask the host to run it. Either the tab
//! ends up running, or it is gone and the caller gets the reason: never a
//! half-started agent.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;

use super::api::Caller;
use super::env::{program_env, TabFacts};
use super::state::{Tab, SCROLLBACK};
use super::Core;
use crate::host::SpawnSpec;
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabState};
use crate::protocol::handshake::random_hex;

impl Core {
    pub async fn start_agent(
        self: &Arc<Self>,
        caller: &Caller,
        folder: &Path,
        name: &str,
        extra_args: Vec<String>,
        caller_env: Vec<(String, String)>,
    ) -> Reply {
        let caller_env = self.environment_for(caller, caller_env);
        let folder = std::fs::canonicalize(folder)
            .ok()
            .filter(|f| f.is_dir())
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::BadRequest,
                    format!(
                        "folder {} does not exist or is not a folder",
                        folder.display()
                    ),
                )
            })?;
        let config_path = self.paths.config_file();
        let config = crate::config::load(&config_path)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let agent = config
            .resolve_agent(name)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;

        let path_var = caller_env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.as_str())
            .unwrap_or("/usr/local/bin:/usr/bin:/bin");
        let program = find_program(&agent.command[0], path_var, &folder).ok_or_else(|| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!(
                    "agent `{name}`: `{}` is not an executable on PATH ({path_var}); \
                     install it, or set `command` in [agents.{name}] of {}",
                    agent.command[0],
                    config_path.display()
                ),
            )
        })?;

        let (rows, cols) = self.windows.lock().unwrap().session_size(&folder);
        let (id, secret) = {
            let state = self.state.lock().unwrap();
            let mut id = random_hex(4);
            while state.tabs.contains_key(&id) {
                id = random_hex(4);
            }
            (id, random_hex(32))
        };
        let env = program_env(
            &caller_env,
            &agent.env,
            &TabFacts {
                secret: &secret,
                nerdr_bin: &self.bin,
                hook_socket: &self.paths.hook_socket(),
                data_dir: &self.paths.data_dir,
                sandboxed: agent.sandboxed,
            },
        );
        let mut argv = vec![program.to_string_lossy().into_owned()];
        argv.extend(agent.command[1..].iter().cloned());
        argv.extend(extra_args.iter().cloned());
        let mut command = agent.command.clone();
        command.extend(extra_args);

        let tab = Tab {
            id: id.clone(),
            secret,
            folder: folder.clone(),
            agent: name.to_string(),
            command: command.clone(),
            sandboxed: agent.sandboxed,
            state: TabState::Starting,
            pid: None,
            start_time: None,
            exit_code: None,
            screen: vt100::Parser::new(rows, cols, SCROLLBACK),
            log: Default::default(),
        };
        let meta = serde_json::to_value(tab.saved(true)).expect("a tab record serializes");
        self.state.lock().unwrap().insert(tab);
        let spawned = self
            .host
            .spawn(SpawnSpec {
                tab: id.clone(),
                argv,
                cwd: folder.clone(),
                env,
                rows,
                cols,
                scope: crate::systemd::names::agent_scope(&id).ok(),
                meta,
            })
            .await
            .unwrap_or_else(|_| {
                Err(crate::host::HostError::Holder(
                    "the launch was dropped".into(),
                ))
            });
        let spawned = match spawned {
            Ok(s) => s,
            Err(e) => {
                self.state.lock().unwrap().remove(&id);
                tracing::warn!(agent = name, folder = %folder.display(), error = %e, "launch failed");
                return Err(ApiError::new(
                    ErrorCode::LaunchFailed,
                    format!("agent `{name}`: {e}"),
                ));
            }
        };
        {
            let mut state = self.state.lock().unwrap();
            if let Some(t) = state.tabs.get_mut(&id) {
                t.pid = Some(spawned.pid);
                t.start_time = Some(spawned.start_time);
                // A program that already ended keeps its `exited` state.
                if t.state == TabState::Starting {
                    t.state = TabState::Running;
                }
            }
        }
        tracing::info!(
            tab = %id,
            agent = name,
            pid = spawned.pid,
            folder = %folder.display(),
            by = ?caller_kind(caller),
            "started agent"
        );
        self.changed();
        Ok(json!({ "tab": id }))
    }
}

impl Core {
    /// The environment a program builds on: the user's own command's, else
    /// that of the last client that started one, else the core's.
    fn environment_for(
        &self,
        caller: &Caller,
        sent: Vec<(String, String)>,
    ) -> Vec<(String, String)> {
        let mut last = self.last_client_env.lock().unwrap();
        match caller {
            Caller::User if !sent.is_empty() => {
                *last = Some(sent.clone());
                sent
            }
            _ => last.clone().unwrap_or_else(|| std::env::vars().collect()),
        }
    }
}

fn caller_kind(c: &Caller) -> &str {
    match c {
        Caller::User => "user",
        Caller::Tab { id } => id,
    }
}

/// Resolve a command word as a shell would: a word with a `/` is a path
/// (relative to the tab's folder), anything else is looked up on `path_var`.
pub fn find_program(word: &str, path_var: &str, cwd: &Path) -> Option<PathBuf> {
    let executable = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if word.contains('/') {
        let p = cwd.join(word);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path_var)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(word))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_resolve_like_a_shell() {
        let tmp = tempfile::tempdir().unwrap();
        let bin = tmp.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(bin.join("plain"), "").unwrap();
        let path = format!("relative:{}", bin.display());
        let rows: &[(&str, Option<PathBuf>)] = &[
            ("tool", Some(tool.clone())),
            ("plain", None),
            ("missing", None),
            ("bin/tool", Some(tmp.path().join("bin/tool"))),
            ("./bin/plain", None),
        ];
        for (word, want) in rows {
            assert_eq!(&find_program(word, &path, tmp.path()), want, "{word}");
        }
    }
}
