use super::*;

/// A HOME in a new temporary folder (kept while the first value lives),
/// and nerdr's paths under it.
fn temp_home() -> (tempfile::TempDir, PathBuf, crate::paths::Paths) {
    let t = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(t.path()).unwrap();
    let env = crate::paths::Env {
        home: Some(home.clone()),
        ..Default::default()
    };
    let paths = crate::paths::Paths::resolve(&env).unwrap();
    (t, home, paths)
}

/// Without bubblewrap: what `prepare` binds, and what `finish` brings
/// back once "the agent" (this test) wrote the private copies.
#[test]
fn prepare_binds_and_finish_carries_back() {
    let (_t, home, paths) = temp_home();
    std::fs::create_dir_all(&paths.state_dir).unwrap();
    let codex = home.join(".codex");
    std::fs::create_dir_all(codex.join("sessions")).unwrap();
    std::fs::create_dir_all(codex.join("rules")).unwrap();
    // The user's config is a link into their dotfiles.
    std::fs::create_dir(home.join("dotfiles")).unwrap();
    std::fs::write(home.join("dotfiles/codex.toml"), "model = \"a\"\n").unwrap();
    std::os::unix::fs::symlink(home.join("dotfiles/codex.toml"), codex.join("config.toml"))
        .unwrap();
    std::fs::write(codex.join("auth.json"), "{}").unwrap();

    let p = prepare(&home, &paths.state_dir, "s1", "codex").unwrap();
    let private = paths.state_dir.join(PRIVATE_DIR).join("s1/shadow-0");
    let want = [
        Bind::rw(&private, &codex),
        Bind::same(&codex.join("auth.json"), false),
        Bind::same(&codex.join("rules"), true),
        Bind::same(&codex.join("sessions"), false),
    ];
    assert_eq!(p.binds, want);
    assert_eq!(p.replaces, std::slice::from_ref(&codex));

    // The agent: a safe key and `notify`, a new folder, a new `.env`.
    std::fs::write(
        private.join("config.toml"),
        "model = \"b\"\nnotify = [\"sh\"]\n",
    )
    .unwrap();
    std::fs::create_dir(private.join("memories")).unwrap();
    std::fs::write(private.join(".env"), "LD_PRELOAD=x\n").unwrap();
    let trail = Trail::open(&paths, "s1").unwrap();
    p.finish(&trail);

    assert_eq!(
        std::fs::read_to_string(codex.join("config.toml")).unwrap(),
        "model = \"b\"\n"
    );
    assert!(std::fs::symlink_metadata(codex.join("config.toml"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(codex.join("memories").is_dir());
    assert!(!codex.join(".env").exists());
    assert!(!paths.state_dir.join(PRIVATE_DIR).join("s1").exists());
    let lines = std::fs::read_to_string(trail.path()).unwrap();
    let refused: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["event"] == "config-refused")
        .collect();
    assert_eq!(refused.len(), 2, "{lines}");
    assert_eq!(refused[0]["key"], "notify");
    assert_eq!(refused[1]["path"], codex.join(".env").display().to_string());
}

/// What of claude's bookkeeping names scripts: only its refused keys.
#[test]
fn only_refused_keys_of_a_bookkeeping_file_name_scripts() {
    let carry = agent_config::policy("claude").guarded[1].carry;
    let config_merge::Carry::AllBut(rules) = carry else {
        panic!("claude's global config carries all but some keys");
    };
    // (file, names found)
    let rows: &[(&str, &[&str])] = &[
        (
            r#"{"mcpServers": {"m": {"command": "~/.claude/mcp.sh"}}, "lastPlan": "~/.claude/plans/x.md"}"#,
            &["mcp.sh"],
        ),
        (
            r#"{"projects": {"/p": {"mcpServers": {"m": {"command": "$HOME/.claude/bin/m"}}, "x": "~/.claude/projects/y"}}}"#,
            &["bin"],
        ),
        (r#"{"apiKeyHelper": "~/.claude/key.sh"}"#, &["key.sh"]),
        (r#"{"githubRepoPaths": {"a": ["~/.claude/todos"]}}"#, &[]),
    ];
    for (text, want) in rows {
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        let mut got = BTreeSet::new();
        for t in refused_parts(&v, rules) {
            got.extend(agent_config::named_in(&t, "/home/u", ".claude"));
        }
        let got: Vec<&str> = got.iter().map(String::as_str).collect();
        assert_eq!(&got, want, "{text}");
    }
}

/// What the agent may leave as its copy: only a plain file is read.
#[test]
fn only_a_plain_copy_is_read_back() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    std::fs::write(d.join("host.json"), "{\"secret\": 1}").unwrap();
    std::fs::write(d.join("plain"), "{}").unwrap();
    std::os::unix::fs::symlink(d.join("host.json"), d.join("link")).unwrap();
    nix::unistd::mkfifo(
        &d.join("fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o600),
    )
    .unwrap();
    std::fs::File::create(d.join("huge"))
        .unwrap()
        .set_len(MAX_COPY + 1)
        .unwrap();
    std::fs::create_dir(d.join("dir")).unwrap();
    // (name, read back)
    let rows = [
        ("plain", true),
        ("link", false),
        ("fifo", false),
        ("huge", false),
        ("dir", false),
        ("missing", false),
    ];
    for (name, ok) in rows {
        let got = read_copy(&d.join(name));
        assert_eq!(got.is_ok(), ok, "{name}: {got:?}");
    }
}

/// A run that died (SIGKILL) is finished by the next one; one that died
/// while setting up is named.
#[test]
fn the_next_run_finishes_a_run_that_died() {
    let (_t, home, paths) = temp_home();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(home.join(".claude.json"), "{\"n\": 1}").unwrap();
    let p = prepare(&home, &paths.state_dir, "dead", "claude").unwrap();
    let private = paths.state_dir.join(PRIVATE_DIR).join("dead/shadow-0");
    std::fs::write(
        private.join(".config.json"),
        "{\"n\": 2, \"env\": {\"A\": \"b\"}}",
    )
    .unwrap();
    std::fs::create_dir(private.join("projects")).unwrap();
    std::fs::write(
        paths.state_dir.join(PRIVATE_DIR).join("dead/pid"),
        "999999999",
    )
    .unwrap();
    drop(p); // killed: no finish
    let broken = paths.state_dir.join(PRIVATE_DIR).join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("pid"), "999999999").unwrap();

    let trail = Trail::open(&paths, "next").unwrap();
    let left = recover_leftovers(&paths.state_dir, &trail);
    assert_eq!(left, [broken]);
    assert_eq!(
        std::fs::read_to_string(home.join(".claude.json")).unwrap(),
        "{\"n\": 2}"
    );
    assert!(home.join(".claude/projects").is_dir());
    let text = std::fs::read_to_string(trail.path()).unwrap();
    assert!(
        text.contains("config-refused") && text.contains("\"key\":\"env\""),
        "{text}"
    );
    let rest: Vec<_> = std::fs::read_dir(paths.state_dir.join(PRIVATE_DIR))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(rest, [OsString::from("broken")]);
}

/// claude: the copy of `~/.claude.json` is seen as
/// `~/.claude/.config.json`, unless a real one is there.
#[test]
fn claudes_global_config_is_seen_in_its_folder() {
    for real_config_json in [false, true] {
        let t = tempfile::tempdir().unwrap();
        let home = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::write(home.join(".claude.json"), "{\"a\": 1}").unwrap();
        if real_config_json {
            std::fs::write(home.join(".claude/.config.json"), "{\"b\": 1}").unwrap();
        }
        let state = home.join("state");
        let p = prepare(&home, &state, "s", "claude").unwrap();
        let seen = state.join(PRIVATE_DIR).join("s/shadow-0/.config.json");
        let text = std::fs::read_to_string(&seen).unwrap();
        let real: Vec<&PathBuf> = p.files.iter().map(|f| &f.real).collect();
        if real_config_json {
            assert_eq!(text, "{\"b\": 1}");
            assert_eq!(real, [&home.join(".claude/.config.json")]);
        } else {
            assert_eq!(text, "{\"a\": 1}");
            assert_eq!(real, [&home.join(".claude.json")]);
            assert!(p.replaces.contains(&home.join(".claude.json")));
        }
    }
}
