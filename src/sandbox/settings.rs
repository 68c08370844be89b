//! The sandbox settings: the `sandbox` block of a `.claude/settings.json`
//! (the common schema), read from several files and merged. Pure: text in,
//! a [`Layer`] or a located error out; layers in, the [`Effective`]
//! settings and warnings out. Which files exist and what they hold is the
//! caller's business (`sources.rs`, which decides each file's trust).
//!
//! Trust: the user's own files and `--settings` may loosen the sandbox; a
//! project's files (`<worktree>/.claude/settings*.json`) lie in the folder
//! the agent writes, so they may only tighten it, and a loosening key there
//! is ignored with a warning.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use jsonc_parser::ast::{Object, Value as Node};
use jsonc_parser::common::Ranged;

use crate::integration::jsonc;

/// Where a layer came from, which decides what it may change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `~/.claude/settings.json`, `$XDG_CONFIG_HOME/nerdr/sandbox.json`.
    User(PathBuf),
    /// `nerdr sandbox --settings FILE`.
    Flag(PathBuf),
    /// `<worktree>/.claude/settings.json`, `settings.local.json`.
    Project(PathBuf),
    /// A user file or `--settings` that the sandboxed program could have
    /// changed (a symlink, a hard link, a file in a folder some sandbox
    /// writes): it may only tighten, and `why` says what makes it so.
    TightenOnly { path: PathBuf, why: String },
}

impl Source {
    pub fn path(&self) -> &Path {
        match self {
            Source::User(p) | Source::Flag(p) | Source::Project(p) => p,
            Source::TightenOnly { path, .. } => path,
        }
    }
    fn may_loosen(&self) -> bool {
        match self {
            Source::User(_) | Source::Flag(_) => true,
            Source::Project(_) | Source::TightenOnly { .. } => false,
        }
    }
    /// The warning for a loosening key this source may not set.
    fn refused(&self) -> String {
        match self {
            Source::TightenOnly { why, .. } => format!(
                "ignored: this file can only tighten the sandbox: {why}"
            ),
            _ => "ignored: a project's settings can only tighten the sandbox (set it in ~/.claude/settings.json, nerdr's sandbox.json or --settings)".to_string(),
        }
    }
}

/// One file's `sandbox` block as written; `None`/empty = not set there.
/// `lines` maps each key path that was set (`network.allowedDomains`) to
/// its line, for warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layer {
    pub enabled: Option<bool>,
    pub fail_if_unavailable: Option<bool>,
    pub allow_unsandboxed_commands: Option<bool>,
    pub allowed_domains: Option<Vec<String>>,
    pub denied_domains: Option<Vec<String>>,
    pub allow_local_binding: Option<bool>,
    pub allow_local_ports: Option<Vec<u16>>,
    pub allow_unix_sockets: Option<Vec<String>>,
    pub allow_write: Option<Vec<String>>,
    pub deny_write: Option<Vec<String>>,
    pub allow_read: Option<Vec<String>>,
    pub deny_read: Option<Vec<String>>,
    pub lines: BTreeMap<String, usize>,
    /// Keys of the schema that nerdr accepts but does not apply (key, line).
    pub not_applied: Vec<(String, usize)>,
    /// Keys outside the schema (key, line); an error in nerdr's own file.
    pub unknown: Vec<(String, usize)>,
}

/// The settings `nerdr sandbox` applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Effective {
    pub enabled: bool,
    pub fail_if_unavailable: bool,
    pub network: NetworkSettings,
    pub filesystem: FilesystemSettings,
}

/// What the filtering proxy decides with (`src/proxy/` reads these).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkSettings {
    pub allowed_domains: Vec<String>,
    pub denied_domains: Vec<String>,
    pub allow_local_binding: bool,
    pub allow_local_ports: Vec<u16>,
    pub allow_unix_sockets: Vec<String>,
}

/// Paths as written (`~/` not yet expanded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FilesystemSettings {
    pub allow_write: Vec<String>,
    pub deny_write: Vec<String>,
    pub allow_read: Vec<String>,
    pub deny_read: Vec<String>,
}

impl Default for Effective {
    /// Strict: what applies when no file says anything.
    fn default() -> Self {
        Effective {
            enabled: true,
            fail_if_unavailable: true,
            network: NetworkSettings {
                allow_local_binding: true,
                ..Default::default()
            },
            filesystem: FilesystemSettings::default(),
        }
    }
}

impl Effective {
    /// A stable digest of the settings, for the audit trail.
    pub fn hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let json = serde_json::to_vec(self).expect("settings serialize");
        let digest = Sha256::digest(&json);
        digest.iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// A warning about one key of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub file: PathBuf,
    pub line: usize,
    pub key: String,
    pub what: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: sandbox.{}: {}",
            self.file.display(),
            self.line,
            self.key,
            self.what
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {what}", file.display())]
pub struct SettingsError {
    pub file: PathBuf,
    pub line: usize,
    pub what: String,
}

/// Keys of the common schema that nerdr accepts without applying: they
/// steer an agent's own sandbox, or a platform nerdr's does not run on.
const NOT_APPLIED: &[&str] = &[
    "autoAllowBashIfSandboxed",
    "excludedCommands",
    "allowUnsandboxedCommands",
    "ignoreViolations",
    "ripgrep",
    "credentials",
    "enableWeakerNetworkIsolation",
    "enableWeakerNestedSandbox",
    "bwrapPath",
    "socatPath",
    "enabledPlatforms",
    "allowAppleEvents",
    "allowNestedUserNamespaces",
    "network.allowManagedDomainsOnly",
    "network.allowAllUnixSockets",
    "network.httpProxyPort",
    "network.socksProxyPort",
];

/// Parse a settings file's text: a JSON object whose `sandbox` member is the
/// block (other top-level members belong to the agent and are skipped).
/// `strict` (nerdr's own file) makes unknown keys an error.
pub fn parse(file: &Path, text: &str, strict: bool) -> Result<Layer, SettingsError> {
    let err = |at: usize, what: String| SettingsError {
        file: file.to_path_buf(),
        line: line_of(text, at),
        what,
    };
    let root = match jsonc::parse_ast(text) {
        Ok(Some(root)) => root,
        Ok(None) => return Ok(Layer::default()),
        Err(e) => {
            return Err(SettingsError {
                file: file.to_path_buf(),
                line: e.line,
                what: format!("{e}; fix the JSON"),
            })
        }
    };
    let Some(top) = root.as_object() else {
        return Err(err(
            root.start(),
            format!("expected a JSON object, found {}", jsonc::describe(&root)),
        ));
    };
    let mut layer = Layer::default();
    for m in &top.properties {
        if m.name.as_str() != "sandbox" && strict {
            return Err(err(
                m.start(),
                format!(
                    "unknown key `{}`: this file holds only a `sandbox` block",
                    m.name.as_str()
                ),
            ));
        }
    }
    // The last one if it is repeated, as `JSON.parse` does.
    let Some(block) = top
        .properties
        .iter()
        .rev()
        .find(|m| m.name.as_str() == "sandbox")
    else {
        return Ok(layer);
    };
    let block_obj = object(&block.value, "sandbox", &err)?;
    read_block(text, block_obj, "", &mut layer, &err)?;
    if strict {
        if let Some((key, line)) = layer.unknown.first() {
            return Err(SettingsError {
                file: file.to_path_buf(),
                line: *line,
                what: format!(
                    "unknown key `sandbox.{key}`; valid keys are those of the `sandbox` block of a .claude/settings.json (enabled, failIfUnavailable, network.allowedDomains, network.deniedDomains, filesystem.allowWrite, ...)"
                ),
            });
        }
    }
    Ok(layer)
}

type ErrFn<'a> = &'a dyn Fn(usize, String) -> SettingsError;

fn read_block(
    text: &str,
    obj: &Object,
    prefix: &str,
    layer: &mut Layer,
    err: ErrFn,
) -> Result<(), SettingsError> {
    for m in &obj.properties {
        let key = format!("{prefix}{}", m.name.as_str());
        let line = line_of(text, m.start());
        let v = &m.value;
        match key.as_str() {
            "network" | "filesystem" => {
                let inner = object(v, &key, err)?;
                read_block(text, inner, &format!("{key}."), layer, err)?;
                continue;
            }
            "enabled" => layer.enabled = Some(boolean(v, &key, err)?),
            "failIfUnavailable" => layer.fail_if_unavailable = Some(boolean(v, &key, err)?),
            "network.allowedDomains" => layer.allowed_domains = Some(strings(text, v, &key, err)?),
            "network.deniedDomains" => layer.denied_domains = Some(strings(text, v, &key, err)?),
            "network.allowLocalBinding" => layer.allow_local_binding = Some(boolean(v, &key, err)?),
            "network.allowLocalPorts" => layer.allow_local_ports = Some(ports(text, v, &key, err)?),
            "network.allowUnixSockets" => {
                layer.allow_unix_sockets = Some(strings(text, v, &key, err)?)
            }
            "filesystem.allowWrite" => layer.allow_write = Some(strings(text, v, &key, err)?),
            "filesystem.denyWrite" => layer.deny_write = Some(strings(text, v, &key, err)?),
            "filesystem.allowRead" => layer.allow_read = Some(strings(text, v, &key, err)?),
            "filesystem.denyRead" => layer.deny_read = Some(strings(text, v, &key, err)?),
            k if NOT_APPLIED.contains(&k) => {
                if k == "allowUnsandboxedCommands" {
                    layer.allow_unsandboxed_commands = Some(boolean(v, &key, err)?);
                }
                layer.not_applied.push((key.clone(), line));
            }
            _ => layer.unknown.push((key.clone(), line)),
        }
        layer.lines.insert(key, line);
    }
    Ok(())
}

fn object<'n, 'a>(v: &'n Node<'a>, key: &str, err: ErrFn) -> Result<&'n Object<'a>, SettingsError> {
    v.as_object().ok_or_else(|| {
        err(
            v.start(),
            format!("`{key}` must be an object, found {}", jsonc::describe(v)),
        )
    })
}

fn boolean(v: &Node, key: &str, err: ErrFn) -> Result<bool, SettingsError> {
    match v {
        Node::BooleanLit(b) => Ok(b.value),
        _ => Err(err(
            v.start(),
            format!(
                "`sandbox.{key}` must be true or false, found {}",
                jsonc::describe(v)
            ),
        )),
    }
}

fn strings(text: &str, v: &Node, key: &str, err: ErrFn) -> Result<Vec<String>, SettingsError> {
    array_of(text, v, key, err, ("strings", "a string"), |item, _| {
        jsonc::describe(item).to_string()
    })
}

fn ports(text: &str, v: &Node, key: &str, err: ErrFn) -> Result<Vec<u16>, SettingsError> {
    array_of(
        text,
        v,
        key,
        err,
        ("port numbers", "a port number (1-65535)"),
        |item, text| format!("`{}`", item.text(text)),
    )
}

/// An array whose items each parse as `T`; errors name the key, the index
/// and what was found (`what`: the items, one item).
fn array_of<T: serde::de::DeserializeOwned>(
    text: &str,
    v: &Node,
    key: &str,
    err: ErrFn,
    what: (&str, &str),
    found: fn(&Node, &str) -> String,
) -> Result<Vec<T>, SettingsError> {
    let arr = v.as_array().ok_or_else(|| {
        err(
            v.start(),
            format!(
                "`sandbox.{key}` must be an array of {}, found {}",
                what.0,
                jsonc::describe(v)
            ),
        )
    })?;
    arr.elements
        .iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_str::<T>(item.text(text)).map_err(|_| {
                err(
                    item.start(),
                    format!(
                        "`sandbox.{key}[{i}]` must be {}, found {}",
                        what.1,
                        found(item, text)
                    ),
                )
            })
        })
        .collect()
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// Merge layers in order (user files, `--settings`, then the project's).
/// Later trusted layers override scalars; lists add up. A project layer
/// applies only what tightens and gets a warning for each key it may not
/// set. Every not-applied or unknown key gets one warning.
pub fn merge(layers: &[(Source, Layer)]) -> (Effective, Vec<Warning>) {
    let mut eff = Effective::default();
    let mut warnings = Vec::new();
    for (source, layer) in layers {
        let loosen_ok = source.may_loosen();
        let warn = |warnings: &mut Vec<Warning>, key: &str, what: String| {
            warnings.push(Warning {
                file: source.path().to_path_buf(),
                line: layer.lines.get(key).copied().unwrap_or(1),
                key: key.to_string(),
                what,
            })
        };
        let refused = source.refused();
        let refused = refused.as_str();

        // Booleans whose `strict` value tightens.
        let mut boolean = |key: &str, value: Option<bool>, strict: bool, slot: &mut bool| {
            if let Some(v) = value {
                if v == strict || loosen_ok {
                    *slot = v;
                } else {
                    warn(&mut warnings, key, refused.to_string());
                }
            }
        };
        boolean("enabled", layer.enabled, true, &mut eff.enabled);
        boolean(
            "failIfUnavailable",
            layer.fail_if_unavailable,
            true,
            &mut eff.fail_if_unavailable,
        );
        boolean(
            "network.allowLocalBinding",
            layer.allow_local_binding,
            false,
            &mut eff.network.allow_local_binding,
        );

        // Lists that widen what the agent reaches.
        let loosening_lists: [ListSlot; 4] = [
            (
                "network.allowedDomains",
                &layer.allowed_domains,
                &mut eff.network.allowed_domains,
            ),
            (
                "network.allowUnixSockets",
                &layer.allow_unix_sockets,
                &mut eff.network.allow_unix_sockets,
            ),
            (
                "filesystem.allowWrite",
                &layer.allow_write,
                &mut eff.filesystem.allow_write,
            ),
            (
                "filesystem.allowRead",
                &layer.allow_read,
                &mut eff.filesystem.allow_read,
            ),
        ];
        for (key, value, slot) in loosening_lists {
            match value {
                Some(v) if loosen_ok => add_all(slot, v),
                Some(_) => warn(&mut warnings, key, refused.to_string()),
                None => {}
            }
        }
        match &layer.allow_local_ports {
            Some(v) if loosen_ok => {
                for p in v {
                    if !eff.network.allow_local_ports.contains(p) {
                        eff.network.allow_local_ports.push(*p);
                    }
                }
            }
            Some(_) => warn(
                &mut warnings,
                "network.allowLocalPorts",
                refused.to_string(),
            ),
            None => {}
        }

        // Lists that narrow it: anyone may add to them.
        for (value, slot) in [
            (&layer.denied_domains, &mut eff.network.denied_domains),
            (&layer.deny_write, &mut eff.filesystem.deny_write),
            (&layer.deny_read, &mut eff.filesystem.deny_read),
        ] {
            if let Some(v) = value {
                add_all(slot, v);
            }
        }

        for (key, line) in &layer.not_applied {
            let what = if !loosen_ok && key == "allowUnsandboxedCommands" {
                refused.to_string()
            } else {
                "accepted but not applied by `nerdr sandbox` (it steers an agent's own sandbox)"
                    .to_string()
            };
            warnings.push(Warning {
                file: source.path().to_path_buf(),
                line: *line,
                key: key.clone(),
                what,
            });
        }
        for (key, line) in &layer.unknown {
            warnings.push(Warning {
                file: source.path().to_path_buf(),
                line: *line,
                key: key.clone(),
                what: "unknown key, ignored".to_string(),
            });
        }
    }
    (eff, warnings)
}

/// A list key, its value in a layer, and where it merges to.
type ListSlot<'a> = (&'static str, &'a Option<Vec<String>>, &'a mut Vec<String>);

fn add_all(slot: &mut Vec<String>, values: &[String]) {
    for v in values {
        if !slot.contains(v) {
            slot.push(v.clone());
        }
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
