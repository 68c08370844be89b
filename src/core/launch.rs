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
use super::state::{Tab, Worktree, SCROLLBACK};
use super::Core;
use crate::agents::{Mode, Reported};
use crate::config::ResolvedAgent;
use crate::host::SpawnSpec;
use crate::protocol::api::{ApiError, ErrorCode, Reply, TabKind, TabState};
use crate::protocol::handshake::random_hex;

struct AgentCommand {
    /// As shown in `nerdr tabs` (the configured words).
    display: Vec<String>,
    /// As run: `argv[0]` resolved.
    argv: Vec<String>,
    session_id: Option<String>,
}

/// A launch, fully decided: what to run, where, as what kind of tab.
struct Plan {
    id: String,
    folder: PathBuf,
    /// Where the program starts: the folder, or its place in the worktree.
    cwd: PathBuf,
    worktree: Option<Worktree>,
    /// The agent's name, or `terminal`.
    name: String,
    /// The command as configured (for `nerdr tabs`), `argv[0]` unresolved.
    command: Vec<String>,
    /// The resolved program, then its arguments.
    argv: Vec<String>,
    caller_env: Vec<(String, String)>,
    agent_env: std::collections::BTreeMap<String, String>,
    sandboxed: bool,
    kind: TabKind,
    parent: Option<String>,
    session_id: Option<String>,
    reported: Option<Vec<String>>,
}

impl Core {
    pub async fn start_agent(
        self: &Arc<Self>,
        caller: &Caller,
        folder: &Path,
        name: &str,
        extra_args: Vec<String>,
        caller_env: Vec<(String, String)>,
        want_worktree: bool,
    ) -> Reply {
        let caller_env = self.environment_for(caller, caller_env);
        let folder = existing_folder(folder)?;
        let (agent, config) = self.resolve(name)?;
        let id = self.new_tab_id();
        // Decide everything that can fail before making a worktree.
        let command = self
            .agent_command(&agent, extra_args, &Mode::New, None, &caller_env, &folder)
            .await?;
        let (cwd, worktree) = if want_worktree && config.tabs.worktree {
            self.make_worktree(&folder, &id).await?
        } else {
            (folder.clone(), None)
        };
        if let Err(e) = self.settings_unchanged(&agent) {
            self.drop_worktree(worktree).await;
            return Err(e);
        }
        let agent_env = match agent_env(&agent, &caller_env) {
            Ok(env) => env,
            Err(e) => {
                self.drop_worktree(worktree).await;
                return Err(e);
            }
        };
        self.launch(
            caller,
            Plan {
                id,
                folder,
                cwd,
                worktree,
                name: name.to_string(),
                command: command.display,
                argv: command.argv,
                caller_env,
                agent_env,
                sandboxed: agent.sandboxed,
                kind: TabKind::Agent,
                parent: None,
                session_id: command.session_id,
                reported: None,
            },
        )
        .await
    }

    /// Start tab `tab`'s agent again, in the same tab and worktree, resuming
    /// its conversation: by the id nerdr recorded, else the agent's own
    /// report of how to resume it, else its "continue" mode. With the
    /// current settings, as after a change of config.
    pub async fn restart_tab(
        self: &Arc<Self>,
        caller: &Caller,
        tab: &str,
        caller_env: Vec<(String, String)>,
    ) -> Reply {
        let old = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(tab).ok_or_else(|| super::api::no_tab(tab))?;
            if t.kind != TabKind::Agent {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("tab {tab} is a terminal; open a new one with `nerdr terminal`"),
                ));
            }
            t.saved(true)
        };
        let caller_env = self.environment_for(caller, caller_env);
        let (agent, _) = self.resolve(&old.agent)?;
        let mode = match &old.session_id {
            Some(id) => Mode::Resume(id.clone()),
            None => Mode::Continue,
        };
        let reported = old.reported.clone().map(|argv| Reported { argv });
        let cwd = old.cwd.clone().unwrap_or_else(|| old.folder.clone());
        let command = self
            .agent_command(
                &agent,
                Vec::new(),
                &mode,
                reported.as_ref(),
                &caller_env,
                &cwd,
            )
            .await?;
        self.settings_unchanged(&agent)?;
        let agent_env = agent_env(&agent, &caller_env)?;
        let _ = self.host.stop(tab).await;
        self.host.forget(tab);
        self.state.lock().unwrap().remove(tab);
        tracing::info!(tab = %tab, agent = %old.agent, mode = ?mode, "restarting agent");
        self.launch(
            caller,
            Plan {
                id: old.id,
                folder: old.folder,
                cwd,
                worktree: old.worktree,
                name: old.agent,
                command: command.display,
                argv: command.argv,
                caller_env,
                agent_env,
                sandboxed: agent.sandboxed,
                kind: TabKind::Agent,
                parent: None,
                session_id: command.session_id.or(old.session_id),
                reported: old.reported,
            },
        )
        .await
    }

    /// Refuse a launch whose agent's settings changed while it was being
    /// prepared (feature detection and worktree creation take a moment):
    /// it would run with settings that are no longer the config's.
    fn settings_unchanged(&self, agent: &ResolvedAgent) -> Result<(), ApiError> {
        let now = self.resolve(&agent.name).map(|(a, _)| a);
        if now.as_ref().ok() == Some(agent) {
            return Ok(());
        }
        Err(ApiError::new(
            ErrorCode::Config,
            format!(
                "the settings of agent `{}` in {} changed while its launch was being prepared; \
                 restart the agent to use the new settings",
                agent.name,
                self.paths.config_file().display()
            ),
        ))
    }

    async fn drop_worktree(&self, worktree: Option<Worktree>) {
        if let Some(w) = worktree {
            let _ = tokio::task::spawn_blocking(move || {
                let _ = crate::git::worktree::remove(&w.repo, &w.path);
                let _ = crate::git::run(&w.repo, &["branch", "-D", &w.branch]);
            })
            .await;
        }
    }

    fn resolve(&self, name: &str) -> Result<(ResolvedAgent, crate::config::Config), ApiError> {
        let config = crate::config::load(&self.paths.config_file())
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        let agent = config
            .resolve_agent(name)
            .map_err(|e| ApiError::new(ErrorCode::Config, e.to_string()))?;
        Ok((agent, config))
    }

    /// The agent's full command line: its command and args, the extra
    /// arguments, then its session arguments last (so a wrapper passes
    /// them through), with the program resolved on the caller's PATH.
    async fn agent_command(
        &self,
        agent: &ResolvedAgent,
        extra_args: Vec<String>,
        mode: &Mode,
        reported: Option<&Reported>,
        caller_env: &[(String, String)],
        cwd: &Path,
    ) -> Result<AgentCommand, ApiError> {
        let name = &agent.name;
        let path_var = path_of(caller_env);
        let program = find_program(&agent.command[0], &path_var, cwd).ok_or_else(|| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!(
                    "agent `{name}`: `{}` is not an executable on PATH ({path_var}); \
                     install it, or set `command` in [agents.{name}] of {}",
                    agent.command[0],
                    self.paths.config_file().display()
                ),
            )
        })?;
        let features = self.features(agent, &path_var, cwd, caller_env).await;
        let mut with_extra = agent.clone();
        with_extra.command.extend(extra_args);
        let launch = crate::agents::build(
            &with_extra,
            mode,
            &features,
            reported,
            crate::agents::uuid::new_v4,
        )
        .map_err(|e| ApiError::new(ErrorCode::LaunchFailed, format!("agent `{name}`: {e}")))?;
        let mut argv = launch.argv.clone();
        argv[0] = program.to_string_lossy().into_owned();
        Ok(AgentCommand {
            display: launch.argv,
            argv,
            session_id: launch.session_id,
        })
    }

    /// What the installed agent supports, from its `--help` (cached by
    /// binary and mtime). Only built-in agents' own programs are asked.
    async fn features(
        &self,
        agent: &ResolvedAgent,
        path_var: &str,
        cwd: &Path,
        caller_env: &[(String, String)],
    ) -> crate::agents::Features {
        let Some(kind) = crate::agents::Kind::of(&agent.name).filter(|_| agent.builtin) else {
            return Default::default();
        };
        let Some(program) =
            crate::agents::program_word(agent).and_then(|w| find_program(w, path_var, cwd))
        else {
            return Default::default();
        };
        let detector = self.detector.clone();
        let env = crate::agents::HelpEnv::from_pairs(caller_env);
        tokio::task::spawn_blocking(move || detector.features(kind, &program, &env))
            .await
            .unwrap_or_default()
    }

    /// A terminal pane for tab `of`: the user's shell in the tab's folder,
    /// in its own scope `nerdr-term-<tab>-<n>.scope`.
    pub async fn start_terminal(
        self: &Arc<Self>,
        caller: &Caller,
        of: &str,
        caller_env: Vec<(String, String)>,
    ) -> Reply {
        let (folder, cwd, parent, sandboxed) = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(of).ok_or_else(|| super::api::no_tab(of))?;
            // A terminal of a terminal belongs to the same agent tab.
            let parent = t.parent.clone().unwrap_or_else(|| t.id.clone());
            (t.folder.clone(), t.cwd.clone(), parent, false)
        };
        // The terminal is the user's own shell, run by nerdr outside any
        // sandbox: it is marked as such even in a sandboxed agent's tab.
        let caller_env = self.environment_for(caller, caller_env);
        let shell = caller_env
            .iter()
            .find(|(k, _)| k == "SHELL")
            .map(|(_, v)| v.clone())
            .filter(|s| Path::new(s).is_absolute())
            .unwrap_or_else(|| "/bin/sh".into());
        let program = find_program(&shell, &path_of(&caller_env), &cwd).ok_or_else(|| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!("terminal: the shell {shell} is not an executable; set SHELL"),
            )
        })?;
        self.launch(
            caller,
            Plan {
                id: self.new_tab_id(),
                folder,
                cwd,
                worktree: None,
                name: "terminal".into(),
                command: vec![shell],
                argv: vec![program.to_string_lossy().into_owned()],
                caller_env,
                agent_env: Default::default(),
                sandboxed,
                kind: TabKind::Terminal,
                parent: Some(parent),
                session_id: None,
                reported: None,
            },
        )
        .await
    }

    /// Record the tab, start its program, and either mark it running or
    /// forget it and say why: never a half-started tab.
    async fn launch(self: &Arc<Self>, caller: &Caller, plan: Plan) -> Reply {
        let (rows, cols) = self.windows.lock().unwrap().session_size(&plan.folder);
        let id = plan.id.clone();
        let mut term_number = None;
        let (secret, scope) = {
            let state = self.state.lock().unwrap();
            let scope = match &plan.parent {
                None => crate::systemd::names::agent_scope(&id).ok(),
                Some(p) => {
                    // Numbers are never reused while a terminal of the tab
                    // lives: closing terminal 1 of 2 must not hand out 2.
                    let n = state
                        .tabs
                        .values()
                        .filter(|t| t.parent.as_ref() == Some(p))
                        .filter_map(|t| t.term_number)
                        .max()
                        .unwrap_or(0);
                    term_number = Some(n + 1);
                    crate::systemd::names::term_scope(p, n + 1).ok()
                }
            };
            (random_hex(32), scope)
        };
        let env = program_env(
            &plan.caller_env,
            &plan.agent_env,
            &TabFacts {
                secret: &secret,
                nerdr_bin: &self.bin,
                hook_socket: &self.paths.hook_socket(),
                data_dir: &self.paths.data_dir,
                sandboxed: plan.sandboxed,
            },
        );
        let tab = Tab {
            id: id.clone(),
            secret,
            folder: plan.folder.clone(),
            agent: plan.name.clone(),
            command: plan.command,
            sandboxed: plan.sandboxed,
            kind: plan.kind,
            parent: plan.parent,
            cwd: plan.cwd.clone(),
            worktree: plan.worktree.clone(),
            term_number,
            session_id: plan.session_id.clone(),
            reported: plan.reported.clone(),
            last_event: None,
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
                argv: plan.argv,
                cwd: plan.cwd.clone(),
                env,
                rows,
                cols,
                scope,
                meta,
            })
            .await
            .unwrap_or_else(|_| {
                Err(crate::host::HostError::Holder(
                    "the launch was dropped".into(),
                ))
            });
        let name = &plan.name;
        let spawned = match spawned {
            Ok(s) => s,
            Err(e) => {
                self.state.lock().unwrap().remove(&id);
                self.changed();
                // A worktree made for this launch goes with it.
                self.drop_worktree(plan.worktree.clone()).await;
                tracing::warn!(agent = %name, folder = %plan.folder.display(), error = %e, "launch failed");
                return Err(ApiError::new(
                    ErrorCode::LaunchFailed,
                    format!("{} `{name}`: {e}", plan.kind.as_str()),
                ));
            }
        };
        {
            let mut state = self.state.lock().unwrap();
            let Some(t) = state.tabs.get_mut(&id) else {
                // Closed while it started; the close ended the program.
                return Err(ApiError::new(
                    ErrorCode::LaunchFailed,
                    format!("tab {id} was closed while `{name}` was starting"),
                ));
            };
            t.pid = Some(spawned.pid);
            t.start_time = Some(spawned.start_time);
            // A program that already ended keeps its `exited` state.
            if t.state == TabState::Starting {
                t.state = TabState::Running;
            }
        }
        tracing::info!(
            tab = %id,
            agent = %name,
            kind = plan.kind.as_str(),
            pid = spawned.pid,
            folder = %plan.folder.display(),
            by = ?caller_kind(caller),
            "started {}", plan.kind.as_str()
        );
        self.changed();
        Ok(json!({ "tab": id }))
    }
}

impl Core {
    /// A fresh tab id: eight hex digits, valid in unit names.
    fn new_tab_id(&self) -> String {
        let state = self.state.lock().unwrap();
        loop {
            let id = random_hex(4);
            if !state.tabs.contains_key(&id) {
                return id;
            }
        }
    }

    /// The tab's own worktree when `folder` is in a git repository: its
    /// folder inside the worktree, and the worktree. Outside a repository,
    /// the folder itself.
    async fn make_worktree(
        &self,
        folder: &Path,
        tab: &str,
    ) -> Result<(PathBuf, Option<Worktree>), ApiError> {
        let folder = folder.to_path_buf();
        let data_dir = self.paths.data_dir.clone();
        let tab = tab.to_string();
        let made = tokio::task::spawn_blocking(move || {
            let Some(repo) = crate::git::worktree::repo_of(&folder) else {
                return Ok((folder, None));
            };
            let path = crate::git::worktree::create(&repo, &data_dir, &tab)?;
            let cwd = path.join(&repo.prefix);
            Ok((
                if cwd.is_dir() { cwd } else { path.clone() },
                Some(Worktree {
                    path,
                    repo: repo.toplevel,
                    branch: crate::git::worktree::branch(&tab),
                }),
            ))
        })
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        made.map_err(|e: crate::git::worktree::WorktreeError| {
            ApiError::new(ErrorCode::LaunchFailed, format!("worktree: {e}"))
        })
    }
}

/// The agent's own variables, with opencode's `config_model` merged into
/// the `OPENCODE_CONFIG_CONTENT` the user already has.
fn agent_env(
    agent: &ResolvedAgent,
    caller_env: &[(String, String)],
) -> Result<std::collections::BTreeMap<String, String>, ApiError> {
    let mut env = agent.env.clone();
    if let Some(model) = &agent.config_model {
        const KEY: &str = "OPENCODE_CONFIG_CONTENT";
        let existing = env.get(KEY).cloned().or_else(|| {
            caller_env
                .iter()
                .find(|(k, _)| k == KEY)
                .map(|(_, v)| v.clone())
        });
        let merged =
            crate::agents::opencode::config_content(existing.as_deref(), model).map_err(|e| {
                ApiError::new(ErrorCode::Config, format!("agent `{}`: {e}", agent.name))
            })?;
        env.insert(KEY.into(), merged);
    }
    Ok(env)
}

fn existing_folder(folder: &Path) -> Result<PathBuf, ApiError> {
    std::fs::canonicalize(folder)
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
        })
}

fn path_of(env: &[(String, String)]) -> String {
    env.iter()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into())
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
