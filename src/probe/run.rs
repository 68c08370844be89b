//! The core's side: run the wrapped probe with the launch's environment and
//! folder, stdin empty, its output captured, within a bounded time; a run
//! past it is killed with its whole process group.

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
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::SpawnFailed(format!("`{program}`: {e}")),
    };
    let pgid = child.id();
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
            if let Some(pgid) = pgid {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pgid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            Outcome::TimedOut {
                secs: timeout.as_secs(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let gone = (0..100).any(|_| {
            std::thread::sleep(Duration::from_millis(20));
            // A zombie child of the killed shell counts as gone.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.contains(") Z "))
                .unwrap_or(true)
        });
        assert!(gone, "the wrapper's child {pid} outlived the timeout");
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
