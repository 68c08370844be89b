//! Every rule of a reports line, one row each: the line, and the report or
//! the exact refusal.

use super::*;

fn own() -> TabNames {
    TabNames {
        id: "a1b2c3d4".into(),
        name: "claude-1".into(),
    }
}

fn state(event: &str, session_id: Option<&str>) -> Result<Report, Refusal> {
    Ok(Report::State {
        event: event.into(),
        session_id: session_id.map(Into::into),
    })
}

fn field(why: &str) -> Result<Report, Refusal> {
    Err(Refusal::BadField(why.into()))
}

#[test]
fn each_rule_row() {
    let long_why = format!(
        r#"{{"kind":"why","text":"{}"}}"#,
        "x".repeat(crate::why::MAX_TEXT + 1)
    );
    let rows: Vec<(&str, String, Result<Report, Refusal>)> = vec![
        (
            "a hook event",
            r#"{"kind":"state","event":"Stop"}"#.into(),
            state("Stop", None),
        ),
        (
            "a hook event with the session id",
            r#"{"kind":"state","event":"SessionStart","session_id":"5f0e-aa.1"}"#.into(),
            state("SessionStart", Some("5f0e-aa.1")),
        ),
        (
            "the tab's own id may be named",
            r#"{"kind":"state","event":"UserPromptSubmit","tab":"a1b2c3d4"}"#.into(),
            state("UserPromptSubmit", None),
        ),
        (
            "the tab's own name may be named",
            r#"{"kind":"state","event":"Stop","tab":"claude-1"}"#.into(),
            state("Stop", None),
        ),
        (
            "another tab is refused",
            r#"{"kind":"state","event":"Stop","tab":"ffff0000"}"#.into(),
            Err(Refusal::OtherTab("ffff0000".into())),
        ),
        (
            "another tab in a review is refused",
            r#"{"kind":"review","text":"ok","tab":"claude-2"}"#.into(),
            Err(Refusal::OtherTab("claude-2".into())),
        ),
        (
            "another tab in a reason is refused, its name made printable",
            "{\"kind\":\"why\",\"text\":\"t\",\"tab\":\"x\\u001b[2J\"}".into(),
            Err(Refusal::OtherTab("x\\u{1b}[2J".into())),
        ),
        (
            "an identity field of the writer's own is refused",
            r#"{"kind":"state","event":"Stop","tab_id":"ffff0000"}"#.into(),
            field("unknown field `tab_id`, expected one of `event`, `session_id`, `tab`"),
        ),
        (
            "a tab given as a number is refused",
            r#"{"kind":"state","event":"Stop","tab":7}"#.into(),
            field("invalid type: integer `7`, expected a string"),
        ),
        (
            "an unknown event",
            r#"{"kind":"state","event":"RunThis"}"#.into(),
            Err(Refusal::UnknownEvent("RunThis".into())),
        ),
        (
            "a session id that is no plain word",
            r#"{"kind":"state","event":"Stop","session_id":"--resume=x y"}"#.into(),
            field("`session_id` is not a plain word of at most 200 letters, digits, - _ . :"),
        ),
        (
            "a review",
            r###"{"kind":"review","text":"## Summary\nfine"}"###.into(),
            Ok(Report::Review {
                text: "## Summary\nfine".into(),
            }),
        ),
        (
            "an empty review",
            r#"{"kind":"review","text":"  "}"#.into(),
            field("`text` is empty or longer than 262144 bytes"),
        ),
        (
            "a reason for lines of a file",
            r#"{"kind":"why","text":"faster","file":"src/a.rs","lines":[3,5]}"#.into(),
            Ok(Report::Why {
                text: "faster".into(),
                file: Some("src/a.rs".into()),
                lines: Some((3, 5)),
            }),
        ),
        (
            "a reason for the whole change",
            r#"{"kind":"why","text":"cleanup"}"#.into(),
            Ok(Report::Why {
                text: "cleanup".into(),
                file: None,
                lines: None,
            }),
        ),
        (
            "a reason for a file outside the worktree",
            r#"{"kind":"why","text":"t","file":"../other/x"}"#.into(),
            field("`file` is not a path inside the worktree"),
        ),
        (
            "a reason for an absolute path",
            r#"{"kind":"why","text":"t","file":"/etc/passwd"}"#.into(),
            field("`file` is not a path inside the worktree"),
        ),
        (
            "lines backwards",
            r#"{"kind":"why","text":"t","file":"a","lines":[5,3]}"#.into(),
            field("`lines` is [A, B] with 1 <= A <= B, and needs a `file`"),
        ),
        (
            "lines without a file",
            r#"{"kind":"why","text":"t","lines":[1,2]}"#.into(),
            field("`lines` is [A, B] with 1 <= A <= B, and needs a `file`"),
        ),
        (
            "lines out of range",
            r#"{"kind":"why","text":"t","file":"a","lines":[1,-2]}"#.into(),
            field("invalid value: integer `-2`, expected u32"),
        ),
        (
            "a reason past why's limit",
            long_why,
            field(&crate::why::check_text(&"x".repeat(crate::why::MAX_TEXT + 1)).unwrap_err()),
        ),
        (
            "an unknown kind",
            r#"{"kind":"spinoff","text":"go"}"#.into(),
            Err(Refusal::UnknownKind("spinoff".into())),
        ),
        ("no kind", r#"{"event":"Stop"}"#.into(), field("no `kind`")),
        (
            "a kind that is no string",
            r#"{"kind":1}"#.into(),
            field("`kind` is not a string"),
        ),
        (
            "not an object",
            r#"["state","Stop"]"#.into(),
            Err(Refusal::NotJson("not an object".into())),
        ),
        (
            "not JSON",
            "state Stop".into(),
            Err(Refusal::NotJson("expected value at line 1 column 1".into())),
        ),
        (
            "a line past the limit",
            format!(
                r#"{{"kind":"review","text":"{}"}}"#,
                "x".repeat(crate::file_reports::MAX_LINE)
            ),
            Err(Refusal::TooLong),
        ),
    ];
    for (sentence, line, want) in rows {
        assert_eq!(check(line.as_bytes(), &own()), want, "{sentence}");
    }
}

#[test]
fn every_refusal_reads_as_a_sentence() {
    let rows = [
        (Refusal::TooLong, "the line is longer than 655360 bytes"),
        (
            Refusal::OtherTab("t2".into()),
            "the line names tab \"t2\", not the tab whose worktree the file is in: a file reports for its own tab only",
        ),
        (
            Refusal::UnknownKind("x".into()),
            "unknown kind \"x\": a line is a \"state\", \"review\" or \"why\"",
        ),
    ];
    for (r, want) in rows {
        assert_eq!(r.to_string(), want);
    }
}

#[test]
fn a_refusal_s_class_does_not_carry_the_writer_s_words() {
    let rows = [
        (Refusal::TooLong, "too-long"),
        (Refusal::NotJson("x".into()), "not-json"),
        (Refusal::UnknownKind("k1".into()), "unknown-kind"),
        (Refusal::UnknownKind("k2".into()), "unknown-kind"),
        (Refusal::UnknownEvent("e".into()), "unknown-event"),
        (Refusal::BadField("f".into()), "bad-field"),
        (Refusal::OtherTab("t".into()), "other-tab"),
    ];
    for (r, want) in rows {
        assert_eq!(r.class(), want, "{r:?}");
    }
}
