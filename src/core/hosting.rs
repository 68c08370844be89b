//! Which host runs the programs, decided once at start-up:
//! - the running holder, if one answers and is the recorded one (a
//!   restarted core finds its tabs there); one of another holder protocol
//!   hands over first, becoming this build (`protocol::handover`);
//! - else a new holder: a transient `nerdr-holder.service` under the user
//!   manager (programs in their own scopes), or a detached process without
//!   one (programs in their own sessions);
//! - `NERDR_HOLDER=0`, or a holder that cannot be had: programs as the
//!   core's own children, ending with it. The reason is logged and shown by
//!   `nerdr doctor`.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::host::pty::PtyHost;
use crate::host::remote::{ConnectError, Found, HolderHost};
use crate::host::{Host, HostEvent};
use crate::paths::Paths;
use crate::protocol::api::ProgramsMode;

pub const HOLDER_UNIT: &str = "nerdr-holder.service";

pub struct Attached {
    pub host: Arc<dyn Host>,
    pub found: Vec<Found>,
    /// With a holder: resolves if the holder goes away.
    pub lost: Option<tokio::sync::oneshot::Receiver<String>>,
}

pub async fn attach(
    paths: &Paths,
    bin: &Path,
    events: mpsc::Sender<HostEvent>,
) -> anyhow::Result<Attached> {
    if std::env::var("NERDR_HOLDER").as_deref() == Ok("0") {
        return local(events, "NERDR_HOLDER=0".into());
    }
    let mut handed_over = false;
    loop {
        match HolderHost::connect(paths, events.clone(), handed_over).await {
            Ok((h, found)) => {
                tracing::info!(
                    programs = found.len(),
                    handed_over,
                    "re-attached to the running holder"
                );
                return Ok(with_holder(h, found));
            }
            Err(ConnectError::Absent) => break,
            // It keeps its socket, so connecting again reaches the new image.
            Err(ConnectError::HandedOver) => handed_over = true,
            Err(ConnectError::Other(e)) => {
                tracing::error!(reason = %e, "the holder cannot be used");
                return local(events, e);
            }
        }
    }
    if let Err(e) = start_holder(paths, bin).await {
        tracing::error!(reason = %e, "cannot start the holder");
        return local(events, format!("cannot start the holder: {e}"));
    }
    match HolderHost::connect(paths, events.clone(), false).await {
        Ok((h, found)) => Ok(with_holder(h, found)),
        Err(e) => {
            tracing::error!(reason = %e, "the new holder cannot be used");
            local(events, e.to_string())
        }
    }
}

fn with_holder(h: HolderHost, found: Vec<Found>) -> Attached {
    let lost = h.lost.lock().unwrap().take();
    Attached {
        host: Arc::new(h),
        found,
        lost,
    }
}

fn local(events: mpsc::Sender<HostEvent>, why: String) -> anyhow::Result<Attached> {
    Ok(Attached {
        host: Arc::new(PtyHost::new(events, None, ProgramsMode::CoreChildren(why))?),
        found: Vec::new(),
        lost: None,
    })
}

/// The holder's environment: where its state is, how to reach the user
/// manager, and nothing else (each program's environment comes whole with
/// its launch).
fn holder_env() -> Vec<(String, String)> {
    const KEEP: &[&str] = &[
        "HOME",
        "USER",
        "LOGNAME",
        "PATH",
        "LANG",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR",
        "NERDR_DATA_DIR",
        "NERDR_LOG",
        "DBUS_SESSION_BUS_ADDRESS",
    ];
    std::env::vars()
        .filter(|(k, _)| KEEP.contains(&k.as_str()))
        .collect()
}

async fn start_holder(paths: &Paths, bin: &Path) -> Result<(), String> {
    match crate::systemd::UserManager::connect().await {
        Ok(mgr) => {
            // A holder unit left from before (failed, say) would block the
            // name; nothing in it answers, or we would have attached. But
            // one holding another state folder's programs (the person
            // changed XDG_STATE_HOME or NERDR_DATA_DIR) answers on another
            // socket: it is left alone, with its programs.
            if let Ok(Some(state)) = mgr.active_state(HOLDER_UNIT).await {
                let pid = mgr.main_pid(HOLDER_UNIT).await.ok().flatten();
                let held = pid.and_then(|p| std::fs::read_link(format!("/proc/{p}/cwd")).ok());
                let ours = std::fs::canonicalize(&paths.state_dir)
                    .unwrap_or_else(|_| paths.state_dir.clone());
                match left_holder(&state, held.as_deref(), &ours) {
                    LeftHolder::None => {}
                    LeftHolder::Stop => {
                        let _ = mgr.stop_unit(HOLDER_UNIT).await;
                    }
                    LeftHolder::Another(why) => return Err(why),
                }
            }
            let spec = crate::systemd::ServiceSpec {
                description: "nerdr holder (owns the terminals of nerdr's programs)".into(),
                program: bin.to_path_buf(),
                argv: vec![
                    bin.as_os_str().to_owned(),
                    "holder".into(),
                    "--scopes".into(),
                ],
                env: holder_env()
                    .into_iter()
                    .map(|(k, v)| (k.into(), v.into()))
                    .collect(),
                cwd: paths.state_dir.clone(),
                start_timeout: Duration::from_secs(20),
            };
            mgr.start_service(HOLDER_UNIT, &spec)
                .await
                .map_err(|e| e.to_string())
        }
        Err(e) => {
            tracing::info!(reason = %e, "no user manager: starting the holder as a plain process");
            spawn_detached(paths, bin)
        }
    }?;
    let name = crate::protocol::holder::socket_name(paths);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while crate::platform::abstract_connect(&name).is_err() {
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "the holder did not listen on @{name} within 10s; see {}",
                paths.state_dir.join("holder.log").display()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// What to do with a holder unit found when no holder answers ours.
#[derive(Debug, PartialEq, Eq)]
enum LeftHolder {
    /// None there.
    None,
    /// A left-over of ours (failed, or not answering): stop it.
    Stop,
    /// Another state folder's holder, which may hold programs: left
    /// running, and this core does without one, for this reason.
    Another(String),
}

/// The rule: a unit in `state` whose process runs in `held` (the holder
/// runs in its state folder), against `ours`. A unit whose folder cannot
/// be read is taken for a left-over of ours, as before.
fn left_holder(state: &str, held: Option<&Path>, ours: &Path) -> LeftHolder {
    match (state, held) {
        ("inactive", _) => LeftHolder::None,
        (_, Some(other)) if other != ours => LeftHolder::Another(format!(
            "{HOLDER_UNIT} holds the programs of another state folder, {} (XDG_STATE_HOME or \
             NERDR_DATA_DIR changed since it started; this core's is {}): it is left running \
             so they keep going, and this core's programs end with it. No core reaches them \
             now: go back to the old paths (and `nerdr service install` under them), or end \
             them with `systemctl --user stop {HOLDER_UNIT}`, then `systemctl --user restart \
             nerdr.service`",
            other.display(),
            ours.display()
        )),
        _ => LeftHolder::Stop,
    }
}

fn spawn_detached(paths: &Paths, bin: &Path) -> Result<(), String> {
    let mut cmd = Command::new(bin);
    cmd.arg("holder")
        .env_clear()
        .envs(holder_env())
        .current_dir(&paths.state_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: setsid is async-signal-safe and touches only the child.
    unsafe {
        cmd.pre_exec(|| {
            nix::unistd::setsid().map_err(std::io::Error::from)?;
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| format!("cannot run `{} holder`: {e}", bin.display()))?;
    // Reap it if it dies early; once it runs, it outlives us by design.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    Ok(())
}

#[cfg(test)]
mod left_holder_tests {
    use super::*;

    #[test]
    fn another_state_folders_holder_is_left_running() {
        let ours = Path::new("/home/me/.local/state/nerdr");
        let other = Path::new("/home/me/elsewhere/nerdr");
        #[rustfmt::skip]
        let rows: &[(&str, &str, Option<&Path>, Option<&str>)] = &[
            ("no unit running", "inactive", None, None),
            ("a failed left-over of ours", "failed", None, Some("stop")),
            ("ours, not answering", "active", Some(ours), Some("stop")),
            ("its folder unreadable", "active", None, Some("stop")),
            ("another state folder's", "active", Some(other), Some("another")),
            ("another's, stopping", "deactivating", Some(other), Some("another")),
        ];
        for (what, state, held, want) in rows {
            let got = match left_holder(state, *held, ours) {
                LeftHolder::None => None,
                LeftHolder::Stop => Some("stop"),
                LeftHolder::Another(why) => {
                    assert!(why.contains("/home/me/elsewhere/nerdr"), "{why}");
                    assert!(
                        why.contains("systemctl --user stop nerdr-holder.service"),
                        "{why}"
                    );
                    Some("another")
                }
            };
            assert_eq!(got, *want, "{what}");
        }
    }
}
