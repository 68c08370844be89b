//! vttest in a nerdr tab against vttest in a tmux pane, 24 x 80, driven by
//! the same keys, every screen compared (`support::twin`). vttest asks the
//! terminal's primary device attributes at start and waits for them; the
//! operating level it shows in menu 12 comes from that answer and decides
//! which screens follow, so menu 12 is compared first.
//!
//! Menus as vttest 2.7 has them: 1 cursor movements, 2 screen features, 3
//! character sets, 8 VT102 insert/delete, 6 terminal reports (3 DSR, 4 DA1,
//! 5 DA2), 11 non-VT100: 11.5 ISO-6429 cursor movement, 11.6 colours (2-5;
//! 6 on are menus of their own), 11.7 REP and scrolling, 11.8.7 xterm's
//! alternate screens (3-5). Each item shows screens that say "Push
//! <RETURN>", then its menu again. Left out because tmux 3.3a fails them
//! (so it is no reference there): 11.5.4 CHT and 11.5.5 HPR, which it
//! ignores (`fidelity.rs` checks CHT against the right row), and 11.7.4/5
//! SL/SR. vttest runs as `24x80.80`: no 132-column screens, which tmux
//! ignores and a window cannot give.

use std::time::{Duration, Instant};

use crate::suites::fidelity::{have, twin_env};
use crate::support::twin::{describe_difference, side_by_side, Twin};

/// At a menu: choose `item`, compare each screen, Enter after each, until
/// a menu shows again (compared too).
fn item(twin: &Twin, path: &str, item: &str) {
    twin.keys(&[item, "Enter"]);
    for screen in 1..=30 {
        let shown = twin.assert_same(&format!("vttest {path}, screen {screen}"));
        if shown
            .text()
            .iter()
            .any(|l| l.contains("Enter choice number"))
        {
            return;
        }
        twin.keys(&["Enter"]);
    }
    panic!("vttest {path}: no menu after 30 screens");
}

/// A report whose numbers are the terminal's identity (nerdr need not be
/// a tmux): the window must show a report of the same form, not the same
/// numbers.
fn identity_item(twin: &Twin, path: &str, item: &str, form: &str) {
    twin.keys(&[item, "Enter"]);
    let tmux = twin.settled_direct(path);
    assert!(
        tmux.text().iter().any(|l| l.contains(form)),
        "vttest {path}: tmux shows no {form:?}:\n{}",
        tmux.text().join("\n")
    );
    let end = Instant::now() + Duration::from_secs(6);
    loop {
        let (_, nerdr) = twin.capture();
        if nerdr.text().iter().any(|l| l.contains(form)) {
            break;
        }
        assert!(
            Instant::now() < end,
            "vttest {path}: nerdr's window shows no report of the form {form:?} (the \
             terminal's answer never reached vttest)\n{}",
            side_by_side(&tmux.text(), &nerdr.text(), &[])
        );
        std::thread::sleep(Duration::from_millis(150));
    }
    twin.keys(&["Enter"]);
    twin.assert_same(&format!("vttest {path}, back at its menu"));
}

#[test]
fn fidelity_vttest_screens_match_tmux() {
    let Some(env) = twin_env() else { return };
    if !have("vttest") {
        return;
    }
    let twin = Twin::start(&env, 24, 80, "vttest 24x80.80; exec sleep 600");
    let (tmux, nerdr) = (twin.settled_direct("vttest's menu"), twin.capture().1);
    if tmux != nerdr {
        // Once more with the usual patience, for the message.
        let end = Instant::now() + Duration::from_secs(6);
        let mut nerdr = nerdr;
        while nerdr != tmux && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(150));
            nerdr = twin.capture().1;
        }
        assert!(
            nerdr == tmux,
            "vttest's first menu: it asks the terminal's device attributes (ESC[c) and \
             waits for the answer before drawing anything\n{}",
            describe_difference(&tmux, &nerdr)
        );
    }
    item(
        &twin,
        "menu 12, whose operating level vttest reads from the DA1 answer (tmux: ESC[?1;2c, a \
         VT100 with AVO; another level changes which screens follow)",
        "12",
    );
    item(&twin, "back from menu 12", "0");
    for (n, name) in [
        ("1", "1 cursor movements"),
        ("2", "2 screen features"),
        ("3", "3 character sets"),
        ("8", "8 VT102 insert/delete"),
    ] {
        item(&twin, name, n);
    }
    item(&twin, "menu 6", "6");
    item(&twin, "6.3 DSR", "3");
    identity_item(&twin, "6.4 DA1", "4", "Report is: <27> [ ?");
    identity_item(&twin, "6.5 DA2", "5", "<27> [ >");
    item(&twin, "back from menu 6", "0");
    item(&twin, "menu 11", "11");
    let menus: [(&str, &[&str]); 3] = [
        ("5", &["1", "2", "3", "6", "7", "8", "9"]),
        ("6", &["2", "3", "4", "5"]),
        ("7", &["2", "3", "6"]),
    ];
    for (menu, items) in menus {
        item(&twin, &format!("menu 11.{menu}"), menu);
        for i in items {
            item(&twin, &format!("11.{menu}.{i}"), i);
        }
        item(&twin, &format!("back from menu 11.{menu}"), "0");
    }
    item(&twin, "menu 11.8", "8");
    item(&twin, "menu 11.8.7", "7");
    for i in ["3", "4", "5"] {
        item(&twin, &format!("11.8.7.{i}"), i);
    }
    item(&twin, "back from menu 11.8.7", "0");
    item(&twin, "back from menu 11.8", "0");
    item(&twin, "back from menu 11", "0");
}
