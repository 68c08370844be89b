//! The edge of `nerdr search`: list the agents' logs and nerdr's stores,
//! read them and find the terms (blocking; the core calls it off its
//! async workers). The files are read in parallel, a few threads pulling
//! from one list; see the module above for why there is no index.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use memchr::memmem;

use super::query::Terms;
use super::visible::{may_open, visible, Item, Viewer};
use super::{rank, Found, Source};
use crate::handoff::Said;

pub use super::scope::{Scanned, Scope};

/// One conversation log to read.
#[derive(Debug, Clone)]
struct Log {
    source: Source,
    path: PathBuf,
    /// From its name: claude's is the file's, codex's ends it.
    session: String,
}

/// Search everything `scope` allows for `terms`.
pub fn scan(scope: &Scope, terms: &Terms) -> Scanned {
    let mut out = Scanned::default();
    let wants = |agent: &str| scope.agent.is_none_or(|a| a == agent);
    let mut logs = Vec::new();
    if wants("claude") {
        logs.extend(claude_logs(&scope.homes.claude.join("projects")));
    }
    if wants("codex") {
        logs.extend(codex_logs(&scope.homes.codex.join("sessions")));
    }
    // Only the caller's own conversation is even opened for a sandboxed
    // caller (its id is checked again against the log's own record).
    logs.retain(|l| may_open(scope.viewer, &l.session));
    out.files = logs.len();
    out.found = in_parallel(&logs, terms, scope.viewer);
    super::stored::stored(scope, terms, &mut out);
    out.found.retain(|f| wants(&f.agent));
    out
}

/// Read `logs` on a few threads; the conversations that matched.
fn in_parallel(logs: &[Log], terms: &Terms, viewer: Viewer) -> Vec<Found> {
    let needles = terms.raw_needles();
    let finders: Option<Vec<memmem::Finder>> = needles
        .as_ref()
        .map(|n| n.iter().map(memmem::Finder::new).collect());
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8)
        .min(logs.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut found = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(log) = logs.get(i) else { break };
                        if let Some(f) = search_log(log, terms, finders.as_deref()) {
                            let item = Item::Conversation {
                                session: &f.id,
                                cwd: f.folder.as_deref(),
                            };
                            if visible(viewer, item) {
                                found.push(f);
                            }
                        }
                    }
                    found
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

/// One log's match, if any term is in its messages.
fn search_log(log: &Log, terms: &Terms, finders: Option<&[memmem::Finder]>) -> Option<Found> {
    let bytes = read_log(&log.path)?;
    let lower = bytes.to_ascii_lowercase();
    let holds = |hay: &[u8]| finders.is_none_or(|fs| fs.iter().any(|f| f.find(hay).is_some()));
    if !holds(&lower) {
        return None;
    }
    let modified = std::fs::metadata(&log.path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let mut messages = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', &bytes).chain([bytes.len()]) {
        let (raw, low) = (&bytes[start..end], &lower[start..end]);
        start = end + 1;
        if raw.is_empty() || !holds(low) || !may_be_message(log.source, raw) {
            continue;
        }
        let Ok(line) = std::str::from_utf8(raw) else {
            continue;
        };
        let said = match log.source {
            Source::Claude => crate::handoff::claude::line(line),
            _ => crate::handoff::codex::line(line),
        };
        let (text, request) = match said {
            Some(Said::Request(t)) => (t, true),
            Some(Said::Answer(t)) => (t, false),
            None => continue,
        };
        messages.push((text, request, timestamp(line)));
    }
    let summary = rank::summarize(terms, &messages)?;
    let (session, folder) = meta(log, &bytes);
    Some(Found {
        source: log.source,
        id: session,
        agent: log.source.name().to_string(),
        folder,
        file: Some(log.path.clone()),
        tab: None,
        modified,
        last_at: summary.last_at,
        present: summary.present,
        count: summary.count,
        messages: summary.messages,
        hits: summary.hits,
    })
}

/// Whether a raw log line can hold a message in words, by its JSON's
/// shape alone, before it is parsed: most of a log's bytes are tool
/// output, in lines that cannot. Both agents write compact JSON, and a
/// quote inside a string is escaped (`\"`), so these keys are found only
/// as the line's structure. claude: a request is a string `content`
/// (claude writes `{"role":"user","content":...}`, in that order) or has
/// `text` blocks, an answer has `text` blocks (a tool's result, whose
/// `content` is a string too, has none); codex: a `message` item.
fn may_be_message(source: Source, raw: &[u8]) -> bool {
    static TEXT: LazyLock<memmem::Finder> =
        LazyLock::new(|| memmem::Finder::new(br#""type":"text""#));
    static CONTENT: LazyLock<memmem::Finder> =
        LazyLock::new(|| memmem::Finder::new(br#""role":"user","content":""#));
    static MESSAGE: LazyLock<memmem::Finder> =
        LazyLock::new(|| memmem::Finder::new(br#""type":"message""#));
    match source {
        Source::Claude => TEXT.find(raw).is_some() || CONTENT.find(raw).is_some(),
        _ => MESSAGE.find(raw).is_some(),
    }
}

/// A log's session id and working folder, as its lines record them:
/// codex's first line (`session_meta`), claude's first line naming a
/// `cwd` (every message line does). The id from the file's name when the
/// log names none.
fn meta(log: &Log, bytes: &[u8]) -> (String, Option<PathBuf>) {
    let text = String::from_utf8_lossy(bytes);
    match log.source {
        Source::Codex => {
            let first = text.lines().next().unwrap_or_default();
            match crate::handoff::codex::meta(first) {
                Some((id, cwd)) => (id, Some(cwd)),
                None => (log.session.clone(), None),
            }
        }
        _ => {
            let cwd = text
                .lines()
                .filter(|l| l.contains("\"cwd\""))
                .find_map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).ok()?;
                    v["cwd"].as_str().map(PathBuf::from)
                });
            (log.session.clone(), cwd)
        }
    }
}

/// A log line's own time (`"timestamp":"..."`, which both agents write
/// first or at the top level of each line).
fn timestamp(line: &str) -> Option<String> {
    const KEY: &str = "\"timestamp\":\"";
    let from = line.find(KEY)? + KEY.len();
    let len = line[from..].find('"')?;
    let at = &line[from..from + len];
    at.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-:.+".contains(&b))
        .then(|| at.to_string())
}

/// claude's logs: `projects/<folder>/<session>.jsonl` (a sub-agent's, in
/// a session's own folder, are not conversations of their own).
fn claude_logs(projects: &Path) -> Vec<Log> {
    let mut out = Vec::new();
    for dir in entries(projects).into_iter().filter(|p| p.is_dir()) {
        for path in entries(&dir) {
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if let Some(session) = name.strip_suffix(".jsonl") {
                out.push(Log {
                    source: Source::Claude,
                    session: session.to_string(),
                    path,
                });
            }
        }
    }
    out
}

/// codex's logs: `sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`.
fn codex_logs(sessions: &Path) -> Vec<Log> {
    let mut out = Vec::new();
    let mut dirs = vec![(sessions.to_path_buf(), 0)];
    while let Some((dir, depth)) = dirs.pop() {
        for path in entries(&dir) {
            if path.is_dir() {
                if depth < 3 {
                    dirs.push((path, depth + 1));
                }
                continue;
            }
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            if let Some(stem) = name
                .strip_prefix("rollout-")
                .and_then(|n| n.strip_suffix(".jsonl"))
            {
                // `<YYYY-MM-DDTHH-MM-SS>-<session id>`.
                let session = stem.get(20..).unwrap_or(stem).to_string();
                out.push(Log {
                    source: Source::Codex,
                    session,
                    path,
                });
            }
        }
    }
    out
}

/// The largest log read.
const MAX_LOG: u64 = 256 << 20;

/// A log's bytes: only a regular file (a sandboxed agent writes the
/// agents' history folders: a FIFO there would hold the search for ever, a
/// link to `/dev/zero` fill the core's memory), opened without waiting,
/// and none larger than [`MAX_LOG`] (a sparse file is made in an instant).
fn read_log(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_LOG {
        return None;
    }
    let mut bytes = Vec::new();
    f.take(MAX_LOG).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_a_regular_log_of_bounded_size_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let p = |n: &str| dir.path().join(n);
        std::fs::write(p("ok.jsonl"), "{}\n").unwrap();
        nix::unistd::mkfifo(&p("fifo.jsonl"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        std::os::unix::fs::symlink("/dev/zero", p("zero.jsonl")).unwrap();
        std::fs::File::create(p("sparse.jsonl"))
            .unwrap()
            .set_len(super::MAX_LOG + 1)
            .unwrap();
        let rows = [
            ("ok.jsonl", Some(b"{}\n".to_vec())),
            ("fifo.jsonl", None),
            ("zero.jsonl", None),
            ("sparse.jsonl", None),
            ("absent.jsonl", None),
        ];
        for (name, want) in rows {
            assert_eq!(super::read_log(&p(name)), want, "{name}");
        }
    }

    use super::*;
    use crate::handoff::rules::Homes;
    use std::collections::BTreeMap;

    const CODEX: &str = include_str!("../../tests/fixtures/handoff/codex-rollout.jsonl");
    const CLAUDE: &str = include_str!("../../tests/fixtures/handoff/claude-session.jsonl");
    const CLAUDE_ID: &str = "11111111-2222-4333-8444-555555555555";
    const CODEX_ID: &str = "01a236e9-60bc-7b00-96ce-f4b2605f7753";

    fn put(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn setup() -> (tempfile::TempDir, Homes) {
        let home = tempfile::tempdir().unwrap();
        let homes = Homes {
            claude: home.path().join(".claude"),
            codex: home.path().join(".codex"),
        };
        put(
            &homes
                .claude
                .join(format!("projects/-tmp-i19h-rec-proj/{CLAUDE_ID}.jsonl")),
            CLAUDE,
        );
        // A sub-agent's log is no conversation of its own.
        put(
            &homes.claude.join(format!(
                "projects/-tmp-i19h-rec-proj/{CLAUDE_ID}/subagents/agent-1.jsonl"
            )),
            CLAUDE,
        );
        put(
            &homes.codex.join(format!(
                "sessions/2026/12/02/rollout-2026-12-02T13-19-54-{CODEX_ID}.jsonl"
            )),
            CODEX,
        );
        (home, homes)
    }

    fn search(homes: &Homes, state: &Path, viewer: Viewer, query: &str) -> Scanned {
        let folders = BTreeMap::new();
        let scope = Scope {
            homes,
            state_dir: state,
            agent: None,
            viewer,
            tab_folders: &folders,
        };
        scan(&scope, &Terms::parse(query).unwrap())
    }

    #[test]
    fn the_recorded_logs_are_found_by_their_words_not_their_tool_noise() {
        let (home, homes) = setup();
        let got = search(&homes, home.path(), Viewer::Everything, "parser");
        assert_eq!(got.files, 2, "{got:?}");
        let mut found = got.found;
        rank::rank(&mut found);
        let ids: Vec<(&str, Source)> = found.iter().map(|f| (f.id.as_str(), f.source)).collect();
        assert!(ids.contains(&(CLAUDE_ID, Source::Claude)), "{ids:?}");
        let claude = found.iter().find(|f| f.source == Source::Claude).unwrap();
        assert_eq!(
            claude.folder.as_deref(),
            Some(Path::new("/tmp/i19h-rec/proj"))
        );
        assert!(claude.hits[0].request, "{claude:?}");
        assert_eq!(
            claude.hits[0].snippet,
            "Please look at the parser and say hello"
        );
        assert_eq!(claude.last_at.as_deref(), Some("2026-12-02T13:19:46.086Z"));
        // Words only in a tool's output or codex's own instructions match
        // nothing: "skills_instructions" is in codex's developer message.
        let got = search(
            &homes,
            home.path(),
            Viewer::Everything,
            "skills_instructions",
        );
        assert!(got.found.is_empty(), "{:?}", got.found);
        // The codex log, by its answer.
        let got = search(&homes, home.path(), Viewer::Everything, "\"command ran\"");
        let codex: Vec<&Found> = got
            .found
            .iter()
            .filter(|f| f.source == Source::Codex)
            .collect();
        assert_eq!(codex.len(), 1, "{:?}", got.found);
        assert_eq!(codex[0].id, CODEX_ID);
        assert_eq!(
            codex[0].folder.as_deref(),
            Some(Path::new("/tmp/i19h-rec/proj"))
        );
        assert!(!codex[0].hits[0].request);
    }

    #[test]
    fn a_sandboxed_caller_reads_only_its_own_conversation() {
        let (home, homes) = setup();
        let here = Path::new("/tmp/i19h-rec/proj");
        let own = |session, cwd| Viewer::OwnTab {
            tab: "t1",
            session,
            cwd,
        };
        let got = search(&homes, home.path(), own(Some(CODEX_ID), here), "the");
        assert_eq!(got.files, 1);
        let ids: Vec<&str> = got.found.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, [CODEX_ID]);
        let got = search(&homes, home.path(), own(None, here), "the");
        assert_eq!((got.files, got.found.len()), (0, 0));
        // Its id, but run elsewhere: another tab's conversation.
        let elsewhere = own(Some(CODEX_ID), Path::new("/w"));
        let got = search(&homes, home.path(), elsewhere, "the");
        assert_eq!((got.files, got.found.len()), (1, 0));
    }

    #[test]
    fn handoffs_and_reviews_are_searched_as_the_viewer_may() {
        let (home, homes) = setup();
        let state = home.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        crate::handoff::store::update(&crate::handoff::store::file(&state), |s| {
            s.add(crate::handoff::store::Kept {
                number: 1,
                tab: "t1".into(),
                name: "claude-1".into(),
                agent: "claude".into(),
                folder: "/p".into(),
                at: 5,
                text: "Next: fix the zebra migration".into(),
                note: None,
            })
        })
        .unwrap();
        let review = serde_json::json!({"authors": {"t1": {"reviews": [{
            "number": 1, "reviewer_tab": "t2", "agent": "codex",
            "written_in_sandbox": false, "base": "a", "head": "b",
            "summary": "zebra looks fine",
            "comments": [{"file": "src/z.rs", "line": 3, "severity": "note", "text": "zebra off by one"}]
        }]}}});
        put(&crate::review::store::file(&state), &review.to_string());
        let got = search(&homes, &state, Viewer::Everything, "zebra");
        assert!(got.problems.is_empty(), "{:?}", got.problems);
        let mut f = got.found;
        rank::rank(&mut f);
        let shown: Vec<(Source, &str, usize)> = f
            .iter()
            .map(|f| (f.source, f.id.as_str(), f.count))
            .collect();
        assert_eq!(
            shown,
            [(Source::Review, "t1#1", 2), (Source::Handoff, "1", 1)]
        );
        assert_eq!(f[0].hits[1].snippet, "src/z.rs:3: zebra off by one");
        let own = Viewer::OwnTab {
            tab: "t2",
            session: None,
            cwd: Path::new("/w"),
        };
        let got = search(&homes, &state, own, "zebra");
        let ids: Vec<&str> = got.found.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, ["t1#1"], "its own review, no handoff");
        // A store that does not read is said, not dropped.
        put(&crate::handoff::store::file(&state), "nope");
        let got = search(&homes, &state, Viewer::Everything, "zebra");
        assert!(
            got.problems[0].contains("handoffs.json"),
            "{:?}",
            got.problems
        );
    }

    #[test]
    fn no_line_that_holds_a_message_is_skipped_by_its_shape() {
        let mut skipped = 0;
        for (source, log) in [(Source::Claude, CLAUDE), (Source::Codex, CODEX)] {
            for line in log.lines() {
                let said = match source {
                    Source::Claude => crate::handoff::claude::line(line),
                    _ => crate::handoff::codex::line(line),
                };
                let may = may_be_message(source, line.as_bytes());
                assert!(said.is_none() || may, "{source:?} skips a message: {line}");
                skipped += usize::from(!may);
            }
        }
        assert!(skipped > 30, "the shape skips the tool lines: {skipped}");
        // A request as a plain string, and a tool's output naming the keys
        // (escaped inside its string): the first may be one, the second not.
        let asked = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#;
        assert!(may_be_message(Source::Claude, asked.as_bytes()));
        let tool = r#"{"type":"user","message":{"content":[{"type":"tool_result","content":[{"x":"\"type\":\"text\""}]}]}}"#;
        assert!(!may_be_message(Source::Claude, tool.as_bytes()));
        let result = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"out"}]}}"#;
        assert!(!may_be_message(Source::Claude, result.as_bytes()));
    }

    #[test]
    fn a_line_s_time_is_its_own_timestamp_field() {
        #[rustfmt::skip]
        let rows: &[(&str, Option<&str>)] = &[
            (r#"{"timestamp":"2026-12-02T13:19:54.144Z","type":"x"}"#, Some("2026-12-02T13:19:54.144Z")),
            (r#"{"type":"x"}"#, None),
            (r#"{"timestamp":"2026 \u001b"}"#, None),
        ];
        for (line, want) in rows {
            assert_eq!(timestamp(line).as_deref(), *want, "{line}");
        }
    }
}
