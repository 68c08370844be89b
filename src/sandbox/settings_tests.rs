use super::*;

fn p(text: &str) -> Layer {
    parse(Path::new("/f.json"), text, false).unwrap()
}

fn user(text: &str) -> (Source, Layer) {
    (
        Source::User("/home/u/.claude/settings.json".into()),
        p(text),
    )
}
fn flag(text: &str) -> (Source, Layer) {
    (Source::Flag("/s.json".into()), p(text))
}
fn project(text: &str) -> (Source, Layer) {
    (
        Source::Project("/w/.claude/settings.local.json".into()),
        p(text),
    )
}

#[test]
fn a_claude_settings_file_reads_as_is() {
    let l = p(r#"{
        "model": "opus",
        "permissions": {"allow": ["Bash"]},
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "network": {
                "allowedDomains": ["github.com", "*.npmjs.org"],
                "deniedDomains": ["evil.test"],
                "allowLocalBinding": false,
                "allowLocalPorts": [5432],
                "allowUnixSockets": ["/run/user/1000/docker.sock"]
            },
            "filesystem": {
                "allowWrite": ["~/.cargo"],
                "denyWrite": ["~/src/other"],
                "allowRead": ["~/.aws/config"],
                "denyRead": ["~/secrets"]
            }
        }
    }"#);
    assert_eq!(l.enabled, Some(true));
    assert_eq!(l.fail_if_unavailable, Some(true));
    assert_eq!(
        l.allowed_domains.as_deref(),
        Some(&["github.com".to_string(), "*.npmjs.org".to_string()][..])
    );
    assert_eq!(
        l.denied_domains.as_deref(),
        Some(&["evil.test".to_string()][..])
    );
    assert_eq!(l.allow_local_binding, Some(false));
    assert_eq!(l.allow_local_ports.as_deref(), Some(&[5432u16][..]));
    assert_eq!(
        l.allow_write.as_deref(),
        Some(&["~/.cargo".to_string()][..])
    );
    assert_eq!(
        l.deny_write.as_deref(),
        Some(&["~/src/other".to_string()][..])
    );
    assert_eq!(
        l.allow_read.as_deref(),
        Some(&["~/.aws/config".to_string()][..])
    );
    assert_eq!(l.deny_read.as_deref(), Some(&["~/secrets".to_string()][..]));
    assert_eq!(l.lines["network.allowedDomains"], 8);
    assert!(l.not_applied.is_empty() && l.unknown.is_empty());
}

#[test]
fn a_file_without_a_sandbox_block_or_empty_sets_nothing() {
    assert_eq!(p(r#"{"model": "x"}"#), Layer::default());
    assert_eq!(p("  // nothing\n"), Layer::default());
}

#[test]
fn errors_name_the_file_the_line_and_the_key() {
    let cases: &[(&str, &str)] = &[
        ("{\n\"sandbox\": {\n\"enabled\": \"yes\"}}", "3: `sandbox.enabled` must be true or false, found a string"),
        ("{\"sandbox\": {\"network\": {\n\"allowedDomains\": \"x\"}}}", "2: `sandbox.network.allowedDomains` must be an array of strings, found a string"),
        ("{\"sandbox\": {\"filesystem\": {\"allowWrite\": [\n1]}}}", "2: `sandbox.filesystem.allowWrite[0]` must be a string, found a number"),
        ("{\"sandbox\": {\"network\": {\"allowLocalPorts\": [70000]}}}", "1: `sandbox.network.allowLocalPorts[0]` must be a port number (1-65535), found `70000`"),
        ("{\"sandbox\": []}", "1: `sandbox` must be an object, found an array"),
        ("{\"sandbox\": {\"network\": 3}}", "1: `network` must be an object, found a number"),
        ("[1]", "1: expected a JSON object, found an array"),
        ("{\n\"sandbox\": {,}}", "2: not valid JSON at line 2"),
    ];
    for (text, want) in cases {
        let e = parse(Path::new("/home/u/s.json"), text, false).unwrap_err();
        let got = e.to_string();
        assert!(
            got.starts_with(&format!("/home/u/s.json:{want}")),
            "{text:?}: got {got:?}, want /home/u/s.json:{want}"
        );
    }
}

#[test]
fn unknown_keys_warn_in_claude_files_and_fail_in_nerdrs_own() {
    let text = "{\"sandbox\": {\n\"enabeld\": true}}";
    assert_eq!(p(text).unknown, vec![("enabeld".to_string(), 2)]);
    let e = parse(Path::new("/c/nerdr/sandbox.json"), text, true).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("/c/nerdr/sandbox.json:2: unknown key `sandbox.enabeld`"),
        "{e}"
    );
    let e = parse(Path::new("/c/nerdr/sandbox.json"), "{\"model\": 1}", true).unwrap_err();
    assert!(e.to_string().contains("unknown key `model`"), "{e}");
}

#[test]
fn no_settings_mean_the_strict_defaults() {
    let (eff, warnings) = merge(&[]);
    assert_eq!(eff, Effective::default());
    assert!(eff.enabled && eff.fail_if_unavailable);
    assert!(warnings.is_empty());
}

/// Each loosening key: honoured from the user's own file and from
/// `--settings`, ignored with a warning from a project's.
#[test]
fn project_settings_cannot_loosen_the_user_own_can() {
    type Check = fn(&Effective) -> bool;
    let rows: &[(&str, &str, Check)] = &[
        ("enabled", r#"{"enabled": false}"#, |e| !e.enabled),
        (
            "failIfUnavailable",
            r#"{"failIfUnavailable": false}"#,
            |e| !e.fail_if_unavailable,
        ),
        (
            "network.allowedDomains",
            r#"{"network": {"allowedDomains": ["*"]}}"#,
            |e| e.network.allowed_domains == ["*"],
        ),
        (
            "network.allowLocalPorts",
            r#"{"network": {"allowLocalPorts": [22]}}"#,
            |e| e.network.allow_local_ports == [22],
        ),
        (
            "network.allowUnixSockets",
            r#"{"network": {"allowUnixSockets": ["/s"]}}"#,
            |e| e.network.allow_unix_sockets == ["/s"],
        ),
        (
            "filesystem.allowWrite",
            r#"{"filesystem": {"allowWrite": ["~"]}}"#,
            |e| e.filesystem.allow_write == ["~"],
        ),
        (
            "filesystem.allowRead",
            r#"{"filesystem": {"allowRead": ["~/.ssh"]}}"#,
            |e| e.filesystem.allow_read == ["~/.ssh"],
        ),
    ];
    for (key, block, loosened) in rows {
        let text = format!(r#"{{"sandbox": {block}}}"#);
        for trusted in [user(&text), flag(&text)] {
            let (eff, warnings) = merge(&[trusted]);
            assert!(loosened(&eff), "{key} from a trusted file: {eff:?}");
            assert!(warnings.is_empty(), "{key}: {warnings:?}");
        }
        let (eff, warnings) = merge(&[project(&text)]);
        assert!(!loosened(&eff), "{key} from a project loosened: {eff:?}");
        assert_eq!(warnings.len(), 1, "{key}: {warnings:?}");
        assert_eq!(warnings[0].key, *key);
        assert!(
            warnings[0].what.contains("can only tighten"),
            "{:?}",
            warnings[0]
        );
        assert_eq!(
            warnings[0].file,
            Path::new("/w/.claude/settings.local.json")
        );
    }
    // allowLocalBinding: its default is open, so a project can set false
    // but a project's true after the user's false is refused.
    let (eff, w) = merge(&[
        user(r#"{"sandbox": {"network": {"allowLocalBinding": false}}}"#),
        project(r#"{"sandbox": {"network": {"allowLocalBinding": true}}}"#),
    ]);
    assert!(!eff.network.allow_local_binding);
    assert_eq!(w.len(), 1);
}

#[test]
fn a_project_can_tighten() {
    let (eff, warnings) = merge(&[
        user(
            r#"{"sandbox": {"enabled": false, "failIfUnavailable": false, "network": {"deniedDomains": ["a.test"]}}}"#,
        ),
        project(
            r#"{"sandbox": {"enabled": true, "failIfUnavailable": true,
                "network": {"deniedDomains": ["b.test"], "allowLocalBinding": false},
                "filesystem": {"denyRead": ["~/x"], "denyWrite": ["~/y"]}}}"#,
        ),
    ]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(eff.enabled && eff.fail_if_unavailable);
    assert!(!eff.network.allow_local_binding);
    assert_eq!(eff.network.denied_domains, ["a.test", "b.test"]);
    assert_eq!(eff.filesystem.deny_read, ["~/x"]);
    assert_eq!(eff.filesystem.deny_write, ["~/y"]);
}

#[test]
fn later_trusted_layers_override_scalars_and_lists_add_up() {
    let (eff, _) = merge(&[
        user(r#"{"sandbox": {"enabled": false, "network": {"allowedDomains": ["a.test"]}}}"#),
        flag(
            r#"{"sandbox": {"enabled": true, "network": {"allowedDomains": ["b.test", "a.test"]}}}"#,
        ),
    ]);
    assert!(eff.enabled);
    assert_eq!(eff.network.allowed_domains, ["a.test", "b.test"]);
}

#[test]
fn each_accepted_but_unapplied_key_warns_once() {
    let (eff, warnings) = merge(&[user(
        r#"{"sandbox": {
            "autoAllowBashIfSandboxed": true,
            "excludedCommands": ["docker"],
            "network": {"httpProxyPort": 8080, "allowAllUnixSockets": true},
            "enableWeakerNestedSandbox": true,
            "madeUp": 1
        }}"#,
    )]);
    assert_eq!(eff, Effective::default());
    let keys: Vec<_> = warnings.iter().map(|w| (w.key.as_str(), w.line)).collect();
    assert_eq!(
        keys,
        [
            ("autoAllowBashIfSandboxed", 2),
            ("excludedCommands", 3),
            ("network.httpProxyPort", 4),
            ("network.allowAllUnixSockets", 4),
            ("enableWeakerNestedSandbox", 5),
            ("madeUp", 6),
        ]
    );
    assert!(warnings[0].what.contains("not applied"));
    assert!(warnings[5].what.contains("unknown key"));
    assert_eq!(
        warnings[0].to_string(),
        "/home/u/.claude/settings.json:2: sandbox.autoAllowBashIfSandboxed: accepted but not applied by `nerdr sandbox` (it steers an agent's own sandbox)"
    );
}

#[test]
fn the_hash_changes_with_the_settings() {
    let a = Effective::default();
    let mut b = Effective::default();
    b.network.denied_domains.push("x.test".into());
    assert_eq!(a.hash(), Effective::default().hash());
    assert_ne!(a.hash(), b.hash());
    assert_eq!(a.hash().len(), 64);
}
