//! Which host `--host NAME` means: a `[hosts.NAME]` section of the config
//! (its ssh destination, default folder and remote nerdr), else NAME itself
//! as ssh's destination (an alias from `~/.ssh/config`, `user@host`), for
//! ssh's own config to resolve. Pure.
//!
//! `--host` is refused inside a nerdr tab (`NERDR_TAB` set): a tab's
//! program has the powers of its tab on this host's core, never the
//! user's, and a core on another host would take a bridge as the user.
//! nerdr does not lend a tab that way round its privilege model (what a
//! program that can run ssh as you can do by itself is SSH's business:
//! SECURITY.md, "nerdr over SSH").

use std::collections::BTreeMap;

use crate::config::{destination_problem, HostConfig};

/// A host commands go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// NAME as `--host` gave it, for messages.
    pub name: String,
    /// ssh's destination: `[hosts.NAME] ssh`, else NAME.
    pub destination: String,
    /// `[hosts.NAME] folder`: the remote folder a command acts on without
    /// `--folder`.
    pub folder: Option<String>,
    /// `[hosts.NAME] nerdr`: the program ssh runs there (`nerdr`).
    pub nerdr: String,
    /// Whether a `[hosts.NAME]` section says all this.
    pub configured: bool,
}

/// The remote program when `[hosts.NAME]` names none: `nerdr` on the
/// PATH a command run by ssh gets there.
pub const DEFAULT_NERDR: &str = "nerdr";

/// The host `--host name` means, or why it cannot be used.
pub fn choose(
    name: &str,
    hosts: &BTreeMap<String, HostConfig>,
    in_tab: bool,
) -> Result<Target, String> {
    if in_tab {
        return Err(format!(
            "--host {name}: not from inside a nerdr tab: a tab's program has its tab's powers \
             on this host's core, and nerdr does not lend it yours on another host's; run it \
             from your own shell"
        ));
    }
    if let Some(host) = hosts.get(name) {
        return Ok(Target {
            name: name.to_owned(),
            destination: host.ssh.clone().unwrap_or_else(|| name.to_owned()),
            folder: host.folder.clone(),
            nerdr: host
                .nerdr
                .clone()
                .unwrap_or_else(|| DEFAULT_NERDR.to_owned()),
            configured: true,
        });
    }
    if let Some(problem) = destination_problem(name) {
        return Err(format!(
            "--host {name:?} {problem}; give a [hosts] name from your config or an ssh \
             destination (an alias from ~/.ssh/config, host or user@host; ports and options \
             belong in ~/.ssh/config)"
        ));
    }
    Ok(Target {
        name: name.to_owned(),
        destination: name.to_owned(),
        folder: None,
        nerdr: DEFAULT_NERDR.to_owned(),
        configured: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> BTreeMap<String, HostConfig> {
        BTreeMap::from([
            (
                "devbox".to_owned(),
                HostConfig {
                    ssh: Some("me@dev.example.com".into()),
                    folder: Some("~/src/shop".into()),
                    nerdr: Some("~/.local/bin/nerdr".into()),
                },
            ),
            ("bare".to_owned(), HostConfig::default()),
        ])
    }

    #[test]
    fn a_host_is_its_config_section_else_an_ssh_destination() {
        #[rustfmt::skip]
        type Want<'a> = Result<(&'a str, Option<&'a str>, &'a str, bool), &'a str>;
        let rows: &[(&str, bool, Want)] = &[
            (
                "devbox",
                false,
                Ok((
                    "me@dev.example.com",
                    Some("~/src/shop"),
                    "~/.local/bin/nerdr",
                    true,
                )),
            ),
            // A section without `ssh` reaches its own name.
            ("bare", false, Ok(("bare", None, "nerdr", true))),
            // Not configured: ssh's own config resolves it.
            ("buildhost", false, Ok(("buildhost", None, "nerdr", false))),
            (
                "me@10.0.0.7",
                false,
                Ok(("me@10.0.0.7", None, "nerdr", false)),
            ),
            // What ssh would take for an option, or no name at all.
            (
                "-oProxyCommand=sh",
                false,
                Err("would be read by ssh as an option"),
            ),
            ("", false, Err("is empty")),
            (
                "two words",
                false,
                Err("holds ' ': a destination is a host"),
            ),
            // What a shell would read through a ProxyCommand's %h.
            ("h;id", false, Err("holds ';'")),
            ("$(id)", false, Err("holds '$'")),
            ("h`id`", false, Err("holds '`'")),
            ("a\nb", false, Err("holds '\\n'")),
            ("ssh://me@h:22", false, Err("holds '/'")),
            // What hosts, addresses and users are made of.
            ("[::1]", false, Ok(("[::1]", None, "nerdr", false))),
            (
                "me@fe80::1%eth0",
                false,
                Ok(("me@fe80::1%eth0", None, "nerdr", false)),
            ),
            (
                "my_box-2.example.com",
                false,
                Ok(("my_box-2.example.com", None, "nerdr", false)),
            ),
            // Never from inside a tab, configured or not.
            ("devbox", true, Err("not from inside a nerdr tab")),
            ("buildhost", true, Err("not from inside a nerdr tab")),
        ];
        for (name, in_tab, want) in rows {
            let got = choose(name, &hosts(), *in_tab);
            match (got, want) {
                (Ok(t), Ok((dest, folder, nerdr, configured))) => {
                    assert_eq!(
                        (
                            t.destination.as_str(),
                            t.folder.as_deref(),
                            t.nerdr.as_str(),
                            t.configured
                        ),
                        (*dest, *folder, *nerdr, *configured),
                        "{name}"
                    );
                    assert_eq!(t.name, *name);
                }
                (Err(e), Err(part)) => assert!(e.contains(part), "{name}: {e}"),
                (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
            }
        }
    }
}
