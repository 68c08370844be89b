//! `nerdr --host HOST [CMD]`: which commands go over ssh, the link to
//! HOST's bridge opened for one, and errors said to be HOST's
//! (README.md, "Other machines").

use std::process::ExitCode;

use super::{attach, dispatch, Command, Folder};

/// `--host HOST CMD`: the link to HOST's bridge opened first, CMD run
/// with its requests going over it and its folder HOST's, the link closed.
///
/// No command, or `attach`: the window, rendered here, over a link that
/// stays open for it (`client::attach::run_remote`).
pub(super) fn run(name: &str, given: Folder, command: Option<Command>) -> anyhow::Result<ExitCode> {
    let config = crate::config::load(&crate::paths::Paths::from_process()?.config_file())?;
    // What to type after `ssh` for this host, for advice.
    let dest = config
        .hosts
        .get(name)
        .and_then(|h| h.ssh.as_deref())
        .unwrap_or(name);
    if let Some(why) = command.as_ref().and_then(|c| not_over_host(c, dest)) {
        anyhow::bail!("--host {name}: {why}");
    }
    if name == crate::remote::all_hosts::LOCAL {
        anyhow::bail!(
            "--host {name}: `{name}` is this machine (as in `tabs --all-hosts` and the session \
             picker); drop --host"
        );
    }
    let window = matches!(command, None | Some(Command::Attach(_)));
    let in_tab = std::env::var("NERDR_TAB").is_ok_and(|s| !s.is_empty());
    let target = crate::remote::target::choose(name, &config.hosts, in_tab)
        .map_err(|e| anyhow::anyhow!(e))?;
    let default_folder = target.folder.clone();
    let options = match window {
        true => crate::client::attach::SSH_WINDOW_OPTIONS,
        false => &[],
    };
    let opened = crate::client::over_ssh::open(target, options)
        .map_err(|e| not_a_host_name(e, name, &config.hosts))?;
    let done = (|| {
        let remote = crate::remote::folder::resolve(
            given.given(),
            default_folder.as_deref(),
            opened.home.as_deref(),
        )
        .map_err(|e| anyhow::anyhow!(e))?;
        let folder = Folder {
            given: given.given.clone(),
            remote: Some(remote),
        };
        match command {
            None => attach::remote(None, &folder, opened.home.as_deref()),
            Some(Command::Attach(a)) => attach::remote(a.session, &folder, opened.home.as_deref()),
            Some(command) => dispatch(command, &folder),
        }
    })()
    .map_err(|e| on_host_error(e, name, given.given().is_none() && default_folder.is_some()));
    crate::client::over_ssh::close();
    done
}

/// A failed link to `name` when `name` is no `[hosts]` name but some are:
/// a typo of one is likelier than a new ssh destination.
fn not_a_host_name(
    e: anyhow::Error,
    name: &str,
    hosts: &std::collections::BTreeMap<String, crate::config::HostConfig>,
) -> anyhow::Error {
    if hosts.is_empty() || hosts.contains_key(name) {
        return e;
    }
    let names: Vec<&str> = hosts.keys().map(String::as_str).collect();
    anyhow::anyhow!(
        "{e:#}\n(`{name}` is no [hosts] name in your config, so it went to ssh as it is; \
         the [hosts] names are: {})",
        names.join(", ")
    )
}

/// An error over `--host`, said to be the host's; one about the folder
/// there names the `[hosts]` key it came from, when it did.
fn on_host_error(e: anyhow::Error, name: &str, from_hosts_folder: bool) -> anyhow::Error {
    let text = format!("{e:#}");
    if from_hosts_folder && text.contains("does not exist or is not a folder") {
        return e.context(format!(
            "on {name} (the folder is `[hosts.{name}] folder` in your config: fix it, or give \
             --folder)"
        ));
    }
    e.context(format!("on {name}"))
}

/// Why `command` does not run over `--host` (yet), if it does not: only
/// the thin requests that need nothing of this machine do.
fn not_over_host(command: &Command, host: &str) -> Option<String> {
    match command {
        Command::Tabs(a) if a.all_hosts => {
            Some("--all-hosts asks every host in your config itself; drop --host".into())
        }
        Command::Tabs(_)
        | Command::Agent(_)
        | Command::Read(_)
        | Command::Send(_)
        | Command::Attach(_) => None,
        Command::Bridge(_) => Some("`nerdr bridge` is what --host runs on the other end".into()),
        Command::Doctor(_) => Some(format!(
            "`nerdr doctor` looks at the machine it runs on; for that one, run `ssh {host} nerdr \
             doctor`"
        )),
        other => Some(format!(
            "`nerdr {}` does not work over ssh yet; the window (attach), tabs, agent, read \
             and send do",
            command_name(other)
        )),
    }
}

/// The subcommand's name as typed (`request-review`).
fn command_name(command: &Command) -> String {
    let debug = format!("{command:?}");
    let variant = debug.split('(').next().unwrap_or_default();
    let mut name = String::new();
    for (i, c) in variant.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('-');
        }
        name.push(c.to_ascii_lowercase());
    }
    name
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    /// Which commands run over `--host`: the four thin requests of the
    /// first slice; every other says so, by the name it was typed as.
    #[test]
    fn only_tabs_agent_read_and_send_go_over_host() {
        #[rustfmt::skip]
        let rows: &[(&[&str], Option<&str>)] = &[
            (&["tabs"], None),
            (&["tabs", "--all", "--json"], None),
            (&["tabs", "--all-hosts"], Some("asks every host in your config itself")),
            (&["agent", "claude"], None),
            (&["agent", "--", "bash"], None),
            (&["read", "1"], None),
            (&["send", "1", "hi"], None),
            (&["attach"], None),
            (&["attach", "proj"], None),
            (&["close", "1"], Some("`nerdr close` does not work over ssh yet")),
            (&["request-review", "1"], Some("`nerdr request-review` does not work over ssh yet")),
            (&["doctor"], Some("run `ssh devbox nerdr doctor`")),
            (&["bridge"], Some("what --host runs on the other end")),
        ];
        for (words, want) in rows {
            let cli = crate::cli::Cli::try_parse_from(
                ["nerdr", "--host", "devbox"].iter().chain(words.iter()),
            )
            .unwrap_or_else(|e| panic!("{words:?}: {e}"));
            assert_eq!(cli.host.as_deref(), Some("devbox"));
            let got = super::not_over_host(&cli.command.unwrap(), "devbox");
            match (got, want) {
                (None, None) => {}
                (Some(g), Some(w)) => assert!(g.contains(w), "{words:?}: {g}"),
                (g, w) => panic!("{words:?}: got {g:?}, want {w:?}"),
            }
        }
        // --host goes anywhere on the line, as --folder does.
        let cli = crate::cli::Cli::try_parse_from(["nerdr", "tabs", "--host", "devbox"]).unwrap();
        assert_eq!(cli.host.as_deref(), Some("devbox"));
    }

    #[test]
    fn a_failed_link_to_no_hosts_name_lists_the_names_there_are() {
        let hosts: std::collections::BTreeMap<_, _> = ["devbox", "gpu"]
            .into_iter()
            .map(|n| (n.to_string(), crate::config::HostConfig::default()))
            .collect();
        let said = |name: &str, hosts| {
            format!(
                "{:#}",
                super::not_a_host_name(anyhow::anyhow!("ssh failed"), name, hosts)
            )
        };
        let typo = said("devbx", &hosts);
        assert!(typo.starts_with("ssh failed\n"), "{typo}");
        assert!(typo.contains("`devbx` is no [hosts] name"), "{typo}");
        assert!(
            typo.contains("the [hosts] names are: devbox, gpu"),
            "{typo}"
        );
        assert_eq!(said("devbox", &hosts), "ssh failed", "a [hosts] name");
        assert_eq!(
            said("devbx", &Default::default()),
            "ssh failed",
            "no [hosts] at all"
        );
    }
}
