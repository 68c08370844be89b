//! What the adversarial suites (`rev18d`, `rev18e`, `review_guards`) do
//! to a hand-started core's tabs: type a command into a tab as its agent
//! would and read back what it got, and give tabs a bubblewrap sandbox of
//! their own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::local::Local;

pub const BASH: &str = "command = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// A repository with one commit as the session's folder, and the folder
/// where the tabs' commands leave what they got.
pub fn repo(l: &Local) -> PathBuf {
    let r = l.repo_with(&[("file.txt", "hello\n")], "first");
    std::fs::create_dir_all(l.path("out")).unwrap();
    r
}

/// Run `command` in tab `tab`'s shell (typed there, as an agent would):
/// its exit code and what it printed.
pub fn op(l: &Local, tab: &str, what: &str, command: &str) -> (i32, String) {
    let out = l.path("out");
    let (text, rc) = (
        out.join(format!("{what}.txt")),
        out.join(format!("{what}.rc")),
    );
    l.ok(&[
        "send",
        tab,
        &format!(
            "{{ {command}; }} >{t} 2>&1 </dev/null; echo $? >{r}.tmp; mv {r}.tmp {r}",
            t = text.display(),
            r = rc.display()
        ),
    ]);
    let done = crate::support::poll(Duration::from_secs(30), || rc.exists());
    assert!(
        done,
        "{what} never finished in tab {tab}:\n{}",
        l.ok(&["read", tab])
    );
    let code = std::fs::read_to_string(&rc)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (code, std::fs::read_to_string(&text).unwrap())
}

pub fn bwrap_missing() -> bool {
    if Path::new("/usr/bin/bwrap").is_file() {
        return false;
    }
    eprintln!("SKIPPED: no /usr/bin/bwrap for sandboxed tabs");
    assert!(
        std::env::var_os("NERDR_MUST_TEST").is_none(),
        "NERDR_MUST_TEST is set and bwrap is missing"
    );
    true
}

/// `[agents.bash]`: bash in bubblewrap (nerdr's runtime dir hidden, only
/// the output folder writable), sandboxed; `more`: further config.
pub fn boxed_config(l: &Local, more: &str) {
    let out = l.path("out").display().to_string();
    l.write_config(&format!(
        "[agents.bash]\ncommand = [\"bwrap\", \"--ro-bind\", \"/\", \"/\", \"--dev\", \"/dev\", \
         \"--proc\", \"/proc\", \"--unshare-pid\", \"--die-with-parent\", \"--tmpfs\", {run:?}, \
         \"--bind\", {out:?}, {out:?}, \"--\", \"bash\", \"--norc\"]\n\
         sandboxed = true\n{more}",
        run = l.path("run").display().to_string(),
    ));
}

pub fn said(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The new tab's id, once it is at its prompt.
pub fn new_tab(l: &Local, known: &[&str]) -> String {
    let id = l
        .tabs_json(&[])
        .into_iter()
        .map(|t| t["id"].as_str().unwrap().to_string())
        .find(|id| !known.contains(&id.as_str()))
        .expect("the new tab");
    l.wait_screen(&id, "bash");
    id
}
