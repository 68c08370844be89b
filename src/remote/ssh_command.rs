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
/// shell there as one string, so the program is quoted for a POSIX shell,
/// leaving a leading `~/` for that shell to expand.
pub fn remote_command(nerdr: &str) -> String {
    let program = match nerdr.strip_prefix("~/") {
        Some(rest) => format!("~/{}", sh_quote(rest)),
        None => sh_quote(nerdr),
    };
    format!("{program} bridge")
}

/// `word` as one word of a POSIX shell: as it is when it holds only
/// characters no shell treats specially, else in single quotes.
fn sh_quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./+,:@%=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_command_is_one_shell_word_and_bridge() {
        #[rustfmt::skip]
        let rows = [
            ("nerdr", "nerdr bridge"),
            ("/usr/bin/nerdr", "/usr/bin/nerdr bridge"),
            ("~/.local/bin/nerdr", "~/.local/bin/nerdr bridge"),
            ("~/my tools/nerdr", "~/'my tools/nerdr' bridge"),
            ("/opt/n r/nerdr", "'/opt/n r/nerdr' bridge"),
            ("nerdr;rm -rf ~", "'nerdr;rm -rf ~' bridge"),
            ("it's", r"'it'\''s' bridge"),
            ("$(id)", "'$(id)' bridge"),
            // A `~` not followed by `/` is a name, not the home.
            ("~bob/nerdr", "'~bob/nerdr' bridge"),
        ];
        for (nerdr, want) in rows {
            assert_eq!(remote_command(nerdr), want, "{nerdr}");
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
