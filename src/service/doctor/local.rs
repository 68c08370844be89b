//! What doctor gathers itself, past the platform code: config.toml read as a
//! launch reads it, where PATH finds each agent's program, and the
//! `nerdr core` processes of this user (from `/proc`; none where there is
//! no `/proc`), and the integrations `nerdr integration` recorded. Reading only; the decisions are in `config` and `cores`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::paths::{Env, Paths};
use crate::service::facts::{AgentProgram, ConfigFacts, Cores, Integration};

/// The config and every agent a launch could start from it.
pub fn config(paths: &Paths) -> ConfigFacts {
    let path = paths.config_file();
    let exists = path.exists();
    let agents = crate::config::load(&path)
        .map(|c| agent_programs(&c, std::env::var_os("PATH").as_deref()))
        .map_err(|e| e.to_string());
    ConfigFacts {
        path,
        exists,
        agents,
    }
}

/// Built-ins first, in their order, then the configured custom agents.
fn agent_programs(c: &crate::config::Config, path_var: Option<&OsStr>) -> Vec<AgentProgram> {
    let builtins = crate::config::builtin_names().iter().map(|n| n.to_string());
    let custom = c
        .agents
        .keys()
        .filter(|n| crate::config::builtin_program(n).is_none())
        .cloned();
    builtins
        .chain(custom)
        .filter_map(|agent| {
            let resolved = c.resolve_agent(&agent).ok()?;
            let program = resolved.command.first()?.clone();
            let found = if program.contains('/') {
                let p = PathBuf::from(&program);
                crate::executable::check(&p).is_ok().then_some(p)
            } else {
                crate::executable::find_on_path(&program, path_var)
            };
            Some(AgentProgram {
                configured: c.agents.contains_key(&agent),
                agent,
                program,
                found,
            })
        })
        .collect()
}

/// Who claims to be the core: `core.pid` (when its process still lives),
/// the unit's main pid, the answering core's pid, and every `nerdr core`
/// of this user for this state dir.
pub fn cores(paths: &Paths, answering: Option<u32>) -> Cores {
    let recorded = crate::peer::read_recorded(&paths.state_dir.join("core.pid"))
        .filter(|r| crate::platform::proc_start_time(r.pid).ok() == Some(r.start_time))
        .map(|r| r.pid);
    let unit_main = crate::service::platform::main_pid();
    let running = running_cores(&paths.state_dir);
    let mut replaced: Vec<u32> = [recorded, unit_main, answering]
        .into_iter()
        .flatten()
        .chain(running.iter().copied())
        .filter(|pid| program_replaced(*pid))
        .collect();
    replaced.sort_unstable();
    replaced.dedup();
    Cores {
        recorded,
        unit_main,
        answering,
        running,
        replaced,
    }
}

/// Whether `pid`'s program file was replaced or removed since it started:
/// the kernel marks the link of an unlinked executable, and dpkg and
/// `cargo install` both rename a new file over the old.
fn program_replaced(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .is_ok_and(|exe| exe.to_string_lossy().ends_with(" (deleted)"))
}

/// What the install records say is installed, and whether it still is.
pub fn integrations(paths: &Paths) -> Vec<Integration> {
    crate::integration::recorded(&paths.state_dir)
        .into_iter()
        .map(|r| Integration {
            agent: r.agent.to_owned(),
            file: r.file,
            hooks: r.hooks,
        })
        .collect()
}

fn running_cores(state_dir: &Path) -> Vec<u32> {
    let me = nix::unistd::getuid().as_raw();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = dir
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let proc = PathBuf::from(format!("/proc/{pid}"));
            std::fs::metadata(&proc).is_ok_and(|m| m.uid() == me)
                && same_pid_namespace(&proc)
                && std::fs::read(proc.join("cmdline")).is_ok_and(|c| is_core_cmdline(&c))
                && std::fs::read(proc.join("environ"))
                    .ok()
                    .and_then(|e| Paths::resolve(&env_of(&e)).ok())
                    .is_some_and(|p| p.state_dir == state_dir)
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// Whether the process at `proc` (`/proc/PID`) is in doctor's own PID
/// namespace. A core is never in another: a process there (a sandboxed
/// agent's, under bubblewrap) may call itself `nerdr core` with any
/// environment, and must not pass for a second core. A namespace that
/// cannot be read counts as the same (the process is still listed).
fn same_pid_namespace(proc: &Path) -> bool {
    match (
        std::fs::read_link("/proc/self/ns/pid"),
        std::fs::read_link(proc.join("ns/pid")),
    ) {
        (Ok(own), Ok(its)) => own == its,
        _ => true,
    }
}

/// `nerdr core ...`: the program is called nerdr and its command is `core`.
fn is_core_cmdline(cmdline: &[u8]) -> bool {
    let mut args = cmdline.split(|b| *b == 0).filter(|a| !a.is_empty());
    let program = args.next().map(|a| Path::new(OsStr::from_bytes(a)));
    program.and_then(Path::file_name) == Some(OsStr::new("nerdr"))
        && args.find(|a| !a.starts_with(b"-")) == Some(b"core".as_slice())
}

/// The path variables of a process's `environ`, as `Env::from_process`
/// reads them from this one.
fn env_of(environ: &[u8]) -> Env {
    let mut env = Env::default();
    for entry in environ.split(|b| *b == 0) {
        let Some(eq) = entry.iter().position(|b| *b == b'=') else {
            continue;
        };
        let value = PathBuf::from(OsStr::from_bytes(&entry[eq + 1..]));
        if !value.is_absolute() {
            continue;
        }
        let slot = match &entry[..eq] {
            b"HOME" => &mut env.home,
            b"XDG_CONFIG_HOME" => &mut env.xdg_config_home,
            b"XDG_STATE_HOME" => &mut env.xdg_state_home,
            b"XDG_DATA_HOME" => &mut env.xdg_data_home,
            b"XDG_RUNTIME_DIR" => &mut env.xdg_runtime_dir,
            b"NERDR_DATA_DIR" => &mut env.nerdr_data_dir,
            _ => continue,
        };
        *slot = Some(value);
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_cmdlines() {
        for (cmdline, want) in [
            (&b"/usr/bin/nerdr\0core\0"[..], true),
            (b"nerdr\0core\0", true),
            (b"nerdr\0--verbose\0core\0", true),
            (b"nerdr\0tabs\0", false),
            (b"/usr/bin/nerdr-core\0core\0", false),
            (b"bash\0nerdr\0core\0", false),
            (b"nerdr\0holder\0core\0", false),
            (b"", false),
        ] {
            assert_eq!(is_core_cmdline(cmdline), want, "{cmdline:?}");
        }
    }

    #[test]
    fn environ_gives_the_state_dir() {
        let env = env_of(b"HOME=/home/ann\0XDG_STATE_HOME=/s\0XDG_CONFIG_HOME=rel\0PATH=/bin\0");
        let p = Paths::resolve(&env).unwrap();
        assert_eq!(p.state_dir, Path::new("/s/nerdr"));
        assert_eq!(p.config_dir, Path::new("/home/ann/.config/nerdr"));
    }

    #[test]
    fn agents_found_on_path_or_as_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("claude");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let text = format!(
            "[agents.mine]\ncommand = [\"{}\"]\n[agents.gone]\ncommand = [\"no-such-agent-cli\"]\n",
            exe.display()
        );
        let c = crate::config::parse(&text, Path::new("/c.toml")).unwrap();
        let all = agent_programs(&c, Some(dir.path().as_os_str()));
        let get = |n: &str| all.iter().find(|a| a.agent == n).unwrap();
        assert_eq!(get("claude").found.as_deref(), Some(exe.as_path()));
        assert!(!get("claude").configured);
        assert_eq!(get("codex").found, None);
        assert_eq!(get("mine").found.as_deref(), Some(exe.as_path()));
        assert!(get("mine").configured);
        assert_eq!(get("gone").program, "no-such-agent-cli");
        assert_eq!(get("gone").found, None);
    }
}
