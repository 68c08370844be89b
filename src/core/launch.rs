//! Starting a program in a tab (an agent, see `agent`, or a terminal): decide
//! its environment and scope, then ask the host to run it. Either the tab
//! ends up running (or refused by its sandbox check), or it is gone (a
//! worktree made for it too: see `fresh_worktree`) and the caller gets the
//! reason: never a half-started tab. What to run is decided in `planning`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::caller::Caller;
use super::env::{program_env, TabFacts};
use super::fresh_worktree::FreshWorktree;
// `Plan`, `find_program` and `path_of` are re-exported for `sandbox_check`
// only, which still names them here; the module cycle this keeps
// (sandbox_check -> launch) goes once it takes plain data and imports
// `programs` instead.
pub(super) use super::launch_plan::Plan;
use super::launch_plan::TerminalTab;
use super::lifecycle::{self, Event, Life};
use super::not_found::no_tab;
use super::planning;
use super::privilege;
pub(super) use super::programs::{find_program, path_of};
use super::state::{Tab, Worktree};
use super::Core;
use crate::host::SpawnSpec;
use crate::protocol::api::{ApiError, ErrorCode, TabKind};
use crate::protocol::handshake::random_hex;
use crate::protocol::replies::Started;

impl Core {
    /// A terminal pane for tab `of`: the user's shell in the tab's folder,
    /// in its own scope `nerdr-term-<tab>-<n>.scope`.
    pub async fn start_terminal(
        self: &Arc<Self>,
        caller: &Caller,
        of: &str,
        caller_env: Vec<(String, String)>,
    ) -> Result<Started, ApiError> {
        let (folder, cwd, parent, sandboxed) = {
            let state = self.state.lock().unwrap();
            let t = state.tabs.get(of).ok_or_else(|| no_tab(of))?;
            // A terminal of a terminal belongs to the same agent tab.
            let parent = t.parent.clone().unwrap_or_else(|| t.id.clone());
            (t.folder.clone(), t.cwd.clone(), parent, false)
        };
        // The terminal is the user's own shell, run by nerdr outside any
        // sandbox: it is marked as such even in a sandboxed agent's tab.
        let caller_env = self.environment_for(caller, caller_env);
        let shell = planning::terminal_shell(&caller_env);
        let found = {
            let (shell, path_var, cwd) = (shell.clone(), path_of(&caller_env), cwd.clone());
            tokio::task::spawn_blocking(move || find_program(&shell, &path_var, &cwd))
                .await
                .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
        };
        let program = planning::terminal_program(&shell, found)?;
        self.launch(
            caller,
            Plan::terminal(TerminalTab {
                id: self.new_tab_id(),
                folder,
                cwd,
                name: "terminal",
                command: vec![shell],
                argv: vec![program.to_string_lossy().into_owned()],
                caller_env,
                sandboxed,
                parent,
                // A terminal a tab's program opens is that tab's to type
                // into: held as the tab is.
                started_by: self.line_of(caller.tab()),
            }),
            &mut FreshWorktree::none(),
        )
        .await
    }

    /// Record the tab, start its program, and either mark it running or
    /// forget it and say why: never a half-started tab. A worktree made
    /// for this launch (`fresh`) is kept where the tab still holds it;
    /// everywhere else the caller's `fresh.settle` removes it.
    pub(super) async fn launch(
        self: &Arc<Self>,
        caller: &Caller,
        plan: Plan,
        fresh: &mut FreshWorktree,
    ) -> Result<Started, ApiError> {
        if plan.sandboxed {
            self.note_sandbox_history(&plan).await?;
        }
        let (rows, cols) = self
            .state
            .lock()
            .unwrap()
            .windows
            .session_size(&plan.folder);
        let id = plan.id.clone();
        let rules = match &plan.detect {
            Some(name) => Some(self.rules_for(name).await),
            None => None,
        };
        // A worktree install goes in before the program can run, and its
        // reports folder is the tab's `NERDR_DATA_DIR`.
        let reports = match (&plan.reports_dir, plan.kind) {
            (Some(rel), TabKind::Agent) => Some(self.install_in_worktree(&plan, rel).await?),
            _ => None,
        };
        let data_dir = reports.as_ref().map_or(&self.paths.data_dir, |(_, d)| d);
        let (env, scope, mut meta, generation) = self.record(&plan, rows, cols, rules, data_dir);
        if let Some((tree, dir)) = &reports {
            self.watch_reports(&id, tree, dir);
        }
        let mut argv = plan.argv.clone();
        // Every sandboxed launch is checked first, whatever started it; its
        // program runs on the host (`--help`) only after that.
        if plan.sandboxed && plan.kind == TabKind::Agent {
            if let Some(full) = self.checked(&plan, &env, fresh).await? {
                argv = full;
            }
            // The record as the check left it (what of nerdr the sandbox
            // hides, the features proven): the holder keeps it for a
            // restarted core. Closed meanwhile, the spawn finds no tab.
            let record = self
                .state
                .lock()
                .unwrap()
                .tabs
                .get(&id)
                .map(|t| serde_json::to_value(t.saved(true)).expect("a tab record serializes"));
            meta = record.unwrap_or(meta);
        }
        let spawned = self
            .host
            .spawn(SpawnSpec {
                tab: id.clone(),
                argv,
                cwd: plan.cwd.clone(),
                env,
                rows,
                cols,
                scope,
                meta,
                generation,
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
                // A worktree made for this launch goes with it (`fresh`); a
                // restarted tab's worktree holds its work and stays.
                self.state.lock().unwrap().remove(&id);
                self.changed();
                tracing::warn!(agent = %name, folder = %plan.folder.display(), error = %e, "launch failed");
                return Err(ApiError::new(
                    ErrorCode::LaunchFailed,
                    format!("{} `{name}`: {e}", plan.kind.as_str()),
                ));
            }
        };
        // Running, or closed while it started (the close decided about
        // the worktree): kept either way.
        fresh.keep();
        let recorded = {
            let mut state = self.state.lock().unwrap();
            let t = state.tabs.get_mut(&id);
            let found = t.is_some();
            if let Some(t) = t {
                let started = Event::Started {
                    pid: spawned.pid,
                    start_time: spawned.start_time,
                };
                lifecycle::apply(t, started);
            }
            found
        };
        if !recorded {
            // A close that came before the spawn (during the sandbox check
            // or the feature detection) had no program to stop: this one
            // must not run on with no tab to reach it.
            let _ = self.host.stop(&id).await;
            self.host.forget(&id);
            return Err(ApiError::new(
                ErrorCode::LaunchFailed,
                format!("tab {id} was closed while `{name}` was starting"),
            ));
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
        Ok(Started {
            tab: id,
            refused: None,
            session: Some(plan.folder.clone()),
        })
    }
}

impl Core {
    /// Record tab `plan.id` as starting; its environment, scope, the
    /// record the host keeps for it, and its program's generation.
    fn record(
        &self,
        plan: &Plan,
        rows: u16,
        cols: u16,
        rules: Option<super::detection::LoadedRules>,
        data_dir: &Path,
    ) -> (
        Vec<(String, String)>,
        Option<String>,
        serde_json::Value,
        u64,
    ) {
        let secret = random_hex(32);
        let mut env = program_env(
            &plan.caller_env,
            &plan.agent_env,
            &TabFacts {
                secret: &secret,
                nerdr_bin: &self.bin,
                hook_socket: &self.paths.hook_socket(),
                data_dir,
                sandboxed: plan.sandboxed,
            },
        );
        // A worktree install's `NERDR_DATA_DIR` is its reports folder:
        // nerdr's own (for `nerdr sandbox` in the tab) comes beside it.
        if data_dir != self.paths.data_dir {
            let own = self.paths.data_dir.to_string_lossy().into_owned();
            env.push((crate::paths::CORE_DATA_DIR.to_string(), own));
        }
        let mut state = self.state.lock().unwrap();
        let term_number = plan
            .parent
            .as_ref()
            .map(|p| next_term_number(state.tabs.values(), p));
        let scope = match (&plan.parent, term_number) {
            (Some(p), Some(n)) => crate::systemd::names::term_scope(p, n).ok(),
            _ => crate::systemd::names::agent_scope(&plan.id).ok(),
        };
        let mut tab = starting_tab(plan, secret, term_number, rows, cols);
        if let Some(rules) = rules {
            if let Some(w) = &rules.warning {
                tracing::warn!(tab = %plan.id, agent = %plan.name, "{w}");
            }
            tab.warning = rules.warning.clone();
            tab.detection = Some(super::detection::Detection::new(rules));
        }
        state.insert(tab);
        let generation = state.snapshots.started(&plan.id);
        let named = &state.tabs[&plan.id];
        let meta = serde_json::to_value(named.saved(true)).expect("a tab record serializes");
        (env, scope, meta, generation)
    }

    /// A recorded sandboxed agent's check, then its command line completed
    /// with what the proven program supports: `Some` the new command line
    /// (`None`: nothing to complete, or closed meanwhile). Refused, the tab
    /// stays (with its worktree, for `nerdr restart`); failed after the
    /// check, it is gone.
    async fn checked(
        self: &Arc<Self>,
        plan: &Plan,
        env: &[(String, String)],
        fresh: &mut FreshWorktree,
    ) -> Result<Option<Vec<String>>, ApiError> {
        let id = &plan.id;
        let checked = super::sandbox_check::Launch {
            name: &plan.name,
            command: &plan.command,
            argv: &plan.argv,
            cwd: &plan.cwd,
            folder: &plan.folder,
            worktree: plan.worktree.as_ref(),
            probe: plan.probe.as_ref(),
        };
        let proven = match self.check_sandbox(&checked, id, env).await {
            Ok(proven) => proven,
            Err(e) => {
                // Refused, the tab keeps its worktree; closed meanwhile,
                // the close decided about it.
                fresh.keep();
                return Err(e);
            }
        };
        let Some(d) = plan.deferred.as_ref().filter(|_| proven.is_some()) else {
            return Ok(None);
        };
        match self
            .with_features(id, d, proven.as_deref(), &plan.caller_env)
            .await
        {
            Ok(Some(full)) => Ok(Some(full)),
            Ok(None) => Ok(None),
            Err(e) => {
                self.state.lock().unwrap().remove(id);
                self.changed();
                Err(e)
            }
        }
    }
}

impl Core {
    /// `install = "worktree"`: the integration into the tab's worktree
    /// (its folder without one), off the async workers; the worktree and
    /// the reports folder in it. Refused, the launch is refused with why.
    async fn install_in_worktree(
        &self,
        plan: &Plan,
        rel: &str,
    ) -> Result<(PathBuf, PathBuf), ApiError> {
        let tree = plan
            .worktree
            .as_ref()
            .map_or(&plan.folder, |w| &w.path)
            .clone();
        if let Some(other) = self.reports_dir_taken(&tree.join(rel), &plan.id) {
            return Err(ApiError::new(
                ErrorCode::LaunchFailed,
                format!(
                    "agent `{}` (install = \"worktree\"): {} already reports for tab {other}, \
                     and a reports file speaks for one tab; close tab {other} first, or start \
                     this agent in a worktree of its own",
                    plan.name,
                    tree.join(rel).display()
                ),
            ));
        }
        let (paths, agent, rel_owned, at) = (
            self.paths.clone(),
            plan.detect.clone().unwrap_or_else(|| plan.name.clone()),
            rel.to_string(),
            tree.clone(),
        );
        let installed = super::edge::gather("installing into a worktree", move || {
            crate::integration::worktree::install(&paths, &agent, &at, &rel_owned)
        })
        .await
        .map_err(|e| {
            ApiError::new(
                ErrorCode::LaunchFailed,
                format!("agent `{}` (install = \"worktree\"): {e}", plan.name),
            )
        })?;
        for note in &installed.notes {
            tracing::info!(tab = %plan.id, agent = %plan.name, "{note}");
        }
        Ok((tree, installed.data_dir))
    }
}

/// The number of a new terminal of tab `parent`: one past the highest in
/// use, so closing terminal 1 of 2 does not hand out 2 again.
fn next_term_number<'a>(tabs: impl Iterator<Item = &'a Tab>, parent: &str) -> u32 {
    tabs.filter(|t| t.parent.as_deref() == Some(parent))
        .filter_map(|t| t.term_number)
        .max()
        .unwrap_or(0)
        + 1
}

/// The tab `plan` makes, its program not yet started.
fn starting_tab(
    plan: &Plan,
    secret: String,
    term_number: Option<u32>,
    rows: u16,
    cols: u16,
) -> Tab {
    Tab {
        id: plan.id.clone(),
        // Its default, from its session's other names, when recorded.
        name: String::new(),
        // The lowest free in its session, when recorded.
        number: 0,
        secret,
        folder: plan.folder.clone(),
        agent: plan.name.clone(),
        command: plan.command.clone(),
        sandboxed: plan.sandboxed,
        program: plan.program,
        kind: plan.kind,
        parent: plan.parent.clone(),
        started_by: plan.started_by.clone(),
        cwd: plan.cwd.clone(),
        worktree: plan.worktree.clone(),
        term_number,
        session_id: plan.session_id.clone(),
        reported: plan.reported.clone(),
        last_event: None,
        warning: None,
        reason: None,
        nerdr_missing: None,
        state: Life::STARTING.state,
        pid: Life::STARTING.pid,
        start_time: Life::STARTING.start_time,
        exit_code: Life::STARTING.exit_code,
        screen: crate::term::Screen::new(rows, cols),
        log: Default::default(),
        detection: None,
        terminal_bells: Default::default(),
        unread_reviews: 0,
    }
}

impl Core {
    /// A fresh tab id: eight hex digits, valid in unit names.
    /// The line of starters (`privilege::line_of`) of a tab started by
    /// the programs of tabs `starters` (a closed one counts with no line
    /// of its own).
    pub(super) fn line_of<'a>(&self, starters: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let state = self.state.lock().unwrap();
        let lined: Vec<privilege::Lined> = starters
            .into_iter()
            .map(|id| privilege::Lined {
                id,
                line: state.tabs.get(id).map_or(&[][..], |t| &t.started_by),
            })
            .collect();
        privilege::line_of(&lined)
    }

    pub(super) fn new_tab_id(&self) -> String {
        let state = self.state.lock().unwrap();
        loop {
            let id = random_hex(4);
            if !state.tabs.contains_key(&id) {
                return id;
            }
        }
    }

    /// Before a sandboxed agent runs, its repository gets sandbox history
    /// (the host git guard's input): no record, no start.
    async fn note_sandbox_history(&self, plan: &Plan) -> Result<(), ApiError> {
        let dir = match &plan.worktree {
            Some(w) => w.path.clone(),
            None => plan.cwd.clone(),
        };
        let state_dir = self.paths.state_dir.clone();
        tokio::task::spawn_blocking(move || crate::git::guard::record_run(&state_dir, &dir, &[]))
            .await
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::LaunchFailed,
                    format!("a sandboxed agent starts only once its sandbox history is kept: {e}"),
                )
            })
    }

    /// The tab's own worktree when `folder` is in a git repository: its
    /// folder inside the worktree, and the worktree. Outside a repository,
    /// the folder itself.
    pub(super) async fn make_worktree(
        &self,
        folder: &Path,
        tab: &str,
    ) -> Result<(PathBuf, Option<Worktree>), ApiError> {
        let folder = folder.to_path_buf();
        let paths = self.paths.clone();
        let tab = tab.to_string();
        let made = tokio::task::spawn_blocking(move || {
            let Some(repo) = crate::git::worktree::repo_of(&folder) else {
                return Ok((folder, None));
            };
            let made = crate::git::worktree::create(&paths, &repo, &tab)?;
            let path = made.path;
            let cwd = path.join(&repo.prefix);
            Ok((
                if cwd.is_dir() { cwd } else { path.clone() },
                Some(Worktree {
                    path,
                    repo: repo.toplevel,
                    branch: crate::git::worktree::branch(&tab),
                    base: Some(made.base.commit),
                    base_branch: made.base.branch,
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

impl Core {
    /// The environment a program builds on: the user's own command's, else
    /// that of the last client that started one, else the core's.
    pub(super) fn environment_for(
        &self,
        caller: &Caller,
        sent: Vec<(String, String)>,
    ) -> Vec<(String, String)> {
        let mut state = self.state.lock().unwrap();
        let last = &mut state.last_client_env;
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
        Caller::Tab { id, .. } => id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tab(id: &str, parent: Option<&str>, term_number: Option<u32>) -> Tab {
        let saved = serde_json::from_value(serde_json::json!({
            "id": id, "folder": "/w", "agent": "terminal", "command": ["sh"],
            "sandboxed": false, "kind": "terminal", "parent": parent,
            "term_number": term_number, "state": "running",
            "pid": null, "start_time": null, "exit_code": null,
        }))
        .unwrap();
        Tab::from_saved(saved, 24, 80)
    }

    #[test]
    fn a_new_terminal_is_numbered_past_the_highest_of_its_tab() {
        let tabs = [
            tab("a", None, None),
            tab("t1", Some("a"), Some(1)),
            tab("t2", Some("a"), Some(2)),
            tab("u1", Some("b"), Some(7)),
        ];
        #[rustfmt::skip]
        let table: &[(&str, &[usize], &str, u32)] = &[
            ("a tab's first terminal is number 1", &[0], "a", 1),
            ("the next terminal goes past the highest", &[0, 1, 2], "a", 3),
            ("closing terminal 1 of 2 does not hand out 2 again", &[0, 2], "a", 3),
            ("another tab's terminals do not count", &[0, 3], "a", 1),
        ];
        for (sentence, present, parent, want) in table {
            let got = next_term_number(present.iter().map(|i| &tabs[*i]), parent);
            assert_eq!(got, *want, "{sentence}");
        }
    }
}
