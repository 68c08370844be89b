//! Feature detection (`PROGRAM --help`, run on the host) never runs a
//! sandboxed agent's program before that launch's sandbox check passed
//! (issue 13): a launch the check refuses runs nothing of the agent's;
//! one it passes learns the features from the program the check tested.

use std::os::unix::fs::PermissionsExt;

use crate::support::local::Local;

/// A codex stand-in outside the session's folder: `--help` leaves a mark
/// and lists `--no-daemon` (on the host); a run shows its arguments, then
/// sleeps (inside the sandbox, where it can write nothing).
fn stand_in(l: &Local) -> String {
    let file = l.path("bin/codex");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$1\" in --help) echo ran >> '{help}'; \
         echo '      --no-daemon  Run without the server'; exit 0;; esac\n\
         echo \"started with: $*\"\nexec sleep 1000\n",
        help = l.path("help-ran").display(),
    );
    std::fs::write(&file, script).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
    file.display().to_string()
}

#[test]
fn a_sandboxed_agents_program_runs_for_its_features_only_after_the_check_passed() {
    let l = Local::started();
    let codex = stand_in(&l);
    // No sandbox at all: the check reaches the runtime dir and refuses.
    l.write_config(&format!(
        "[agents.codex]\ncommand = [\"env\", \"{codex}\"]\nsandboxed = true\n"
    ));
    let err = l.fails(&["agent", "codex"]);
    assert!(err.contains("was not started"), "{err}");
    assert!(
        !l.path("help-ran").exists(),
        "the agent's program ran on the host before its sandbox was checked"
    );
    let tabs = l.tabs_json(&[]);
    assert_eq!(tabs[0]["state"], "refused", "{tabs:?}");

    // A sandbox the check passes: the features come from the program it
    // tested, after it, and the agent starts with them.
    l.write_config(&format!(
        "[agents.codex]\ncommand = [\"sh\", \"-c\", \"exec bwrap --ro-bind / / --dev /dev \
         --proc /proc --unshare-pid --die-with-parent --tmpfs \\\"$XDG_RUNTIME_DIR\\\" -- \
         \\\"$0\\\" \\\"$@\\\"\", \"{codex}\"]\nsandboxed = true\n"
    ));
    let tab = l.ok(&["agent", "codex"]);
    let screen = l.wait_screen(&tab, "started with:");
    assert!(screen.contains("--no-daemon"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(l.path("help-ran")).unwrap(),
        "ran\n"
    );
    let tabs = l.tabs_json(&[]);
    let t = tabs.iter().find(|t| t["id"] == tab.as_str()).unwrap();
    assert!(
        t["command"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w == "--no-daemon"),
        "{t}"
    );
}

/// The program the check tested may not be writable, yet sit in a folder
/// the agent writes (a read-only file in its own config folder, say): the
/// agent then replaces it by a rename, and the next launch's `--help` ran
/// the agent's file on the host. The check counts a program it can
/// replace as written: such a launch is refused, and nothing of the
/// agent's runs.
#[test]
fn a_program_the_agent_can_replace_by_rename_is_never_run_on_the_host() {
    let Some(env) = crate::support::sysenv::SystemdEnv::start() else {
        return;
    };
    env.run(&["nerdr", "service", "install"]);
    let home = env.home().to_path_buf();
    let pwned = home.join("pwned");
    let dir = home.join("agentdir");
    // On a run (inside the sandbox) it swaps itself for a program whose
    // `--help` leaves a mark in the home folder (read-only inside).
    let evil = format!(
        "#!/bin/sh\ncase \"$1\" in --help) echo ran > '{p}'; exit 0;; esac\nexec sleep 1000\n",
        p = pwned.display()
    );
    let codex = env.write_user_file(
        "agentdir/codex",
        format!(
            "#!/bin/sh\ncase \"$1\" in --help) echo '      --no-daemon  x'; exit 0;; esac\n\
             printf '%s' \"{evil}\" > '{d}/codex.new' && chmod 555 '{d}/codex.new' \
             && mv '{d}/codex.new' '{d}/codex' && echo REPLACED\nexec sleep 1000\n",
            evil = evil.replace('"', "\\\"").replace('$', "\\$"),
            d = dir.display()
        ),
    );
    std::fs::set_permissions(&codex, std::os::unix::fs::PermissionsExt::from_mode(0o555)).unwrap();
    env.write_user_file("work/x", "x\n");
    let runtime = env.runtime_dir().display().to_string();
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!(
            "[agents.codex]\ncommand = [\"sh\", \"-c\", \"exec bwrap --ro-bind / / --dev /dev \
             --proc /proc --unshare-pid --die-with-parent --tmpfs {runtime} --bind {d} {d} -- \
             \\\"$0\\\" \\\"$@\\\"\", \"{codex}\"]\nsandboxed = true\n",
            d = dir.display(),
            codex = codex.display()
        ),
    );
    let nerdr = |args: &[&str]| {
        let mut c = env.user_cmd(&[&["nerdr"], args].concat());
        c.current_dir(home.join("work"));
        c.output().unwrap()
    };
    let out = nerdr(&["agent", "codex"]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        let tab = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let replaced = crate::support::poll(std::time::Duration::from_secs(20), || {
            String::from_utf8_lossy(&nerdr(&["read", &tab]).stdout).contains("REPLACED")
        });
        assert!(replaced, "the stand-in never swapped itself");
        let _ = nerdr(&["restart", "--force", &tab]);
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert!(
        !pwned.exists(),
        "the agent's replacement ran on the host: {said}"
    );
    // The check already refuses the first launch: the program can be
    // replaced (its folder is writable inside), so it counts as written.
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("the agent's program"), "{said}");
}
