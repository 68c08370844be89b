//! The plain data `nerdr doctor` decides from, and what installing finds on
//! disk (`FileState`, `SocketProbe`). The platform code (`systemd/`,
//! `launchd.rs`) and `install` fill it; nothing here touches the system.

use std::path::PathBuf;

/// How an installed file compares with what would be written now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileState {
    Missing,
    Current,
    Different,
}

impl FileState {
    pub fn of(rendered: &str, on_disk: Option<&str>) -> FileState {
        match on_disk {
            None => FileState::Missing,
            Some(d) if d == rendered => FileState::Current,
            Some(_) => FileState::Different,
        }
    }
}

/// What is at a socket path, found by connecting to it.
///
/// Connecting to an activated socket starts the core if it is not running:
/// that is what any client does, and it proves the whole path works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SocketProbe {
    Listening,
    Missing,
    /// A socket file nobody listens on (left after a stop, or a dead core).
    Stale,
    NotASocket,
    Error(String),
    /// Not connected to, for this reason: a connection would start a core
    /// that is set up for other paths than this user's.
    NotProbed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    Systemd,
    Launchd,
}

/// Everything the checks look at, gathered once.
#[derive(Debug, Clone)]
pub struct Facts {
    pub platform: Platform,
    /// `Ok(what answered)`, or `Err(why no service manager answered)`.
    pub manager: Result<String, String>,
    pub units: Installed,
    /// nerdr's units whose file changed since the manager last read it
    /// (systemd's `NeedDaemonReload`): a package upgrade or an edited
    /// drop-in. Restarting them runs the old text until `daemon-reload`.
    pub reload_pending: Vec<&'static str>,
    /// The core's unit state; `None` when no manager answered.
    pub core: Option<CoreState>,
    pub hook: SocketFacts,
    pub client: SocketFacts,
    pub user: String,
    /// Lingering (`None` where it does not apply: launchd).
    pub linger: Option<bool>,
    /// Whether `nerdr sandbox` can build its sandbox (`None` where it does
    /// not apply).
    pub bwrap: Option<crate::sandbox::availability::Facts>,
    /// Whether journald's socket exists (`None` where it does not apply).
    pub journald: Option<bool>,
    /// What the core says about how it keeps programs; `None` when it was
    /// not asked because the client socket does not listen (the platform
    /// code leaves it `None`; `doctor::gather` asks after the probes).
    pub programs: Option<Programs>,
    /// config.toml and the agents it names; `None` where the platform code
    /// built the facts (`doctor::gather` reads the config after it).
    pub config: Option<ConfigFacts>,
    /// The `nerdr core` processes and who says which one serves; `None`
    /// where it was not looked at (the platform code leaves it `None`).
    pub cores: Option<Cores>,
    /// The agents' settings files `nerdr integration install` recorded, and
    /// whether nerdr's hooks are still in each (`None`: not looked at).
    pub integrations: Option<Vec<Integration>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Integration {
    pub agent: String,
    pub file: PathBuf,
    /// `Ok(false)`: the hooks (or the whole file) are gone.
    pub hooks: Result<bool, String>,
}

/// config.toml as a launch would read it.
#[derive(Debug, Clone)]
pub struct ConfigFacts {
    pub path: PathBuf,
    /// Whether the file exists (a missing file is the default config).
    pub exists: bool,
    /// Every agent a launch could start, or the error a launch would give
    /// (`FILE:LINE:COL: ...`).
    pub agents: Result<Vec<AgentProgram>, String>,
}

/// One agent, built-in or configured, and where its program is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentProgram {
    pub agent: String,
    /// The word a launch execs (the command's first word).
    pub program: String,
    /// Whether config.toml has an `[agents.NAME]` section for it.
    pub configured: bool,
    /// Where PATH finds `program` (or `program` itself when it is a path).
    pub found: Option<PathBuf>,
}

/// Which processes claim to be the core.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cores {
    /// The pid in the state dir's `core.pid`, if it names a live process.
    pub recorded: Option<u32>,
    /// The service unit's MainPID (`None` where no unit runs one).
    pub unit_main: Option<u32>,
    /// The pid the core at the client socket gave in its handshake.
    pub answering: Option<u32>,
    /// Every live `nerdr core` of this user for this state dir.
    pub running: Vec<u32>,
    /// Those of the pids above whose program file was replaced or removed
    /// since they started (`/proc/PID/exe` ends in ` (deleted)`): an
    /// upgrade the running core does not run yet.
    pub replaced: Vec<u32>,
}

/// The core's answer to "how do you keep programs", and where to look when
/// the answer is not the one wanted.
#[derive(Debug, Clone)]
pub struct Programs {
    /// [`CoreStatus::mode`](crate::protocol::api::CoreStatus::mode), or why
    /// the core could not be asked.
    pub mode: Result<String, String>,
    pub core_log: PathBuf,
    pub holder_log: PathBuf,
}

/// The installed unit files compared with what this nerdr would write.
#[derive(Debug, Clone)]
pub struct Installed {
    pub dir: PathBuf,
    /// The binary the comparison rendered with: the one the installed
    /// service runs, else this executable.
    pub bin: Option<PathBuf>,
    pub bin_from_installed: bool,
    /// Why `bin` cannot run (missing, not executable), if it cannot.
    pub bin_problem: Option<String>,
    /// Why rendering failed (a path units cannot hold), if it did.
    pub render_error: Option<String>,
    pub files: Vec<(&'static str, FileState)>,
    /// Why the service manager does not read `dir`, if it does not.
    pub unread: Option<String>,
    /// A package's units in /usr/lib/systemd/user, and how this user's
    /// drop-ins for them compare (`None`: no package's units).
    pub package: Option<super::packaged::DropIns>,
}

impl Installed {
    /// None of the user's own unit files is there.
    pub fn none_present(&self) -> bool {
        self.files.iter().all(|(_, s)| *s == FileState::Missing)
    }

    /// Neither the user's own units nor a package's: nothing to start.
    pub fn nothing_in_force(&self) -> bool {
        self.none_present() && self.package.is_none()
    }

    /// Why a connection to nerdr's sockets would start a core set up for
    /// other paths than this user's, if it would: the package's units are
    /// in force and the user's drop-ins are missing or left from other
    /// paths. The client socket sits under XDG_RUNTIME_DIR either way.
    pub fn starts_other_paths(&self) -> Option<String> {
        use super::packaged::DropIns;
        if !self.none_present() {
            return None;
        }
        match self.package.as_ref()? {
            // Missing drop-ins leave XDG's defaults; drop-ins written for
            // other paths name those.
            DropIns::Stale(_) => Some(
                "a connection would start the package's core with other paths than yours \
                 (XDG's defaults, or those of drop-ins written for other paths)"
                    .into(),
            ),
            DropIns::Unneeded(_) => Some(
                "a connection would start the package's core with the paths of your \
                 leftover drop-ins, not yours"
                    .into(),
            ),
            DropIns::NotNeeded | DropIns::Current => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoreState {
    /// `active`, `inactive`, `failed`, `activating`, ... (systemd words;
    /// launchd's `running` is mapped to `active`).
    pub active: String,
    pub status_text: String,
}

#[derive(Debug, Clone)]
pub struct SocketFacts {
    /// The unit (or launchd socket name) that should listen there.
    pub unit: &'static str,
    pub path: PathBuf,
    pub probe: SocketProbe,
}

/// A healthy systemd setup, for the checks' tables to change one fact of.
#[cfg(test)]
pub fn healthy() -> Facts {
    Facts {
        platform: Platform::Systemd,
        manager: Ok("systemd 252".into()),
        reload_pending: Vec::new(),
        units: Installed {
            dir: "/home/ann/.config/systemd/user".into(),
            bin: Some("/usr/bin/nerdr".into()),
            bin_from_installed: true,
            bin_problem: None,
            render_error: None,
            unread: None,
            package: None,
            files: vec![
                ("nerdr-hook.socket", FileState::Current),
                ("nerdr-client.socket", FileState::Current),
                ("nerdr.service", FileState::Current),
            ],
        },
        core: Some(CoreState {
            active: "active".into(),
            status_text: "3 agents, 1 blocked".into(),
        }),
        hook: SocketFacts {
            unit: "nerdr-hook.socket",
            path: "/home/ann/.local/state/nerdr/nerdr.sock".into(),
            probe: SocketProbe::Listening,
        },
        client: SocketFacts {
            unit: "nerdr-client.socket",
            path: "/run/user/1000/nerdr/client.sock".into(),
            probe: SocketProbe::Listening,
        },
        user: "ann".into(),
        linger: Some(true),
        bwrap: Some(crate::sandbox::availability::Facts {
            bwrap: Some("/usr/bin/bwrap".into()),
            version: Some("0.8.0".into()),
            disables_userns: true,
            namespaces: Ok(()),
            apparmor_restricts_userns: None,
            max_user_namespaces: Some(15000),
        }),
        journald: Some(true),
        programs: Some(Programs {
            mode: Ok(crate::protocol::api::ProgramsMode::HolderScopes.to_string()),
            core_log: "/home/ann/.local/state/nerdr/core.log".into(),
            holder_log: "/home/ann/.local/state/nerdr/holder.log".into(),
        }),
        config: Some(ConfigFacts {
            path: "/home/ann/.config/nerdr/config.toml".into(),
            exists: true,
            agents: Ok(vec![
                AgentProgram {
                    agent: "claude".into(),
                    program: "claude".into(),
                    configured: false,
                    found: Some("/usr/bin/claude".into()),
                },
                AgentProgram {
                    agent: "gemini".into(),
                    program: "gemini".into(),
                    configured: false,
                    found: None,
                },
                AgentProgram {
                    agent: "mine".into(),
                    program: "my-agent".into(),
                    configured: true,
                    found: Some("/home/ann/bin/my-agent".into()),
                },
            ]),
        }),
        cores: Some(Cores {
            recorded: Some(4242),
            unit_main: Some(4242),
            answering: Some(4242),
            running: vec![4242],
            replaced: Vec::new(),
        }),
        integrations: Some(vec![Integration {
            agent: "claude".into(),
            file: "/home/ann/.claude/settings.json".into(),
            hooks: Ok(true),
        }]),
    }
}
