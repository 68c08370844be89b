//! The attached window's loop: frames from the core, keys from the
//! person, signals, and the connection's ups and downs, one at a time.

use std::path::PathBuf;

use tokio::sync::mpsc;

use super::backoff::{self, Step};
use super::link::{Conn, Dial, Event, Link};
use super::{lost_core, term, Window};

/// Where a window keeps what it keeps between windows.
pub(super) struct Keeping {
    /// The drafts folder (`drafts::dir`).
    pub drafts: PathBuf,
    /// Whether it shows plan usage, read from this machine's files: not
    /// for another host's agents.
    pub usage: bool,
}

pub(super) async fn attached(
    conn: Conn,
    dial: Dial,
    keeping: Keeping,
    folder: PathBuf,
    prefix: u8,
    prefix_name: String,
    note: String,
) -> anyhow::Result<String> {
    let ack_every = conn.ack_every;
    let (out, link) = Link::up(conn);
    let (keys_tx, keys_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut keyboard = term::Keyboard::open();
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = keyboard.read(&mut buf).await {
            if n == 0 || keys_tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut w = Window::new(folder, term::size(), prefix, prefix_name, note, out);
    w.drafts_dir = Some(keeping.drafts);
    w.acks = super::paint_acks::PaintAcks::offered(ack_every);
    if let Dial::Ssh(target) = &dial {
        w.remote = Some(target.name.clone());
    }
    let (usage_tx, usage_rx) = mpsc::unbounded_channel();
    w.usage.tx = Some(usage_tx);
    w.usage.off = !keeping.usage;
    let (places_tx, places_rx) = mpsc::unbounded_channel();
    w.asking.tx = Some(places_tx);
    w.attach();
    let bye = run(&mut w, link, dial, keys_rx, usage_rx, places_rx).await?;
    // Unsent diff comments are kept, and the last line says so.
    Ok(match w.leaving() {
        Some(kept) if bye.is_empty() => kept,
        Some(kept) => format!("{bye} {kept}"),
        None => bye,
    })
}

/// The frames one pass of the loop takes before it paints, at most (one
/// frame past it): a screenful is a few KiB, and a slow terminal takes
/// a moment for a quarter of a megabyte already.
const PASS_BYTES: usize = 256 << 10;

/// The loop, until the window goes: what to print after.
async fn run(
    w: &mut Window,
    mut link: Link,
    dial: Dial,
    mut keys_rx: mpsc::UnboundedReceiver<Vec<u8>>,
    mut usage_rx: mpsc::UnboundedReceiver<super::usage_figure::Answer>,
    mut places_rx: mpsc::UnboundedReceiver<super::session_hosts::Answer>,
) -> anyhow::Result<String> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut winch = signal(SignalKind::window_change())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut term_sig = signal(SignalKind::terminate())?;
    // Raw mode means the keyboard sends no signals; these come from outside
    // (`kill`, `timeout`), and the terminal must still be put back.
    let mut int_sig = signal(SignalKind::interrupt())?;
    let mut quit_sig = signal(SignalKind::quit())?;
    let mut dial = dial;
    let mut carrier = dial.carrier();
    // When the link last came up, and the last wait before an attempt:
    // a link that drops at once keeps backing off (`backoff::after_lost`).
    let mut up_at = std::time::Instant::now();
    let mut last_delay = backoff::bounds(carrier).0;

    loop {
        tokio::select! {
            ev = link.next() => match ev {
                Event::Frame(frame) => {
                    let mut took = frame.body.len();
                    w.on_frame(frame)?;
                    // Take what else already arrived before painting once,
                    // at most a queue's worth and PASS_BYTES: a core that
                    // never pauses must not keep keys and signals waiting.
                    for _ in 0..super::conn::FRAMES_AHEAD {
                        if took >= PASS_BYTES {
                            break;
                        }
                        let Some(frame) = link.ready() else { break };
                        took += frame.body.len();
                        w.on_frame(frame)?;
                    }
                }
                Event::Lost(why) => {
                    let delay = backoff::after_lost(carrier, up_at.elapsed(), last_delay);
                    last_delay = delay;
                    w.lost(why, delay);
                    link = Link::Waiting(tokio::time::Instant::now() + delay);
                }
                Event::Due => link = Link::open(&dial),
                Event::Opened(conn) => {
                    let ack_every = conn.ack_every;
                    let (out, up) = Link::up(conn);
                    link = up;
                    up_at = std::time::Instant::now();
                    w.connected(out, ack_every);
                }
                Event::Failed(failure) => match w.failed(carrier, failure) {
                    Step::RetryIn(d) => {
                        last_delay = d;
                        link = Link::Waiting(tokio::time::Instant::now() + d)
                    }
                    Step::GiveUp(why) => return Ok(lost_core(&why)),
                },
            },
            k = keys_rx.recv() => match k {
                Some(bytes) => w.on_keys(&bytes),
                None => return Ok("[detached: input closed]".into()),
            },
            Some(answer) = usage_rx.recv() => w.usage.got(answer, std::time::Instant::now()),
            Some(answer) = places_rx.recv() => w.place_answered(answer),
            _ = winch.recv() => w.on_resize(term::size()),
            _ = hup.recv() => return Ok(String::new()),
            _ = term_sig.recv() => return Ok("[detached: terminated]".into()),
            _ = int_sig.recv() => return Ok("[detached: interrupted]".into()),
            _ = quit_sig.recv() => return Ok("[detached: quit signal]".into()),
        }
        if std::mem::take(&mut w.reattach) {
            // A session switch: a fresh connection, so nothing the old
            // session sent can be taken for the new one's; to another
            // place's core when the picker moved the window there.
            if let Some(to) = w.redial.take() {
                dial = to;
                carrier = dial.carrier();
                last_delay = backoff::bounds(carrier).0;
            }
            link = Link::open(&dial);
        }
        if let Some(bye) = w.done.take() {
            return Ok(bye);
        }
        w.paint();
    }
}
