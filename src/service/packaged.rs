//! The units a package ships in `/usr/lib/systemd/user`, for every user at
//! once, and the per-user drop-ins that adapt them. Pure, like `units.rs`.
//!
//! A package cannot know a user's paths, and a systemd 252 user unit has
//! no specifier for the state directory (`%S` is `$XDG_CONFIG_HOME`). So the
//! package's units name XDG's defaults under `%h` (and the runtime
//! directory as `%t`); a user whose XDG_CONFIG_HOME, XDG_STATE_HOME or
//! NERDR_DATA_DIR differ from those gets a drop-in from `nerdr service
//! install` that overrides exactly those settings. Everyone else needs no
//! file of their own: `systemctl --user enable --now nerdr-hook.socket
//! nerdr-client.socket` is the whole setup.

use std::path::{Path, PathBuf};

use crate::paths::Paths;

use super::escape;
use super::units::{self, RenderError, UnitFile, HOOK_SOCKET_UNIT, SERVICE_UNIT};

pub use crate::unit_names::PACKAGE_UNIT_DIR;
/// The binary the package's service runs.
pub const PACKAGE_BIN: &str = "/usr/bin/nerdr";
/// A drop-in's file name in `<unit>.d/`: late in the order, so it overrides
/// the package's values and other drop-ins sorted before it.
pub const DROP_IN_NAME: &str = "50-nerdr-paths.conf";

/// XDG's defaults, as specifiers, and the sockets under them.
const CONFIG_HOME: &str = "%h/.config";
const STATE_HOME: &str = "%h/.local/state";
const DATA_DIR: &str = "%h/.local/share/nerdr";
const HOOK_SOCKET: &str = "%h/.local/state/nerdr/nerdr.sock";
const CLIENT_SOCKET: &str = "%t/nerdr/client.sock";

/// The three units as the package installs them, in `UNIT_NAMES` order.
pub fn render_packaged_units() -> Vec<UnitFile> {
    units::fill_units(
        HOOK_SOCKET,
        CLIENT_SOCKET,
        PACKAGE_BIN,
        CONFIG_HOME,
        STATE_HOME,
        DATA_DIR,
    )
}

/// One drop-in: the unit it adapts and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropIn {
    pub unit: &'static str,
    pub contents: String,
}

/// Where the drop-in for `unit` goes under the user's unit directory.
pub fn drop_in_path(dir: &Path, unit: &str) -> PathBuf {
    dir.join(format!("{unit}.d")).join(DROP_IN_NAME)
}

/// The units a drop-in may be written for.
pub const DROP_IN_UNITS: [&str; 2] = [HOOK_SOCKET_UNIT, SERVICE_UNIT];

/// The drop-ins the package's units need for `paths` (none when they are
/// XDG's defaults under `home`). The client socket needs none: `%t` is the
/// runtime directory the client uses too.
pub fn drop_ins(paths: &Paths, home: &Path) -> Result<Vec<DropIn>, RenderError> {
    let defaults = Defaults::under(home);
    let mut out = Vec::new();
    if paths.state_dir != defaults.state_dir {
        let hook = escape::socket_path(
            "the hook socket path",
            &paths.hook_socket(),
            escape::MAX_SOCKET_PATH,
        )?;
        out.push(DropIn {
            unit: HOOK_SOCKET_UNIT,
            contents: format!(
                "# Written by `nerdr service install`: XDG_STATE_HOME is not {STATE_HOME} here.\n\
                 [Socket]\n\
                 # An empty value drops the package's path before adding this one.\n\
                 ListenStream=\n\
                 ListenStream={hook}\n"
            ),
        });
    }
    if paths.state_dir != defaults.state_dir
        || paths.config_home != defaults.config_home
        || paths.data_dir != defaults.data_dir
    {
        let q = escape::quoted_value;
        let state_home = paths
            .state_dir
            .parent()
            .ok_or_else(|| RenderError::NoStateHome(paths.state_dir.clone()))?;
        out.push(DropIn {
            unit: SERVICE_UNIT,
            contents: format!(
                "# Written by `nerdr service install`: this user's paths are not XDG's\n\
                 # defaults the package's unit names.\n\
                 [Service]\n\
                 Environment=\"XDG_CONFIG_HOME={}\"\n\
                 Environment=\"XDG_STATE_HOME={}\"\n\
                 Environment=\"NERDR_DATA_DIR={}\"\n",
                q("XDG_CONFIG_HOME", &paths.config_home)?,
                q("XDG_STATE_HOME", state_home)?,
                q("the data directory", &paths.data_dir)?,
            ),
        });
    }
    Ok(out)
}

struct Defaults {
    config_home: PathBuf,
    state_dir: PathBuf,
    data_dir: PathBuf,
}

impl Defaults {
    fn under(home: &Path) -> Self {
        Defaults {
            config_home: home.join(".config"),
            state_dir: home.join(".local/state/nerdr"),
            data_dir: home.join(".local/share/nerdr"),
        }
    }
}

/// How this user's drop-ins for the package's units compare with what
/// `nerdr service install` writes (`nerdr doctor` says it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DropIns {
    /// The user's paths are the defaults; there is no drop-in of ours.
    NotNeeded,
    Current,
    /// Needed for these units, but missing or not what install writes.
    Stale(Vec<&'static str>),
    /// Left over: the paths are the defaults now, or could not be rendered.
    Unneeded(Vec<&'static str>),
}

/// How the drop-ins on disk (`on_disk`: per unit, its text) compare with
/// `wanted`.
pub fn compare_drop_ins(wanted: &[DropIn], on_disk: &[(&'static str, Option<String>)]) -> DropIns {
    let mut stale = Vec::new();
    let mut unneeded = Vec::new();
    for (unit, text) in on_disk {
        match (wanted.iter().find(|d| d.unit == *unit), text) {
            (Some(w), Some(t)) if w.contents == *t => {}
            (Some(_), _) => stale.push(*unit),
            (None, Some(_)) => unneeded.push(*unit),
            (None, None) => {}
        }
    }
    if !stale.is_empty() {
        DropIns::Stale(stale)
    } else if !unneeded.is_empty() {
        DropIns::Unneeded(unneeded)
    } else if wanted.is_empty() {
        DropIns::NotNeeded
    } else {
        DropIns::Current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::Env;

    fn paths(env: Env) -> Paths {
        Paths::resolve(&Env {
            home: Some("/home/ann".into()),
            xdg_runtime_dir: Some("/run/user/1000".into()),
            ..env
        })
        .unwrap()
    }

    #[test]
    fn the_packaged_units_name_no_users_path() {
        let units = render_packaged_units();
        let names: Vec<_> = units.iter().map(|u| u.name).collect();
        assert_eq!(names, units::UNIT_NAMES);
        let all: String = units.iter().map(|u| u.contents.as_str()).collect();
        for line in [
            "ListenStream=%h/.local/state/nerdr/nerdr.sock",
            "ListenStream=%t/nerdr/client.sock",
            "ExecStart=/usr/bin/nerdr core",
            "Environment=\"XDG_CONFIG_HOME=%h/.config\"",
            "Environment=\"XDG_STATE_HOME=%h/.local/state\"",
            "Environment=\"NERDR_DATA_DIR=%h/.local/share/nerdr\"",
        ] {
            assert!(all.lines().any(|l| l == line), "{line} in\n{all}");
        }
        assert!(!all.contains("/home/") && !all.contains('@'), "{all}");
    }

    /// The user's own units for default paths say what the package's do
    /// once systemd expands %h and %t: the two forms cannot drift apart.
    #[test]
    fn expanded_the_packaged_units_are_a_default_users_own() {
        let own = units::render_units(Path::new(PACKAGE_BIN), &paths(Env::default())).unwrap();
        for (p, o) in render_packaged_units().iter().zip(&own) {
            // Comments name the specifiers too; only settings expand.
            let expanded: String = p
                .contents
                .split_inclusive('\n')
                .map(|l| match l.starts_with('#') {
                    true => l.to_string(),
                    false => l.replace("%h", "/home/ann").replace("%t", "/run/user/1000"),
                })
                .collect();
            assert_eq!(expanded, o.contents, "{}", p.name);
        }
    }

    #[test]
    fn drop_ins_for_each_kind_of_user() {
        let home = Path::new("/home/ann");
        let cases: [(&str, Env, &[&str]); 5] = [
            ("defaults", Env::default(), &[]),
            (
                "XDG_STATE_HOME elsewhere",
                Env {
                    xdg_state_home: Some("/srv/ann/state".into()),
                    ..Env::default()
                },
                &[HOOK_SOCKET_UNIT, SERVICE_UNIT],
            ),
            (
                "XDG_CONFIG_HOME elsewhere",
                Env {
                    xdg_config_home: Some("/srv/ann/cfg".into()),
                    ..Env::default()
                },
                &[SERVICE_UNIT],
            ),
            (
                "NERDR_DATA_DIR elsewhere",
                Env {
                    nerdr_data_dir: Some("/data/nerdr".into()),
                    ..Env::default()
                },
                &[SERVICE_UNIT],
            ),
            (
                "XDG_STATE_HOME set to the default",
                Env {
                    xdg_state_home: Some("/home/ann/.local/state".into()),
                    ..Env::default()
                },
                &[],
            ),
        ];
        for (what, env, want) in cases {
            let got: Vec<_> = drop_ins(&paths(env), home)
                .unwrap()
                .iter()
                .map(|d| d.unit)
                .collect();
            assert_eq!(got, want, "{what}");
        }
        let d = drop_ins(
            &paths(Env {
                xdg_state_home: Some("/srv/100%/state".into()),
                ..Env::default()
            }),
            home,
        )
        .unwrap();
        assert!(
            d[0].contents
                .contains("\nListenStream=\nListenStream=/srv/100%%/state/nerdr/nerdr.sock\n"),
            "{}",
            d[0].contents
        );
        assert!(
            d[1].contents
                .contains("\nEnvironment=\"XDG_STATE_HOME=/srv/100%%/state\"\n"),
            "{}",
            d[1].contents
        );
    }

    #[test]
    fn drop_ins_compare_every_way() {
        let w = |unit, text: &str| DropIn {
            unit,
            contents: text.into(),
        };
        let s = |t: &str| Some(t.to_string());
        let h = HOOK_SOCKET_UNIT;
        let v = SERVICE_UNIT;
        type Disk = Vec<(&'static str, Option<String>)>;
        let cases: Vec<(&str, Vec<DropIn>, Disk, DropIns)> = vec![
            (
                "none wanted, none there",
                vec![],
                vec![(h, None), (v, None)],
                DropIns::NotNeeded,
            ),
            (
                "wanted and there",
                vec![w(h, "a"), w(v, "b")],
                vec![(h, s("a")), (v, s("b"))],
                DropIns::Current,
            ),
            (
                "wanted, one missing",
                vec![w(h, "a"), w(v, "b")],
                vec![(h, s("a")), (v, None)],
                DropIns::Stale(vec![v]),
            ),
            (
                "wanted, one old",
                vec![w(v, "b")],
                vec![(h, None), (v, s("old"))],
                DropIns::Stale(vec![v]),
            ),
            (
                "left over",
                vec![],
                vec![(h, s("a")), (v, None)],
                DropIns::Unneeded(vec![h]),
            ),
        ];
        for (what, wanted, disk, want) in cases {
            assert_eq!(compare_drop_ins(&wanted, &disk), want, "{what}");
        }
    }
}
