//! `nerdr --host` against a real OpenSSH server (`support::sshd`) on
//! 127.0.0.1, in the private systemd user session, with key
//! authentication: `tabs`, `agent`, `read` and `send` reach the core on the
//! other end of `ssh box nerdr bridge` (the first slice of issue 22's
//! acceptance 1), a bridge of another client protocol is refused naming
//! both versions (acceptance 4), a host without nerdr says how to install
//! it, and a bridge run inside a tab there is refused by that core.
//!
//! "There" is this environment's own core, reached only through sshd: the
//! commands here run with a runtime dir of their own that holds no core,
//! so nothing they do can reach a core but through ssh (checked at the
//! end), and the core there starts by socket activation, as for a command
//! typed there.
//!
//! The other protocol is a real second build of this source
//! (`support::next_build::other_protocol_build`, the client protocol set
//! at compile time), not a test switch of the binary under test: a
//! release build has no way to speak another protocol than its own.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use crate::support::next_build::{other_protocol_build, OTHER_PROTOCOL};
use crate::support::sshd::{Sshd, ALIAS};
use crate::support::sysenv::SystemdEnv;
use crate::support::wait_until;

/// The environment with nerdr's units installed (so the core there is
/// socket-activated), and sshd.
fn remote() -> Option<(SystemdEnv, Sshd)> {
    let env = SystemdEnv::start()?;
    env.run(&["nerdr", "service", "install"]);
    let sshd = Sshd::start(&env)?;
    Some((env, sshd))
}

/// The runtime dir of the commands "here": empty, no core, no key.
fn here_runtime(env: &SystemdEnv) -> PathBuf {
    env.home().join("here-run")
}

/// `nerdr ARGS` here, as the user, with a runtime dir of its own.
fn here(env: &SystemdEnv, args: &[&str]) -> Output {
    let run = here_runtime(env);
    if !run.exists() {
        env.run(&["mkdir", "-m", "0700", &run.display().to_string()]);
    }
    let mut cmd = env.user_cmd(&[&["nerdr"], args].concat());
    cmd.env("XDG_RUNTIME_DIR", &run);
    cmd.output().unwrap()
}

fn ok(env: &SystemdEnv, args: &[&str]) -> String {
    let out = here(env, args);
    assert!(
        out.status.success(),
        "nerdr {args:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn failing(env: &SystemdEnv, args: &[&str]) -> String {
    let out = here(env, args);
    assert!(!out.status.success(), "nerdr {args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn tabs_agent_read_and_send_reach_the_core_on_the_other_end_of_ssh() {
    let Some((env, sshd)) = remote() else {
        return;
    };
    crate::support::sshd::devbox_config(&env, "");
    // The host's folder: its session starts empty.
    assert_eq!(ok(&env, &["--host", "devbox", "tabs"]), "no tabs\n");
    let tab = ok(&env, crate::support::sshd::BASH_ON_DEVBOX)
        .trim()
        .to_owned();
    assert_eq!(tab.len(), 8, "a tab id: {tab:?}");
    let tabs: Vec<serde_json::Value> =
        serde_json::from_str(&ok(&env, &["--host", "devbox", "tabs", "--json"])).unwrap();
    assert_eq!(tabs.len(), 1, "{tabs:?}");
    assert_eq!(tabs[0]["id"], tab.as_str());
    assert_eq!(
        Path::new(tabs[0]["folder"].as_str().unwrap()),
        env.home().join("proj"),
        "the host's folder, from the remote home"
    );
    assert_eq!(tabs[0]["state"], "running");
    // Typed there; its output read back from there.
    ok(
        &env,
        &["--host", "devbox", "send", "1", "echo over-ssh-$((6*7))"],
    );
    wait_until(
        "the typed command's output",
        Duration::from_secs(20),
        || ok(&env, &["--host", "devbox", "read", "1"]).contains("over-ssh-42"),
    );
    // The alias itself, as an ssh destination, and a folder relative to
    // the remote home: the same tab.
    let listed = ok(&env, &["--host", ALIAS, "--folder", "proj", "tabs"]);
    assert!(listed.contains(&tab), "{listed}");
    // A folder that is none there is an error there, as here: keys never
    // go to another session's tab 1, nothing reads as "no tabs".
    for args in [
        &[
            "--host",
            "devbox",
            "--folder",
            "/nope",
            "send",
            "1",
            "echo wrong-tab",
        ][..],
        &["--host", "devbox", "--folder", "/nope", "read", "1"],
        &["--host", "devbox", "--folder", "/nope", "tabs"],
    ] {
        let err = failing(&env, args);
        assert!(
            err.contains("on devbox: folder /nope does not exist or is not a folder"),
            "{args:?}: {err}"
        );
    }
    assert!(!ok(&env, &["--host", "devbox", "read", "1"]).contains("wrong-tab"));

    // Nothing here reached a core but through ssh: the runtime dir of the
    // commands here holds no socket, and sshd logged each of them in.
    let here_run = here_runtime(&env);
    assert!(
        std::fs::read_dir(&here_run).unwrap().next().is_none(),
        "a command here used {}",
        here_run.display()
    );
    let log = sshd.log();
    assert!(
        log.matches("Accepted publickey for").count() >= 6,
        "sshd's log:\n{log}"
    );
    // The core there is the socket-activated service.
    assert_eq!(env.unit_prop("nerdr.service", "ActiveState"), "active");
}

#[test]
fn another_protocol_a_missing_nerdr_and_a_bridge_in_a_tab_are_each_said_plainly() {
    let Some((env, _sshd)) = remote() else {
        return;
    };
    // The second build where the user can run it.
    let other = env.nerdr().with_file_name("nerdr-other");
    std::fs::copy(other_protocol_build(), &other).unwrap();
    let other = other.display().to_string();
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!(
            "[hosts.devbox]\nssh = \"{ALIAS}\"\n\
             [hosts.other]\nssh = \"{ALIAS}\"\nnerdr = \"{other}\"\n\
             [hosts.bare]\nssh = \"{ALIAS}\"\nnerdr = \"/opt/nowhere/nerdr\"\n\
             [hosts.lost]\nssh = \"{ALIAS}\"\nfolder = \"~/nosuchdir\"\n"
        ),
    );
    let version = ok(&env, &["--version"]);
    let version = version.trim().trim_start_matches("nerdr ");

    // Acceptance 4: both versions, both protocols, which end to upgrade.
    let said = failing(&env, &["--host", "other", "tabs"]);
    let want = format!("nerdr here is {version} (client protocol ");
    assert!(said.contains(&want), "{said}");
    assert!(
        said.contains(&format!(
            "nerdr on other is {version} (client protocol {OTHER_PROTOCOL})"
        )),
        "{said}"
    );
    assert!(said.contains("upgrade nerdr here"), "{said}");

    // No nerdr there: how to install it, and how to name one off PATH.
    let said = failing(&env, &["--host", "bare", "tabs"]);
    assert!(said.contains("nerdr is not installed on bare"), "{said}");
    assert!(said.contains("packaging/install.sh"), "{said}");
    assert!(said.contains("[hosts.bare] nerdr = "), "{said}");

    // The host's own nerdr, of this protocol, still works beside them.
    assert_eq!(ok(&env, &["--host", "devbox", "tabs"]), "no tabs\n");

    // `local` is this machine, as --all-hosts and the picker name it.
    let said = failing(&env, &["--host", "local", "tabs"]);
    assert!(said.contains("`local` is this machine"), "{said}");

    // A host whose [hosts] folder is none there: not an empty host, but
    // the key to fix.
    let said = failing(&env, &["--host", "lost", "tabs"]);
    assert!(
        said.contains("on lost (the folder is `[hosts.lost] folder`"),
        "{said}"
    );
    assert!(
        said.contains("nosuchdir does not exist or is not a folder"),
        "{said}"
    );

    // A bridge run inside a tab there refuses itself before it reaches
    // the core (which it could start); one whose NERDR_TAB is removed is
    // a client like any other in a tab: its core refuses it, the real
    // guard, and the bridge passes the refusal on.
    let out = env.home().join("bridge.out");
    let script = format!(
        "nerdr bridge </dev/null >{0} 2>&1; echo exit=$? >>{0}; \
         env -u NERDR_TAB nerdr bridge </dev/null >>{0} 2>&1; echo exit=$? >>{0}; \
         exec sleep 1000",
        out.display()
    );
    ok(
        &env,
        &["--host", "devbox", "agent", "--", "sh", "-c", &script],
    );
    wait_until(
        "both bridges in the tab to end",
        Duration::from_secs(20),
        || {
            std::fs::read(&out)
                .is_ok_and(|b| String::from_utf8_lossy(&b).matches("exit=").count() == 2)
        },
    );
    let said = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).into_owned();
    let (first, second) = said.split_once("exit=").unwrap();
    for run in [first, second] {
        assert!(run.contains("\"bridge\":1"), "the greeting first: {said:?}");
        assert!(run.contains("\"type\":\"refused\""), "{said:?}");
    }
    assert!(
        first.contains("runs inside a nerdr tab there (NERDR_TAB is set)"),
        "{said:?}"
    );
    assert!(second.contains("runs inside tab"), "{said:?}");
    assert!(said.ends_with("exit=1\n"), "{said:?}");
    assert!(second.starts_with("1\n"), "{said:?}");

    // And --host itself from inside a tab here.
    let said = String::from_utf8_lossy(
        &env.user_cmd(&["nerdr", "--host", "devbox", "tabs"])
            .env("NERDR_TAB", "not-a-real-secret")
            .output()
            .unwrap()
            .stderr,
    )
    .into_owned();
    assert!(said.contains("not from inside a nerdr tab"), "{said}");
}
