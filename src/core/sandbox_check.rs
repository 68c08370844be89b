//! The sandbox check before a sandboxed agent's launch (DESIGN.md, "The
//! sandbox check (probe)"): gather what the probe must not reach, run it
//! through the agent's wrapper with the launch's environment and folder,
//! and either let the launch go on or leave the tab `refused` with the
//! reason on its screen, in the reply and in the audit log. Never cached:
//! each launch checks again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::launch::Plan;
use super::Core;
use crate::audit::{Event, Kind};
use crate::probe::placement::{place, Placement};
use crate::probe::plan::{FileId, Proc, Targets};
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
    /// to run with `env`). `Ok` lets the launch go on; otherwise the tab is
    /// left `refused` and the error names each thing reached.
    pub(super) async fn check_sandbox(
        self: &Arc<Self>,
        plan: &Plan,
        id: &str,
        env: &[(String, String)],
    ) -> Result<(), ApiError> {
        let nonce = random_hex(16);
        let targets = self.probe_targets(plan, id);
        let probe_plan = crate::probe::plan::plan(&targets);
        let probe_words = vec![
            self.bin.to_string_lossy().into_owned(),
            "probe".into(),
            "--nonce".into(),
            nonce.clone(),
            "--plan".into(),
            serde_json::to_string(&probe_plan).expect("a plan serializes"),
        ];
        let site = plan.probe.clone().unwrap_or_else(|| ProbeSite {
            command_words: plan.argv.clone(),
            program: plan.name.clone(),
        });
        let started = std::time::Instant::now();
        let outcome = match place(&site.command_words, &site.program, &probe_words) {
            Placement::Unplaceable(why) => Outcome::Unplaceable(why),
            Placement::Argv(argv) => {
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
                return Ok(());
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
    fn probe_targets(&self, plan: &Plan, id: &str) -> Targets {
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
            if let Some(r) = crate::holder::peer::read_recorded(&p.state_dir.join("holder.pid")) {
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
        let ids = |paths: &[PathBuf]| -> Vec<FileId> {
            paths.iter().filter_map(|d| FileId::of(d)).collect()
        };
        Targets {
            run_dir: FileId::of(&p.run_dir),
            client_socket: FileId::of(&p.client_socket()),
            client_key: FileId::of(&p.client_key()),
            processes,
            config_dir: FileId::of(&p.config_dir),
            state_dir: FileId::of(&p.state_dir),
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
            worktree_dirs: ids(&worktree_dirs),
            processes_reachable_by_proc: cfg!(target_os = "linux"),
        }
    }
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
