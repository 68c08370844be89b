//! `[hosts.NAME]`: other machines `nerdr --host NAME` reaches over SSH
//! (`crate::remote`). Each key is checked here, with the file, line and
//! key in its error as for every section.

use super::error::is_agent_name;
use super::source::Source;
use super::tree::Entry;
use super::{ConfigError, Expected};

const HOST_KEYS: &[&str] = &["folder", "nerdr", "ssh"];

/// The name this machine has among hosts (`nerdr tabs --all-hosts`'s
/// HOST column), so no `[hosts]` section may take it.
pub const LOCAL_HOST: &str = "local";

/// One `[hosts.NAME]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostConfig {
    /// `ssh`: the destination ssh is given (an alias from `~/.ssh/config`,
    /// `user@host`); the section's name when unset.
    pub ssh: Option<String>,
    /// `folder`: the remote folder commands act on without `--folder`
    /// (absolute, or from the remote home: `~/src/shop`).
    pub folder: Option<String>,
    /// `nerdr`: the program ssh runs there (`nerdr` on the PATH ssh's
    /// commands get, when unset).
    pub nerdr: Option<String>,
}

/// What is wrong with `dest` as an ssh destination, if anything.
///
/// Only what a host name, an address or a user name is made of passes:
/// letters, digits and `._@:%[]-` (`[::1]`, `me@10.0.0.7`, `fe80::1%eth0`),
/// not starting with `-`. A leading `-` would be read by ssh as an option
/// (`--` guards that too); the rest is refused because the destination does
/// not stay inside ssh: a `ProxyCommand`, `Match exec` or `LocalCommand` in
/// the user's config gets it through `%h`/`%n` and hands it to a shell,
/// which older OpenSSH releases did without escaping. No character a shell
/// treats specially can get there this way. Ports, users and options
/// belong in `~/.ssh/config` (an `ssh://` URL is refused too: its `/`).
pub fn destination_problem(dest: &str) -> Option<String> {
    if dest.is_empty() {
        return Some("is empty".into());
    }
    if dest.starts_with('-') {
        return Some("starts with `-`, so it would be read by ssh as an option".into());
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "._@:%[]-".contains(c);
    dest.chars().find(|c| !allowed(*c)).map(|c| {
        format!(
            "holds {c:?}: a destination is a host, an address or user@host, made of letters, \
             digits and `._@:%[]-` only (it can reach a shell through your ssh config's \
             ProxyCommand)"
        )
    })
}

/// What is wrong with `program`, the remote nerdr ssh runs, if anything.
///
/// ssh hands its command line to the remote user's login shell, whatever
/// that is (sh, bash, zsh, fish, csh, nushell), and the shells disagree on
/// quoting (a newline inside single quotes is an error in csh, nushell
/// has no `'\''`), `=x` at a word's start is a path lookup in zsh, `%1` a
/// job in csh. Rather than quote for one shell, the program is refused unless it
/// needs no quoting in any of them: letters, digits and `._+-/`, not
/// starting with `-`, with `~/` (the home, in every one of them) only at
/// its start.
pub fn nerdr_program_problem(program: &str) -> Option<String> {
    if program.is_empty() {
        return Some("is empty".into());
    }
    if program.starts_with('-') {
        return Some("starts with `-`".into());
    }
    let rest = program.strip_prefix("~/").unwrap_or(program);
    let plain = |c: char| c.is_ascii_alphanumeric() || "._+-/".contains(c);
    rest.chars().find(|c| !plain(*c)).map(|c| {
        format!(
            "holds {c:?}: the login shell there reads this path, and no quoting works in every \
             shell (sh, fish, csh), so it may hold only letters, digits and `._+-/`, with `~/` \
             only at its start"
        )
    })
}

pub(super) fn host(src: &Source, entry: &Entry) -> Result<HostConfig, ConfigError> {
    let name = entry.key.as_str();
    let section = super::error::dotted(&["hosts", name]);
    if !is_agent_name(name) || name.starts_with('-') {
        return Err(src.invalid(
            entry,
            &section,
            "is not a usable host name: `--host NAME` takes letters, digits, `-` and `_`, \
             not starting with `-`"
                .into(),
            "name it after the machine, e.g. [hosts.devbox], and put the address in ssh = \"...\"",
        ));
    }
    if name == LOCAL_HOST {
        return Err(src.invalid(
            entry,
            &section,
            format!("is taken: `{LOCAL_HOST}` is this machine in `nerdr tabs --all-hosts`"),
            "name it after the machine, e.g. [hosts.devbox], and put the address in ssh = \"...\"",
        ));
    }
    let mut host = HostConfig::default();
    for field in src.table(entry, &section, Expected::Table)? {
        let key = format!("{section}.{}", super::error::dotted(&[&field.key]));
        match field.key.as_str() {
            "ssh" => {
                let dest = src.string(field, &key)?;
                if let Some(problem) = destination_problem(&dest) {
                    return Err(src.invalid(
                        field,
                        &key,
                        problem,
                        "write what you would type after `ssh`: an alias from ~/.ssh/config, \
                         host or user@host (options belong in ~/.ssh/config)",
                    ));
                }
                host.ssh = Some(dest);
            }
            "folder" => {
                let folder = src.nonempty_string(field, &key)?;
                if !(folder.starts_with('/') || folder == "~" || folder.starts_with("~/")) {
                    return Err(src.invalid(
                        field,
                        &key,
                        format!("is {folder:?}, neither absolute nor from the home (`~/`)"),
                        "write the folder on that host from / or ~/, e.g. folder = \"~/src/shop\"",
                    ));
                }
                host.folder = Some(folder);
            }
            "nerdr" => {
                let program = src.nonempty_string(field, &key)?;
                if let Some(problem) = nerdr_program_problem(&program) {
                    return Err(src.invalid(
                        field,
                        &key,
                        problem,
                        "give a plain path of nerdr on that host, e.g. nerdr = \"~/.local/bin/nerdr\" \
                         (a symlink to it if its real path holds other characters)",
                    ));
                }
                host.nerdr = Some(program);
            }
            _ => return Err(src.unknown(field, format!("[{section}]"), HOST_KEYS)),
        }
    }
    Ok(host)
}
