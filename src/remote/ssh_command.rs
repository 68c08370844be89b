//! The ssh command line `--host` runs (pure): plain `ssh` from PATH, so
//! `~/.ssh/config`, the agent, `ProxyJump`, `ControlMaster` and keys apply
//! as they do to any ssh of yours. Its options change only what kind of
//! channel this is, each for the reason beside it in [`OPTIONS`] (the
//! same ones scp and sftp set for their own command channels); none
//! touches how ssh finds or authenticates the host. `BatchMode` is left as
//! you set it: a passphrase or host-key question goes to your terminal
//! (`/dev/tty`), never into the channel, so it can be answered as with
//! any ssh.

/// The options, each with why it overrides your config.
pub const OPTIONS: &[(&str, &str)] = &[
    (
        "-T",
        "no pseudo-terminal, whatever RequestTTY says: the channel carries binary frames, \
         which a terminal's line discipline would change",
    ),
    ("-x", "no X11 forwarding: the bridge opens no windows"),
    (
        "-oClearAllForwardings=yes",
        "no port forwardings from your config: each command would set them up again, or \
         fail to when a login of yours holds them",
    ),
    (
        "-oRemoteCommand=none",
        "a RemoteCommand in your config would replace `nerdr bridge` (ssh refuses both)",
    ),
    (
        "-oForwardAgent=no",
        "the bridge needs no keys: your agent is not lent to the host for it",
    ),
    (
        "-oPermitLocalCommand=no",
        "a LocalCommand is for your logins, not each nerdr command",
    ),
];

/// `ssh`'s arguments (after the program name) for `destination`, running
/// the remote `nerdr` (a path there, `~/` allowed) as a bridge. The
/// destination is checked by the caller (`config::destination_problem`);
/// `--` keeps even a bad one from being read as an option.
pub fn argv(destination: &str, nerdr: &str) -> Vec<String> {
    let mut args: Vec<String> = OPTIONS.iter().map(|(o, _)| o.to_string()).collect();
    args.push("--".into());
    args.push(destination.into());
    args.push(remote_command(nerdr));
    args
}

/// The command line the remote shell runs: ssh hands it to the login
/// shell there as one string, and that shell may be any (sh, fish, csh),
/// so nothing is quoted: the program is one that needs no quoting in any
/// shell (`config::nerdr_program_problem`, checked where `[hosts] nerdr`
/// is read), a leading `~/` left for the shell to expand.
pub fn remote_command(nerdr: &str) -> String {
    debug_assert!(
        crate::config::nerdr_program_problem(nerdr).is_none(),
        "{nerdr:?} was not checked"
    );
    format!("{nerdr} bridge")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every program `[hosts] nerdr` may name is the same word to every
    /// shell: the command line is that word and `bridge`; anything that
    /// a shell would read otherwise is refused when the config is read.
    #[test]
    fn the_remote_command_needs_no_quoting_in_any_shell() {
        use crate::config::nerdr_program_problem;
        #[rustfmt::skip]
        let rows: &[(&str, Result<&str, &str>)] = &[
            ("nerdr", Ok("nerdr bridge")),
            ("/usr/bin/nerdr", Ok("/usr/bin/nerdr bridge")),
            ("~/.local/bin/nerdr", Ok("~/.local/bin/nerdr bridge")),
            ("/opt/nerdr-0.3+git/bin/nerdr_x", Ok("/opt/nerdr-0.3+git/bin/nerdr_x bridge")),
            // Quoting would be needed: refused, whatever the shell.
            ("~/my tools/nerdr", Err("holds ' '")),
            ("nerdr;rm -rf ~", Err("holds ';'")),
            ("it's", Err("holds '\\''")),
            ("$(id)", Err("holds '$'")),
            ("a\nb", Err("holds '\\n'")),
            // csh's history, zsh's path lookup, csh's jobs, fish's braces.
            ("n!1", Err("holds '!'")),
            ("=nerdr", Err("holds '='")),
            ("%1", Err("holds '%'")),
            ("{a,b}", Err("holds '{'")),
            // `~` is the home only as `~/` at the start (`~bob` is bob's).
            ("~bob/nerdr", Err("holds '~'")),
            ("/x/~/nerdr", Err("holds '~'")),
            ("-c", Err("starts with `-`")),
            ("", Err("is empty")),
        ];
        for (nerdr, want) in rows {
            match (nerdr_program_problem(nerdr), want) {
                (None, Ok(line)) => assert_eq!(remote_command(nerdr), *line, "{nerdr}"),
                (Some(p), Err(part)) => assert!(p.contains(part), "{nerdr}: {p}"),
                (got, want) => panic!("{nerdr:?}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_argv_is_the_channel_options_then_the_destination_and_command() {
        let got = argv("devbox", "nerdr");
        assert_eq!(
            got,
            [
                "-T",
                "-x",
                "-oClearAllForwardings=yes",
                "-oRemoteCommand=none",
                "-oForwardAgent=no",
                "-oPermitLocalCommand=no",
                "--",
                "devbox",
                "nerdr bridge",
            ]
        );
        // Nothing that chooses the host, the user, the port, the keys or
        // the route: those stay ssh's config.
        for (option, why) in OPTIONS {
            for chooser in [
                "Host",
                "User",
                "Port",
                "Identity",
                "Proxy",
                "BatchMode",
                "-F",
                "-i",
            ] {
                assert!(!option.contains(chooser), "{option}");
            }
            assert!(!why.is_empty());
        }
    }
}
