//! `[hosts.NAME]`: other machines `nerdr --host NAME` reaches over SSH
//! (`crate::remote`). Each key is checked here, with the file, line and
//! key in its error as for every section.

use super::error::is_agent_name;
use super::source::Source;
use super::tree::Entry;
use super::{ConfigError, Expected};

const HOST_KEYS: &[&str] = &["folder", "nerdr", "ssh"];

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

/// What is wrong with `dest` as an ssh destination, if anything: ssh
/// would read a leading `-` as an option, and a space or control
/// character is in no host name.
pub fn destination_problem(dest: &str) -> Option<&'static str> {
    if dest.is_empty() {
        return Some("is empty");
    }
    if dest.starts_with('-') {
        return Some("starts with `-`, so it would be read by ssh as an option");
    }
    if dest.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("holds a space or a control character");
    }
    None
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
                        problem.into(),
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
                if program.contains('\n') {
                    return Err(src.invalid(
                        field,
                        &key,
                        "holds a line break".into(),
                        "write the path of nerdr on that host, e.g. nerdr = \"~/.local/bin/nerdr\"",
                    ));
                }
                host.nerdr = Some(program);
            }
            _ => return Err(src.unknown(field, format!("[{section}]"), HOST_KEYS)),
        }
    }
    Ok(host)
}
