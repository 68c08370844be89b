//! The edge of handoffs: finding a tab's conversation and reading it
//! (files under the agents' folders, `opencode` run as a program).
//! Blocking: the core calls it off its async workers. What the bytes mean
//! is the parsers' (`claude`, `codex`, `opencode`), what goes in the
//! document is `document`'s.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::rules::{self, Build, Homes};
use super::{Exchange, From};
use crate::agents::Kind;

/// The most of a log read: its end, where the last exchanges are.
const MAX_READ: u64 = 4 * 1024 * 1024;
/// How many codex logs are opened looking for a tab's.
const MAX_CODEX_LOGS: usize = 300;
/// How long `opencode` may take to list or export.
const OPENCODE_TIME: Duration = Duration::from_secs(30);

/// A tab's conversation, as the core knows it.
#[derive(Debug, Clone)]
pub struct Conversation {
    /// The agent's built-in rules; `None` for a custom agent or a program.
    pub kind: Option<Kind>,
    /// The conversation's id, as nerdr gave it or the agent reported it.
    pub session_id: Option<String>,
    /// Where the agent runs (its worktree): claude and codex file their
    /// logs by it, opencode its sessions.
    pub cwd: PathBuf,
    /// opencode's program (the agent's command without its wrapper), run
    /// in `cwd` to list and export.
    pub program: Option<PathBuf>,
}

/// Build a handoff from an agent's conversation: the document, or why
/// there is none (what to do instead). The one entry point for every
/// command that needs a handoff the agent did not write (`nerdr handoff`,
/// `nerdr switch`). `how` is the command line that gives one instead
/// ([`rules::give_one`]), for the messages.
pub fn from_conversation(
    c: &Conversation,
    homes: &Homes,
    from: &From,
    how: &str,
) -> Result<String, String> {
    let exchanges = exchanges(c, homes, how)?;
    super::document(from, &exchanges).ok_or_else(|| {
        format!(
            "{}'s conversation in {} holds no words yet; have the agent write its handoff: {how}",
            from.agent,
            c.cwd.display()
        )
    })
}

/// The conversation's exchanges, read from where its agent keeps them.
pub fn exchanges(c: &Conversation, homes: &Homes, how: &str) -> Result<Vec<Exchange>, String> {
    // The folder as the agents write it: no trailing `/`, no `.`.
    let c = &Conversation {
        cwd: c.cwd.components().collect(),
        ..c.clone()
    };
    match rules::build(c.kind, false) {
        Build::ClaudeLog => {
            let file = claude_log(&homes.claude, &c.cwd, c.session_id.as_deref(), how)?;
            Ok(super::pair(super::claude::parse(&read_tail(&file)?)))
        }
        Build::CodexLog => {
            let file = codex_log(&homes.codex, &c.cwd, c.session_id.as_deref(), how)?;
            Ok(super::pair(super::codex::parse(&read_tail(&file)?)))
        }
        Build::OpencodeExport => {
            let program = c
                .program
                .as_deref()
                .ok_or("opencode's program is unknown")?;
            let export = opencode_export(program, &c.cwd, c.session_id.as_deref())?;
            Ok(super::pair(super::opencode::parse(&export)?))
        }
        Build::Refuse(why) => Err(format!("{why}: {how}")),
        Build::Written => unreachable!("asked with written = false"),
    }
}

/// claude's log of session `id` for folder `cwd`, and no other: with two
/// claude tabs in one folder (a spinoff, a handoff's new tab) the folder's
/// newest log may be the other tab's conversation, so without the tab's
/// id or its file there is no handoff to build, and the message says how
/// to write one.
fn claude_log(dir: &Path, cwd: &Path, id: Option<&str>, how: &str) -> Result<PathBuf, String> {
    let folder = dir
        .join("projects")
        .join(super::claude::project_folder(cwd));
    let Some(id) = id else {
        return Err(format!(
            "nerdr does not know this tab's claude conversation (no session id), and the \
             newest log in {} may be another tab's; write the handoff yourself (or have the \
             agent write it): {how}",
            folder.display()
        ));
    };
    let file = folder.join(format!("{id}.jsonl"));
    if file.is_file() {
        return Ok(file);
    }
    Err(format!(
        "no claude conversation found for this tab: {} does not exist (claude writes it once \
         a turn is done); write the handoff yourself (or have the agent write it): {how}",
        file.display()
    ))
}

/// codex's log of session `id`; without one, the newest whose
/// `session_meta` names folder `cwd`.
fn codex_log(dir: &Path, cwd: &Path, id: Option<&str>, how: &str) -> Result<PathBuf, String> {
    let root = dir.join("sessions");
    let mut logs = Vec::new();
    // sessions/YYYY/MM/DD/rollout-*.jsonl, newest folders first.
    for y in sorted_dirs(&root) {
        for m in sorted_dirs(&y) {
            for d in sorted_dirs(&m) {
                let mut files: Vec<PathBuf> = entries(&d)
                    .into_iter()
                    .filter(|p| {
                        p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
                    })
                    .collect();
                files.sort_by(|a, b| b.cmp(a));
                logs.extend(files);
            }
        }
    }
    if let Some(id) = id {
        let named = format!("-{id}.jsonl");
        if let Some(f) = logs.iter().find(|p| p.to_string_lossy().ends_with(&named)) {
            return Ok(f.clone());
        }
    }
    for f in logs.iter().take(MAX_CODEX_LOGS) {
        let first = first_line(f).unwrap_or_default();
        if super::codex::meta(&first).is_some_and(|(_, c)| c == cwd) {
            return Ok(f.clone());
        }
    }
    Err(format!(
        "no codex conversation log for {} under {}; have the agent write its handoff instead: \
         {how}",
        cwd.display(),
        root.display()
    ))
}

/// `opencode export` of session `id`, or of the newest in `cwd`.
fn opencode_export(program: &Path, cwd: &Path, id: Option<&str>) -> Result<String, String> {
    let id = match id {
        Some(id) => id.to_string(),
        None => {
            let list = run(program, super::opencode::LIST_ARGS, cwd)?;
            super::opencode::newest_in(&list, cwd)?
                .ok_or_else(|| format!("opencode lists no session in {}", cwd.display()))?
        }
    };
    run(program, &super::opencode::export_args(&id), cwd)
}

/// Run `program args` in `cwd` (without opencode's external plugins),
/// with a time limit; its standard output.
fn run<S: AsRef<std::ffi::OsStr>>(
    program: &Path,
    args: &[S],
    cwd: &Path,
) -> Result<String, String> {
    let shown = format!(
        "`{} {}`",
        program.display(),
        args.iter()
            .map(|a| a.as_ref().to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = std::process::Command::new(program)
        .arg("--pure")
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {shown}: {e}"))?;
    let mut out = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.by_ref().take(MAX_READ).read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if start.elapsed() > OPENCODE_TIME => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} took longer than {}s",
                    OPENCODE_TIME.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("{shown}: {e}")),
        }
    };
    let bytes = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("{shown} failed ({status})"));
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The last [`MAX_READ`] bytes of `file`, from a line's start.
fn read_tail(file: &Path) -> Result<String, String> {
    let read = || -> std::io::Result<Vec<u8>> {
        let mut f = std::fs::File::open(file)?;
        let len = f.metadata()?.len();
        let from = len.saturating_sub(MAX_READ);
        f.seek(SeekFrom::Start(from))?;
        let mut buf = Vec::new();
        f.take(MAX_READ).read_to_end(&mut buf)?;
        if from > 0 {
            // Cut into a line: start at the next one.
            let skip = buf
                .iter()
                .position(|&b| b == b'\n')
                .map_or(buf.len(), |i| i + 1);
            buf.drain(..skip);
        }
        Ok(buf)
    };
    read()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .map_err(|e| format!("cannot read {}: {e}", file.display()))
}

fn first_line(file: &Path) -> Option<String> {
    let mut buf = vec![0u8; 64 * 1024];
    let n = std::fs::File::open(file).ok()?.read(&mut buf).ok()?;
    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
    text.lines().next().map(str::to_string)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The folders in `dir`, newest name first (codex names them by date).
fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = entries(dir).into_iter().filter(|p| p.is_dir()).collect();
    dirs.sort_by(|a, b| b.cmp(a));
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX: &str = include_str!("../../tests/fixtures/handoff/codex-rollout.jsonl");
    const CLAUDE: &str = include_str!("../../tests/fixtures/handoff/claude-session.jsonl");

    fn put(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn each_agent_s_log_is_found_by_its_id_or_its_folder_and_claude_s_by_its_id_alone() {
        let home = tempfile::tempdir().unwrap();
        let homes = Homes {
            claude: home.path().join(".claude"),
            codex: home.path().join(".codex"),
        };
        let cwd = PathBuf::from("/tmp/i19h-rec/proj");
        let id = "11111111-2222-4333-8444-555555555555";
        put(
            &homes
                .claude
                .join(format!("projects/-tmp-i19h-rec-proj/{id}.jsonl")),
            CLAUDE,
        );
        let codex_id = "01a236e9-60bc-7b00-96ce-f4b2605f7753";
        put(
            &homes.codex.join(format!(
                "sessions/2026/12/02/rollout-2026-12-02T13-19-54-{codex_id}.jsonl"
            )),
            CODEX,
        );
        // Another folder's newer codex log is not this tab's.
        put(
            &homes
                .codex
                .join("sessions/2026/12/03/rollout-2026-12-03T00-00-00-x.jsonl"),
            "{\"type\":\"session_meta\",\"payload\":{\"id\":\"x\",\"cwd\":\"/elsewhere\"}}\n",
        );
        let conv = |kind, session: Option<&str>, cwd: &Path| Conversation {
            kind: Some(kind),
            session_id: session.map(str::to_string),
            cwd: cwd.to_path_buf(),
            program: None,
        };
        #[rustfmt::skip]
        let rows: &[(&str, Kind, Option<&str>, &str)] = &[
            ("claude by its session id", Kind::Claude, Some(id), "/tmp/i19h-rec/proj"),
            ("codex by its session id", Kind::Codex, Some(codex_id), "/nowhere"),
            ("codex, no id: the log naming the folder", Kind::Codex, None, "/tmp/i19h-rec/proj"),
        ];
        for (what, kind, session, cwd) in rows {
            let got = exchanges(&conv(*kind, *session, Path::new(cwd)), &homes, "HOW");
            let got = got.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(got.len(), 2, "{what}");
            assert_eq!(got[1].answer, "The command ran; done.", "{what}");
        }
        let e = exchanges(
            &conv(Kind::Codex, None, Path::new("/elsewhere/x")),
            &homes,
            "HOW",
        )
        .unwrap_err();
        assert!(e.contains("write its handoff instead: HOW"), "{e}");
        // Another claude tab's log in the same folder is never this tab's:
        // no id, or an id with no file, builds nothing and says how to
        // write the handoff.
        for session in [None, Some("99999999-2222-4333-8444-555555555555")] {
            let e = exchanges(&conv(Kind::Claude, session, &cwd), &homes, "HOW").unwrap_err();
            assert!(e.contains("write the handoff yourself"), "{session:?}: {e}");
            assert!(e.ends_with(": HOW"), "{session:?}: {e}");
        }
        let e = exchanges(&conv(Kind::Gemini, None, &cwd), &homes, "HOW").unwrap_err();
        assert!(e.ends_with("pass it: HOW"), "{e}");
    }
}
