//! Folders the host runs programs from that lie where the sandbox may
//! write (`~/tools`, bound writable) without being writable themselves
//! through their usual path: a PATH folder reached through a symlink there
//! (the folder it leads to is out of reach, the link is not), and the hooks
//! folder git config names.

use super::*;

/// An agent `tools` whose sandbox is the correct one with `~/tools`
/// writable too.
fn tools_agent(s: &Setup) {
    let home = s.env.home().to_path_buf();
    s.env.write_user_file("tools/README", "");
    let wrapper = s.env.write_user_file(
        "bin/wrap-tools",
        format!(
            "#!/bin/sh\n{CORRECT} --bind {0} {0} -- \"$@\"\n",
            home.join("tools").display()
        ),
    );
    let agent = s.env.write_user_file(
        "bin/tools",
        "#!/bin/sh\ncase \"$1\" in --help) echo 'Usage: agent'; exit 0;; esac\n\
         echo AGENT-STARTED; exec sleep 1000\n",
    );
    for p in [&wrapper, &agent] {
        std::fs::set_permissions(p, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    }
    let config = home.join(".config/nerdr/config.toml");
    let mut text_of = std::fs::read_to_string(&config).unwrap();
    text_of.push_str(&format!(
        "[agents.tools]\ncommand = [\"{}\", \"{}\"]\nsandboxed = true\n",
        wrapper.display(),
        agent.display()
    ));
    s.env.write_user_file(".config/nerdr/config.toml", text_of);
}

/// Launch `tools` through `sh -c PREFIX nerdr agent tools`: refused, and
/// what the check reached.
fn refused(s: &Setup, prefix: &str) -> Vec<String> {
    let out = s.output(&["sh", "-c", &format!("{prefix} exec nerdr agent tools")]);
    let answer = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "started:\n{answer}");
    let id = s.tab_of("tools")["id"].as_str().unwrap().to_string();
    let refused = s.audit(REFUSED_ID, &id);
    assert_eq!(refused.len(), 1, "{answer}");
    values(&refused[0]["NERDR_REACHED"])
}

#[test]
fn a_path_folder_through_a_link_the_sandbox_may_replace_refuses_the_launch() {
    let Some(s) = Setup::start() else { return };
    tools_agent(&s);
    let home = s.env.home().to_path_buf();
    // `~/tools/bin` leads to a folder of the read-only home.
    s.env.write_user_file("realbin/README", "");
    let link = home.join("tools/bin");
    std::os::unix::fs::symlink(home.join("realbin"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(s.env.uid()), Some(s.env.gid())).unwrap();
    let reached = refused(&s, &format!("PATH=\"$PATH:{}\"", link.display()));
    // Only the link: what it leads to stays out of reach.
    assert_eq!(
        reached,
        [format!(
            "a PATH folder the core runs programs from {}, a link or under one (replaced)",
            link.display()
        )]
    );
}

#[test]
fn a_hooks_folder_git_config_names_where_the_sandbox_writes_refuses_the_launch() {
    let Some(s) = Setup::start() else { return };
    tools_agent(&s);
    s.env.write_user_file("tools/hooks/README", "");
    let gitconfig = s.env.home().join(".gitconfig");
    let mut config = std::fs::read_to_string(&gitconfig).unwrap_or_default();
    config.push_str("[core]\n\thooksPath = ~/tools/hooks\n");
    s.env.write_user_file(".gitconfig", config);
    let reached = refused(&s, "");
    assert_eq!(
        reached,
        [format!(
            "the hooks folder git config names {} (written)",
            s.env.home().join("tools/hooks").display()
        )]
    );
}

#[test]
fn a_dangling_global_git_config_link_into_the_sandboxs_reach_refuses_the_launch() {
    let Some(s) = Setup::start() else { return };
    tools_agent(&s);
    // `~/.gitconfig` leads to a file not made yet, where the sandbox writes.
    let link = s.env.home().join(".gitconfig");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(s.env.home().join("tools/gitconfig"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(s.env.uid()), Some(s.env.gid())).unwrap();
    let reached = refused(&s, "");
    assert!(
        reached
            .iter()
            .any(|r| r.starts_with(&format!("the global git config {}", link.display()))),
        "{reached:#?}"
    );
}
