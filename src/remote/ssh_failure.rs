//! What it means when `ssh HOST nerdr bridge` ends, or says something
//! else, before the bridge's greeting (pure): nerdr not installed there
//! (the shell's 127, `command not found`), ssh itself failing (255: no
//! route, no key, a host key that changed), a nerdr there older than the
//! bridge (clap's `unrecognized subcommand`), or a login that prints to
//! stdout before the bridge speaks.

use super::target::Target;

/// How ssh ended, and the last of what it (and the remote shell) wrote on
/// stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended<'a> {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stderr: &'a str,
}

/// How to install nerdr, for a host that has none.
const INSTALL: &str = "install it there (README.md, Install: the package, or \
                       packaging/install.sh from a checkout)";

/// The error for an ssh to `host` that ended before the bridge greeted.
pub fn explain(host: &Target, ended: Ended, here: &str) -> String {
    let said = last_lines(ended.stderr);
    let ssh_said = match said.is_empty() {
        true => String::new(),
        false => format!(" (ssh said: {said})"),
    };
    let run = format!(
        "`ssh {} {}`",
        host.destination,
        super::ssh_command::remote_command(&host.nerdr)
    );
    let missing = ended.code == Some(127)
        || ended.stderr.to_lowercase().contains("command not found")
        || (ended.stderr.contains(&host.nerdr) && ended.stderr.contains("No such file"));
    if missing && ended.code != Some(255) {
        let set = match host.configured {
            true => format!("[hosts.{}] nerdr", host.name),
            false => format!("a [hosts.{}] section with nerdr", host.name),
        };
        return format!(
            "nerdr is not installed on {name}, or not where {run} looks{ssh_said}: {INSTALL}; \
             if it is installed off the PATH ssh's commands get there (~/.local/bin is often \
             only on a login shell's), name it in your config: {set} = \"~/.local/bin/nerdr\"",
            name = host.name,
        );
    }
    if ended.stderr.contains("unrecognized subcommand 'bridge'") {
        return format!(
            "nerdr on {} is older than `nerdr bridge`, which --host needs: upgrade it to the \
             version here ({here})",
            host.name
        );
    }
    match ended.code {
        Some(255) => format!(
            "ssh could not connect or log in to {} as {run} needs{ssh_said}; check that `ssh {}` works \
             from this shell",
            host.destination, host.destination
        ),
        Some(code) => {
            format!("{run} ended (exit code {code}) before nerdr there answered{ssh_said}")
        }
        None => format!("{run} was killed before nerdr there answered{ssh_said}"),
    }
}

/// The error for a first frame that is no bridge greeting: the start of
/// what came instead, shown as text.
pub fn not_a_greeting(host: &Target, first: &[u8]) -> String {
    let shown: String =
        crate::printable::printable(&String::from_utf8_lossy(&first[..first.len().min(80)]));
    format!(
        "{} printed something before `nerdr bridge` spoke: \"{shown}\"; a login that prints on \
         stdout (a shell startup file's echo, a banner) mixes into nerdr's channel: make it \
         print only for interactive shells",
        host.destination
    )
}

/// The last two non-empty lines, joined, at most 300 characters.
fn last_lines(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let tail = lines[lines.len().saturating_sub(2)..].join(" / ");
    let tail: String = tail
        .chars()
        .rev()
        .take(300)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    crate::printable::printable(&tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(configured: bool) -> Target {
        Target {
            name: "devbox".into(),
            destination: "me@devbox".into(),
            folder: None,
            nerdr: "nerdr".into(),
            configured,
        }
    }

    #[test]
    fn each_way_ssh_ends_early_is_said_for_what_it_is() {
        #[rustfmt::skip]
        let rows: &[(bool, Option<i32>, &str, &[&str])] = &[
            (false, Some(127), "bash: line 1: nerdr: command not found\n",
             &["nerdr is not installed on devbox", "`ssh me@devbox nerdr bridge`",
               "command not found", "packaging/install.sh",
               "a [hosts.devbox] section with nerdr = \"~/.local/bin/nerdr\""]),
            (true, Some(127), "zsh:1: command not found: nerdr\n",
             &["nerdr is not installed on devbox", "[hosts.devbox] nerdr = "]),
            // A shell that says so without 127 (csh), or a path that is not there.
            (true, Some(1), "nerdr: Command not found.\n",
             &["nerdr is not installed on devbox"]),
            (false, Some(255), "ssh: Could not resolve hostname devbox: Name or service not known\n",
             &["ssh could not connect or log in to me@devbox", "Could not resolve hostname",
               "check that `ssh me@devbox` works"]),
            (false, Some(255), "me@devbox: Permission denied (publickey).\n",
             &["Permission denied (publickey)"]),
            (false, Some(2), "error: unrecognized subcommand 'bridge'\n\nUsage: nerdr [OPTIONS] [COMMAND]\n",
             &["nerdr on devbox is older than `nerdr bridge`", "(0.1.0 (abc))"]),
            (false, Some(1), "", &["ended (exit code 1) before nerdr there answered"]),
            (false, None, "", &["was killed before nerdr there answered"]),
        ];
        for (configured, code, stderr, parts) in rows {
            let got = explain(
                &host(*configured),
                Ended {
                    code: *code,
                    stderr,
                },
                "0.1.0 (abc)",
            );
            for part in *parts {
                assert!(
                    got.contains(part),
                    "{code:?} {stderr:?}:\n{got}\nlacks {part:?}"
                );
            }
        }
    }

    #[test]
    fn a_login_that_prints_is_shown_what_it_printed() {
        let got = not_a_greeting(&host(false), b"Welcome to devbox!\n\x1b[1mtoday\x1b[0m");
        assert!(got.contains("me@devbox printed something before"), "{got}");
        assert!(got.contains("Welcome to devbox!"), "{got}");
        assert!(!got.contains('\x1b'), "{got:?}");
    }
}
