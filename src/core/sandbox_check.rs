//! The sandbox check before a sandboxed agent's launch
//! (docs/ARCHITECTURE.md, "The sandbox check (probe)"): gather what the probe must not reach, run it
//! through the agent's wrapper with the launch's environment and folder,
//! and either let the launch go on or leave the tab `refused` with the
//! reason on its screen, in the reply and in the audit log. Never cached:
//! each launch checks again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::launch::{path_of, Plan};
use super::Core;
use crate::audit::{Event, Kind};
use crate::probe::placement::{place, Placement};
use crate::probe::plan::{FileId, Named, Proc, Targets};
use crate::probe::verdict::{verdict, Outcome, Verdict};
use crate::protocol::api::{ApiError, ErrorCode, TabState};
use crate::protocol::handshake::random_hex;

/// Where the probe goes in a sandboxed agent's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ProbeSite {
    /// The command's own words (wrapper and program), `argv[0]` resolved.
    pub(super) command_words: Vec<String>,
    /// The file name that names the agent: the built-in's program, or a
    /// custom agent's section name.
    pub(super) program: String,
}

impl ProbeSite {
    pub(super) fn of(agent: &crate::config::ResolvedAgent, argv: &[String]) -> ProbeSite {
        ProbeSite {
            command_words: argv[..agent.command_words.min(argv.len())].to_vec(),
            program: crate::config::builtin_program(&agent.name)
                .filter(|_| agent.builtin)
                .unwrap_or(&agent.name)
                .to_string(),
        }
    }
}

impl Core {
    /// Run the check for `plan` (tab `id`, already recorded as starting,
    /// to run with `env`). `Ok` lets the launch go on, with the agent's
    /// program as the check resolved and tested it (the only file nerdr may
    /// then run on the host to learn its features); otherwise the tab is
    /// left `refused` and the error names each thing reached.
    pub(super) async fn check_sandbox(
        self: &Arc<Self>,
        plan: &Plan,
        id: &str,
        env: &[(String, String)],
    ) -> Result<Option<PathBuf>, ApiError> {
        let nonce = random_hex(16);
        let site = plan.probe.clone().unwrap_or_else(|| ProbeSite {
            command_words: plan.argv.clone(),
            program: plan.name.clone(),
        });
        let programs = programs_of(&site, env, &plan.cwd);
        let targets = self.probe_targets(plan, id, env, &programs);
        let probe_plan = crate::probe::plan::plan(&targets);
        let probe_words = vec![
            self.bin.to_string_lossy().into_owned(),
            "probe".into(),
            "--nonce".into(),
            nonce.clone(),
            "--plan".into(),
            serde_json::to_string(&probe_plan).expect("a plan serializes"),
        ];
        let started = std::time::Instant::now();
        let writable: Vec<PathBuf> = plan
            .worktree
            .iter()
            .map(|w| w.path.clone())
            .chain([plan.folder.clone()])
            .collect();
        let in_reach = agent_writable_words(&programs, &path_of(env), &writable);
        let outcome = match (
            place(&site.command_words, &site.program, &probe_words),
            in_reach,
        ) {
            (Placement::Unplaceable(why), _) | (_, Some(why)) => Outcome::Unplaceable(why),
            (Placement::Argv(argv), None) => {
                crate::probe::run::run(&argv, &plan.cwd, env, crate::probe::run::TIMEOUT).await
            }
        };
        let took = started.elapsed();
        let verdict = verdict(&probe_plan, &nonce, &outcome);
        let name = &plan.name;
        let command = serde_json::to_string(&plan.command).unwrap_or_default();
        let event = |kind: Kind, sentence: String| {
            Event::new(kind, sentence)
                .field("NERDR_TAB", id)
                .field("NERDR_AGENT", name.as_str())
                .field("NERDR_COMMAND", command.as_str())
        };
        let (message, notice) = match &verdict {
            Verdict::Start => {
                tracing::info!(tab = %id, agent = %name, ms = took.as_millis() as u64, "sandbox check passed");
                crate::audit::record(
                    &self.paths,
                    &event(
                        Kind::ProbePassed,
                        format!("the sandbox check of `{name}` in tab {id} passed"),
                    ),
                );
                // Closed while it was being checked: nothing may start now.
                if !self.state.lock().unwrap().tabs.contains_key(id) {
                    return Err(ApiError::new(
                        ErrorCode::LaunchFailed,
                        format!(
                            "tab {id} was closed while the sandbox of `{name}` was being checked"
                        ),
                    ));
                }
                return Ok(programs
                    .iter()
                    .find(|p| p.role == AGENT_PROGRAM)
                    .and_then(|p| p.resolved.clone()));
            }
            Verdict::Refuse { reached } => {
                let mut e = event(
                    Kind::ProbeRefused,
                    format!(
                        "did not start `{name}` in tab {id}: from inside its sandbox the check reached {}",
                        reached.join("; ")
                    ),
                );
                for r in reached {
                    e = e.field("NERDR_REACHED", r.as_str());
                }
                crate::audit::record(&self.paths, &e);
                let list: String = reached.iter().map(|r| format!("\n  - {r}")).collect();
                (
                    format!(
                        "the sandbox check reached, from inside the sandbox of `{name}`:{list}"
                    ),
                    "fix the wrapper",
                )
            }
            Verdict::CouldNotCheck { why } => {
                crate::audit::record(
                    &self.paths,
                    &event(
                        Kind::ProbeUnchecked,
                        format!("did not start `{name}` in tab {id}: the sandbox check could not be made: {why}"),
                    )
                    .field("NERDR_REASON", why.as_str()),
                );
                (
                    format!("the sandbox check of `{name}` could not be made: {why}"),
                    "fix the wrapper",
                )
            }
        };
        let message = format!(
            "agent `{name}` in tab {id} was not started: {message}\n{notice} (`command` in \
             [agents.{name}] of {}), then run `nerdr restart {id}` to check again",
            self.paths.config_file().display()
        );
        tracing::warn!(tab = %id, agent = %name, reason = %message, "sandbox check refused the launch");
        self.refuse_tab(id, &message);
        Err(ApiError::new(ErrorCode::LaunchFailed, message))
    }

    /// Leave tab `id` refused, its screen showing why.
    fn refuse_tab(&self, id: &str, message: &str) {
        {
            let mut state = self.state.lock().unwrap();
            if let Some(t) = state.tabs.get_mut(id) {
                t.state = TabState::Refused;
                t.reason = Some(message.to_string());
                let shown = format!("\r\nnerdr: {}\r\n", message.replace('\n', "\r\n"));
                t.screen.process(shown.as_bytes());
                t.log.push(shown.as_bytes());
                self.forward_output(id, shown.as_bytes());
            }
        }
        self.changed();
    }

    /// What the probe for tab `id` must not reach.
    fn probe_targets(
        &self,
        plan: &Plan,
        id: &str,
        env: &[(String, String)],
        programs: &[Program],
    ) -> Targets {
        let p = &self.paths;
        let mut processes = Vec::new();
        let me = std::process::id();
        if let Ok(start_time) = crate::platform::proc_start_time(me) {
            processes.push(Proc {
                role: "core",
                pid: me,
                start_time,
            });
        }
        if !self.host.programs_end_with_core() {
            if let Some(r) = crate::peer::read_recorded(&p.state_dir.join("holder.pid")) {
                processes.push(Proc {
                    role: "holder",
                    pid: r.pid,
                    start_time: r.start_time,
                });
            }
        }
        let repo_dirs: Vec<PathBuf> = match &plan.worktree {
            Some(w) => crate::git::worktree::repo_of(&w.repo),
            None => crate::git::worktree::repo_of(&plan.folder),
        }
        .map(|r| r.common_dir)
        .into_iter()
        .collect();
        let mut worktree_dirs: Vec<PathBuf> = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .values()
                .filter(|t| t.id != id)
                .filter_map(|t| t.worktree.as_ref())
                .chain(plan.worktree.as_ref())
                .filter_map(|w| w.path.parent().map(Path::to_path_buf))
                .collect()
        };
        worktree_dirs.sort();
        worktree_dirs.dedup();
        let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let mounts = crate::probe::mounts::parse(&table);
        let id_of = |path: &Path| -> Option<FileId> {
            let mut f = FileId::of(path)?;
            f.mount = std::fs::canonicalize(path)
                .ok()
                .and_then(|c| crate::probe::mounts::spot(&mounts, &c));
            Some(f)
        };
        let ids =
            |paths: &[PathBuf]| -> Vec<FileId> { paths.iter().filter_map(|d| id_of(d)).collect() };
        let core_env = |k: &str| {
            std::env::var_os(k)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let runtime = core_env("XDG_RUNTIME_DIR");
        let mut sockets: Vec<PathBuf> = runtime
            .iter()
            .flat_map(|r| [r.join("bus"), r.join("systemd/private")])
            .collect();
        // The bus the agent is told of, wherever it is.
        if let Some(bus) = env
            .iter()
            .find(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS")
            .and_then(|(_, v)| v.split(';').find_map(|a| a.strip_prefix("unix:path=")))
            .map(|p| PathBuf::from(p.split(',').next().unwrap_or(p)))
        {
            sockets.push(bus);
        }
        sockets.sort();
        sockets.dedup();
        let named = |what: &str, file: FileId| Named {
            what: what.to_string(),
            file,
        };
        let mut host_files = Vec::new();
        let mut host_dirs = Vec::new();
        // A file that is not there yet is planted by whoever may write the
        // nearest folder above it that is.
        // A symlink counts twice: itself (its folder may let it be
        // replaced) and the file it leads to (which may be writable).
        let mut file_or_folder = |what: &str, path: &Path| {
            let real = std::fs::canonicalize(path).ok().filter(|r| r != path);
            for path in std::iter::once(path).chain(real.as_deref()) {
                match id_of(path) {
                    Some(f) => host_files.push(named(what, f)),
                    None => {
                        if let Some(f) = nearest_existing(path).and_then(|a| id_of(&a)) {
                            host_dirs.push(named(
                                &format!(
                                    "the folder where {what} {} would be made",
                                    path.display()
                                ),
                                f,
                            ));
                        }
                    }
                }
            }
        };
        file_or_folder("nerdr's executable", &self.bin);
        for prog in programs {
            if let Some(r) = &prog.resolved {
                file_or_folder(prog.role, r);
            }
        }
        let home = core_env("HOME");
        // git runs with HOME only (no XDG_CONFIG_HOME): both places count.
        let mut config_homes: Vec<PathBuf> = home.iter().map(|h| h.join(".config")).collect();
        config_homes.extend(core_env("XDG_CONFIG_HOME"));
        config_homes.dedup();
        let mut git_files: Vec<(&str, PathBuf)> = home
            .iter()
            .map(|h| ("the global git config", h.join(".gitconfig")))
            .collect();
        for c in &config_homes {
            git_files.push(("the global git config", c.join("git/config")));
            git_files.push(("the global git attributes", c.join("git/attributes")));
        }
        // The attributes file the global config names (`~` expanded).
        if let Some(h) = &home {
            if let Ok(f) =
                crate::git::query(h, &["config", "--global", "--path", "core.attributesFile"])
            {
                let f = PathBuf::from(f.trim());
                if f.is_absolute() {
                    git_files.push(("the global git attributes", f));
                }
            }
        }
        for (what, file) in &git_files {
            file_or_folder(what, file);
        }
        let mut folders: Vec<(&str, PathBuf)> = Vec::new();
        if let Some(d) = self.bin.parent() {
            folders.push(("the folder of nerdr's executable", d.to_path_buf()));
        }
        let core_path = std::env::var("PATH").unwrap_or_default();
        if let Some(git) = super::launch::find_program("git", &core_path, Path::new("/")) {
            if let Some(d) = git.parent() {
                folders.push(("the folder of the git the core runs", d.to_path_buf()));
            }
        }
        for var in [core_path.as_str(), path_of(env).as_str()] {
            for d in std::env::split_paths(var).filter(|d| d.is_absolute()) {
                folders.push(("a PATH folder the core runs programs from", d));
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for (what, d) in folders {
            let Some(at) = nearest_existing(&d) else {
                continue;
            };
            if !seen.insert(at.clone()) {
                continue;
            }
            let what = if at == d {
                what.to_string()
            } else {
                format!("the folder where {what} {} would be made", d.display())
            };
            if let Some(f) = id_of(&at) {
                host_dirs.push(named(&what, f));
            }
        }
        // One check per file or folder, under the first name it came by.
        let mut seen = std::collections::BTreeSet::new();
        host_files.retain(|n| seen.insert(n.file.path.clone()));
        host_dirs.retain(|n| seen.insert(n.file.path.clone()));
        Targets {
            run_dir: id_of(&p.run_dir),
            client_socket: id_of(&p.client_socket()),
            client_key: id_of(&p.client_key()),
            processes,
            config_dir: id_of(&p.config_dir),
            state_dir: id_of(&p.state_dir),
            git_configs: ids(&repo_dirs
                .iter()
                .map(|d| d.join("config"))
                .collect::<Vec<_>>()),
            // Without a hooks folder, whoever can make one in .git can add hooks.
            git_hooks: ids(&repo_dirs
                .iter()
                .map(|d| {
                    let hooks = d.join("hooks");
                    if hooks.is_dir() {
                        hooks
                    } else {
                        d.clone()
                    }
                })
                .collect::<Vec<_>>()),
            git_dirs: ids(&repo_dirs),
            // Without an info folder, .git itself (checked above) is where it is made.
            git_infos: ids(&repo_dirs.iter().map(|d| d.join("info")).collect::<Vec<_>>()),
            worktree_dirs: ids(&worktree_dirs),
            data_dirs: ids(&[p.data_dir.clone(), p.data_dir.join("worktrees")]),
            runtime_root: runtime.as_deref().and_then(id_of),
            user_sockets: ids(&sockets),
            host_files,
            host_dirs,
            mount_table: cfg!(target_os = "linux"),
            processes_reachable_by_proc: cfg!(target_os = "linux"),
        }
    }
}

const AGENT_PROGRAM: &str = "the agent's program";

/// A program word of the command, and where the host finds it.
pub(super) struct Program {
    role: &'static str,
    word: String,
    resolved: Option<PathBuf>,
}

/// The wrapper (the command's first word, already resolved) and the word
/// the probe goes in place of (resolved as the sandbox would, from the
/// launch's PATH and folder).
fn programs_of(site: &ProbeSite, env: &[(String, String)], cwd: &Path) -> Vec<Program> {
    let mut out = Vec::new();
    let path = path_of(env);
    if let Some(first) = site.command_words.first() {
        out.push(Program {
            role: "the wrapper program",
            word: first.clone(),
            resolved: Some(PathBuf::from(first)),
        });
    }
    let file_name = |w: &str| w.rsplit('/').next().unwrap_or(w).to_owned();
    let agent_at = site
        .command_words
        .iter()
        .skip(1)
        .rposition(|w| file_name(w) == site.program)
        .map(|i| i + 1);
    // Words the wrapper is given before the agent's: one naming a file (a
    // script the wrapper runs, a policy it reads) is as much the sandbox as
    // the wrapper itself. Folders (bind targets) are not programs.
    let middle = &site.command_words
        [1.min(site.command_words.len())..agent_at.unwrap_or(site.command_words.len())];
    for w in middle.iter().filter(|w| !w.starts_with('-')) {
        let at = cwd.join(w);
        if at.is_file() {
            let resolved = std::fs::canonicalize(&at).unwrap_or(at);
            out.push(Program {
                role: "a file the wrapper is given",
                word: resolved.display().to_string(),
                resolved: Some(resolved),
            });
        } else if w.contains('/') && !w.starts_with('/') && !w.contains(char::is_whitespace) {
            out.push(Program {
                role: "a file the wrapper is given",
                word: w.clone(),
                resolved: None,
            });
        }
    }
    if let Some(w) = agent_at.map(|i| &site.command_words[i]) {
        out.push(Program {
            role: AGENT_PROGRAM,
            word: w.clone(),
            resolved: super::launch::find_program(w, &path, cwd),
        });
    }
    out
}

/// Why the command cannot be checked when one of its programs lies where
/// the agent may write, or `None`.
fn agent_writable_words(programs: &[Program], path: &str, writable: &[PathBuf]) -> Option<String> {
    let resolved: Vec<(String, Option<PathBuf>)> = programs
        .iter()
        .map(|p| {
            (
                p.word.clone(),
                p.resolved
                    .as_ref()
                    .map(|r| std::fs::canonicalize(r).unwrap_or(r.clone())),
            )
        })
        .collect();
    let writable: Vec<PathBuf> = writable
        .iter()
        .map(|w| std::fs::canonicalize(w).unwrap_or(w.clone()))
        .collect();
    let path_dirs: Vec<PathBuf> = std::env::split_paths(path)
        // A relative folder is looked up from wherever the program runs.
        .map(|d| match d.is_absolute() {
            true => std::fs::canonicalize(&d).unwrap_or(d),
            false => d,
        })
        .collect();
    crate::probe::placement::in_agent_reach(&resolved, &path_dirs, &writable)
}

/// `path` if it exists, else the nearest folder above it that does.
fn nearest_existing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .find(|a| std::fs::symlink_metadata(a).is_ok())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(name: &str, command: &[&str]) -> crate::config::ResolvedAgent {
        let text = format!(
            "[agents.{name}]\ncommand = {command:?}\nargs = [\"--flag\"]\nsandboxed = true\n"
        );
        crate::config::parse(&text, Path::new("/c.toml"))
            .unwrap()
            .resolve_agent(name)
            .unwrap()
    }

    #[test]
    fn the_agent_is_named_by_its_program_or_its_section() {
        let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        let rows: &[(&str, &[&str], &str)] = &[
            // A built-in agent by its program's name, not the agent's.
            ("cursor", &["wrap", "cursor-agent"], "cursor-agent"),
            ("claude", &["wrap", "claude"], "claude"),
            // A custom agent by its section's name.
            ("mybot", &["wrap", "mybot"], "mybot"),
        ];
        for (name, command, program) in rows {
            let a = agent(name, command);
            // argv as launched: argv[0] resolved, then args and session words.
            let mut argv = words(command);
            argv[0] = "/usr/bin/wrap".into();
            argv.extend(words(&["--flag", "--session-id", "x"]));
            let site = ProbeSite::of(&a, &argv);
            assert_eq!(
                site,
                ProbeSite {
                    command_words: words(&["/usr/bin/wrap", command[1]]),
                    program: program.to_string(),
                },
                "{name}"
            );
        }
    }
}
