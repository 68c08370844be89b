//! The corpus table test: every captured screen under
//! `tests/fixtures/screens/<agent>/<expected>-<slug>.screen` evaluated
//! with its agent's built-in rules must give the state (and the rule) it
//! names; and every rule a built-in file calls `verified` must be the
//! match of at least one captured screen. `NERDR_DETECT_CORPUS=DIR` reads
//! the screens from another folder (a capture in progress).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::builtin::{builtin, files};
use super::eval::evaluate;
use super::rules::RuleState;
use super::ScreenView;

/// One captured screen.
#[derive(Debug)]
struct Capture {
    path: PathBuf,
    agent: String,
    expect: String,
    rule: Option<String>,
    screen: ScreenView,
}

const HEADERS: &[&str] = &["agent", "expect", "rule", "title", "source"];
const EXPECTS: &[&str] = &["working", "blocked", "idle", "done", "unchanged", "none"];

fn parse_capture(path: &Path, text: &str) -> Result<Capture, String> {
    let at = |line: usize, what: String| format!("{}:{line}: {what}", path.display());
    let (head, body) = text
        .split_once("\n---\n")
        .ok_or_else(|| at(1, "no `---` line between the headers and the screen".into()))?;
    let mut fields: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, line) in head.lines().enumerate() {
        let (key, value) = line
            .split_once(':')
            .ok_or_else(|| at(i + 1, format!("not a `key: value` header: {line:?}")))?;
        if !HEADERS.contains(&key) {
            return Err(at(
                i + 1,
                format!(
                    "unknown header `{key}` (the headers are {})",
                    HEADERS.join(", ")
                ),
            ));
        }
        fields.insert(key, value.strip_prefix(' ').unwrap_or(value));
    }
    let need = |key: &str| {
        fields
            .get(key)
            .filter(|v| !v.is_empty())
            .map(|v| v.to_string())
            .ok_or_else(|| at(1, format!("header `{key}` is missing")))
    };
    let agent = need("agent")?;
    let expect = need("expect")?;
    if !EXPECTS.contains(&expect.as_str()) {
        return Err(at(
            1,
            format!("expect: {expect:?} is not one of {}", EXPECTS.join(", ")),
        ));
    }
    let file_name = path.file_name().unwrap().to_string_lossy();
    if !file_name.starts_with(&format!("{expect}-")) {
        return Err(at(
            1,
            format!("the file name should start with `{expect}-` (its expect)"),
        ));
    }
    let dir = path
        .parent()
        .and_then(|p| p.file_name())
        .unwrap()
        .to_string_lossy();
    if dir != agent {
        return Err(at(
            1,
            format!("agent: {agent:?} but the file is in the folder {dir:?}"),
        ));
    }
    Ok(Capture {
        path: path.to_owned(),
        agent,
        expect,
        rule: fields
            .get("rule")
            .filter(|r| !r.is_empty())
            .map(|r| r.to_string()),
        screen: ScreenView {
            rows: body.split('\n').map(|r| r.trim_end().to_owned()).collect(),
            title: fields.get("title").map_or(String::new(), |t| t.to_string()),
        },
    })
}

fn corpus_dir() -> PathBuf {
    std::env::var_os("NERDR_DETECT_CORPUS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/screens"),
        PathBuf::from,
    )
}

/// Every capture, or `None` (after a loud SKIPPED) when there are none.
fn corpus() -> Option<Vec<Capture>> {
    let dir = corpus_dir();
    let mut paths = Vec::new();
    if let Ok(agents) = std::fs::read_dir(&dir) {
        for agent in agents {
            let agent = agent.unwrap().path();
            for f in std::fs::read_dir(&agent).unwrap() {
                let p = f.unwrap().path();
                if p.extension().is_some_and(|x| x == "screen") {
                    paths.push(p);
                }
            }
        }
    }
    paths.sort();
    if paths.is_empty() {
        skip(&format!("no captured screens in {}", dir.display()));
        return None;
    }
    let mut bad = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        match parse_capture(&p, &text) {
            Ok(c) => out.push(c),
            Err(e) => bad.push(e),
        }
    }
    assert!(bad.is_empty(), "malformed captures:\n{}", bad.join("\n"));
    Some(out)
}

fn skip(why: &str) {
    use std::io::Write;
    let name = std::thread::current().name().unwrap_or("?").to_owned();
    let _ = writeln!(std::io::stderr(), "\nSKIPPED: {name}: {why}\n");
    if std::env::var("NERDR_MUST_TEST").is_ok_and(|v| v == "1") {
        panic!("NERDR_MUST_TEST=1, but {name} cannot run: {why}");
    }
}

fn state_name(s: RuleState) -> &'static str {
    s.as_str()
}

#[test]
fn every_captured_screen_gives_its_state() {
    let Some(corpus) = corpus() else { return };
    let mut wrong = Vec::new();
    for c in &corpus {
        let Some(rules) = builtin(&c.agent) else {
            wrong.push(format!(
                "{}: no built-in rules for agent {:?} (src/detect/rules/{}.toml)",
                c.path.display(),
                c.agent,
                c.agent
            ));
            continue;
        };
        let hit = evaluate(&rules, &c.screen);
        let (got, got_rule) = match &hit {
            Some(h) => (state_name(h.state), Some(h.rule.as_str())),
            None => ("none", None),
        };
        // The whole table, for rule writers: `-- --nocapture` shows it.
        println!(
            "{:<60} {:<9} {}",
            c.path
                .strip_prefix(corpus_dir())
                .unwrap_or(&c.path)
                .display(),
            got,
            got_rule.unwrap_or("-")
        );
        let rule_ok = c.rule.is_none() || c.rule.as_deref() == got_rule;
        if got != c.expect || !rule_ok {
            wrong.push(format!(
                "{}: expected {}{}, got {got}{} (lines {:?})",
                c.path.display(),
                c.expect,
                c.rule
                    .as_ref()
                    .map_or(String::new(), |r| format!(" by rule \"{r}\"")),
                got_rule.map_or(String::new(), |r| format!(" by rule \"{r}\"")),
                hit.map(|h| h.lines).unwrap_or_default(),
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} captured screens are told wrong:\n{}",
        wrong.len(),
        corpus.len(),
        wrong.join("\n")
    );
}

#[test]
fn every_verified_rule_matches_a_captured_screen() {
    let Some(corpus) = corpus() else { return };
    let mut unproven = Vec::new();
    for (name, _) in files() {
        let rules = builtin(name).unwrap();
        for rule in rules.rules().iter().filter(|r| r.verified) {
            let shown = corpus.iter().any(|c| {
                c.agent == *name && evaluate(&rules, &c.screen).is_some_and(|h| h.rule == rule.name)
            });
            if !shown {
                unproven.push(format!(
                    "src/detect/rules/{name}.toml:{}: rule \"{}\" says verified = true, but no \
                     screen under tests/fixtures/screens/{name}/ matches it (capture one, or say \
                     verified = false)",
                    rule.line, rule.name
                ));
            }
        }
    }
    assert!(unproven.is_empty(), "{}", unproven.join("\n"));
}

#[test]
fn a_capture_file_is_read_as_written() {
    let text = "agent: claude\nexpect: blocked\nrule: permission prompt\ntitle: ✳ Claude Code\nsource: x\n---\n row one  \n\n❯ 1. Yes\n";
    let c = parse_capture(Path::new("/c/claude/blocked-x.screen"), text).unwrap();
    assert_eq!((c.agent.as_str(), c.expect.as_str()), ("claude", "blocked"));
    assert_eq!(c.rule.as_deref(), Some("permission prompt"));
    assert_eq!(c.screen.title, "✳ Claude Code");
    assert_eq!(c.screen.rows, vec![" row one", "", "❯ 1. Yes", ""]);
    let bad: &[(&str, &str, &str)] = &[
        (
            "/c/claude/idle-x.screen",
            "agent: claude\nexpect: idle\n",
            "no `---` line",
        ),
        (
            "/c/claude/idle-x.screen",
            "agent: claude\nexpct: idle\n---\n",
            "unknown header `expct`",
        ),
        (
            "/c/claude/idle-x.screen",
            "agent: claude\n---\n",
            "header `expect` is missing",
        ),
        (
            "/c/claude/idle-x.screen",
            "agent: claude\nexpect: sleepy\n---\n",
            "is not one of",
        ),
        (
            "/c/claude/done-x.screen",
            "agent: claude\nexpect: idle\n---\n",
            "should start with `idle-`",
        ),
        (
            "/c/codex/idle-x.screen",
            "agent: claude\nexpect: idle\n---\n",
            "in the folder \"codex\"",
        ),
    ];
    for (path, text, want) in bad {
        let e = parse_capture(Path::new(path), text).unwrap_err();
        assert!(e.contains(want), "{text:?}: {e}");
    }
}
