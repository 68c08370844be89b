//! The holder's one job: keep programs and what redraws their screens, and
//! serve the current core. Output is appended and forwarded, never parsed.
//! A new verified core replaces the old connection; programs and screens
//! carry on regardless. A core of another holder protocol gets
//! the frozen hand-over (`protocol::handover`, carried out by
//! `holder::handover`).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;

use super::handover;
use super::state::{HandOverRequest, Holder, Kept};
use crate::host::pty::PtyHost;
use crate::host::{Host, HostError, HostEvent};
use crate::paths::Paths;
use crate::peer;
use crate::protocol::frame::{read_frame, write_frame, Frame, Kind};
use crate::protocol::handover::{holder_step, Answer, Ask, HolderStep, HANDOVER_VERSION};
use crate::protocol::holder::{
    data_frame, split_data, FromHolder, Held, SpawnSpec, ToHolder, HOLDER_VERSION,
};
use crate::protocol::outbox::Outbox;

/// Output queued for the core beyond which the holder stops reading PTYs.
const CORE_BACKLOG: usize = 256 << 10;

pub struct Served {
    pub paths: Paths,
    pub listener: UnixListener,
    pub host: PtyHost,
    pub events: mpsc::Receiver<HostEvent>,
    pub scopes: bool,
    /// Programs taken over from before a re-execution.
    pub kept: BTreeMap<String, Kept>,
}

pub async fn serve(s: Served) -> anyhow::Result<()> {
    let Served {
        paths,
        listener,
        host,
        mut events,
        scopes,
        kept,
    } = s;
    let (drain, mut drain_rx) = mpsc::channel::<tokio::sync::oneshot::Sender<()>>(1);
    let (hand_over, mut hand_over_rx) = mpsc::channel::<HandOverRequest>(1);
    let held = kept.len();
    let holder = Arc::new(Holder {
        host,
        kept: Mutex::new(kept),
        core: Mutex::default(),
        current: Default::default(),
        paths,
        scopes,
        drain,
        hand_over,
    });
    let h = holder.clone();
    tokio::spawn(async move {
        loop {
            // Events first: a drain request is answered only when none wait.
            let ev = tokio::select! {
                biased;
                ev = events.recv() => match ev {
                    Some(ev) => ev,
                    None => break,
                },
                Some(done) = drain_rx.recv() => {
                    let _ = done.send(());
                    continue;
                }
            };
            // Kept and forwarded under one lock, so a core attaching now
            // sees each byte either in its redraw or as live output.
            let out = {
                let mut kept = h.kept.lock().unwrap();
                match ev {
                    // Counted where kept, and forwarded only then: the
                    // core counts what it is sent after the tab's
                    // `Program` marker (sent under this lock when the kept
                    // record is made: `spawn`), and names that count with
                    // each snapshot. A forgotten program's last output goes
                    // nowhere; one kept before the forget went out before
                    // the next program's marker, and the core drops it.
                    HostEvent::Output { tab, bytes, .. } => match kept.get_mut(&tab) {
                        Some(k) => {
                            k.screen.output(&bytes);
                            h.to_core(data_frame(&tab, &bytes))
                        }
                        None => None,
                    },
                    HostEvent::Exited { tab, code, pid } => {
                        // A stopped program's exit reported after the next
                        // one in its tab started is not the new one's.
                        if let Some(k) = kept
                            .get_mut(&tab)
                            .filter(|k| pid.is_none_or(|p| p == k.pid))
                        {
                            k.exit_code = Some(code);
                        }
                        h.to_core(Frame::control(&FromHolder::Exited { tab, code, pid }))
                    }
                    // The PTY host reports starts through its spawn result.
                    HostEvent::Started { .. } => None,
                }
            };
            // A core that is behind holds us back, and through the bounded
            // event queue, the programs' output.
            if let Some(out) = out {
                out.room(CORE_BACKLOG).await;
            }
        }
    });
    crate::notify::ready(&format!("holding {held} programs"));
    tracing::info!(pid = std::process::id(), mode = %holder.host.mode(), version = HOLDER_VERSION, programs = held, "holder ready");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        tokio::select! {
            _ = term.recv() => {
                tracing::info!("holder stopping; its programs lose their terminals");
                return Ok(());
            }
            // Taken here, where nothing else is accepted meanwhile: a core
            // that connects again during the hand-over waits for the new
            // image.
            Some(req) = hand_over_rx.recv() => {
                if let Err(e) = handover::hand_over(&holder, &listener, req).await {
                    tracing::error!(error = %e, "the hand-over failed; this holder carries on");
                }
            }
            r = listener.accept() => match r {
                Ok((stream, _)) => {
                    let h = holder.clone();
                    tokio::spawn(async move {
                        if let Err(e) = connection(h, stream).await {
                            tracing::debug!(error = %e, "core connection ended");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        }
    }
}

async fn connection(h: Arc<Holder>, mut stream: UnixStream) -> anyhow::Result<()> {
    let verdict = peer::gather(&stream)
        .map_err(|e| format!("cannot inspect the peer: {e}"))
        .and_then(|facts| {
            let recorded = peer::read_recorded(&h.paths.state_dir.join("core.pid"));
            peer::verdict("core", nix::unistd::getuid().as_raw(), &facts, recorded)?;
            Ok(facts)
        });
    let facts = match verdict {
        Ok(facts) => facts,
        Err(message) => {
            tracing::warn!(reason = %message, "refused a connection to the holder");
            write_frame(
                &mut stream,
                &Frame::control(&FromHolder::Refused { message }),
            )
            .await?;
            return Ok(());
        }
    };
    // The frozen opening: any core, of any version, is understood here.
    let mut offered = false;
    loop {
        let ask = read_frame(&mut stream)
            .await?
            .decode_control::<Ask>()
            .unwrap_or(Ask::Other);
        let answer = match holder_step(HOLDER_VERSION, &ask, offered) {
            HolderStep::Serve => break,
            HolderStep::Offer => {
                offered = true;
                Answer::OtherVersion {
                    version: HOLDER_VERSION,
                    handover: vec![HANDOVER_VERSION],
                }
            }
            HolderStep::HandOver => {
                tracing::info!(
                    core = facts.pid,
                    "a core of another version asks for a hand-over"
                );
                let req = HandOverRequest {
                    stream,
                    core: facts,
                };
                if h.hand_over.send(req).await.is_err() {
                    anyhow::bail!("the holder is stopping");
                }
                return Ok(());
            }
            HolderStep::Refuse(message) => {
                tracing::warn!(reason = %message, "refused a core's opening");
                Answer::Refused { message }
            }
        };
        let refused = matches!(answer, Answer::Refused { .. });
        write_frame(&mut stream, &Frame::control(&answer)).await?;
        if refused {
            return Ok(());
        }
    }
    let (read, write) = stream.into_split();
    let (tx, _writer) = Outbox::new(write);
    let me = {
        let kept = h.kept.lock().unwrap();
        let held: Vec<Held> = kept
            .iter()
            // Programs still starting are included (pid 0): a core that
            // restarted mid-launch learns of them and hears how it ends.
            .map(|(tab, k)| Held {
                tab: tab.clone(),
                pid: k.pid,
                start_time: k.start_time,
                exit_code: k.exit_code,
                rows: k.screen.size().0,
                cols: k.screen.size().1,
                meta: k.meta.clone(),
                offset: k.screen.offset(),
                generation: k.generation,
            })
            .collect();
        tx.send(Frame::control(&FromHolder::Welcome {
            version: HOLDER_VERSION,
            pid: std::process::id(),
            mode: h.host.mode(),
            held: held.clone(),
        }));
        for held in &held {
            tx.send(data_frame(&held.tab, &kept[&held.tab].screen.redraw()));
        }
        // The newest verified core is the one we serve.
        *h.core.lock().unwrap() = Some(tx.clone());
        h.current.fetch_add(1, Ordering::AcqRel) + 1
    };
    tracing::info!("core attached");
    let mut read = read;
    loop {
        let frame = read_frame(&mut read).await?;
        if frame.kind == Kind::Data {
            if let Some((tab, bytes)) = split_data(&frame.body) {
                // Keys: past the input cap they are refused, and the PTY
                // host logs it (a window has no way to hear it yet).
                let _ = h.host.write(tab, bytes.to_vec());
            }
            continue;
        }
        match frame.decode_control::<ToHolder>()? {
            ToHolder::Hello { .. } => {}
            ToHolder::Spawn { spec } => spawn(&h, spec, tx.clone()),
            ToHolder::Resize { tab, rows, cols } => {
                let (rows, cols) = crate::protocol::clamp_size(rows, cols);
                if let Some(k) = h.kept.lock().unwrap().get_mut(&tab) {
                    k.screen.resize(rows, cols);
                }
                let _ = h.host.resize(&tab, rows, cols);
            }
            ToHolder::Stop { tab } => {
                let done = h.host.stop(&tab);
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = done.await;
                    tx.send(Frame::control(&FromHolder::Stopped { tab }));
                });
            }
            // The core forgets a tab only after its program was stopped.
            ToHolder::Forget { tab } => {
                h.kept.lock().unwrap().remove(&tab);
                h.host.forget(&tab);
            }
            ToHolder::Answer { tab } => {
                let bytes = bytes_after(&mut read, &tab, "the answers").await?;
                h.host.answer(&tab, bytes);
            }
            ToHolder::Type { tab, id } => {
                let bytes = bytes_after(&mut read, &tab, "typed input").await?;
                let verdict = h.host.write(&tab, bytes);
                let full = matches!(verdict, Err(HostError::InputFull(_)));
                tx.send(Frame::control(&FromHolder::Typed {
                    tab,
                    id,
                    error: verdict.err().map(|e| e.to_string()),
                    full,
                }));
            }
            ToHolder::Snapshot {
                tab,
                offset,
                rows,
                cols,
            } => {
                let bytes = bytes_after(&mut read, &tab, "a snapshot").await?;
                // A core that was replaced may still be sending.
                if h.current.load(Ordering::Acquire) != me {
                    continue;
                }
                let (rows, cols) = crate::protocol::clamp_size(rows, cols);
                if let Some(k) = h.kept.lock().unwrap().get_mut(&tab) {
                    if let Err(why) = k.screen.snapshot_from_core(offset, rows, cols, bytes) {
                        tracing::warn!(tab = %tab, refused = ?why, "ignored a core's snapshot");
                    }
                }
            }
        }
    }
}

/// The data frame that carries the bytes of a control message about `tab`
/// (`what`), which comes right after it.
async fn bytes_after(
    read: &mut tokio::net::unix::OwnedReadHalf,
    tab: &str,
    what: &str,
) -> anyhow::Result<Vec<u8>> {
    let f = read_frame(read).await?;
    match split_data(&f.body) {
        Some((t, b)) if f.kind == Kind::Data && t == tab => Ok(b.to_vec()),
        _ => anyhow::bail!("{what} for tab {tab} came without its bytes"),
    }
}

fn spawn(h: &Arc<Holder>, mut spec: SpawnSpec, tx: Outbox) {
    (spec.rows, spec.cols) = crate::protocol::clamp_size(spec.rows, spec.cols);
    let tab = spec.tab.clone();
    {
        let mut kept = h.kept.lock().unwrap();
        kept.insert(
            tab.clone(),
            Kept {
                meta: spec.meta.clone(),
                pid: 0,
                start_time: 0,
                exit_code: None,
                generation: spec.generation,
                screen: super::replay::Replay::new(spec.rows, spec.cols),
            },
        );
        // Under the lock the event loop keeps and forwards output under:
        // every byte counted for this program goes to the core after this,
        // every byte counted for the one before went before it.
        h.to_core(Frame::control(&FromHolder::Program {
            tab: tab.clone(),
            generation: spec.generation,
        }));
    }
    let started = h.host.spawn(spec);
    let h = h.clone();
    tokio::spawn(async move {
        let reply = match started.await {
            Ok(Ok(s)) => {
                if let Some(k) = h.kept.lock().unwrap().get_mut(&tab) {
                    k.pid = s.pid;
                    k.start_time = s.start_time;
                }
                tracing::info!(tab = %tab, pid = s.pid, "started program");
                FromHolder::Spawned {
                    tab,
                    pid: s.pid,
                    start_time: s.start_time,
                }
            }
            Ok(Err(e)) => {
                h.kept.lock().unwrap().remove(&tab);
                tracing::warn!(tab = %tab, error = %e, "could not start program");
                FromHolder::SpawnFailed {
                    tab,
                    message: e.to_string(),
                }
            }
            Err(_) => {
                h.kept.lock().unwrap().remove(&tab);
                FromHolder::SpawnFailed {
                    tab,
                    message: "the PTY host dropped the launch".into(),
                }
            }
        };
        // To the current core: the one that asked may have been replaced
        // while the program was being placed.
        match h.core.lock().unwrap().clone() {
            Some(current) => current.send(Frame::control(&reply)),
            None => tx.send(Frame::control(&reply)),
        };
    });
}
