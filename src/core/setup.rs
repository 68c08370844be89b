//! A repository's `.nerdr.toml` may name a setup command for new worktrees
//! (`[worktree] setup = "npm ci"`). It is the repository's code, run with
//! the user's rights, so it runs only for content the user approved, by its
//! SHA-256; changed content is asked about again. Pure parsing and
//! decisions here; the queue is in `approvals`, the running in
//! `setup_gate`.
//!
//! A setup runs before its agent: the agent's tab starts a small `sh`
//! gate ([`gated`]) that waits for a word only the core knows, then
//! becomes the agent; the setup runs in a tab of its own, and once it
//! ended (or was refused) [`after`] decides what the person sees.

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

/// The largest setup file read: a setup is a line or a few words.
pub const MAX_FILE: u64 = 64 * 1024;

/// The setup a worktree's `.nerdr.toml` names, if any. The file is the
/// repository's (an agent's work, once merged): only a regular file is
/// read, never through a link (to a pipe nothing writes, to `/dev/zero`,
/// to a file of the person's), and at most [`MAX_FILE`] bytes of it.
pub fn read(worktree: &Path) -> Result<Option<Setup>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let path = worktree.join(FILE);
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", path.display());
    let not_regular = || {
        format!(
            "{} is not a regular file (a link, a pipe, ...): nerdr reads the setup only from a \
             file of that name",
            path.display()
        )
    };
    match std::fs::symlink_metadata(&path) {
        Ok(m) if !m.file_type().is_file() => return Err(not_regular()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(cannot(e)),
    }
    // Opened without following a link or waiting on a pipe swapped in
    // since, and checked again as opened.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => not_regular(),
            _ => cannot(e),
        })?;
    if !file.metadata().map_err(cannot)?.file_type().is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(format!(
            "{} is larger than {MAX_FILE} bytes: a setup is a command",
            path.display()
        ));
    }
    parse(&bytes).map_err(|e| {
        // A position reads as part of the file's name: `FILE:LINE:COL: `.
        let sep = if e.starts_with(|c: char| c.is_ascii_digit()) {
            ":"
        } else {
            ": "
        };
        format!("{}{sep}{e}", path.display())
    })
}

pub fn parse(bytes: &[u8]) -> Result<Option<Setup>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8".to_string())?;
    let file: File = toml::from_str(text).map_err(|e| {
        // `LINE:COL: ` where the parser says, as config.toml's errors do.
        let at = e.span().map_or(String::new(), |span| {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("{line}:{col}: ")
        });
        format!(
            "{at}{}; valid: [worktree] setup = \"command\" or [\"word\", ...]",
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

/// The agent's argv, held until its worktree's setup ended: a shell that
/// reads lines (not echoed) until one is `token`, then becomes the agent
/// (same PID, exact argv). Its input closing ends it without the agent.
pub fn gated(setup: &Setup, token: &str, agent_argv: &[String]) -> Vec<String> {
    // sh -c 'GATE' TOKEN AGENT...: the token is $0, the agent "$@".
    let script = format!(
        "stty -echo 2>/dev/null; \
         printf 'nerdr: the agent starts once the worktree setup (%s) has ended; \
         a setup not approved yet waits for your yes (F3 in a window, or nerdr approvals)\\r\\n' {}; \
         while :; do IFS= read -r w || exit 1; [ \"$w\" = \"$0\" ] && break; done; \
         stty echo 2>/dev/null; exec \"$@\"",
        shell_words(&[shown(setup)])
    );
    let mut argv = vec!["/bin/sh".into(), "-c".into(), script, token.into()];
    argv.extend(agent_argv.iter().cloned());
    argv
}

/// The setup as the person wrote it (a string, without the `sh -c` it
/// runs with), printable.
pub fn shown(setup: &Setup) -> String {
    let words = match setup.argv.as_slice() {
        [sh, c, line] if sh == "sh" && c == "-c" => std::slice::from_ref(line),
        all => all,
    };
    crate::protocol::printable(&words.join(" "))
}

/// How a worktree's setup ended, for its agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// It ran, in tab `tab`, and exited with `code`.
    Ran { tab: String, code: i32 },
    /// The person said no.
    Denied,
    /// It could not start (its program is not there, say).
    NotStarted(String),
}

/// What happens once a setup ended: whether its tab goes (only after it
/// succeeded: a failed one stays, with its output), and the warning the
/// agent's tab carries (`nerdr tabs`, `explain`). The agent starts either
/// way: waiting would leave a tab nothing can release but a restart,
/// while the warning says what to fix and the person's work goes on.
pub fn after(setup: &Setup, ended: &Ended) -> (bool, Option<String>) {
    let what = shown(setup);
    match ended {
        Ended::Ran { code: 0, .. } => (true, None),
        Ended::Ran { tab, code } => (
            false,
            Some(format!(
                "the worktree setup `{what}` failed (exit {code}); its output is in tab {tab}: \
                 the agent started on a worktree it did not finish setting up"
            )),
        ),
        Ended::Denied => (
            false,
            Some(format!(
                "the worktree setup `{what}` was not run (the approval was refused)"
            )),
        ),
        Ended::NotStarted(why) => (
            false,
            Some(format!("the worktree setup `{what}` did not start: {why}")),
        ),
    }
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

    /// Only a regular file of that name, never followed through a link,
    /// and not past its size cap.
    #[test]
    fn only_a_regular_file_is_read() {
        type Row = (&'static str, fn(&Path, &Path), Result<bool, &'static str>);
        let rows: &[Row] = &[
            ("absent", |_, _| {}, Ok(false)),
            (
                "a file",
                |f, _| std::fs::write(f, "[worktree]\nsetup = \"make\"\n").unwrap(),
                Ok(true),
            ),
            (
                "a link to a good file",
                |f, d| {
                    let real = d.join("real.toml");
                    std::fs::write(&real, "[worktree]\nsetup = \"make\"\n").unwrap();
                    std::os::unix::fs::symlink(real, f).unwrap();
                },
                Err("not a regular file"),
            ),
            (
                "a link to /dev/zero",
                |f, _| std::os::unix::fs::symlink("/dev/zero", f).unwrap(),
                Err("not a regular file"),
            ),
            (
                "a pipe",
                |f, _| nix::unistd::mkfifo(f, nix::sys::stat::Mode::S_IRWXU).unwrap(),
                Err("not a regular file"),
            ),
            (
                "a folder",
                |f, _| std::fs::create_dir(f).unwrap(),
                Err("not a regular file"),
            ),
            (
                "too large",
                |f, _| std::fs::write(f, format!("# {}\n", "x".repeat(MAX_FILE as usize))).unwrap(),
                Err("larger than"),
            ),
        ];
        for (case, make, want) in rows {
            let d = tempfile::tempdir().unwrap();
            let wt = d.path().join("wt");
            std::fs::create_dir(&wt).unwrap();
            make(&wt.join(FILE), d.path());
            match (read(&wt), want) {
                (Ok(got), Ok(some)) => assert_eq!(got.is_some(), *some, "{case}"),
                (Err(e), Err(w)) => assert!(e.contains(w) && e.contains(FILE), "{case}: {e}"),
                (got, want) => panic!("{case}: got {got:?}, want {want:?}"),
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
    fn the_gate_becomes_the_agent_with_its_exact_words_on_its_token_only() {
        use std::io::Write;
        let s = parse(b"[worktree]\nsetup = \"echo \\\"it's set\\\"\"\n")
            .unwrap()
            .unwrap();
        let argv = gated(
            &s,
            "tok3n",
            &["/bin/claude".into(), "--session-id".into(), "x y".into()],
        );
        let run = |input: &str| {
            let mut child = std::process::Command::new(&argv[0])
                .args(&argv[1..2])
                .arg(argv[2].replace("exec \"$@\"", "printf '<%s>' \"$@\""))
                .args(&argv[3..])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            let out = child.wait_with_output().unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stdout).into_owned(),
            )
        };
        let waiting =
            "nerdr: the agent starts once the worktree setup (echo \"it's set\") has ended; \
             a setup not approved yet waits for your yes (F3 in a window, or nerdr approvals)\r\n";
        // Other lines (keys typed meanwhile) are read and dropped.
        let (code, out) = run("hello\ntok3\ntok3n\n");
        assert_eq!(code, Some(0));
        assert_eq!(out, format!("{waiting}</bin/claude><--session-id><x y>"));
        // No token before the input ends: no agent.
        let (code, out) = run("tok3n-not\n");
        assert_eq!(code, Some(1));
        assert_eq!(out, waiting);
    }

    #[test]
    fn a_malformed_file_says_where() {
        let e = parse(b"[worktree]\nsetup = \"sh -c \"echo hi\"\"\n").unwrap_err();
        assert!(e.starts_with("2:"), "{e}");
        assert!(e.contains("valid: [worktree] setup"), "{e}");
        let dir = std::env::temp_dir().join(format!("nerdr-setup-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(FILE), "[worktree]\nsetup = 3\n").unwrap();
        let e = read(&dir).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        let file = dir.join(FILE).display().to_string();
        assert!(e.starts_with(&format!("{file}:2:")), "{e}");
    }

    #[test]
    fn what_the_person_sees_once_a_setup_ended() {
        let s = parse(b"[worktree]\nsetup = \"make deps\"\n")
            .unwrap()
            .unwrap();
        let ran = |code| Ended::Ran {
            tab: "ab12".into(),
            code,
        };
        #[rustfmt::skip]
        let rows: &[(&str, Ended, bool, Option<&str>)] = &[
            ("a setup that succeeded leaves nothing behind", ran(0), true, None),
            ("a failed setup's tab stays and the agent says where its output is",
             ran(2), false,
             Some("the worktree setup `make deps` failed (exit 2); its output is in tab ab12: the agent started on a worktree it did not finish setting up")),
            ("a refused setup is named", Ended::Denied, false,
             Some("the worktree setup `make deps` was not run (the approval was refused)")),
            ("a setup that could not start says why", Ended::NotStarted("`x` is not on PATH".into()), false,
             Some("the worktree setup `make deps` did not start: `x` is not on PATH")),
        ];
        for (sentence, ended, closes, warning) in rows {
            let (c, w) = after(&s, ended);
            assert_eq!(c, *closes, "{sentence}");
            assert_eq!(w.as_deref(), *warning, "{sentence}");
        }
    }
}
