//! What `nerdr handoff --to-me`, `nerdr handoffs --clear` and `nerdr
//! switch` tell a person about a custom agent's tab (a newcomer's
//! findings): the suggested command lines are the ones that do what was
//! asked, no error reads `nerdr: nerdr ...`, the tab's "handed its work
//! to you" mark goes when its handoff is cleared, and a switch's time in
//! `tabs --json` is RFC 3339 like the row's other times.

use crate::support::local::Local;

const AGENTS: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
                      [agents.sh2]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

fn warning(l: &Local, tab: &str) -> serde_json::Value {
    l.tab(tab)["warning"].clone()
}

#[test]
fn a_custom_agent_s_handoff_to_me_suggests_to_me_and_its_mark_goes_with_clear() {
    let l = Local::started();
    l.write_config(AGENTS);
    let tab = l.ok(&["agent", "sh"]);

    // No text: nerdr cannot read a custom agent's conversation, and says
    // how to do what was asked with one written.
    let err = l.fails(&["handoff", "--to-me", "--from", &tab]);
    assert!(
        err.contains(&format!("`nerdr handoff --to-me --from {tab} \"TEXT\"`")),
        "{err}"
    );
    assert!(!err.contains("--to AGENT"), "{err}");

    l.ok(&["handoff", "--to-me", "--from", &tab, "done: the lexer"]);
    let marked = warning(&l, &tab);
    assert!(
        marked
            .as_str()
            .is_some_and(|w| w.contains("handed its work to you")),
        "{marked}"
    );
    let cleared = l.ok(&["handoffs", "--clear"]);
    assert!(cleared.contains("done: the lexer"), "{cleared}");
    assert_eq!(
        l.ok(&["handoffs"]).trim(),
        "no handoffs to you",
        "the list is not empty"
    );
    assert_eq!(
        warning(&l, &tab),
        serde_json::Value::Null,
        "{}",
        l.ok(&["tabs"])
    );
    assert!(!l.ok(&["tabs"]).contains("handed its work"));
}

#[test]
fn a_custom_agent_s_switch_without_a_handoff_names_the_switch_to_give_one() {
    let l = Local::started();
    l.write_config(AGENTS);
    let tab = l.ok(&["agent", "sh"]);
    let err = l.fails(&["switch", "--force", &tab, "sh2"]);
    assert!(!err.contains("nerdr: nerdr"), "{err}");
    assert!(
        err.contains(&format!("`nerdr switch {tab} sh2 \"TEXT\"`")),
        "{err}"
    );
    assert!(err.contains("--no-handoff"), "{err}");
}

#[test]
fn a_switch_s_time_in_tabs_json_is_rfc3339() {
    let l = Local::started();
    l.write_config(AGENTS);
    let tab = l.ok(&["agent", "sh"]);
    l.ok(&["switch", "--force", &tab, "sh2", "--no-handoff"]);
    let row = l.tab(&tab);
    let at = row["switches"][0]["at"]
        .as_str()
        .unwrap_or_else(|| panic!("at is not text: {row}"));
    // 2026-12-02T16:58:59Z
    let b = at.as_bytes();
    assert!(
        at.len() == 20 && at.ends_with('Z') && b[4] == b'-' && b[10] == b'T' && b[13] == b':',
        "{at}"
    );
}
