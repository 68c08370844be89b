//! The sandbox check before a sandboxed agent's launch
//! (docs/ARCHITECTURE.md, "The sandbox check (probe)"): have the facts
//! gathered off the async workers (`sandbox_facts`), decide what the probe
//! must not reach (`probe::targets`), run it through the agent's wrapper
//! with the launch's environment and folder, and either let the launch go
//! on or leave the tab `refused` with the reason on its screen, in the
//! reply and in the audit log. Never cached: each launch checks again.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::agent_program::{missing_program, program_of};
use super::sandbox_facts::{gather, Ask, AGENT_PROGRAM};
use super::state::Worktree;
use super::Core;
use crate::audit::{Event, Kind};
use crate::probe::placement::{in_agent_reach, place, Placement};
use crate::probe::plan::{plan, Plan};
use crate::probe::targets::targets;
use crate::probe::verdict::{nerdr_missing, verdict, Outcome, Verdict};
use crate::protocol::api::{ApiError, ErrorCode};
use crate::protocol::handshake::random_hex;

/// Where the probe goes in a sandboxed agent's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ProbeSite {
    /// The command's own words (wrapper and program), `argv[0]` resolved.
    pub(super) command_words: Vec<String>,
    /// The file name that names the agent (`agent_program::program_of`).
    pub(super) program: String,
    /// Why no word of the command is that program, as the one-line fix:
    /// the launch is refused with it, no probe run.
    pub(super) missing: Option<String>,
}

impl ProbeSite {
    pub(super) fn of(
        agent: &crate::config::ResolvedAgent,
        argv: &[String],
        config_file: &Path,
    ) -> ProbeSite {
        ProbeSite {
            command_words: argv[..agent.command_words.min(argv.len())].to_vec(),
            program: program_of(agent),
            missing: missing_program(agent, config_file),
        }
    }
}

/// The launch being checked, as plain fields: the check needs nothing of
/// how the launch was planned.
pub(super) struct Launch<'a> {
    /// The agent's name.
    pub(super) name: &'a str,
    /// The command as configured, for the audit log.
    pub(super) command: &'a [String],
    /// The resolved program, then its arguments.
    pub(super) argv: &'a [String],
    /// Where the program starts.
    pub(super) cwd: &'a Path,
    /// The tab's folder.
    pub(super) folder: &'a Path,
    pub(super) worktree: Option<&'a Worktree>,
    /// Where the probe goes in the command (the whole `argv` and the
    /// agent's name, without one).
    pub(super) probe: Option<&'a ProbeSite>,
}

impl Core {
    /// Run the check for `launch` (tab `id`, already recorded as starting,
    /// to run with `env`). `Ok` lets the launch go on, with the agent's
    /// program as the check resolved and tested it (the only file nerdr may
    /// then run on the host to learn its features); otherwise the tab is
    /// left `refused` and the error names each thing reached.
    pub(super) async fn check_sandbox(
        self: &Arc<Self>,
        launch: &Launch<'_>,
        id: &str,
        env: &[(String, String)],
    ) -> Result<Option<PathBuf>, ApiError> {
        let nonce = random_hex(16);
        let site = launch.probe.cloned().unwrap_or_else(|| ProbeSite {
            command_words: launch.argv.to_vec(),
            program: launch.name.to_string(),
            missing: None,
        });
        if let Some(fix) = &site.missing {
            return self.refuse_unplaceable(launch, id, fix).await;
        }
        let other_worktrees: Vec<PathBuf> = {
            let state = self.state.lock().unwrap();
            state
                .tabs
                .values()
                .filter(|t| t.id != id)
                .filter_map(|t| t.worktree.as_ref().map(|w| w.path.clone()))
                .collect()
        };
        let ask = Ask {
            paths: self.paths.clone(),
            bin: self.bin.clone(),
            command_words: site.command_words.clone(),
            program: site.program.clone(),
            env: env.to_vec(),
            cwd: launch.cwd.to_path_buf(),
            folder: launch.folder.to_path_buf(),
            worktree: launch.worktree.cloned(),
            other_worktrees,
            programs_end_with_core: self.host.programs_end_with_core(),
        };
        // stat, canonicalize and git block: off the async workers.
        let gathered = tokio::task::spawn_blocking(move || gather(&ask)).await;
        let (probe_plan, programs, in_reach) = match gathered {
            Ok(g) => {
                let reach = &g.reach;
                let in_reach = in_agent_reach(&reach.programs, &reach.path_dirs, &reach.writable);
                (plan(&targets(&g.facts)), g.programs, in_reach)
            }
            Err(e) => (
                Plan::default(),
                Vec::new(),
                Some(format!("what it must not reach could not be gathered: {e}")),
            ),
        };
        let probe_words = vec![
            self.bin.to_string_lossy().into_owned(),
            "probe".into(),
            "--nonce".into(),
            nonce.clone(),
            "--plan".into(),
            serde_json::to_string(&probe_plan).expect("a plan serializes"),
        ];
        let started = std::time::Instant::now();
        let outcome = match (
            place(&site.command_words, &site.program, &probe_words),
            in_reach,
        ) {
            (Placement::Unplaceable(why), _) | (_, Some(why)) => Outcome::Unplaceable(why),
            (Placement::Argv(argv), None) => {
                crate::probe::run::run(&argv, launch.cwd, env, crate::probe::run::TIMEOUT).await
            }
        };
        let took = started.elapsed();
        let verdict = verdict(&probe_plan, &nonce, &outcome);
        self.note_nerdr_missing(launch.name, id, &nerdr_missing(&nonce, &outcome));
        let agent = programs
            .iter()
            .find(|p| p.role == AGENT_PROGRAM)
            .and_then(|p| p.resolved.clone());
        self.carry_out(launch, id, &verdict, took, agent).await
    }

    /// The verdict's audit entry and log line; a refused tab is left
    /// `refused` with the reason on its screen. `agent`: the program the
    /// check proved, passed on for a start.
    async fn carry_out(
        &self,
        launch: &Launch<'_>,
        id: &str,
        verdict: &Verdict,
        took: std::time::Duration,
        agent: Option<PathBuf>,
    ) -> Result<Option<PathBuf>, ApiError> {
        let name = launch.name;
        let command = serde_json::to_string(launch.command).unwrap_or_default();
        let event = |kind: Kind, sentence: String| {
            Event::new(kind, sentence)
                .field("NERDR_TAB", id)
                .field("NERDR_AGENT", name)
                .field("NERDR_COMMAND", command.as_str())
        };
        let (message, notice) = match verdict {
            Verdict::Start => {
                tracing::info!(tab = %id, agent = %name, ms = took.as_millis() as u64, "sandbox check passed");
                let passed = event(
                    Kind::ProbePassed,
                    format!("the sandbox check of `{name}` in tab {id} passed"),
                );
                super::edge::audit(&self.paths, passed).await;
                // Closed while it was being checked: nothing may start now.
                if !self.state.lock().unwrap().tabs.contains_key(id) {
                    return Err(ApiError::new(
                        ErrorCode::LaunchFailed,
                        format!(
                            "tab {id} was closed while the sandbox of `{name}` was being checked"
                        ),
                    ));
                }
                return Ok(agent);
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
                super::edge::audit(&self.paths, e).await;
                let list: String = reached.iter().map(|r| format!("\n  - {r}")).collect();
                (
                    format!(
                        "the sandbox check reached, from inside the sandbox of `{name}`:{list}"
                    ),
                    "fix the wrapper",
                )
            }
            Verdict::CouldNotCheck { why } => {
                let unchecked = event(
                    Kind::ProbeUnchecked,
                    format!("did not start `{name}` in tab {id}: the sandbox check could not be made: {why}"),
                )
                .field("NERDR_REASON", why.as_str());
                super::edge::audit(&self.paths, unchecked).await;
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

    /// A launch whose command runs no word the check can go in place of:
    /// refused before any probe, with the one line that says the fix.
    async fn refuse_unplaceable(
        &self,
        launch: &Launch<'_>,
        id: &str,
        fix: &str,
    ) -> Result<Option<PathBuf>, ApiError> {
        let name = launch.name;
        let unchecked = Event::new(
            Kind::ProbeUnchecked,
            format!(
                "did not start `{name}` in tab {id}: the sandbox check could not be placed: {fix}"
            ),
        )
        .field("NERDR_TAB", id)
        .field("NERDR_AGENT", name)
        .field(
            "NERDR_COMMAND",
            serde_json::to_string(launch.command)
                .unwrap_or_default()
                .as_str(),
        )
        .field("NERDR_REASON", fix);
        super::edge::audit(&self.paths, unchecked).await;
        let message = format!("{fix}; then run `nerdr restart {id}`");
        tracing::warn!(tab = %id, agent = %name, reason = %message, "sandbox check refused the launch");
        self.refuse_tab(id, &message);
        Err(ApiError::new(ErrorCode::LaunchFailed, message))
    }

    /// Record what of nerdr tab `id`'s agent cannot reach from inside its
    /// sandbox (nothing: cleared, as after a fixed sandbox's restart).
    fn note_nerdr_missing(&self, name: &str, id: &str, missing: &[String]) {
        let missing = (!missing.is_empty()).then(|| missing.join("; "));
        if let Some(m) = &missing {
            tracing::warn!(tab = %id, agent = %name, missing = %m,
                "the sandbox keeps the agent from nerdr: its CLI and hooks cannot reach it");
        }
        if let Some(t) = self.state.lock().unwrap().tabs.get_mut(id) {
            t.nerdr_missing = missing;
        }
    }

    /// Leave tab `id` refused, its screen showing why.
    fn refuse_tab(&self, id: &str, message: &str) {
        {
            let mut state = self.state.lock().unwrap();
            if let Some(t) = state.tabs.get_mut(id) {
                super::lifecycle::apply(t, super::lifecycle::Event::Refused);
                t.reason = Some(message.to_string());
                let shown = format!("\r\nnerdr: {}\r\n", message.replace('\n', "\r\n"));
                t.screen.process(shown.as_bytes());
                t.log.push(shown.as_bytes());
                self.paint_windows(&mut state, id);
            }
        }
        self.changed();
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
            let site = ProbeSite::of(&a, &argv, Path::new("/c.toml"));
            assert_eq!(
                site,
                ProbeSite {
                    command_words: words(&["/usr/bin/wrap", command[1]]),
                    program: program.to_string(),
                    missing: None,
                },
                "{name}"
            );
        }
    }
}
