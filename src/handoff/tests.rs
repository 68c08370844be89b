//! Table tests of the parsers against recorded logs (tests/fixtures/handoff:
//! claude 2.1.197 `-p`, codex-cli 0.171.0 `exec`, opencode 1.18.33 `run`,
//! each against the fake model server in a temporary HOME: a first request
//! answered in words, then one answered through the shell tool), and of the
//! document's bounds.

use super::*;

const CLAUDE: &str = include_str!("../../tests/fixtures/handoff/claude-session.jsonl");
const CODEX: &str = include_str!("../../tests/fixtures/handoff/codex-rollout.jsonl");
const OPENCODE: &str = include_str!("../../tests/fixtures/handoff/opencode-export.json");
const OPENCODE_LIST: &str = include_str!("../../tests/fixtures/handoff/opencode-session-list.json");

fn ex(request: &str, answer: &str) -> Exchange {
    Exchange {
        request: request.into(),
        answer: answer.into(),
    }
}

#[test]
fn each_recorded_log_reads_as_its_two_exchanges_without_tool_noise() {
    let recorded: [(&str, Vec<Said>); 3] = [
        ("claude", claude::parse(CLAUDE)),
        ("codex", codex::parse(CODEX)),
        ("opencode", opencode::parse(OPENCODE).unwrap()),
    ];
    for (agent, said) in recorded {
        let got = pair(said);
        // opencode keeps `run`'s words as given, quoted.
        let q = if agent == "opencode" { "\"" } else { "" };
        assert_eq!(
            got,
            vec![
                ex(
                    &format!("{q}Please look at the parser and say hello{q}"),
                    "Hello from the fake model."
                ),
                ex(
                    &format!("{q}Now RUN-TOOL to check it{q}"),
                    "The command ran; done."
                ),
            ],
            "{agent}"
        );
    }
}

#[test]
fn claude_lines_that_are_noise() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, Option<Said>)] = &[
        ("a person's words", r#"{"type":"user","message":{"role":"user","content":"fix it"}}"#, Some(Said::Request("fix it".into()))),
        ("words in blocks", r#"{"type":"user","message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}"#, Some(Said::Request("a\nb".into()))),
        ("a tool's result", r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]}}"#, None),
        ("claude's own note", r#"{"type":"user","isMeta":true,"message":{"content":"Caveat: x"}}"#, None),
        ("a slash command's echo", r#"{"type":"user","message":{"content":"<command-name>/clear</command-name>"}}"#, None),
        ("a sub-agent's line", r#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"text","text":"x"}]}}"#, None),
        ("a tool call", r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Bash"}]}}"#, None),
        ("an answer", r#"{"type":"assistant","message":{"content":[{"type":"thinking"},{"type":"text","text":"done"}]}}"#, Some(Said::Answer("done".into()))),
        ("another kind of line", r#"{"type":"attachment","attachment":{}}"#, None),
        ("a line cut short", r#"{"type":"user","mess"#, None),
    ];
    for (what, line, want) in rows {
        assert_eq!(claude::line(line), *want, "{what}");
    }
}

#[test]
fn codex_lines_that_are_noise() {
    #[rustfmt::skip]
    let rows: &[(&str, &str, Option<Said>)] = &[
        ("a person's words", r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix it"}]}}"#, Some(Said::Request("fix it".into()))),
        ("codex's context", r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}"#, None),
        ("AGENTS.md", r##"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /w"}]}}"##, None),
        ("the developer role", r#"{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}"#, None),
        ("a call", r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command"}}"#, None),
        ("the event copy", r#"{"type":"event_msg","payload":{"type":"agent_message","message":"done"}}"#, None),
        ("an answer", r#"{"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}"#, Some(Said::Answer("done".into()))),
    ];
    for (what, line, want) in rows {
        assert_eq!(codex::line(line), *want, "{what}");
    }
    let first = CODEX.lines().next().unwrap();
    let (id, cwd) = codex::meta(first).unwrap();
    assert_eq!(id, "01a236e9-60bc-7b00-96ce-f4b2605f7753");
    assert_eq!(cwd, std::path::PathBuf::from("/tmp/i19h-rec/proj"));
}

#[test]
fn opencode_s_list_names_the_newest_session_of_the_folder() {
    let p = std::path::Path::new;
    assert_eq!(
        opencode::newest_in(OPENCODE_LIST, p("/tmp/i19h-rec/proj")).unwrap(),
        Some("ses_dc915f132ffeJiXmVitD6upj0j".into())
    );
    assert_eq!(
        opencode::newest_in(OPENCODE_LIST, p("/elsewhere")).unwrap(),
        None
    );
    let two =
        r#"[{"id":"old","directory":"/w","updated":1},{"id":"new","directory":"/w","updated":9}]"#;
    assert_eq!(
        opencode::newest_in(two, p("/w")).unwrap(),
        Some("new".into())
    );
    assert!(opencode::newest_in("Session ID  Title", p("/w"))
        .unwrap_err()
        .contains("no JSON"));
    // A line before the JSON, and synthetic text, are skipped.
    let export = r#"Exporting session: x
{"messages":[{"info":{"role":"user"},"parts":[{"type":"text","text":"go"},{"type":"text","synthetic":true,"text":"file body"}]}]}"#;
    assert_eq!(
        opencode::parse(export).unwrap(),
        vec![Said::Request("go".into())]
    );
    assert!(opencode::parse("nothing").is_err());
}

#[test]
fn claude_files_a_folder_s_logs_under_its_path_with_dashes() {
    for (cwd, want) in [
        ("/tmp/i19h-rec/proj", "-tmp-i19h-rec-proj"),
        (
            "/home/u/.local/share/nerdr/worktrees/p/ab12",
            "-home-u--local-share-nerdr-worktrees-p-ab12",
        ),
        ("/a_b c", "-a-b-c"),
        ("/w/ab12/", "-w-ab12"),
    ] {
        assert_eq!(claude::project_folder(std::path::Path::new(cwd)), want);
    }
}

#[test]
fn pairing_and_bounds() {
    use Said::*;
    let said = vec![
        Answer("a resumed log's tail".into()),
        Request("r1".into()),
        Answer("a1".into()),
        Answer("a1b".into()),
        Request("r2".into()),
    ];
    assert_eq!(
        pair(said),
        vec![
            ex("", "a resumed log's tail"),
            ex("r1", "a1\na1b"),
            ex("r2", "")
        ]
    );
    #[rustfmt::skip]
    let rows: &[(&str, usize, usize, usize, usize)] = &[
        // (what, exchanges, bytes each part, kept, left out)
        ("few and small: all", 3, 10, 3, 0),
        ("many: the last five", 9, 10, 5, 4),
        ("big: the newest that fit in 8 KiB", 5, 1500, 2, 3),
        ("huge parts are cut, one stays", 1, 50_000, 1, 0),
    ];
    for (what, n, size, kept, left) in rows {
        let all: Vec<Exchange> = (0..*n)
            .map(|i| ex(&format!("{i}{}", "r".repeat(*size)), &"a".repeat(*size)))
            .collect();
        let (got, out) = bound(&all);
        assert_eq!((got.len(), out), (*kept, *left), "{what}");
        assert!(
            got.last()
                .unwrap()
                .request
                .starts_with(&format!("{}", n - 1)),
            "{what}: newest kept"
        );
        let bytes: usize = got.iter().map(|e| e.request.len() + e.answer.len()).sum();
        assert!(bytes <= MAX_BYTES, "{what}: {bytes}");
    }
    // A cut never splits a character.
    let wide = "é".repeat(MAX_PART);
    let (got, _) = bound(&[ex(&wide, "")]);
    assert!(got[0].request.ends_with(" [...]"));
}

#[test]
fn the_built_document_says_what_was_done_what_is_next_and_what_is_open() {
    let from = From {
        tab: "claude-1 (ab12)".into(),
        agent: "claude".into(),
        worktree: Some(("/w/ab12".into(), "nerdr/ab12".into())),
    };
    let doc = document(
        &from,
        &[ex(
            "add a parser",
            "Added it. Should it accept tabs? The tests pass.",
        )],
    )
    .unwrap();
    for want in [
        "# Handoff from tab claude-1 (ab12, claude), worktree /w/ab12 on branch nerdr/ab12",
        "## What was done",
        "Request 1: add a parser",
        "Answer 1: Added it.",
        "## What is next",
        "## Open questions\n- Should it accept tabs?",
    ] {
        assert!(doc.contains(want), "{want:?} in:\n{doc}");
    }
    let pending = document(&from, &[ex("a", "b"), ex("now this", "")]).unwrap();
    assert!(
        pending.contains("The last request got no answer yet: now this"),
        "{pending}"
    );
    assert!(pending.contains("None asked"), "{pending}");
    assert_eq!(document(&from, &[]), None);
    assert_eq!(document(&from, &[ex(" ", "")]), None);
}

#[test]
fn the_prompt_is_one_line_without_control_characters() {
    let p = as_prompt(
        "# Handoff\n\nline \x1b[2J two\r\nthree",
        Some(crate::review::SANDBOX_NOTE),
    );
    assert!(p.starts_with(crate::review::SANDBOX_NOTE), "{p}");
    assert!(p.ends_with("# Handoff | line  two | three"), "{p}");
    assert!(!p.chars().any(char::is_control), "{p}");
    // A handoff that ends a bracketed paste and sets a title: the whole
    // sequences go, not only their ESC.
    let p = as_prompt("done\x1b[201~\x03rm -rf .\x1b]0;x\x07 ok", None);
    assert!(p.ends_with("donerm -rf . ok"), "{p}");
    assert!(!as_prompt("x", None).contains("sandbox"));
}
