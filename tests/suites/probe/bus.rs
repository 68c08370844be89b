//! The user buses a launch's `DBUS_SESSION_BUS_ADDRESS` names, each one:
//! a client falls back from entry to entry, and a sandbox that can connect
//! to any listed socket needs no address to do so.

use super::*;

#[test]
fn a_bus_named_after_the_first_entry_or_its_first_key_is_checked() {
    let Some(s) = Setup::start() else { return };
    // A bus the correct sandbox shows (the home is bound read-only, and a
    // socket on a read-only mount still takes connections).
    let sock = s.env.home().join("other-bus");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
    // The first entry names a socket that is not there; the second names
    // the reachable one after another key.
    let gone = s.env.home().join("gone-bus");
    let address = format!(
        "DBUS_SESSION_BUS_ADDRESS=unix:path={};unix:guid=0,path={}",
        gone.display(),
        sock.display()
    );
    let out = s.output(&["env", &address, "nerdr", "agent", "fine"]);
    let answer = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "started:\n{answer}");
    let id = s.tab_of("fine")["id"].as_str().unwrap().to_string();
    assert_eq!(s.tab_of("fine")["state"], "refused");
    let reached = values(&s.audit(REFUSED_ID, &id)[0]["NERDR_REACHED"]);
    assert_eq!(
        reached,
        [format!("the user's socket {} (connected)", sock.display())],
        "{answer}"
    );
    // Without that address the same sandbox passes.
    let (ok, answer) = s.agent("fine");
    assert!(ok, "{answer}");
}
