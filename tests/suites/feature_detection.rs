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
