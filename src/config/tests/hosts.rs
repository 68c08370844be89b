//! `[hosts.NAME]`: what parses into which host, and every way it can be
//! wrong, with the file, line, column and key.

use super::{parse_ok, PATH};
use crate::config::{parse, HostConfig};
use std::path::Path;

#[test]
fn hosts_parse_into_destination_folder_and_program() {
    let config = parse_ok(
        r#"
[hosts.devbox]
ssh = "me@dev.example.com"
folder = "~/src/shop"
nerdr = "~/.local/bin/nerdr"

[hosts.buildhost]
"#,
    );
    assert_eq!(
        config.hosts["devbox"],
        HostConfig {
            ssh: Some("me@dev.example.com".into()),
            folder: Some("~/src/shop".into()),
            nerdr: Some("~/.local/bin/nerdr".into()),
        }
    );
    assert_eq!(config.hosts["buildhost"], HostConfig::default());
    for folder in ["/srv/work", "~", "~/a"] {
        let text = format!("[hosts.h]\nfolder = {folder:?}\n");
        assert_eq!(parse_ok(&text).hosts["h"].folder.as_deref(), Some(folder));
    }
}

#[test]
fn host_errors_name_file_line_key_and_the_fix() {
    #[rustfmt::skip]
    let cases: &[(&str, &str, String)] = &[
        ("unknown key",
         "[hosts.devbox]\nssh = \"d\"\nport = 22\n",
         format!("{PATH}:3:1: unknown key `port` in [hosts.devbox]; valid keys: folder, nerdr, ssh")),
        ("an option for a destination",
         "[hosts.devbox]\nssh = \"-oProxyCommand=sh\"\n",
         format!("{PATH}:2:1: `hosts.devbox.ssh` starts with `-`, so it would be read by ssh as an option; write what you would type after `ssh`: an alias from ~/.ssh/config, host or user@host (options belong in ~/.ssh/config)")),
        ("two words for a destination",
         "[hosts.devbox]\nssh = \"me@dev -p 2222\"\n",
         format!("{PATH}:2:1: `hosts.devbox.ssh` holds ' ': a destination is a host, an address or user@host, made of letters, digits and `._@:%[]-` only (it can reach a shell through your ssh config's ProxyCommand); write what you would type after `ssh`: an alias from ~/.ssh/config, host or user@host (options belong in ~/.ssh/config)")),
        ("a shell's metacharacter in a destination",
         "[hosts.devbox]\nssh = \"dev$(touch x)\"\n",
         format!("{PATH}:2:1: `hosts.devbox.ssh` holds '$': a destination is a host, an address or user@host, made of letters, digits and `._@:%[]-` only (it can reach a shell through your ssh config's ProxyCommand); write what you would type after `ssh`: an alias from ~/.ssh/config, host or user@host (options belong in ~/.ssh/config)")),
        ("a program that needs quoting",
         "[hosts.devbox]\nnerdr = \"~/my tools/nerdr\"\n",
         format!("{PATH}:2:1: `hosts.devbox.nerdr` holds ' ': the login shell there reads this path, and no quoting works in every shell (sh, fish, csh), so it may hold only letters, digits and `._+-/`, with `~/` only at its start; give a plain path of nerdr on that host, e.g. nerdr = \"~/.local/bin/nerdr\" (a symlink to it if its real path holds other characters)")),
        ("a program that is an option",
         "[hosts.devbox]\nnerdr = \"-c\"\n",
         format!("{PATH}:2:1: `hosts.devbox.nerdr` starts with `-`; give a plain path of nerdr on that host, e.g. nerdr = \"~/.local/bin/nerdr\" (a symlink to it if its real path holds other characters)")),
        ("an empty destination",
         "[hosts.devbox]\nssh = \"\"\n",
         format!("{PATH}:2:1: `hosts.devbox.ssh` is empty; write what you would type after `ssh`: an alias from ~/.ssh/config, host or user@host (options belong in ~/.ssh/config)")),
        ("a destination that is no string",
         "[hosts.devbox]\nssh = 22\n",
         format!("{PATH}:2:1: `hosts.devbox.ssh` must be a string, found an integer (22); for example: ssh = \"text\"")),
        ("a relative folder",
         "[hosts.devbox]\nfolder = \"src/shop\"\n",
         format!("{PATH}:2:1: `hosts.devbox.folder` is \"src/shop\", neither absolute nor from the home (`~/`); write the folder on that host from / or ~/, e.g. folder = \"~/src/shop\"")),
        ("an empty program",
         "[hosts.devbox]\nnerdr = \"\"\n",
         format!("{PATH}:2:1: `hosts.devbox.nerdr` is empty; give it a value or remove the key")),
        ("a host that is not a table",
         "[hosts]\ndevbox = \"me@dev\"\n",
         format!("{PATH}:2:1: `hosts.devbox` must be a table, found a string (\"me@dev\"); for example: [hosts.devbox]")),
        ("a host name with a dot",
         "[hosts.\"dev.example.com\"]\nssh = \"dev.example.com\"\n",
         format!("{PATH}:1:8: `hosts.\"dev.example.com\"` is not a usable host name: `--host NAME` takes letters, digits, `-` and `_`, not starting with `-`; name it after the machine, e.g. [hosts.devbox], and put the address in ssh = \"...\"")),
        ("this machine's name",
         "[hosts.local]\nssh = \"me@dev\"\n",
         format!("{PATH}:1:8: `hosts.local` is taken: `local` is this machine in `nerdr tabs --all-hosts`; name it after the machine, e.g. [hosts.devbox], and put the address in ssh = \"...\"")),
        ("hosts that is not a table",
         "hosts = [\"devbox\"]\n",
         format!("{PATH}:1:1: `hosts` must be a table, found an array; for example: [hosts]")),
    ];
    for (name, text, want) in cases {
        match parse(text, Path::new(PATH)) {
            Ok(c) => panic!("{name}: parsed, want an error: {c:?}"),
            Err(e) => assert_eq!(&e.to_string(), want, "{name}"),
        }
    }
}
