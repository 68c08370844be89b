//! The configuration git would use in a folder, every entry with its scope
//! and the file it came from, read with `git config --list --show-origin
//! --show-scope -z` (which follows `include.path` and `includeIf` itself,
//! and runs no program). Parsing is pure; [`gather`] is the one edge.

use std::path::{Path, PathBuf};

use crate::git::GitError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    System,
    Global,
    /// The repository's own config (and files it includes).
    Local,
    /// A worktree's `config.worktree` (and files it includes).
    Worktree,
    /// `git -c`, `GIT_CONFIG_PARAMETERS`.
    Command,
    Unknown,
}

impl Scope {
    fn parse(s: &str) -> Scope {
        match s {
            "system" => Scope::System,
            "global" => Scope::Global,
            "local" => Scope::Local,
            "worktree" => Scope::Worktree,
            "command" => Scope::Command,
            _ => Scope::Unknown,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Scope::System => "system",
            Scope::Global => "global",
            Scope::Local => "repository",
            Scope::Worktree => "worktree",
            Scope::Command => "command-line",
            Scope::Unknown => "unknown-scope",
        }
    }

    /// Repository and worktree config: written by whoever could write the
    /// repository, so never trusted to name a program.
    pub fn of_repository(self) -> bool {
        match self {
            Scope::Local | Scope::Worktree | Scope::Unknown => true,
            Scope::System | Scope::Global | Scope::Command => false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// An absolute path (made absolute and, when it exists, canonical by
    /// [`gather`]).
    File(PathBuf),
    CommandLine,
    /// `blob:`, `standard input:` and anything newer git may print.
    Other(String),
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::File(p) => write!(f, "{}", p.display()),
            Origin::CommandLine => write!(f, "the command line"),
            Origin::Other(s) => write!(f, "{s}"),
        }
    }
}

/// One `key=value` as git would see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub scope: Scope,
    pub origin: Origin,
    /// As git prints it: section and name lower-case, subsection as written.
    pub key: String,
    /// None for a bare `key` (boolean true).
    pub value: Option<String>,
}

impl Entry {
    /// `(section, subsection, name)`: `filter.lfs.clean` →
    /// `("filter", Some("lfs"), "clean")`.
    pub fn parts(&self) -> (&str, Option<&str>, &str) {
        let (section, rest) = self.key.split_once('.').unwrap_or((&self.key, ""));
        match rest.rsplit_once('.') {
            Some((sub, name)) => (section, Some(sub), name),
            None => (section, None, rest),
        }
    }

    pub fn value_str(&self) -> &str {
        self.value.as_deref().unwrap_or("true")
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("cannot read `git config --list -z` output: {0}")]
pub struct ParseError(String);

/// Parse `git config --list --show-origin --show-scope -z`: records of
/// `scope NUL origin NUL key [LF value] NUL`. File origins relative to
/// `cwd` (git prints `.git/config` so) are made absolute.
pub fn parse(out: &[u8], cwd: &Path) -> Result<Vec<Entry>, ParseError> {
    let text = String::from_utf8_lossy(out);
    let mut fields = text.split('\0');
    let mut entries = Vec::new();
    // The output ends with a NUL: the last split is empty.
    while let Some(scope) = fields.next().filter(|s| !s.is_empty()) {
        let origin = fields
            .next()
            .ok_or_else(|| ParseError(format!("scope `{scope}` has no origin")))?;
        let kv = fields
            .next()
            .filter(|kv| !kv.is_empty())
            .ok_or_else(|| ParseError(format!("origin `{origin}` has no key")))?;
        let (key, value) = match kv.split_once('\n') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (kv, None),
        };
        let origin = match origin.split_once(':') {
            Some(("file", p)) => Origin::File(cwd.join(p)),
            Some(("command line", "")) => Origin::CommandLine,
            _ => Origin::Other(origin.to_string()),
        };
        entries.push(Entry {
            scope: Scope::parse(scope),
            origin,
            key: key.to_string(),
            value,
        });
    }
    Ok(entries)
}

/// Every entry git would use in `dir`, file origins canonical where the
/// file exists (so a symlink cannot hide where a file really lives).
pub fn gather(dir: &Path) -> Result<Vec<Entry>, GitError> {
    let out = crate::git::query_bytes(
        dir,
        &["config", "--list", "--show-origin", "--show-scope", "-z"],
    )?;
    let cwd = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mut entries = parse(&out, &cwd).map_err(|e| GitError::Failed {
        args: "config --list".into(),
        dir: dir.to_path_buf(),
        stderr: e.to_string(),
    })?;
    for e in &mut entries {
        if let Origin::File(p) = &mut e.origin {
            if let Ok(real) = std::fs::canonicalize(&*p) {
                *p = real;
            }
        }
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listings_parse_with_scopes_and_origins() {
        let out = b"global\0file:/h/.gitconfig\0core.fsmonitor\n/w/fs\0\
local\0file:.git/config\0core.bare\nfalse\0\
local\0file:/w/inc.cfg\0filter.x.clean\n/w/evil --a\nb\0\
worktree\0file:.git/config.worktree\0diff.q.textconv\nfoo\0\
command\0command line:\0core.hookspath\n/dev/null\0\
local\0file:.git/config\0bare.key\0\
system\0blob:HEAD:x\0a.b\nc\0";
        let got = parse(out, Path::new("/r")).unwrap();
        let want = [
            (
                Scope::Global,
                Origin::File("/h/.gitconfig".into()),
                "core.fsmonitor",
                Some("/w/fs"),
            ),
            (
                Scope::Local,
                Origin::File("/r/.git/config".into()),
                "core.bare",
                Some("false"),
            ),
            (
                Scope::Local,
                Origin::File("/w/inc.cfg".into()),
                "filter.x.clean",
                Some("/w/evil --a\nb"),
            ),
            (
                Scope::Worktree,
                Origin::File("/r/.git/config.worktree".into()),
                "diff.q.textconv",
                Some("foo"),
            ),
            (
                Scope::Command,
                Origin::CommandLine,
                "core.hookspath",
                Some("/dev/null"),
            ),
            (
                Scope::Local,
                Origin::File("/r/.git/config".into()),
                "bare.key",
                None,
            ),
            (
                Scope::System,
                Origin::Other("blob:HEAD:x".into()),
                "a.b",
                Some("c"),
            ),
        ];
        assert_eq!(got.len(), want.len());
        for (e, (scope, origin, key, value)) in got.iter().zip(want) {
            assert_eq!(
                (e.scope, &e.origin, e.key.as_str(), e.value.as_deref()),
                (scope, &origin, key, value)
            );
        }
    }

    #[test]
    fn truncated_listings_are_errors() {
        assert!(parse(b"local\0", Path::new("/")).is_err());
        assert!(parse(b"local\0file:x\0", Path::new("/")).is_err());
        assert_eq!(parse(b"", Path::new("/")).unwrap(), vec![]);
    }

    #[test]
    fn keys_split_into_parts() {
        let e = |key: &str| Entry {
            scope: Scope::Local,
            origin: Origin::CommandLine,
            key: key.into(),
            value: None,
        };
        assert_eq!(
            e("filter.lfs.clean").parts(),
            ("filter", Some("lfs"), "clean")
        );
        assert_eq!(e("core.pager").parts(), ("core", None, "pager"));
        assert_eq!(
            e("includeif.gitdir:/a.b/.path").parts(),
            ("includeif", Some("gitdir:/a.b/"), "path")
        );
    }
}
