//! Where nerdr keeps its files (docs/ARCHITECTURE.md, "Paths"). Pure: every
//! path is derived from a [`Env`] snapshot, so tests can feed any
//! environment and the rest of the program never reads XDG variables
//! itself.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The environment variables the path rules depend on, captured once.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub home: Option<PathBuf>,
    pub xdg_config_home: Option<PathBuf>,
    pub xdg_state_home: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub xdg_runtime_dir: Option<PathBuf>,
    pub nerdr_data_dir: Option<PathBuf>,
}

impl Env {
    pub fn from_process() -> Self {
        fn var(name: &str) -> Option<PathBuf> {
            // XDG says relative values are invalid and must be ignored.
            std::env::var_os(name)
                .filter(|v: &OsString| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        }
        Env {
            home: var("HOME"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            xdg_state_home: var("XDG_STATE_HOME"),
            xdg_data_home: var("XDG_DATA_HOME"),
            xdg_runtime_dir: var("XDG_RUNTIME_DIR"),
            // In a tab of a worktree install `NERDR_DATA_DIR` is the
            // worktree's reports folder (`crate::file_reports`), and nerdr's
            // own data folder comes in `NERDR_CORE_DATA_DIR`.
            nerdr_data_dir: var(CORE_DATA_DIR).or_else(|| var("NERDR_DATA_DIR")),
        }
    }
}

/// nerdr's own data folder, set by the core beside a `NERDR_DATA_DIR`
/// that names a worktree's reports folder.
pub const CORE_DATA_DIR: &str = "NERDR_CORE_DATA_DIR";

/// Every path nerdr uses, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// `$XDG_CONFIG_HOME` itself (parent of `nerdr/` and `systemd/user/`).
    pub config_home: PathBuf,
    /// `$XDG_CONFIG_HOME/nerdr`
    pub config_dir: PathBuf,
    /// `$XDG_STATE_HOME/nerdr`
    pub state_dir: PathBuf,
    /// `$XDG_DATA_HOME/nerdr` (or `NERDR_DATA_DIR`)
    pub data_dir: PathBuf,
    /// Directory of the client socket and its key (0700).
    pub run_dir: PathBuf,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PathsError {
    #[error("HOME is not set (or not absolute) and {0} is not set either; set HOME to your home directory")]
    NoHome(&'static str),
}

impl Paths {
    pub fn resolve(env: &Env) -> Result<Self, PathsError> {
        let home = |what: &'static str| env.home.clone().ok_or(PathsError::NoHome(what));
        let config_home = match &env.xdg_config_home {
            Some(p) => p.clone(),
            None => home("XDG_CONFIG_HOME")?.join(".config"),
        };
        let state_dir = match &env.xdg_state_home {
            Some(p) => p.join("nerdr"),
            None => home("XDG_STATE_HOME")?.join(".local/state/nerdr"),
        };
        let data_dir = match (&env.nerdr_data_dir, &env.xdg_data_home) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) => p.join("nerdr"),
            (None, None) => home("XDG_DATA_HOME")?.join(".local/share/nerdr"),
        };
        let run_dir = match &env.xdg_runtime_dir {
            Some(p) => p.join("nerdr"),
            None if cfg!(target_os = "macos") => {
                home("XDG_RUNTIME_DIR")?.join("Library/Application Support/nerdr/run")
            }
            None => home("XDG_RUNTIME_DIR")?.join(".cache/nerdr/run"),
        };
        Ok(Paths {
            config_dir: config_home.join("nerdr"),
            config_home,
            state_dir,
            data_dir,
            run_dir,
        })
    }

    pub fn from_process() -> Result<Self, PathsError> {
        Self::resolve(&Env::from_process())
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }
    /// Where a user's screen rules (`NAME.toml`) replace the built-in ones.
    pub fn detect_dir(&self) -> PathBuf {
        self.config_dir.join("detect")
    }
    pub fn hook_socket(&self) -> PathBuf {
        self.state_dir.join("nerdr.sock")
    }
    pub fn client_socket(&self) -> PathBuf {
        self.run_dir.join("client.sock")
    }
    pub fn client_key(&self) -> PathBuf {
        self.run_dir.join("key")
    }
    pub fn core_log(&self) -> PathBuf {
        self.state_dir.join("core.log")
    }
    /// Where `nerdr service install` writes unit files.
    pub fn systemd_user_dir(&self) -> PathBuf {
        self.config_home.join("systemd/user")
    }
    /// Where `nerdr service install` writes the launchd agent (macOS).
    pub fn launch_agents_dir(&self, home: &Path) -> PathBuf {
        home.join("Library/LaunchAgents")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home_only() -> Env {
        Env {
            home: Some("/home/u".into()),
            ..Env::default()
        }
    }

    #[test]
    fn defaults_follow_the_xdg_spec_under_home() {
        let p = Paths::resolve(&home_only()).unwrap();
        assert_eq!(
            p.config_file(),
            Path::new("/home/u/.config/nerdr/config.toml")
        );
        assert_eq!(
            p.hook_socket(),
            Path::new("/home/u/.local/state/nerdr/nerdr.sock")
        );
        assert_eq!(
            p.core_log(),
            Path::new("/home/u/.local/state/nerdr/core.log")
        );
        assert_eq!(p.data_dir, Path::new("/home/u/.local/share/nerdr"));
        assert_eq!(
            p.systemd_user_dir(),
            Path::new("/home/u/.config/systemd/user")
        );
        if cfg!(target_os = "linux") {
            assert_eq!(
                p.client_socket(),
                Path::new("/home/u/.cache/nerdr/run/client.sock")
            );
        }
    }

    #[test]
    fn xdg_variables_override_home() {
        let env = Env {
            home: Some("/home/u".into()),
            xdg_config_home: Some("/c".into()),
            xdg_state_home: Some("/s".into()),
            xdg_data_home: Some("/d".into()),
            xdg_runtime_dir: Some("/run/user/7".into()),
            nerdr_data_dir: None,
        };
        let p = Paths::resolve(&env).unwrap();
        assert_eq!(p.config_file(), Path::new("/c/nerdr/config.toml"));
        assert_eq!(p.hook_socket(), Path::new("/s/nerdr/nerdr.sock"));
        assert_eq!(p.data_dir, Path::new("/d/nerdr"));
        assert_eq!(
            p.client_socket(),
            Path::new("/run/user/7/nerdr/client.sock")
        );
        assert_eq!(p.client_key(), Path::new("/run/user/7/nerdr/key"));
    }

    #[test]
    fn nerdr_data_dir_wins_over_xdg_data_home() {
        let env = Env {
            nerdr_data_dir: Some("/data".into()),
            xdg_data_home: Some("/d".into()),
            ..home_only()
        };
        assert_eq!(Paths::resolve(&env).unwrap().data_dir, Path::new("/data"));
    }

    #[test]
    fn no_home_and_no_xdg_is_a_clear_error() {
        let err = Paths::resolve(&Env::default()).unwrap_err();
        assert!(err.to_string().contains("HOME is not set"), "{err}");
    }
}
