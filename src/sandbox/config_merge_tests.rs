use super::*;

const CLAUDE_LIKE: Carry = Carry::AllBut(&[
    Rule {
        key: &["mcpServers"],
        why: "MCP servers",
    },
    Rule {
        key: &["projects", "*", "mcpServers"],
        why: "MCP servers",
    },
    Rule {
        key: &["projects", "*", "hasTrustDialogAccepted"],
        why: "trust",
    },
]);

const CODEX_LIKE: Carry = Carry::Only(&[
    Rule {
        key: &["notice"],
        why: "notices",
    },
    Rule {
        key: &["model"],
        why: "model",
    },
]);

fn keys(m: &Merged) -> Vec<&str> {
    m.refused.iter().map(|r| r.key.as_str()).collect()
}

#[test]
fn json_safe_keys_come_back_and_program_keys_do_not() {
    let base = "{\n  \"numStartups\": 1,\n  \"projects\": {\n    \"/p\": {\n      \"lastCost\": 0\n    }\n  }\n}\n";
    let ours = r#"{
  "numStartups": 2,
  "oauthAccount": {"email": "u@example.com"},
  "mcpServers": {"evil": {"command": "sh"}},
  "projects": {
    "/p": {"lastCost": 3, "mcpServers": {"x": {"command": "sh"}}, "hasTrustDialogAccepted": true},
    "/q": {"hasTrustDialogAccepted": true, "allowedTools": []}
  }
}"#;
    // The host changed another key meanwhile: kept.
    let theirs = base.replace(
        "\"numStartups\": 1,",
        "\"numStartups\": 1,\n  \"theme\": \"light\",",
    );
    let m = merge(Format::Json, CLAUDE_LIKE, Some(base), ours, Some(&theirs)).unwrap();
    assert_eq!(
        keys(&m),
        [
            "mcpServers",
            "projects[\"/p\"].hasTrustDialogAccepted",
            "projects[\"/p\"].mcpServers",
            "projects[\"/q\"].hasTrustDialogAccepted",
        ]
    );
    let text = m.text.unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["numStartups"], 2);
    assert_eq!(v["theme"], "light");
    assert_eq!(v["oauthAccount"]["email"], "u@example.com");
    assert_eq!(v["projects"]["/p"]["lastCost"], 3);
    assert_eq!(v["projects"]["/q"]["allowedTools"], serde_json::json!([]));
    assert!(v.get("mcpServers").is_none());
    assert!(v["projects"]["/p"].get("mcpServers").is_none());
    assert!(v["projects"]["/q"].get("hasTrustDialogAccepted").is_none());
    // Layout kept: the untouched member is byte for byte where it was.
    assert!(
        text.starts_with("{\n  \"numStartups\": 2,\n  \"theme\": \"light\",\n"),
        "{text}"
    );
}

#[test]
fn json_changes_and_removals_of_protected_keys_are_refused_too() {
    let base = r#"{"mcpServers": {"mine": {"command": "a"}}, "projects": {"/p": {"mcpServers": {"x": {}}}}}"#;
    let ours = r#"{"mcpServers": {"mine": {"command": "b"}}, "projects": {}}"#;
    let m = merge(Format::Json, CLAUDE_LIKE, Some(base), ours, Some(base)).unwrap();
    assert_eq!(keys(&m), ["mcpServers", "projects[\"/p\"].mcpServers"]);
    assert_eq!(m.text, None, "nothing safe changed: the file is left alone");
}

#[test]
fn json_a_container_of_protected_keys_turned_into_a_scalar_is_refused() {
    let base = r#"{"projects": {"/p": {}}}"#;
    let ours = r#"{"projects": "x"}"#;
    let m = merge(Format::Json, CLAUDE_LIKE, Some(base), ours, Some(base)).unwrap();
    assert_eq!(keys(&m), ["projects"]);
    assert_eq!(m.text, None);
}

#[test]
fn json_a_missing_real_file_gets_only_the_safe_keys() {
    let ours = r#"{"userID": "u", "mcpServers": {"e": {"command": "sh"}}}"#;
    let m = merge(Format::Json, CLAUDE_LIKE, None, ours, None).unwrap();
    assert_eq!(keys(&m), ["mcpServers"]);
    let v: Value = serde_json::from_str(&m.text.unwrap()).unwrap();
    assert_eq!(v, serde_json::json!({"userID": "u"}));
}

#[test]
fn json_members_are_inserted_removed_and_replaced_in_place() {
    // (theirs, path, value, want)
    let rows: &[(&str, &[&str], Option<Value>, &str)] = &[
        ("{}", &["a"], Some(1.into()), "{\n  \"a\": 1\n}"),
        // An object that gains a member is laid out one per line (the CST's
        // way).
        (
            "{\"a\": 1}",
            &["b"],
            Some(2.into()),
            "{\n  \"a\": 1,\n  \"b\": 2\n}",
        ),
        (
            "{\n    \"a\": 1\n}",
            &["b"],
            Some(2.into()),
            "{\n    \"a\": 1,\n    \"b\": 2\n}",
        ),
        // The space after the removed member's comma stays.
        ("{\"a\": 1, \"b\": 2}", &["a"], None, "{ \"b\": 2}"),
        (
            "{\"a\": 1, \"b\": 2}",
            &["b"],
            Some("x".into()),
            "{\"a\": 1, \"b\": \"x\"}",
        ),
        (
            "{\"a\": {}}",
            &["a", "b", "c"],
            Some(true.into()),
            "{\"a\": {\n    \"b\": {\n      \"c\": true\n    }\n  }}",
        ),
        (
            "{\"a\": 3}",
            &["a", "b"],
            Some(true.into()),
            "{\"a\": {\n    \"b\": true\n  }}",
        ),
        ("{\"a\": 1}", &["z"], None, "{\"a\": 1}"),
    ];
    for (theirs, path, value, want) in rows {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let got = json_set(theirs, &path, value.as_ref()).unwrap();
        assert_eq!(&got, want, "{theirs} {path:?}");
        serde_json::from_str::<Value>(&got).unwrap();
    }
}

#[test]
fn toml_only_listed_keys_come_back_with_the_layout_kept() {
    let base = "# mine\nmodel = \"a\" # keep this comment\n\n[projects.\"/p\"]\ntrust_level = \"untrusted\"\n";
    let ours = "model = \"b\"\nnotify = [\"sh\", \"-c\", \"evil\"]\n\n[notice]\nhide_full_access_warning = true\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n\n[mcp_servers.evil]\ncommand = \"sh\"\n";
    let m = merge(Format::Toml, CODEX_LIKE, Some(base), ours, Some(base)).unwrap();
    assert_eq!(
        keys(&m),
        [
            "mcp_servers.evil.command",
            "notify",
            "projects[\"/p\"].trust_level"
        ]
    );
    let text = m.text.unwrap();
    assert!(text.starts_with("# mine\nmodel = \"b\""), "{text}");
    let t: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        t["notice"]["hide_full_access_warning"].as_bool(),
        Some(true)
    );
    assert_eq!(
        t["projects"]["/p"]["trust_level"].as_str(),
        Some("untrusted")
    );
    assert!(
        t.get("notify").is_none() && t.get("mcp_servers").is_none(),
        "{text}"
    );
}

#[test]
fn toml_a_removed_safe_key_is_removed() {
    let base = "model = \"a\"\nx = 1\n";
    let ours = "x = 1\n";
    let m = merge(Format::Toml, CODEX_LIKE, Some(base), ours, Some(base)).unwrap();
    assert_eq!(m.text.as_deref(), Some("x = 1\n"));
    assert!(m.refused.is_empty());
}

#[test]
fn invalid_text_is_an_error_naming_which_copy() {
    let e = merge(Format::Json, CLAUDE_LIKE, Some("{}"), "{", Some("{}")).unwrap_err();
    assert!(matches!(e, MergeError::Ours(..)), "{e}");
    let e = merge(Format::Toml, CODEX_LIKE, Some(""), "a = 1", Some("= =")).unwrap_err();
    assert!(matches!(e, MergeError::Theirs(..)), "{e}");
}

#[test]
fn decisions_for_each_kind_of_path() {
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        decide(CLAUDE_LIKE, &p(&["mcpServers", "x"])),
        Decision::Refuse("MCP servers")
    );
    assert_eq!(decide(CLAUDE_LIKE, &p(&["projects"])), Decision::Descend);
    assert_eq!(
        decide(CLAUDE_LIKE, &p(&["projects", "/a"])),
        Decision::Descend
    );
    assert_eq!(
        decide(CLAUDE_LIKE, &p(&["projects", "/a", "lastCost"])),
        Decision::Carry
    );
    assert_eq!(decide(CLAUDE_LIKE, &p(&["theme"])), Decision::Carry);
    assert_eq!(decide(CODEX_LIKE, &p(&[])), Decision::Descend);
    assert_eq!(decide(CODEX_LIKE, &p(&["notice", "x"])), Decision::Carry);
    assert!(matches!(
        decide(CODEX_LIKE, &p(&["notify"])),
        Decision::RefuseEach(_)
    ));
}

#[test]
fn blank_defaults_under_protected_keys_come_back_unreported() {
    let base = r#"{"projects": {}}"#;
    let ours = r#"{"projects": {"/p": {"mcpServers": {}, "allowedTools": [], "hasTrustDialogAccepted": false}}}"#;
    let m = merge(Format::Json, CLAUDE_LIKE, Some(base), ours, Some(base)).unwrap();
    assert!(m.refused.is_empty(), "{:?}", m.refused);
    let v: Value = serde_json::from_str(&m.text.unwrap()).unwrap();
    assert_eq!(v["projects"]["/p"]["mcpServers"], serde_json::json!({}));
    // Emptying a list the user filled is a change, and refused.
    let base = r#"{"mcpServers": {"mine": {"command": "a"}}}"#;
    let m = merge(
        Format::Json,
        CLAUDE_LIKE,
        Some(base),
        "{\"mcpServers\": {}}",
        Some(base),
    )
    .unwrap();
    assert_eq!(keys(&m), ["mcpServers"]);
}
