//! The edits as text before and after, for each agent: what install inserts,
//! that a second install adds nothing, and that removing nerdr's entries
//! gives the text back.

use super::edit::{apply, shifted, unapply, EditError, Planned};
use super::{claude, codex, copilot};

const HOOK: &str = r#""\"${NERDR_BIN:-nerdr}\" hook "#;

/// Claude's entry for `ev`, laid out at `ind` with step `u` (written out
/// independently of the renderer).
fn ce(ind: &str, u: &str, ev: &str) -> String {
    format!(
        "{{\n{ind}{u}\"matcher\": \"\",\n{ind}{u}\"hooks\": [\n{ind}{u}{u}{{\n\
         {ind}{u}{u}{u}\"type\": \"command\",\n{ind}{u}{u}{u}\"command\": {HOOK}{ev}\"\n\
         {ind}{u}{u}}}\n{ind}{u}]\n{ind}}}"
    )
}

/// An event member holding only nerdr's entry.
fn cm(ind: &str, u: &str, ev: &str) -> String {
    format!(
        "\"{ev}\": [\n{ind}{u}{}\n{ind}]",
        ce(&format!("{ind}{u}"), u, ev)
    )
}

struct Case {
    name: &'static str,
    before: Option<&'static str>,
    after: String,
    /// What removing entries by what they run (the way for a file the user
    /// changed) leaves, when it is not `before` byte for byte.
    removed: Option<&'static str>,
}

fn claude_cases() -> Vec<Case> {
    let all5 = |ind: &str, u: &str| {
        [
            cm(ind, u, "SessionStart"),
            cm(ind, u, "UserPromptSubmit"),
            cm(ind, u, "Stop"),
            cm(ind, u, "Notification"),
            cm(ind, u, "PostToolUse"),
        ]
        .join(&format!(",\n{ind}"))
    };
    vec![
        Case {
            name: "no file",
            before: None,
            after: format!("{{\n  \"hooks\": {{\n    {}\n  }}\n}}\n", all5("    ", "  ")),
            removed: Some("{}\n"),
        },
        Case {
            name: "an empty object",
            before: Some("{}\n"),
            after: format!("{{\n  \"hooks\": {{\n    {}\n  }}\n}}\n", all5("    ", "  ")),
            removed: None,
        },
        Case {
            name: "other settings, four-space indent, comments, key order kept",
            before: Some("{\n    // mine\n    \"model\": \"opus\",\n    \"env\": {\"A\": \"1\"} /* x */\n}"),
            // The comment written after `env` stays with it.
            after: format!(
                "{{\n    // mine\n    \"model\": \"opus\",\n    \"env\": {{\"A\": \"1\"}}, /* x */\n    \"hooks\": {{\n        {}\n    }}\n}}",
                all5("        ", "    ")
            ),
            removed: None,
        },
        Case {
            name: "tabs",
            before: Some("{\n\t\"model\": \"opus\"\n}\n"),
            after: format!(
                "{{\n\t\"model\": \"opus\",\n\t\"hooks\": {{\n\t\t{}\n\t}}\n}}\n",
                all5("\t\t", "\t")
            ),
            removed: None,
        },
        Case {
            name: "other hooks present: entries appended, missing events added",
            before: Some(
                "{\n  \"hooks\": {\n    \"Stop\": [\n      {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"notify-send done\"}]}\n    ],\n    \"PreToolUse\": []\n  }\n}\n",
            ),
            after: format!(
                "{{\n  \"hooks\": {{\n    \"Stop\": [\n      {{\"matcher\": \"\", \"hooks\": [{{\"type\": \"command\", \"command\": \"notify-send done\"}}]}},\n      {}\n    ],\n    \"PreToolUse\": [],\n    {},\n    {},\n    {},\n    {}\n  }}\n}}\n",
                ce("      ", "  ", "Stop"),
                cm("    ", "  ", "SessionStart"),
                cm("    ", "  ", "UserPromptSubmit"),
                cm("    ", "  ", "Notification"),
                cm("    ", "  ", "PostToolUse"),
            ),
            removed: None,
        },
        Case {
            name: "empty event arrays in a file that opens on one line",
            before: Some("{ \"hooks\" :{\n \"SessionStart\":[ ], \"UserPromptSubmit\": [], \"Stop\": [\n ]}}"),
            // Entries are objects, so each goes on lines of its own.
            after: format!(
                "{{ \"hooks\" :{{\n \"SessionStart\":[\n      {}\n     ], \"UserPromptSubmit\": [\n      {}\n    ], \"Stop\": [\n      {}\n ],\n    {},\n    {}}}}}",
                ce("      ", "  ", "SessionStart"),
                ce("      ", "  ", "UserPromptSubmit"),
                ce("      ", "  ", "Stop"),
                cm("    ", "  ", "Notification"),
                cm("    ", "  ", "PostToolUse"),
            ),
            // `[ ]` and `[\n ]` come back as `[]`; the members install
            // appended leave their line break.
            removed: Some("{ \"hooks\" :{\n \"SessionStart\":[], \"UserPromptSubmit\": [], \"Stop\": []\n}}"),
        },
        Case {
            name: "an inline array in a laid-out file",
            before: Some("{\n  \"hooks\": {\n    \"Stop\": [ {\"hooks\": []} ],\n    \"SessionStart\": [],\n    \"UserPromptSubmit\": [\n    ]\n  }\n}\n"),
            after: format!(
                "{{\n  \"hooks\": {{\n    \"Stop\": [ {{\"hooks\": []}},\n      {} ],\n    \"SessionStart\": [\n      {}\n    ],\n    \"UserPromptSubmit\": [\n      {}\n    ],\n    {},\n    {}\n  }}\n}}\n",
                ce("      ", "  ", "Stop"),
                ce("      ", "  ", "SessionStart"),
                ce("      ", "  ", "UserPromptSubmit"),
                cm("    ", "  ", "Notification"),
                cm("    ", "  ", "PostToolUse"),
            ),
            // The empty arrays' insides go with nerdr's entries; the line
            // break before Stop's entry stays.
            removed: Some("{\n  \"hooks\": {\n    \"Stop\": [ {\"hooks\": []}\n ],\n    \"SessionStart\": [],\n    \"UserPromptSubmit\": []\n  }\n}\n"),
        },
        Case {
            name: "a blank line at the top of the object it appends to stays",
            before: Some("{\n\n  \"model\": \"opus\"\n}\n"),
            after: format!(
                "{{\n\n  \"model\": \"opus\",\n  \"hooks\": {{\n    {}\n  }}\n}}\n",
                all5("    ", "  ")
            ),
            removed: None,
        },
        Case {
            name: "blank lines in the hooks object and an event array stay",
            before: Some("{\n  \"hooks\": {\n\n    \"Stop\": [\n\n      {\"hooks\": []}\n\n    ]\n  }\n}\n"),
            after: format!(
                "{{\n  \"hooks\": {{\n\n    \"Stop\": [\n\n      {{\"hooks\": []}},\n      {}\n    ],\n    {},\n    {},\n    {},\n    {}\n  }}\n}}\n",
                ce("      ", "  ", "Stop"),
                cm("    ", "  ", "SessionStart"),
                cm("    ", "  ", "UserPromptSubmit"),
                cm("    ", "  ", "Notification"),
                cm("    ", "  ", "PostToolUse"),
            ),
            // The blank line before `]` went into the insertions, and removing
            // nerdr's entry takes it along.
            removed: Some("{\n  \"hooks\": {\n\n    \"Stop\": [\n\n      {\"hooks\": []}\n    ]\n  }\n}\n"),
        },
        Case {
            name: "a one-line object gets a member per line, with only insertions",
            before: Some(r#"{"model": "opus"}"#),
            after: format!(
                "{{\n  \"model\": \"opus\",\n  \"hooks\": {{\n    {}\n  }}\n}}",
                all5("    ", "  ")
            ),
            removed: Some("{\n  \"model\": \"opus\"\n}"),
        },
    ]
}

fn check(
    case: &Case,
    plan: impl Fn(Option<&str>) -> Result<Planned, EditError>,
    remove: impl Fn(&str, &[Vec<String>]) -> Result<String, EditError>,
) {
    let Planned::Plan(p) = plan(case.before).unwrap() else {
        panic!("{}: nothing planned", case.name)
    };
    let before = case.before.unwrap_or("");
    let after = apply(before, &p.inserts);
    assert_eq!(after, case.after, "{}: install", case.name);
    assert_eq!(
        plan(Some(&after)).unwrap(),
        Planned::Already,
        "{}: a second install",
        case.name
    );
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(before),
        "{}: undo",
        case.name
    );
    let removed = remove(&after, &p.created).unwrap();
    assert_eq!(
        removed,
        case.removed.unwrap_or(before),
        "{}: removal",
        case.name
    );
}

#[test]
fn claude_install_and_removal() {
    for case in claude_cases() {
        check(
            &case,
            |b| claude::TARGET.plan_install(b),
            |t, c| claude::TARGET.remove(t, c),
        );
    }
}

#[test]
fn claude_is_refused_on_files_it_cannot_read_as_settings() {
    for (before, want) in [
        (
            "{\"model\": \"opus\",,}",
            "not valid JSON at line 1, column 18",
        ),
        (
            "[1]",
            "`(the top level)` is an array, but the agent expects an object",
        ),
        (
            "{\"hooks\": [\"x\"]}",
            "`hooks` is an array, but the agent expects an object of event names",
        ),
        (
            "{\"hooks\": {\"Stop\": null}}",
            "`hooks.Stop` is null, but the agent expects an array of hooks",
        ),
    ] {
        let err = claude::TARGET
            .plan_install(Some(before))
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{before}: {err}");
        assert!(err.contains("then run this command again"), "{err}");
    }
}

#[test]
fn a_crlf_file_gets_crlf_lines_and_comes_back_byte_for_byte() {
    let before = "{\r\n  // mine\r\n  \"model\": \"opus\"\r\n}\r\n";
    let Planned::Plan(p) = claude::TARGET.plan_install(Some(before)).unwrap() else {
        panic!("nothing planned")
    };
    let after = apply(before, &p.inserts);
    assert!(after.contains("hook Stop"), "{after}");
    assert_eq!(
        after.matches('\n').count(),
        after.matches("\r\n").count(),
        "a bare line feed in:\n{after}"
    );
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(before)
    );
    assert_eq!(claude::TARGET.remove(&after, &p.created).unwrap(), before);
}

#[test]
fn blank_lines_the_cst_drops_stay_and_the_install_is_only_insertions() {
    // The CST drops the blank line at the top of the object it appends to;
    // install keeps it, so the file keeps every byte it had.
    let before = "{\n\n  \"model\": \"opus\"\n}\n";
    let Planned::Plan(p) = claude::TARGET.plan_install(Some(before)).unwrap() else {
        panic!("nothing planned")
    };
    let after = apply(before, &p.inserts);
    assert!(
        after.starts_with("{\n\n  \"model\": \"opus\",\n  \"hooks\": {\n"),
        "{after}"
    );
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(before)
    );
}

#[test]
fn a_file_with_trailing_commas_gets_its_hooks_once_and_loses_them_again() {
    // The CST writes nerdr's entries with trailing commas in such a file;
    // they are still nerdr's, for a second install and for removal.
    let before = "{\n  \"model\": \"opus\",\n}\n";
    let Planned::Plan(p) = claude::TARGET.plan_install(Some(before)).unwrap() else {
        panic!("nothing planned")
    };
    let after = apply(before, &p.inserts);
    assert!(after.contains("hook Stop\",\n"), "{after}");
    assert_eq!(
        claude::TARGET.plan_install(Some(&after)).unwrap(),
        Planned::Already
    );
    assert_eq!(claude::TARGET.remove(&after, &p.created).unwrap(), before);
}

#[test]
fn claude_removal_keeps_other_hooks_in_a_shared_group() {
    let shared = format!(
        "{{\"hooks\": {{\"Stop\": [{{\"matcher\": \"\", \"hooks\": [{{\"type\": \"command\", \"command\": \"mine\"}}, {{\"type\": \"command\", \"command\": {HOOK}Stop\"}}]}}]}}}}"
    );
    let out = claude::TARGET.remove(&shared, &[]).unwrap();
    assert_eq!(
        out,
        "{\"hooks\": {\"Stop\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]}}"
    );
}

#[test]
fn claude_removal_after_the_user_edited_around_the_entries() {
    let before = "{\n  \"model\": \"opus\"\n}\n";
    let Planned::Plan(p) = claude::TARGET.plan_install(Some(before)).unwrap() else {
        panic!()
    };
    let after = apply(before, &p.inserts);
    // The user adds a hook of their own next to nerdr's, and a setting.
    let edited = after
        .replace(
            &format!("      {}\n    ],\n    \"UserPromptSubmit\"", ce("      ", "  ", "SessionStart")),
            &format!(
                "      {},\n      {{\"hooks\": [{{\"type\": \"command\", \"command\": \"mine\"}}]}}\n    ],\n    \"UserPromptSubmit\"",
                ce("      ", "  ", "SessionStart")
            ),
        )
        .replace("\"model\"", "\"theme\": \"dark\",\n  \"model\"");
    assert_ne!(edited, after);
    let out = claude::TARGET.remove(&edited, &p.created).unwrap();
    assert_eq!(
        out,
        "{\n  \"theme\": \"dark\",\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}\n    ]\n  }\n}\n"
    );
}

#[test]
fn copilot_gets_a_file_of_its_own() {
    let entry = |ind: &str, ev: &str, nerdr: &str| {
        format!(
            "\"{ev}\": [\n{ind}  {{\n{ind}    \"type\": \"command\",\n{ind}    \"bash\": {HOOK}{nerdr}\"\n{ind}  }}\n{ind}]"
        )
    };
    let fresh = format!(
        "{{\n  \"version\": 1,\n  \"hooks\": {{\n    {},\n    {},\n    {},\n    {}\n  }}\n}}\n",
        entry("    ", "sessionStart", "SessionStart"),
        entry("    ", "userPromptSubmitted", "UserPromptSubmit"),
        entry("    ", "agentStop", "Stop"),
        entry("    ", "postToolUse", "PostToolUse"),
    );
    let cases = [
        Case {
            name: "no file",
            before: None,
            after: fresh,
            removed: Some("{\n  \"version\": 1\n}\n"),
        },
        Case {
            name: "a file the user wrote there",
            before: Some("{\"version\": 1, \"hooks\": {\"agentStop\": [{\"bash\": \"mine\"}]}}"),
            after: format!(
                "{{\"version\": 1, \"hooks\": {{\n    \"agentStop\": [{{\"bash\": \"mine\"}},\n      {{\n        \"type\": \"command\",\n        \"bash\": {HOOK}Stop\"\n      }}],\n    {},\n    {},\n    {}\n  }}}}",
                entry("    ", "sessionStart", "SessionStart"),
                entry("    ", "userPromptSubmitted", "UserPromptSubmit"),
                entry("    ", "postToolUse", "PostToolUse"),
            ),
            removed: Some("{\"version\": 1, \"hooks\": {\n    \"agentStop\": [{\"bash\": \"mine\"}\n]\n  }}"),
        },
    ];
    for case in cases {
        check(
            &case,
            |b| copilot::TARGET.plan_install(b),
            |t, c| copilot::TARGET.remove(t, c),
        );
    }
    assert!(copilot::TARGET.is_bare("{\n  \"version\": 1\n}\n"));
    assert!(!copilot::TARGET.is_bare("{\"version\": 1, \"x\": 2}"));
}

#[test]
fn codex_install_and_removal() {
    let line = codex::notify_line();
    assert_eq!(
        line,
        r#"notify = ["sh", "-c", '[ -n "$NERDR_TAB" ] || exit 0; exec "${NERDR_BIN:-nerdr}" hook Stop "$1"', "nerdr-hook"]"#
    );
    let cases = [
        ("no file", None, format!("{line}\n"), None),
        ("an empty file", Some(""), format!("{line}\n"), None),
        (
            "top-level keys, then tables",
            Some("model = \"o3\" # best\n\n[tui]\nnotifications = true\n"),
            format!("model = \"o3\" # best\n{line}\n\n[tui]\nnotifications = true\n"),
            None,
        ),
        (
            "a multi-line array last, no blank line before the table",
            Some("writable = [\n  \"a\",\n]\n[x]\ny = 1"),
            format!("writable = [\n  \"a\",\n]\n{line}\n[x]\ny = 1"),
            None,
        ),
        (
            "no newline at the end",
            Some("model = \"o3\""),
            format!("model = \"o3\"\n{line}"),
            Some("model = \"o3\"\n"),
        ),
        (
            "only tables, after a comment",
            Some("# my codex\n[tui]\nx = 1\n"),
            format!("{line}\n\n# my codex\n[tui]\nx = 1\n"),
            Some("\n# my codex\n[tui]\nx = 1\n"),
        ),
        (
            "a dotted key at the top",
            Some("a.b = 1\n\n[t]\nc = 2\n"),
            format!("a.b = 1\n{line}\n\n[t]\nc = 2\n"),
            None,
        ),
        (
            "a multi-line string does not hide a table header",
            Some("s = '''\n[not]\n'''\n[t]\n"),
            format!("s = '''\n[not]\n'''\n{line}\n[t]\n"),
            None,
        ),
    ];
    let file = std::path::Path::new("/h/.codex/config.toml");
    for (name, before, after, removed) in cases {
        let case = Case {
            name,
            before,
            after,
            removed,
        };
        check(
            &case,
            |b| codex::plan_install(b, file),
            |t, _| codex::remove(t),
        );
    }
}

#[test]
fn codex_never_replaces_someone_elses_notify() {
    let file = std::path::Path::new("/h/.codex/config.toml");
    let err = codex::plan_install(
        Some("model = \"o3\"\nnotify = [\"notify-send\", \"codex\"]\n"),
        file,
    )
    .unwrap_err()
    .to_string();
    for want in [
        "`notify` is already set (line 2) to [\"notify-send\", \"codex\"]",
        "nerdr will not replace yours",
        "codex does not tell nerdr when its turns end",
        "remove that line from /h/.codex/config.toml",
        "then run `nerdr integration install codex` again",
    ] {
        assert!(err.contains(want), "{want:?} not in: {err}");
    }
    let err = codex::plan_install(Some("model = \n"), file)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not valid TOML at line 1, column 9"), "{err}");
}

/// An install made by an older nerdr (fewer events) gets only the events it
/// lacks, as a layer of its own; a third install adds nothing; uninstall
/// takes both layers off.
#[test]
fn an_older_install_gets_the_new_events_once() {
    let older = format!(
        "{{\n  \"hooks\": {{\n    {},\n    {},\n    {}\n  }}\n}}\n",
        cm("    ", "  ", "SessionStart"),
        cm("    ", "  ", "UserPromptSubmit"),
        cm("    ", "  ", "Stop"),
    );
    let Planned::Plan(p) = claude::TARGET.plan_install(Some(&older)).unwrap() else {
        panic!("nothing planned over an older install")
    };
    assert_eq!(p.events, ["Notification", "PostToolUse"]);
    let after = apply(&older, &p.inserts);
    assert_eq!(
        after,
        format!(
            "{{\n  \"hooks\": {{\n    {},\n    {},\n    {},\n    {},\n    {}\n  }}\n}}\n",
            cm("    ", "  ", "SessionStart"),
            cm("    ", "  ", "UserPromptSubmit"),
            cm("    ", "  ", "Stop"),
            cm("    ", "  ", "Notification"),
            cm("    ", "  ", "PostToolUse"),
        )
    );
    assert_eq!(
        claude::TARGET.plan_install(Some(&after)).unwrap(),
        Planned::Already
    );
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(older.as_str())
    );
}
