//! The core's side: run the wrapped probe with the launch's environment and
//! folder, stdin empty, its output captured, within a bounded time; a run
//! past it is killed with every process that came from it, including those
//! that left its process group or session (`setsid`, `bwrap --new-session`).

use std::path::Path;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::verdict::Outcome;

/// Long enough for a sandbox to set up on a loaded machine.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// More output than a report needs; the rest is not read.
const MAX_OUTPUT: u64 = 1 << 20;

pub async fn run(
    argv: &[String],
    cwd: &Path,
    env: &[(String, String)],
    timeout: Duration,
) -> Outcome {
    let Some((program, args)) = argv.split_first() else {
        return Outcome::SpawnFailed("the command is empty".into());
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        // Its own process group, so a timeout ends the wrapper's children too.
        .process_group(0)
        .kill_on_drop(true);
    // Orphans of the wrapper's children come back to the wrapper rather
    // than to init, so while it hangs they stay in its tree.
    #[cfg(target_os = "linux")]
    // SAFETY: prctl(2) is async-signal-safe and touches nothing shared, and
    // nix's wrapper allocates nothing.
    unsafe {
        cmd.pre_exec(|| nix::sys::prctl::set_child_subreaper(true).map_err(std::io::Error::from));
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::SpawnFailed(format!("`{program}`: {e}")),
    };
    let pgid = child.id();
    let pipes: Vec<u64> = {
        use std::os::fd::AsRawFd;
        let ino = |fd: i32| nix::sys::stat::fstat(fd).ok().map(|st| st.st_ino);
        [
            child.stdout.as_ref().and_then(|o| ino(o.as_raw_fd())),
            child.stderr.as_ref().and_then(|e| ino(e.as_raw_fd())),
        ]
        .into_iter()
        .flatten()
        .collect()
    };
    let mut out = child.stdout.take().expect("piped").take(MAX_OUTPUT);
    let mut err = child.stderr.take().expect("piped").take(MAX_OUTPUT);
    let all = async {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        let (_, _, status) = tokio::join!(
            out.read_to_end(&mut o),
            err.read_to_end(&mut e),
            child.wait()
        );
        (o, e, status)
    };
    match tokio::time::timeout(timeout, all).await {
        Ok((o, e, status)) => Outcome::Finished {
            status: status.ok().and_then(|s| s.code()),
            stdout: String::from_utf8_lossy(&o).into_owned(),
            stderr: String::from_utf8_lossy(&e).into_owned(),
        },
        Err(_) => {
            if let Some(pid) = pgid {
                kill_all_from(pid, &pipes);
            }
            Outcome::TimedOut {
                secs: timeout.as_secs(),
            }
        }
    }
}

/// A process as `/proc/PID/stat` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proc {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    pub sid: i32,
    /// Whether it holds the probe's output pipe open.
    pub holds_pipe: bool,
}

/// Every process that came from `root`: its descendants, and any process
/// in a process group or session one of them leads (an orphan of a
/// `setsid` child, re-parented away, still carries its session), and any
/// process holding the probe's output open; never `me`, the core, which
/// holds the other end of that output (and would bring all its children
/// along). Pure.
pub fn from_root(procs: &[Proc], root: i32, me: i32) -> Vec<i32> {
    let mut doomed = std::collections::BTreeSet::from([root]);
    loop {
        let before = doomed.len();
        for p in procs.iter().filter(|p| p.pid != me) {
            if p.holds_pipe || [p.ppid, p.pgid, p.sid].iter().any(|x| doomed.contains(x)) {
                doomed.insert(p.pid);
            }
        }
        if doomed.len() == before {
            return doomed.into_iter().collect();
        }
    }
}

/// Every process of this /proc, as far as it can be read.
fn all_procs(pipes: &[u64]) -> Vec<Proc> {
    let wanted: Vec<String> = pipes.iter().map(|i| format!("pipe:[{i}]")).collect();
    let holds = |pid: i32| {
        std::fs::read_dir(format!("/proc/{pid}/fd"))
            .into_iter()
            .flatten()
            .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
            .any(|l| wanted.iter().any(|w| l.as_os_str() == w.as_str()))
    };
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // After the command's `(name)`, which may hold anything.
            let mut f = stat.get(stat.rfind(')')? + 2..)?.split(' ').skip(1);
            let mut n = || f.next()?.parse::<i32>().ok();
            Some(Proc {
                pid,
                ppid: n()?,
                pgid: n()?,
                sid: n()?,
                holds_pipe: holds(pid),
            })
        })
        .collect()
}

/// Stop everything from `root` (so nothing forks further while it is
/// being found), then kill it all. Its own process group goes first, as
/// before (the only way where there is no /proc to read).
fn kill_all_from(root: u32, pipes: &[u64]) {
    use nix::sys::signal::{kill, killpg, Signal};
    use nix::unistd::Pid;
    let root = root as i32;
    let me = std::process::id() as i32;
    let mut stopped = std::collections::BTreeSet::new();
    for _ in 0..10 {
        let found: Vec<i32> = from_root(&all_procs(pipes), root, me)
            .into_iter()
            .filter(|p| !stopped.contains(p))
            .collect();
        if found.is_empty() {
            break;
        }
        for p in found {
            let _ = kill(Pid::from_raw(p), Signal::SIGSTOP);
            stopped.insert(p);
        }
    }
    let _ = killpg(Pid::from_raw(root), Signal::SIGKILL);
    for p in stopped {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_came_from_the_probe() {
        let p = |pid, ppid, pgid, sid| Proc {
            pid,
            ppid,
            pgid,
            sid,
            holds_pipe: false,
        };
        let procs = [
            // The core (1), in its session 1, reading the probe's output.
            Proc {
                holds_pipe: true,
                ..p(1, 0, 1, 1)
            },
            // The wrapper (10), its own group, the core's session.
            p(10, 1, 10, 1),
            // Its child, in its group.
            p(11, 10, 10, 1),
            // A child that called setsid, and its child.
            p(12, 10, 12, 12),
            p(13, 12, 12, 12),
            // An orphan of 12's session, re-parented to init.
            p(14, 1, 14, 12),
            // Another tab's program, child of the core, same session.
            p(20, 1, 20, 1),
            p(21, 20, 20, 1),
        ];
        assert_eq!(from_root(&procs, 10, 1), vec![10, 11, 12, 13, 14]);
        // A process of a session whose leader is gone, re-parented to
        // init, found by the output it holds open.
        let mut with_orphan = procs.to_vec();
        with_orphan.push(Proc {
            holds_pipe: true,
            ..p(30, 1, 31, 31)
        });
        assert_eq!(from_root(&with_orphan, 10, 1), vec![10, 11, 12, 13, 14, 30]);
        assert_eq!(from_root(&procs, 20, 1), vec![20, 21]);
        assert_eq!(from_root(&procs, 99, 1), vec![99]);
    }

    #[tokio::test]
    async fn a_hung_wrapper_that_left_its_session_is_killed() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("child.pid");
        // The wrapper starts a new session (as `bwrap --new-session` does)
        // whose leader forks a child and exits, then hangs.
        let script = format!(
            "setsid sh -c 'sleep 300 & echo $! > {}'; exec sleep 300",
            pidfile.display()
        );
        let got = run(
            &words(&["sh", "-c", &script]),
            tmp.path(),
            &[("PATH".into(), "/usr/bin:/bin".into())],
            Duration::from_millis(800),
        )
        .await;
        assert_eq!(got, Outcome::TimedOut { secs: 0 });
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "the setsid child {pid} outlived the timeout");
    }

    /// The wrapper is a child subreaper: an orphan of its child comes back
    /// to it, not to init, so it stays in the tree a timeout kills.
    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn an_orphan_of_the_wrappers_child_comes_back_to_the_wrapper() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("orphan.pid");
        let script = format!(
            "sh -c 'sleep 300 & echo $! > {f}'; pid=$(cat {f}); \
             ppid=$(cut -d' ' -f4 /proc/$pid/stat); kill $pid; echo \"$$ $ppid\"",
            f = pidfile.display()
        );
        let got = run(
            &words(&["sh", "-c", &script]),
            tmp.path(),
            &[("PATH".into(), "/usr/bin:/bin".into())],
            Duration::from_secs(10),
        )
        .await;
        let Outcome::Finished { stdout, .. } = &got else {
            panic!("{got:?}");
        };
        let ids: Vec<&str> = stdout.split_whitespace().collect();
        assert_eq!(ids.len(), 2, "{got:?}");
        assert_eq!(
            ids[0], ids[1],
            "the orphan's parent is not the wrapper: {got:?}"
        );
    }

    fn gone(pid: i32) -> bool {
        (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            // A zombie counts as gone.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true)
        })
    }

    fn words(s: &[&str]) -> Vec<String> {
        s.iter().map(|w| w.to_string()).collect()
    }

    #[tokio::test]
    async fn a_hung_wrapper_is_killed_with_its_children() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("child.pid");
        let script = format!("sleep 300 & echo $! > {}; wait", pidfile.display());
        let started = std::time::Instant::now();
        let got = run(
            &words(&["sh", "-c", &script]),
            tmp.path(),
            &[("PATH".into(), "/usr/bin:/bin".into())],
            Duration::from_millis(500),
        )
        .await;
        assert_eq!(got, Outcome::TimedOut { secs: 0 });
        assert!(started.elapsed() < Duration::from_secs(5));
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(gone(pid), "the wrapper's child {pid} outlived the timeout");
    }

    #[tokio::test]
    async fn output_env_and_folder_are_the_launchs() {
        let tmp = tempfile::tempdir().unwrap();
        let got = run(
            &words(&["sh", "-c", "echo \"$X $(pwd)\"; echo oops >&2; exit 3"]),
            tmp.path(),
            &[
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("X".into(), "x1".into()),
            ],
            Duration::from_secs(10),
        )
        .await;
        let real = std::fs::canonicalize(tmp.path()).unwrap();
        assert_eq!(
            got,
            Outcome::Finished {
                status: Some(3),
                stdout: format!("x1 {}\n", real.display()),
                stderr: "oops\n".into(),
            }
        );
        let got = run(
            &words(&["/nonexistent/wrapper"]),
            tmp.path(),
            &[],
            Duration::from_secs(5),
        )
        .await;
        assert!(matches!(got, Outcome::SpawnFailed(_)), "{got:?}");
    }
}
