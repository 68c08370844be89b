//! A PATH folder reached through a symlink the sandbox may replace: the
//! folder the link leads to is out of reach, the link is not, and a link
//! put in its place leads wherever the agent likes.

use super::*;

#[test]
fn a_path_folder_through_a_link_the_sandbox_may_replace_refuses_the_launch() {
    let Some(s) = Setup::start() else { return };
    let home = s.env.home().to_path_buf();
    // `~/tools` is the sandbox's to write; its `bin` leads to a folder of
    // the read-only home.
    s.env.write_user_file("tools/README", "");
    s.env.write_user_file("realbin/README", "");
    let link = home.join("tools/bin");
    std::os::unix::fs::symlink(home.join("realbin"), &link).unwrap();
    std::os::unix::fs::lchown(&link, Some(s.env.uid()), Some(s.env.gid())).unwrap();
    let wrapper = s.env.write_user_file(
        "bin/wrap-tools",
        format!(
            "#!/bin/sh\n{CORRECT} --bind {0} {0} -- \"$@\"\n",
            home.join("tools").display()
        ),
    );
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let agent = s.env.write_user_file(
        "bin/tools",
        "#!/bin/sh\ncase \"$1\" in --help) echo 'Usage: agent'; exit 0;; esac\n\
         echo AGENT-STARTED; exec sleep 1000\n",
    );
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = home.join(".config/nerdr/config.toml");
    let mut text_of = std::fs::read_to_string(&config).unwrap();
    text_of.push_str(&format!(
        "[agents.tools]\ncommand = [\"{}\", \"{}\"]\nsandboxed = true\n",
        wrapper.display(),
        agent.display()
    ));
    s.env.write_user_file(".config/nerdr/config.toml", text_of);
    let launch = format!("PATH=\"$PATH:{}\" exec nerdr agent tools", link.display());
    let out = s.output(&["sh", "-c", &launch]);
    let answer = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(!out.status.success(), "started:\n{answer}");
    let id = s.tab_of("tools")["id"].as_str().unwrap().to_string();
    let refused = s.audit(REFUSED_ID, &id);
    assert_eq!(refused.len(), 1, "{answer}");
    let reached = values(&refused[0]["NERDR_REACHED"]);
    assert!(
        reached
            .iter()
            .any(|r| r.contains(&link.display().to_string())),
        "{reached:#?}\n{answer}"
    );
    // Only the link: what it leads to stays out of reach.
    assert_eq!(reached.len(), 1, "{reached:#?}");
}
