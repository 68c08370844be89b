//! `nerdr completions` driven through bash's own completion machinery (the
//! script `nerdr completions bash` prints, sourced into a real bash, its
//! function called as bash calls it on TAB), against a real core; and
//! `nerdr man` pages rendered by the system's man.

use std::path::Path;
use std::process::Command;

use crate::support::local::{Local, BIN};

const SH: &str = "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
                  [agents.shtoo]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n";

/// What bash offers for the command line `words`, the last word being
/// completed: the script sourced, COMP_WORDS/COMP_CWORD/COMP_LINE set as
/// bash sets them, and the function `complete -p nerdr` registered called
/// with bash's three arguments. `nerdr` is found on PATH, as in a shell.
fn offered(l: &Local, words: &[&str]) -> Vec<String> {
    let script = l.ok(&["completions", "bash"]);
    let dir = Path::new(BIN).parent().unwrap();
    let cword = words.len() - 1;
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "{script}\n\
         COMP_WORDS=({words})\n\
         COMP_CWORD={cword}\n\
         COMP_LINE='{line}'\n\
         COMP_POINT=${{#COMP_LINE}}\n\
         COMP_TYPE=9\n\
         f=$(complete -p nerdr | sed -n 's/.* -F \\([^ ]*\\) .*/\\1/p')\n\
         [ -n \"$f\" ] || {{ echo 'no completion function registered for nerdr' >&2; exit 3; }}\n\
         \"$f\" nerdr '{cur}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        words = quoted.join(" "),
        line = words.join(" "),
        cur = words[cword],
        prev = words[cword - 1],
    );
    let out = l
        .cmd(&[])
        .get_envs()
        .fold(Command::new("bash"), |mut c, (k, v)| {
            if let Some(v) = v {
                c.env(k, v);
            }
            c
        })
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", dir.display()),
        )
        .current_dir(l.work())
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bash: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let mut words: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|w| !w.is_empty())
        .map(|w| w.trim_end().to_string())
        .collect();
    words.sort();
    words
}

#[test]
fn bash_completes_read_with_the_running_tabs_ids_and_names() {
    let l = Local::empty();
    l.write_config(SH);
    // No core: no tab offered (only `read`'s options), nothing printed,
    // and the TAB does not start one (the client socket stays absent).
    assert_eq!(
        offered(&l, &["nerdr", "read", ""]),
        ["--folder", "--help", "--host", "--lines"]
    );
    assert!(!l.client_socket().exists(), "a TAB press started a core");

    let mut l = l;
    l.start_core();
    let first = l.ok(&["agent", "sh"]);
    let second = l.ok(&["agent", "sh"]);
    l.ok(&["rename", &second, "builder"]);
    let names: Vec<String> = l
        .tabs_json(&[])
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let offer = offered(&l, &["nerdr", "read", ""]);
    // By number too, as `nerdr read 1` takes it.
    for want in [
        &first,
        &second,
        &names[0],
        &"builder".to_string(),
        &"1".into(),
        &"2".into(),
    ] {
        assert!(offer.contains(want), "{want} not in {offer:?}");
    }
    // The word typed so far narrows it, as bash's own completion does.
    assert_eq!(offered(&l, &["nerdr", "read", "bui"]), vec!["builder"]);
    // Agent names come from the core's config.
    let agents = offered(&l, &["nerdr", "agent", ""]);
    assert!(
        agents.contains(&"sh".into()) && agents.contains(&"shtoo".into()),
        "{agents:?}"
    );
    // Subcommands come from the binary; internal ones are not offered.
    let subs = offered(&l, &["nerdr", "re"]);
    for want in ["read", "rename", "restart"] {
        assert!(subs.contains(&want.to_string()), "{want} not in {subs:?}");
    }
    assert!(!offered(&l, &["nerdr", "co"]).contains(&"core".into()));
}

#[test]
fn every_shell_gets_a_script_that_parses() {
    let l = Local::empty();
    let bash = l.ok(&["completions", "bash"]);
    let out = Command::new("bash")
        .args(["-n", "-c", &bash])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    for shell in ["zsh", "fish"] {
        assert!(
            l.ok(&["completions", shell]).contains("COMPLETE="),
            "{shell}"
        );
    }
    let err = l.fails(&["completions", "tcsh"]);
    assert!(err.contains("bash, zsh, fish"), "{err}");
}

#[test]
fn man_renders_the_agent_page() {
    let l = Local::empty();
    let dir = l.path("man");
    l.ok(&["man", "--dir", dir.to_str().unwrap()]);
    let page = dir.join("nerdr-agent.1");
    let out = Command::new("man")
        .env("MANWIDTH", "80")
        .env("MAN_KEEP_FORMATTING", "0")
        .args(["-P", "cat", "-l"])
        .arg(&page)
        .output()
        .expect("man (apt-get install man-db)");
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "man -l {}: {err}", page.display());
    assert!(
        text.contains("nerdr-agent") && text.contains("Start an agent in a new tab"),
        "{text}"
    );
    assert!(!err.contains("warning"), "groff warned: {err}");
    // `nerdr man` alone prints nerdr(1), naming the commands.
    let top = l.ok(&["man"]);
    assert!(
        top.contains(".TH nerdr 1") && top.contains("agent"),
        "{top}"
    );
}

#[test]
fn version_names_the_commit() {
    let l = Local::empty();
    let v = l.ok(&["--version"]);
    // As build.rs: a .git of this tree's own, else `unknown`.
    let own_git = Path::new(env!("CARGO_MANIFEST_DIR")).join(".git").exists();
    let head = Command::new("git")
        .args([
            "-C",
            env!("CARGO_MANIFEST_DIR"),
            "rev-parse",
            "--short",
            "HEAD",
        ])
        .output()
        .ok()
        .filter(|o| own_git && o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    assert_eq!(
        v,
        format!("nerdr {} ({head})", env!("CARGO_PKG_VERSION")),
        "a test binary older than HEAD: rebuild"
    );
}

/// COMPLETE is clap's variable; one some other tool set to something that
/// is not a shell leaves nerdr's commands alone.
#[test]
fn a_complete_variable_naming_no_shell_is_ignored() {
    let l = Local::empty();
    let out = l.cmd(&["--version"]).env("COMPLETE", "1").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("nerdr "));
}
