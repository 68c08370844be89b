//! A repository's `.nerdr.toml` may name a setup command for new worktrees
//! (`[worktree] setup = "npm ci"`). It is the repository's code, run with
//! the user's rights, so it runs only for content the user approved, by its
//! SHA-256; changed content is asked about again. Pure parsing and
//! decisions here; the queue and the running are in `approvals`.

use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

pub const FILE: &str = ".nerdr.toml";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The command's words (a string runs with `sh -c`).
    pub argv: Vec<String>,
    /// SHA-256 of the whole file, hex: what an approval names.
    pub hash: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    worktree: Option<Worktree>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Worktree {
    setup: Option<Command>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Command {
    Shell(String),
    Words(Vec<String>),
}

/// The setup a worktree's `.nerdr.toml` names, if any.
pub fn read(worktree: &Path) -> Result<Option<Setup>, String> {
    let path = worktree.join(FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    parse(&bytes).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse(bytes: &[u8]) -> Result<Option<Setup>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let file: File = toml::from_str(text).map_err(|e| {
        format!(
            "{}; valid: [worktree] setup = \"command\" or [\"word\", ...]",
            e.message()
        )
    })?;
    let argv = match file.worktree.and_then(|w| w.setup) {
        None => return Ok(None),
        Some(Command::Shell(s)) if s.trim().is_empty() => return Ok(None),
        Some(Command::Shell(s)) => vec!["sh".into(), "-c".into(), s],
        Some(Command::Words(w)) if w.is_empty() => return Ok(None),
        Some(Command::Words(w)) => w,
    };
    Ok(Some(Setup {
        argv,
        hash: crate::protocol::handshake::hex(&Sha256::digest(bytes)),
    }))
}

/// The agent's argv, run after an approved setup in the same terminal: the
/// shell runs the setup, then becomes the agent (same PID, exact argv).
pub fn prefixed(setup: &Setup, agent_argv: &[String]) -> Vec<String> {
    let mut argv = Vec::new();
    // sh -c 'SETUP || warn; exec "$@"' nerdr-setup AGENT...
    argv.push("/bin/sh".into());
    argv.push("-c".into());
    argv.push(format!(
        "{} || echo \"nerdr: the worktree setup failed ($?)\" >&2; exec \"$@\"",
        shell_words(&setup.argv)
    ));
    argv.push("nerdr-setup".into());
    argv.extend(agent_argv.iter().cloned());
    argv
}

/// Words quoted for `sh`.
fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files() {
        type Row = (
            &'static str,
            Result<Option<&'static [&'static str]>, &'static str>,
        );
        let rows: &[Row] = &[
            ("", Ok(None)),
            ("[worktree]\n", Ok(None)),
            (
                "[worktree]\nsetup = \"npm ci\"\n",
                Ok(Some(&["sh", "-c", "npm ci"])),
            ),
            (
                "[worktree]\nsetup = [\"make\", \"deps\"]\n",
                Ok(Some(&["make", "deps"])),
            ),
            ("[worktree]\nsetup = \"\"\n", Ok(None)),
            ("[worktree]\nsetpu = \"x\"\n", Err("unknown field `setpu`")),
            ("[other]\n", Err("unknown field `other`")),
            ("[worktree]\nsetup = 3\n", Err("valid: [worktree] setup")),
        ];
        for (text, want) in rows {
            let got = parse(text.as_bytes());
            match (got, want) {
                (Ok(g), Ok(w)) => assert_eq!(
                    g.map(|s| s.argv),
                    w.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
                    "{text:?}"
                ),
                (Err(e), Err(w)) => assert!(e.contains(w), "{text:?}: {e}"),
                (g, w) => panic!("{text:?}: got {g:?}, want {w:?}"),
            }
        }
    }

    #[test]
    fn the_hash_names_the_exact_content() {
        let a = parse(b"[worktree]\nsetup = \"x\"\n").unwrap().unwrap();
        let b = parse(b"[worktree]\nsetup = \"x\" \n").unwrap().unwrap();
        assert_ne!(a.hash, b.hash);
        assert_eq!(a.hash.len(), 64);
    }

    #[test]
    fn the_agent_runs_after_the_setup_with_its_exact_words() {
        let s = parse(b"[worktree]\nsetup = \"echo \\\"it's set\\\"\"\n")
            .unwrap()
            .unwrap();
        let argv = prefixed(
            &s,
            &["/bin/claude".into(), "--session-id".into(), "x y".into()],
        );
        let out = std::process::Command::new(&argv[0])
            .args(&argv[1..2])
            .arg(argv[2].replace("exec \"$@\"", "printf '<%s>' \"$@\""))
            .args(&argv[3..])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "it's set\n</bin/claude><--session-id><x y>"
        );
    }
}
