//! Unsent diff-view comments (drafts) of a tab outlive the tab, until
//! `nerdr clean` removes those of tabs that are gone, printing each one
//! whole (`--dry-run` only lists them); an open tab's drafts stay. Real
//! binary under the private `systemd --user`.

use crate::support::repo_session::{RepoSession, SH};

/// A drafts file as the window writes it.
fn drafts(tab: &str, text: &str) -> String {
    serde_json::json!({
        "tab": tab,
        "drafts": [{
            "comment": {"path": "notes.txt", "side": "new", "line": 2, "text": text, "about": null},
            "line_text": "beta",
            "made_on": "c0ffee",
        }],
    })
    .to_string()
}

#[test]
fn clean_removes_the_drafts_of_closed_tabs_saying_them() {
    let Some(st) = RepoSession::on_main(SH) else {
        return;
    };
    let (open, closed) = (st.tab("sh"), st.tab("sh"));
    let dir = ".local/state/nerdr/drafts";
    let gone_file = st.env.write_user_file(
        format!("{dir}/{closed}.json"),
        drafts(&closed, "rename this"),
    );
    let open_file = st
        .env
        .write_user_file(format!("{dir}/{open}.json"), drafts(&open, "keep me"));
    st.ok(&["close", &closed]);
    assert!(gone_file.exists(), "closing keeps them");

    let out = st.ok(&["clean", "--dry-run"]);
    assert!(
        out.contains(&format!(
            "would remove {}: 1 unsent diff-view comment of closed tab {closed}, which read:\n  \
             notes.txt:2: rename this",
            gone_file.display()
        )),
        "{out}"
    );
    assert!(gone_file.exists() && !out.contains("keep me"), "{out}");

    let out = st.ok(&["clean"]);
    assert!(
        out.contains(&format!("removed {}", gone_file.display())) && out.contains("rename this"),
        "{out}"
    );
    assert!(!gone_file.exists());
    assert!(open_file.exists(), "an open tab's drafts stay");
}
