//! A private, real `systemd --user` (with its own journald and user D-Bus) for
//! integration tests, built on `tests/env/sysenv.sh` and `tests/env/as-user.sh`.
//!
//! ```ignore
//! let Some(env) = SystemdEnv::start() else { return }; // loud SKIPPED when not root
//! env.systemctl(&["daemon-reload"]);
//! let out = env.run(&["nerdr", "--version"]); // as the test user, clean env
//! wait_until("unit active", Duration::from_secs(10), || {
//!     env.output(&["systemctl", "--user", "is-active", "-q", "x.service"]).status.success()
//! });
//! ```
//!
//! Each [`SystemdEnv`] is its own mount namespace (private tmpfs on
//! `/run/systemd`, `/run/log`, `/run/user`, `/var/log/journal` and `/tmp`), its
//! own journald, a fresh HOME and a delegated cgroup subtree; the test user
//! (`nerdrt`, or `$NERDR_TEST_USER`) is shared, so environments can run in
//! parallel tests.  Start-up takes about 0.3-0.6 s, teardown about 0.1 s, one
//! `user_cmd` about 70 ms of overhead.  Dropping it tears all of that down
//! (killing whatever user commands are still running) and panics (unless
//! already panicking) if anything was left behind.
//!
//! Things to know:
//! * Commands run as the user are placed in a cgroup inside the delegated
//!   subtree (`.../user-<uid>.slice/harness.scope`); without that the manager
//!   cannot move them, and `systemd-run --user --scope` fails (`Result: resources`).
//! * The manager's cgroup is `<name>/user-<uid>.slice/user@<uid>.service`, like
//!   a real login, so journald records `_SYSTEMD_USER_UNIT` and
//!   `journalctl --user -u X` works as the user.  As root, match
//!   `_SYSTEMD_USER_UNIT=X.service` instead: `journalctl --user-unit` adds `_UID=0`.
//! * journald attributes a line to a unit by reading `/proc/<pid>/cgroup` of the
//!   sender; a process that already exited (`echo` in a unit) may lose
//!   `_SYSTEMD_USER_UNIT`, `_COMM` etc.  Keep loggers alive or match on
//!   `SYSLOG_IDENTIFIER`/`_UID`.
//! * The journal is persistent (on a private tmpfs), like stock Debian 12; the
//!   user is in `systemd-journal`, so both the user and root can read it.
//!   [`SystemdEnv::journal`] reads it as root.  Entries reach the file
//!   asynchronously: poll with [`wait_until`].
//! * Paths under `runtime_dir()` (`/run/user/<uid>`) and `/tmp` are private to
//!   the namespace; from the test process use [`SystemdEnv::ns_path`].  HOME
//!   (and its parent) is a host directory bound in at the same path, so the
//!   test can read and write it directly ([`SystemdEnv::write_user_file`]).
//! * The nerdr binary under test is hard-linked (or copied) into a directory
//!   the user can reach, which comes first on the user's PATH: run `nerdr`.
//! * `root_cmd` processes are not in the delegated cgroup and are not killed
//!   by the teardown: wait for them.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{chown, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

const SYSENV_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/env/sysenv.sh");
const AS_USER_SH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/env/as-user.sh");
/// The binary under test (cargo builds it for integration tests).
pub const NERDR_BIN: &str = env!("CARGO_BIN_EXE_nerdr");

/// How long `start()` waits for the READY line (override: `NERDR_SYSENV_READY_SECS`).
const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// How long `drop` waits for the teardown before killing `sysenv.sh`.
const TEARDOWN_TIMEOUT: Duration = Duration::from_secs(60);

/// True when `NERDR_MUST_TEST=1`: skipping is then a failure.
pub fn must_test() -> bool {
    std::env::var("NERDR_MUST_TEST").is_ok_and(|v| v == "1")
}

/// Report a skipped test loudly on the real stderr (not captured by libtest); panics instead when `NERDR_MUST_TEST=1`.
pub fn skip(why: &str) {
    let name = thread::current().name().unwrap_or("<unnamed>").to_string();
    // Straight to fd 2: eprintln! would be captured by libtest and hidden for a passing test.
    let _ = writeln!(
        std::io::stderr(),
        "\n==================================================\n\
         SKIPPED: {name}: {why}\n\
         =================================================="
    );
    if must_test() {
        panic!("NERDR_MUST_TEST=1, but {name} cannot run: {why}");
    }
}

/// Poll `cond` every 20 ms until it is true; panic mentioning `what` after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    loop {
        if cond() {
            return;
        }
        if start.elapsed() >= timeout {
            panic!("timed out after {timeout:?} waiting for: {what}");
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Human-readable report of a finished command, for panic messages.
pub fn describe(cmd: &Command, out: &Output) -> String {
    format!(
        "\n\n==========\ncommand: {cmd:?}\nstatus: {}\n\nstdout:\n{}\nstderr:\n{}\n==========\n",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    )
}

/// Run `cmd` to completion and panic (printing command, stdout, stderr) unless it succeeded.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = output_of(cmd);
    if !out.status.success() {
        panic!("command failed:{}", describe(cmd, &out));
    }
    out
}

/// Run `cmd` to completion (stdin: /dev/null); panics only if it cannot be started.
pub fn output_of(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null());
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"))
}

/// A running private systemd user manager; see the module docs.
pub struct SystemdEnv {
    child: Child,
    stdin: Option<ChildStdin>,
    log: Arc<Mutex<String>>,
    pid: u32,
    uid: u32,
    gid: u32,
    user: String,
    home: PathBuf,
    runtime: PathBuf,
    cgroup: String,
    bin_dir: PathBuf,
    base: PathBuf,
    nsenter: PathBuf,
    started_in: Duration,
}

fn find_tool(name: &str) -> Option<PathBuf> {
    ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.is_file())
}

impl SystemdEnv {
    /// Start a new environment.  Returns `None` after a loud `SKIPPED` on stderr
    /// when it cannot run here (not root, no systemd); with `NERDR_MUST_TEST=1`
    /// that panics instead.  Panics, with sysenv.sh's stderr, if start-up fails.
    pub fn start() -> Option<SystemdEnv> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            skip("needs root to start a private systemd --user (run the tests as root)");
            return None;
        }
        for f in ["/lib/systemd/systemd", "/lib/systemd/systemd-journald"] {
            if !Path::new(f).exists() {
                skip(&format!("{f} is missing (install systemd)"));
                return None;
            }
        }
        let mut tools = Vec::new();
        for t in ["unshare", "nsenter", "setpriv", "useradd"] {
            match find_tool(t) {
                Some(p) => tools.push(p),
                None => {
                    skip(&format!("{t} not found (install util-linux/passwd)"));
                    return None;
                }
            }
        }
        let user = std::env::var("NERDR_TEST_USER").unwrap_or_else(|_| "nerdrt".into());
        let t0 = Instant::now();
        let mut cmd = Command::new(&tools[0]);
        cmd.args([
            "-m",
            "--propagation",
            "private",
            "/bin/bash",
            SYSENV_SH,
            &user,
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot spawn {cmd:?}: {e}"));
        let pid = child.id();

        // stderr: keep everything (for panics) and echo it (libtest shows it on failure).
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let log2 = Arc::clone(&log);
        thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("{line}");
                let mut l = log2.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let timeout = std::env::var("NERDR_SYSENV_READY_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map(Duration::from_secs)
            .unwrap_or(READY_TIMEOUT);
        let stdin = child.stdin.take();
        let mut env = SystemdEnv {
            child,
            stdin,
            log,
            pid,
            uid: 0,
            gid: 0,
            user,
            home: PathBuf::new(),
            runtime: PathBuf::new(),
            cgroup: String::new(),
            bin_dir: PathBuf::new(),
            base: PathBuf::new(),
            nsenter: tools[1].clone(),
            started_in: Duration::ZERO,
        };
        let line = loop {
            match rx.recv_timeout(timeout.saturating_sub(t0.elapsed())) {
                Ok(l) if l.starts_with("READY ") => break l,
                Ok(l) => eprintln!("sysenv stdout: {l}"),
                Err(e) => {
                    // Let it tear down what it built, then report.
                    let status = env.shutdown();
                    let log = env.log.lock().unwrap().clone();
                    env.pid = 0; // nothing left for Drop to do
                    panic!(
                        "sysenv.sh did not become READY ({}; exit: {status:?}); its stderr:\n{log}",
                        match e {
                            mpsc::RecvTimeoutError::Timeout => "timed out",
                            mpsc::RecvTimeoutError::Disconnected => "stdout closed",
                        }
                    );
                }
            }
        };
        for kv in line.split_whitespace().skip(1) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            match k {
                "uid" => env.uid = v.parse().expect("uid"),
                "gid" => env.gid = v.parse().expect("gid"),
                "home" => env.home = v.into(),
                "runtime" => env.runtime = v.into(),
                "cgroup" => env.cgroup = v.into(),
                "pid" => assert_eq!(v.parse::<u32>().ok(), Some(pid), "sysenv pid in {line}"),
                "bin" => env.bin_dir = v.into(),
                "base" => env.base = v.into(),
                _ => {}
            }
        }
        assert!(
            env.uid != 0 && !env.cgroup.is_empty() && env.home.is_dir() && env.bin_dir.is_dir(),
            "bad READY line: {line}"
        );
        // The binary under test, where the user can run it.
        let dest = env.bin_dir.join("nerdr");
        if std::fs::hard_link(NERDR_BIN, &dest).is_err() {
            std::fs::copy(NERDR_BIN, &dest)
                .unwrap_or_else(|e| panic!("copy {NERDR_BIN} to {}: {e}", dest.display()));
        }
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The checkout may be where the environment cannot see it (its /tmp
        // is private): the script that enters it travels with the binary.
        std::fs::copy(AS_USER_SH, env.bin_dir.join("as-user.sh"))
            .unwrap_or_else(|e| panic!("copy {AS_USER_SH}: {e}"));
        env.started_in = t0.elapsed();
        eprintln!(
            "sysenv: ready in {:?}: {line} (nerdr: {})",
            env.started_in,
            dest.display()
        );
        Some(env)
    }

    /// The test user's uid.
    pub fn uid(&self) -> u32 {
        self.uid
    }
    /// The test user's primary gid.
    pub fn gid(&self) -> u32 {
        self.gid
    }
    /// The test user's name.
    pub fn user(&self) -> &str {
        &self.user
    }
    /// The fresh HOME of this environment (same path inside and outside the namespace).
    pub fn home(&self) -> &Path {
        &self.home
    }
    /// `XDG_RUNTIME_DIR` (`/run/user/<uid>`); exists only inside the namespace,
    /// see [`Self::ns_path`].
    pub fn runtime_dir(&self) -> &Path {
        &self.runtime
    }
    /// The unique top cgroup name of this environment.
    pub fn cgroup(&self) -> &str {
        &self.cgroup
    }
    /// PID of sysenv.sh (its mount namespace is the environment's).
    pub fn pid(&self) -> u32 {
        self.pid
    }
    /// The copy of the nerdr binary the user runs (first on the user's PATH).
    pub fn nerdr(&self) -> PathBuf {
        self.bin_dir.join("nerdr")
    }
    /// How long `start()` took.
    pub fn started_in(&self) -> Duration {
        self.started_in
    }
    /// A path as seen inside the environment, reachable from the test process
    /// (as root): `/proc/<pid>/root/<path>`.  E.g. sockets under `runtime_dir()`.
    pub fn ns_path(&self, path: impl AsRef<Path>) -> PathBuf {
        let p = path.as_ref();
        Path::new(&format!("/proc/{}/root", self.pid)).join(p.strip_prefix("/").unwrap_or(p))
    }

    fn nsenter_cmd(&self, cwd: &Path) -> Command {
        let mut c = Command::new(&self.nsenter);
        // as-user.sh forwards this (otherwise empty) environment: Command::env() works.
        c.env_clear()
            .env("NERDR_AS_USER_PASS_ENV", "1")
            .env("NERDR_TEST_PATH_PREFIX", &self.bin_dir)
            .arg("-t")
            .arg(self.pid.to_string())
            .args(["-m", "--wd=.", "--", "/bin/bash"])
            .arg(self.bin_dir.join("as-user.sh"))
            .current_dir(cwd);
        c
    }

    /// A command run as the test user inside the environment: in the delegated
    /// cgroup, with a clean environment (HOME, USER, LOGNAME, SHELL, LANG,
    /// XDG_RUNTIME_DIR, DBUS_SESSION_BUS_ADDRESS, PATH with nerdr first).
    /// `.env(k, v)` on the result adds variables (`.env("PATH", ..)` replaces
    /// PATH); `.current_dir(d)` sets the working directory (default: HOME).
    /// Do not call `env_clear()`/`env_remove()` on it.
    pub fn user_cmd<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        assert!(!args.is_empty(), "user_cmd needs a program");
        let mut c = self.nsenter_cmd(&self.home);
        c.arg(&self.cgroup)
            .arg(self.uid.to_string())
            .arg(&self.home)
            .arg(&self.runtime)
            .arg("--")
            .args(args);
        c
    }

    /// Like [`Self::user_cmd`] but as root inside the namespace (not in the
    /// delegated cgroup), cwd `/`.  For inspection (journalctl, reading files).
    pub fn root_cmd<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        assert!(!args.is_empty(), "root_cmd needs a program");
        let mut c = self.nsenter_cmd(Path::new("/"));
        c.args(["--root", "--"]).args(args);
        c
    }

    /// Run as the user; panic with the full report unless it succeeds.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        run_ok(&mut self.user_cmd(args))
    }
    /// Run as the user; return whatever happened.
    pub fn output<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        output_of(&mut self.user_cmd(args))
    }
    /// `nerdr ARGS` as the user in `dir`; whatever happened.
    pub fn nerdr_in(&self, dir: &Path, args: &[&str]) -> Output {
        let mut cmd = self.user_cmd(&[&["nerdr"], args].concat());
        cmd.current_dir(dir);
        cmd.output().unwrap()
    }
    /// `nerdr ARGS` as the user in `dir`, which must succeed: its stdout,
    /// trimmed.
    pub fn nerdr_ok_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.nerdr_in(dir, args);
        assert!(
            out.status.success(),
            "nerdr {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }
    /// `[agents.sh]`, a plain bash, and `[agents.boxed]`, bash in bubblewrap
    /// (`~/bin/boxed`, written here): its own PID namespace, the runtime dir
    /// (client socket) hidden, only `writable` writable. The last word names
    /// the agent, where a check would go.
    pub fn sh_and_boxed_agents(&self, writable: &Path) -> String {
        let boxed = self.write_user_file("bin/boxed", "#!/bin/sh\nexec bash --norc --noprofile\n");
        std::fs::set_permissions(&boxed, std::fs::Permissions::from_mode(0o755)).unwrap();
        let runtime = self.runtime_dir().display().to_string();
        let w = writable.display().to_string();
        let words = [
            "bwrap",
            "--ro-bind",
            "/",
            "/",
            "--dev-bind",
            "/dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            &runtime,
            "--bind",
            &w,
            &w,
            "--unshare-pid",
            "--die-with-parent",
            "--",
            &boxed.display().to_string(),
        ]
        .iter()
        .map(|w| format!("{w:?}"))
        .collect::<Vec<_>>()
        .join(", ");
        format!(
            "[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
             [agents.boxed]\ncommand = [{words}]\nsandboxed = true\n"
        )
    }
    /// Run as root in the namespace; panic with the full report unless it succeeds.
    pub fn root_run<S: AsRef<OsStr>>(&self, args: &[S]) -> Output {
        run_ok(&mut self.root_cmd(args))
    }
    /// `systemctl --user ARGS` as the user; panics unless it succeeds.  Returns stdout.
    pub fn systemctl(&self, args: &[&str]) -> String {
        let mut v = vec!["systemctl", "--user", "--no-pager"];
        v.extend_from_slice(args);
        String::from_utf8_lossy(&self.run(&v).stdout).into_owned()
    }
    /// `systemctl --user show -P PROP UNIT` (value, trimmed).
    pub fn unit_prop(&self, unit: &str, prop: &str) -> String {
        self.systemctl(&["show", "-P", prop, unit])
            .trim()
            .to_string()
    }

    /// Write `contents` to `HOME/rel` (creating parent directories), owned by the user.
    pub fn write_user_file(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let rel = rel.as_ref();
        assert!(
            rel.is_relative(),
            "{} must be relative to HOME",
            rel.display()
        );
        let path = self.home.join(rel);
        let mut dir = self.home.clone();
        for comp in rel.parent().into_iter().flat_map(|p| p.components()) {
            dir.push(comp);
            if !dir.is_dir() {
                std::fs::create_dir(&dir)
                    .unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
                chown(&dir, Some(self.uid), Some(self.gid)).unwrap();
            }
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        chown(&path, Some(self.uid), Some(self.gid)).unwrap();
        path
    }

    /// Journal entries (`journalctl -o json ARGS`, read as root), e.g.
    /// `env.journal(&["SYSLOG_IDENTIFIER=nerdr"])` or
    /// `env.journal(&["_SYSTEMD_USER_UNIT=nerdr.service"])`.
    pub fn journal(&self, args: &[&str]) -> Vec<serde_json::Value> {
        let mut v = vec!["journalctl", "--no-pager", "-o", "json"];
        v.extend_from_slice(args);
        let out = self.root_run(&v);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("journal json {e}: {l}")))
            .collect()
    }

    /// The MESSAGE fields of [`Self::journal`] entries (lossy for binary messages).
    pub fn journal_messages(&self, args: &[&str]) -> Vec<String> {
        self.journal(args)
            .iter()
            .map(|e| match &e["MESSAGE"] {
                serde_json::Value::String(s) => s.clone(),
                serde_json::Value::Array(b) => String::from_utf8_lossy(
                    &b.iter()
                        .filter_map(|x| x.as_u64())
                        .map(|x| x as u8)
                        .collect::<Vec<_>>(),
                )
                .into_owned(),
                other => other.to_string(),
            })
            .collect()
    }

    /// sysenv.sh's stderr so far.
    pub fn sysenv_log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// Close stdin and wait for the teardown (bounded); escalate to SIGTERM,
    /// then SIGKILL (by our child's PID).  Returns the exit status if it exited.
    fn shutdown(&mut self) -> Option<std::process::ExitStatus> {
        drop(self.stdin.take());
        let mut deadline = Instant::now() + TEARDOWN_TIMEOUT;
        let mut signals = vec![libc::SIGKILL, libc::SIGTERM];
        loop {
            match self.child.try_wait() {
                Ok(Some(st)) => return Some(st),
                Ok(None) => {}
                Err(e) => {
                    eprintln!("sysenv: wait failed: {e}");
                    return None;
                }
            }
            if Instant::now() >= deadline {
                let Some(sig) = signals.pop() else {
                    let _ = self.child.wait();
                    return None;
                };
                eprintln!(
                    "sysenv: WARNING: teardown of pid {} hangs; sending signal {sig}",
                    self.pid
                );
                // SAFETY: our own unreaped child, so the PID cannot have been reused.
                unsafe { libc::kill(self.pid as libc::pid_t, sig) };
                deadline = Instant::now() + Duration::from_secs(10);
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for SystemdEnv {
    fn drop(&mut self) {
        if self.pid == 0 {
            return;
        }
        let t0 = Instant::now();
        let status = self.shutdown();
        eprintln!("sysenv: torn down in {:?} ({status:?})", t0.elapsed());
        let mut problems = Vec::new();
        if status.map(|s| s.success()) != Some(true) {
            problems.push(format!("sysenv.sh exit status {status:?}"));
        }
        for h in [
            "/sys/fs/cgroup/unified",
            "/sys/fs/cgroup/systemd",
            "/sys/fs/cgroup",
        ] {
            let d = Path::new(h).join(&self.cgroup);
            if d.exists() {
                problems.push(format!("cgroup {} left behind", d.display()));
            }
        }
        if self.base.exists() && std::env::var("NERDR_SYSENV_KEEP").as_deref() != Ok("1") {
            problems.push(format!("{} left behind", self.base.display()));
        }
        if !problems.is_empty() {
            let msg = format!(
                "sysenv teardown problems: {problems:?}\nsysenv.sh stderr:\n{}",
                self.sysenv_log()
            );
            if thread::panicking() {
                eprintln!("{msg}");
            } else {
                panic!("{msg}");
            }
        }
    }
}
