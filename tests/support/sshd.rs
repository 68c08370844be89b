//! A real OpenSSH server for the `--host` tests, inside a [`SystemdEnv`]:
//! `/usr/sbin/sshd` run as the test user (no root: it logs in only that
//! user), on 127.0.0.1 on a free port, with a host key, authorized keys
//! and config of its own under the environment's HOME, and key
//! authentication only. The user's client side gets a key and a
//! `~/.ssh/config` naming the alias [`ALIAS`], with the server's host key
//! pinned in a known_hosts file.
//!
//! ssh reads `~/.ssh` from the home in the passwd entry (`/home/nerdrt`),
//! not from `$HOME`; inside the environment's mount namespace that home is
//! the environment's HOME, bound over it, so nothing of the real
//! `/home/nerdrt` is read or written and parallel environments do not
//! meet. The logins' environment comes from sshd (`SetEnv`): the same
//! runtime dir, user bus and PATH (nerdr under test first) as the
//! environment's commands, so the "remote" core is this environment's.
//!
//! Dropping it stops sshd (our own child, by its PID); the sessions it
//! forked are in the environment's cgroup and go with it.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use super::sysenv::{skip, SystemdEnv};
use super::wait_until;

/// The host alias `~/.ssh/config` names.
pub const ALIAS: &str = "box";

/// The arguments that start a plain bash tab on `[hosts.devbox]`.
pub const BASH_ON_DEVBOX: &[&str] = &[
    "--host",
    "devbox",
    "agent",
    "--",
    "bash",
    "--norc",
    "--noprofile",
];

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    child: Child,
    /// sshd's folder: its config, keys and log (`sshd.log`).
    pub dir: PathBuf,
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
}

impl Sshd {
    /// sshd for `env`'s user, and that user's ssh client set up to reach
    /// it as [`ALIAS`]. `None` after a loud skip when sshd is not
    /// installed (a failure under `NERDR_MUST_TEST=1`).
    pub fn start(env: &SystemdEnv) -> Option<Sshd> {
        if !Path::new(SSHD).exists() {
            skip("/usr/sbin/sshd is missing (install openssh-server)");
            return None;
        }
        let home = env.home().to_path_buf();
        let dir = home.join("sshd");
        let ssh_dir = home.join(".ssh");
        env.run(&[
            "mkdir",
            "-p",
            "-m",
            "0700",
            &dir.display().to_string(),
            &ssh_dir.display().to_string(),
        ]);
        let host_key = dir.join("host_key");
        let user_key = home.join(".ssh/id_ed25519");
        for key in [&host_key, &user_key] {
            env.run(&[
                "ssh-keygen",
                "-q",
                "-t",
                "ed25519",
                "-N",
                "",
                "-f",
                &key.display().to_string(),
            ]);
        }
        let pub_of = |key: &Path| {
            std::fs::read_to_string(key.with_extension("pub"))
                .unwrap_or_else(|e| panic!("{}.pub: {e}", key.display()))
        };
        let rel = |p: &Path| p.strip_prefix(&home).unwrap().to_path_buf();
        let authorized = env.write_user_file(rel(&dir.join("authorized_keys")), pub_of(&user_key));
        let port = free_port();
        let runtime = env.runtime_dir().display().to_string();
        let path = format!(
            "{}:/usr/local/bin:/usr/bin:/bin",
            env.nerdr().parent().unwrap().display()
        );
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nPidFile {}\n\
             AuthorizedKeysFile {}\nPubkeyAuthentication yes\nPasswordAuthentication no\n\
             KbdInteractiveAuthentication no\nUsePAM no\nStrictModes no\nLogLevel VERBOSE\n\
             SetEnv XDG_RUNTIME_DIR={runtime} DBUS_SESSION_BUS_ADDRESS=unix:path={runtime}/bus \
             PATH={path} HOME={}\n",
            host_key.display(),
            dir.join("sshd.pid").display(),
            authorized.display(),
            home.display(),
        );
        let config = env.write_user_file(rel(&dir.join("sshd_config")), config);
        // The client: a key, the alias, the server's key pinned.
        let host_pub = pub_of(&host_key);
        let mut words = host_pub.split_whitespace();
        let (kind, key) = (words.next().unwrap(), words.next().unwrap());
        let known = env.write_user_file(
            ".ssh/known_hosts",
            format!("[127.0.0.1]:{port} {kind} {key}\n"),
        );
        env.write_user_file(
            ".ssh/config",
            format!(
                "Host {ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {}\n  \
                 IdentityFile {}\n  IdentitiesOnly yes\n  UserKnownHostsFile {}\n  \
                 StrictHostKeyChecking yes\n",
                env.user(),
                user_key.display(),
                known.display()
            ),
        );
        // ssh finds ~/.ssh in the passwd entry's home: this HOME, here.
        let passwd_home = passwd_home(env.user());
        env.root_run(&["mkdir", "-p", &passwd_home]);
        env.root_run(&["mount", "--bind", &home.display().to_string(), &passwd_home]);
        let child = env
            .user_cmd(&[
                SSHD,
                "-D",
                "-f",
                &config.display().to_string(),
                "-E",
                &dir.join("sshd.log").display().to_string(),
            ])
            .stdin(Stdio::null())
            .spawn()
            .expect("cannot start sshd");
        let sshd = Sshd { child, dir, port };
        wait_until("sshd listening", Duration::from_secs(20), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Some(sshd)
    }

    /// Stop (`false`) or continue (`true`) the listening sshd, our own
    /// child, by its PID: while stopped, a new login hangs as over a
    /// network that is gone; the sessions it forked run on.
    pub fn answer(&self, yes: bool) {
        let signal = if yes { "-CONT" } else { "-STOP" };
        let status = std::process::Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success(), "kill {signal} sshd");
    }

    /// Another alias in the user's `~/.ssh/config`, `name`, for this
    /// server reached through 127.0.0.1:`port` (a relay in front of it,
    /// `support::slow_link`), its host key the same one pinned.
    pub fn alias_through(&self, env: &SystemdEnv, name: &str, port: u16) {
        let config = env.home().join(".ssh/config");
        let mut text = std::fs::read_to_string(&config).expect("~/.ssh/config");
        // ssh takes each option's first value: the alias's own come
        // first, the rest (user, key, known hosts) from ALIAS's block.
        text = text.replacen(
            &format!("Host {ALIAS}\n"),
            &format!("Host {ALIAS} {name}\n"),
            1,
        );
        let own = format!(
            "Host {name}\n  Port {port}\n  HostKeyAlias [127.0.0.1]:{}\n",
            self.port
        );
        env.write_user_file(".ssh/config", own + &text);
    }

    /// sshd's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("sshd.log")).unwrap_or_default()
    }
}

/// `~/proj` made, and the user's config naming `[hosts.devbox]` (this
/// server, folder `~/proj`) then `more` (other `[hosts]` sections).
pub fn devbox_config(env: &SystemdEnv, more: &str) {
    env.run(&[
        "mkdir",
        "-p",
        &env.home().join("proj").display().to_string(),
    ]);
    env.write_user_file(
        ".config/nerdr/config.toml",
        format!("[hosts.devbox]\nssh = \"{ALIAS}\"\nfolder = \"~/proj\"\n{more}"),
    );
}

/// Two dead hosts in the user's `~/.ssh/config`: `gone`, a port nothing
/// listens on, and `stall`, a listener that never accepts (the kernel
/// completes the connection, it waits in the backlog, and ssh waits for a
/// greeting that never comes). The listener is returned: `stall` stays
/// stalled while it is held.
pub fn dead_hosts(env: &SystemdEnv) -> std::net::TcpListener {
    use std::net::TcpListener;
    // The kernel's choice of port, let go.
    let gone_port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let stalled = TcpListener::bind("127.0.0.1:0").unwrap();
    let stall_port = stalled.local_addr().unwrap().port();
    let ssh_config = env.home().join(".ssh/config");
    let mut aliases = std::fs::read_to_string(&ssh_config).unwrap();
    for (alias, port) in [("gone", gone_port), ("stall", stall_port)] {
        aliases.push_str(&format!(
            "Host {alias}\n  HostName 127.0.0.1\n  Port {port}\n  IdentityFile {}\n  \
             StrictHostKeyChecking yes\n",
            env.home().join(".ssh/id_ed25519").display()
        ));
    }
    env.write_user_file(".ssh/config", aliases);
    stalled
}

impl Drop for Sshd {
    fn drop(&mut self) {
        // Our own child, by its PID.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on now (the kernel's choice, let go).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on 127.0.0.1")
}

/// The home the passwd entry of `user` names.
fn passwd_home(user: &str) -> String {
    let out = std::process::Command::new("getent")
        .args(["passwd", user])
        .output()
        .expect("getent");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .split(':')
        .nth(5)
        .filter(|h| h.starts_with('/'))
        .unwrap_or_else(|| panic!("no passwd home for {user}"))
        .to_owned()
}
