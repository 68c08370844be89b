//! claude's `statusLine`, which install sets when the file has none, for
//! the plan limits claude gives its status-line command (`crate::usage`).

use super::claude::{TARGET, WITH_STATUS_LINE};
use super::edit::{apply, shifted, unapply, Planned};

const OURS: &str = "\"${NERDR_BIN:-nerdr}\" hook claude-statusline";

fn install(before: Option<&str>) -> (String, Vec<String>, Vec<Vec<String>>) {
    let Planned::Plan(p) = WITH_STATUS_LINE.plan_install(before).unwrap() else {
        panic!("nothing planned for {before:?}")
    };
    let after = apply(before.unwrap_or(""), &p.inserts);
    assert_eq!(
        WITH_STATUS_LINE.plan_install(Some(&after)).unwrap(),
        Planned::Already,
        "a second install adds nothing: {after}"
    );
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(before.unwrap_or("")),
        "undo gives the bytes back"
    );
    (after, p.events, p.created)
}

fn status_line(text: &str) -> serde_json::Value {
    serde_json::from_str::<serde_json::Value>(text).unwrap()["statusLine"].clone()
}

#[test]
fn a_file_without_a_status_line_gets_nerdrs() {
    for before in [None, Some("{}\n"), Some("{\n  \"model\": \"opus\"\n}\n")] {
        let (after, events, created) = install(before);
        assert_eq!(
            status_line(&after),
            serde_json::json!({"type": "command", "command": OURS}),
            "{before:?}"
        );
        assert!(events.contains(&"statusLine".to_string()), "{events:?}");
        assert!(WITH_STATUS_LINE.contains_nerdrs(&after).unwrap());
        assert_eq!(WITH_STATUS_LINE.single_of_others(&after), None);
        // Removal by what the entries run (a file changed since) takes the
        // status line out too.
        let removed = WITH_STATUS_LINE.remove(&after, &created).unwrap();
        assert_eq!(status_line(&removed), serde_json::Value::Null, "{removed}");
        assert!(!WITH_STATUS_LINE.contains_nerdrs(&removed).unwrap());
    }
}

#[test]
fn the_users_status_line_is_left_as_it_is() {
    let before = "{\n  \"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/line\"}\n}\n";
    let (after, events, created) = install(Some(before));
    assert!(!events.contains(&"statusLine".to_string()), "{events:?}");
    assert_eq!(
        status_line(&after),
        serde_json::json!({"type": "command", "command": "~/bin/line"})
    );
    assert_eq!(
        WITH_STATUS_LINE.single_of_others(&after).as_deref(),
        Some("~/bin/line")
    );
    let removed = WITH_STATUS_LINE.remove(&after, &created).unwrap();
    assert_eq!(removed, before);
}

#[test]
fn an_install_without_the_status_line_gets_it_as_a_layer_of_its_own() {
    let Planned::Plan(p) = TARGET.plan_install(None).unwrap() else {
        panic!()
    };
    let older = apply("", &p.inserts);
    let Planned::Plan(p) = WITH_STATUS_LINE.plan_install(Some(&older)).unwrap() else {
        panic!("nothing planned over an older install")
    };
    assert_eq!(p.events, ["statusLine"]);
    let after = apply(&older, &p.inserts);
    assert_eq!(
        unapply(&after, &shifted(&p.inserts)).as_deref(),
        Some(older.as_str())
    );
    // Only nerdr's status line: nerdr's all the same.
    let only = format!(
        "{{\"statusLine\": {{\"type\": \"command\", \"command\": \"{}\"}}}}",
        OURS.replace('"', "\\\"")
    );
    assert!(WITH_STATUS_LINE.contains_nerdrs(&only).unwrap());
    assert!(!TARGET.contains_nerdrs(&only).unwrap());
}

#[test]
fn a_status_line_changed_since_install_is_the_persons_and_stays() {
    let ours = OURS.replace('"', "\\\"");
    #[rustfmt::skip]
    let rows: &[(&str, String, bool)] = &[
        ("as nerdr wrote it", format!(r#"{{"type": "command", "command": "{ours}"}}"#), false),
        ("laid out otherwise", format!("{{\n\"command\":\"{ours}\",\n  \"type\":\"command\"}}"), false),
        ("a command added after nerdr's", format!(r#"{{"type": "command", "command": "{ours}; echo mine"}}"#), true),
        ("a member added", format!(r#"{{"type": "command", "command": "{ours}", "padding": 2}}"#), true),
        ("another command", r#"{"type": "command", "command": "~/bin/line"}"#.to_string(), true),
    ];
    for (what, line, kept) in rows {
        let text = format!("{{\n  \"statusLine\": {line}\n}}\n");
        let removed = WITH_STATUS_LINE
            .remove(&text, &[vec!["statusLine".to_string()]])
            .unwrap();
        assert_eq!(
            status_line(&removed) != serde_json::Value::Null,
            *kept,
            "{what}: {removed}"
        );
        assert_eq!(
            WITH_STATUS_LINE.contains_nerdrs(&text).unwrap(),
            !kept,
            "{what}"
        );
        assert_eq!(
            WITH_STATUS_LINE.single_of_others(&text).is_some(),
            *kept,
            "{what}"
        );
    }
}
