//! Package registries and toolchain downloads a sandboxed agent may reach
//! unless denied, learnt from the machine's own package-manager settings:
//! cargo (`~/.cargo/config.toml` registries and source replacement, plus
//! crates.io and rustup), pip (`pip.conf`, `PIP_INDEX_URL`, plus PyPI), npm
//! (`.npmrc`, `NPM_CONFIG_REGISTRY`, plus the npm registry) and apt
//! (`sources.list`, `sources.list.d`). Each preset is pinned to the port
//! of its URL's scheme. The parsers are pure functions over file text;
//! [`from_machine`] reads the files.

use std::path::{Path, PathBuf};

use super::policy::{Entry, PresetHost};

#[cfg(test)]
mod tests;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Manager {
    Cargo,
    Pip,
    Npm,
    /// One-line-style `sources.list`.
    AptList,
    /// deb822-style `.sources`.
    AptSources,
}

/// One configuration file's text and where it came from.
#[derive(Debug, Clone)]
pub struct ConfigText {
    pub manager: Manager,
    pub path: String,
    pub text: String,
}

/// Hosts every machine with the tool needs, whatever its configuration.
const DEFAULTS: &[(&str, &str)] = &[
    ("cargo default", "index.crates.io:443"),
    ("cargo default", "static.crates.io:443"),
    ("cargo default", "crates.io:443"),
    ("rustup default", "static.rust-lang.org:443"),
    ("pip default", "pypi.org:443"),
    ("pip default", "files.pythonhosted.org:443"),
    ("npm default", "registry.npmjs.org:443"),
];

/// The host and port of a URL (`sparse+https://h/`, `ssh://git@h:22/`);
/// `None` for local schemes (`file:`) and non-URLs.
pub fn url_host(url: &str) -> Option<(String, u16)> {
    let url = url.trim().trim_matches('"');
    let url = ["sparse+", "registry+", "git+", "mirror+"]
        .iter()
        .fold(url, |u, p| u.strip_prefix(p).unwrap_or(u));
    let (scheme, rest) = url.split_once("://")?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "http" => 80,
        "ssh" => 22,
        "git" => 9418,
        _ => return None,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match authority.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (authority, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

/// Registry URLs in a cargo `config.toml`: `[registries.*] index`,
/// `[registry] index`, `[source.*] registry` (source replacement).
pub fn cargo_urls(text: &str) -> Result<Vec<String>, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut out = Vec::new();
    let tables = |key: &str| -> Vec<toml::Table> {
        doc.get(key)
            .and_then(|v| v.as_table())
            .map(|t| t.values().filter_map(|v| v.as_table().cloned()).collect())
            .unwrap_or_default()
    };
    for t in tables("registries") {
        out.extend(t.get("index").and_then(|v| v.as_str()).map(String::from));
    }
    for t in tables("source") {
        out.extend(t.get("registry").and_then(|v| v.as_str()).map(String::from));
    }
    if let Some(i) = doc
        .get("registry")
        .and_then(|r| r.get("index"))
        .and_then(|v| v.as_str())
    {
        out.push(i.to_string());
    }
    Ok(out)
}

/// Index URLs in a `pip.conf` (any section): `index-url`,
/// `extra-index-url`, `find-links`, each possibly continued over indented
/// lines.
pub fn pip_urls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_url_key = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            if in_url_key {
                out.extend(trimmed.split_whitespace().map(String::from));
            }
            continue;
        }
        in_url_key = false;
        if let Some((k, v)) = trimmed
            .split_once(['=', ':'])
            .filter(|_| !trimmed.starts_with('['))
        {
            let k = k.trim().replace('_', "-");
            if matches!(k.as_str(), "index-url" | "extra-index-url" | "find-links") {
                in_url_key = true;
                out.extend(v.split_whitespace().map(String::from));
            }
        }
    }
    out
}

/// Registry URLs in an `.npmrc`: `registry=` and `@scope:registry=`.
pub fn npmrc_urls(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.trim().split_once('='))
        .filter(|(k, _)| {
            let k = k.trim();
            k == "registry" || (k.starts_with('@') && k.ends_with(":registry"))
        })
        .map(|(_, v)| v.trim().to_string())
        .collect()
}

/// Archive URLs in a one-line-style apt `sources.list`.
pub fn apt_list_urls(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        let mut words = line.split_whitespace();
        if !matches!(words.next(), Some("deb" | "deb-src")) {
            continue;
        }
        let mut rest: Vec<&str> = words.collect();
        if rest.first().is_some_and(|w| w.starts_with('[')) {
            let end = rest.iter().position(|w| w.ends_with(']')).unwrap_or(0);
            rest.drain(..=end);
        }
        out.extend(rest.first().map(|u| u.to_string()));
    }
    out
}

/// Archive URLs in a deb822-style `.sources` file (`URIs:` fields).
pub fn apt_sources_urls(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| k.trim().eq_ignore_ascii_case("uris"))
        .flat_map(|(_, v)| v.split_whitespace().map(String::from).collect::<Vec<_>>())
        .collect()
}

/// The presets from configuration texts, environment variables and the
/// user's own entries, plus a warning for each thing that could not be
/// read. Pure: [`from_machine`] gathers the inputs.
pub fn derive(
    configs: &[ConfigText],
    env: &[(String, String)],
    user: &[String],
) -> (Vec<PresetHost>, Vec<String>) {
    let mut found: Vec<(String, String)> = DEFAULTS
        .iter()
        .map(|(source, text)| (text.to_string(), source.to_string()))
        .collect();
    let mut warnings = Vec::new();
    let mut urls: Vec<(String, String)> = Vec::new();
    for c in configs {
        let list = match c.manager {
            Manager::Cargo => cargo_urls(&c.text).unwrap_or_else(|e| {
                warnings.push(format!(
                    "{}: not valid TOML ({e}); its registries are not allowed",
                    c.path
                ));
                Vec::new()
            }),
            Manager::Pip => pip_urls(&c.text),
            Manager::Npm => npmrc_urls(&c.text),
            Manager::AptList => apt_list_urls(&c.text),
            Manager::AptSources => apt_sources_urls(&c.text),
        };
        urls.extend(list.into_iter().map(|u| (u, c.path.clone())));
    }
    for (k, v) in env {
        if matches!(
            k.to_ascii_uppercase().as_str(),
            "PIP_INDEX_URL" | "PIP_EXTRA_INDEX_URL" | "NPM_CONFIG_REGISTRY"
        ) {
            urls.extend(
                v.split_whitespace()
                    .map(|u| (u.to_string(), format!("${k}"))),
            );
        }
    }
    for (url, source) in urls {
        if let Some((host, port)) = url_host(&url) {
            let text = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            found.push((text, source));
        }
    }
    found.extend(user.iter().map(|u| (u.clone(), "user preset".to_string())));

    let mut hosts: Vec<PresetHost> = Vec::new();
    for (text, source) in found {
        match Entry::parse(&text) {
            Ok(entry) if hosts.iter().any(|h| h.entry == entry) => {}
            Ok(entry) => hosts.push(PresetHost { entry, source }),
            Err(e) => warnings.push(format!("{source}: {e}; ignored")),
        }
    }
    (hosts, warnings)
}

/// The configuration files that exist, read (the edge of this module).
pub fn read_machine(
    home: &Path,
    xdg_config: &Path,
    env: &[(String, String)],
) -> (Vec<ConfigText>, Vec<String>) {
    let cargo_home = env
        .iter()
        .find(|(k, _)| k == "CARGO_HOME")
        .map_or_else(|| home.join(".cargo"), |(_, v)| PathBuf::from(v));
    let mut candidates: Vec<(Manager, PathBuf)> = vec![
        (Manager::Cargo, cargo_home.join("config.toml")),
        (Manager::Cargo, cargo_home.join("config")),
        (Manager::Pip, PathBuf::from("/etc/pip.conf")),
        (Manager::Pip, xdg_config.join("pip/pip.conf")),
        (Manager::Pip, home.join(".pip/pip.conf")),
        (Manager::Npm, PathBuf::from("/etc/npmrc")),
        (Manager::Npm, home.join(".npmrc")),
        (Manager::AptList, PathBuf::from("/etc/apt/sources.list")),
    ];
    if let Some((_, f)) = env.iter().find(|(k, _)| k == "PIP_CONFIG_FILE") {
        candidates.push((Manager::Pip, PathBuf::from(f)));
    }
    if let Ok(dir) = std::fs::read_dir("/etc/apt/sources.list.d") {
        let mut names: Vec<PathBuf> = dir.filter_map(|e| e.ok().map(|e| e.path())).collect();
        names.sort();
        for p in names {
            match p.extension().and_then(|e| e.to_str()) {
                Some("list") => candidates.push((Manager::AptList, p)),
                Some("sources") => candidates.push((Manager::AptSources, p)),
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    for (manager, path) in candidates {
        match std::fs::read_to_string(&path) {
            Ok(text) => out.push(ConfigText {
                manager,
                path: path.display().to_string(),
                text,
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => warnings.push(format!(
                "cannot read {}: {e}; its registries are not allowed",
                path.display()
            )),
        }
    }
    (out, warnings)
}

/// Presets for the current user, from HOME, XDG_CONFIG_HOME and the
/// environment; warnings say what could not be read.
pub fn from_machine() -> (Vec<PresetHost>, Vec<String>) {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let (configs, mut warnings) = read_machine(&home, &xdg, &env);
    let (hosts, more) = derive(&configs, &env, &[]);
    warnings.extend(more);
    (hosts, warnings)
}
