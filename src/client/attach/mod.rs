//! `nerdr` with no command: attach to the folder's session. One pane at a
//! time plus a status line; keys go to the program except after the prefix.
//! Detaching (prefix d, or the terminal closing) leaves every agent running.
//! Tabs that need the person are marked in the status line, the prefix and
//! `a` goes to the next one, and the core's attention messages become
//! desktop notifications through the person's terminal.

mod choose;
mod commands;
mod keys;
mod link;
mod marks;
mod notice;
mod overflow;
mod overlay;
mod prompt;
mod reattach;
mod scroll;
mod session_pick;
mod status;
mod term;
mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use crate::paths::Paths;
use crate::protocol::api::{self, ListAgents, Method, TabInfo};
use crate::protocol::frame::{Frame, Kind};
use crate::protocol::handshake::{ClientMsg, CoreMsg, Outcome};
use crate::protocol::holder::{data_frame, split_data};
use keys::{Action, Keys};
use link::{Event, Link};
use overlay::Mode;
use reattach::Outage;
use view::View;

/// What the window does with a request's reply, which it reads as the
/// reply of the method it asked (see [`Window::request`]).
type OnReply = Box<dyn FnOnce(&mut Window, serde_json::Value)>;

struct Window {
    folder: PathBuf,
    tabs: Vec<TabInfo>,
    view: View,
    mode: Mode,
    keys: Keys,
    prefix_name: String,
    note: String,
    out: mpsc::UnboundedSender<Frame>,
    next_id: u64,
    pending: HashMap<u64, OnReply>,
    /// Set when the loop should end, with what to print after.
    done: Option<String>,
    offered_picker: bool,
    /// How many things wait for the person's approval.
    approvals: usize,
    /// Tabs whose warning was shown.
    warned: std::collections::HashSet<String>,
    /// Which background tabs need the person.
    marks: marks::Marks,
    /// The person's terminal, for its notifications.
    terminal: notice::Terminal,
    /// The note answers the last key only, and goes with the next one.
    note_for_a_key: bool,
    /// A command asked the core for what an overlay shows (`C-b c`, F3,
    /// `C-b [`): the keys typed since are that overlay's, kept until it
    /// opens.
    awaiting: Option<Awaiting>,
    /// Set while the connection to the core is down.
    outage: Option<Outage>,
    /// The tab to show again once attached anew (after a reconnect).
    restore: Option<String>,
    /// The tab a key asked the core to show, until its redraw comes:
    /// `n`/`p` typed before it count from it, not from the tab still on
    /// the screen, so each moves once.
    asked: Option<String>,
    /// The loop should open a fresh connection (a session switch).
    reattach: bool,
    /// Whether keys reach the core: false while reconnecting or switching.
    connected: bool,
}

/// Keys held for an overlay that opens on the core's reply.
struct Awaiting {
    /// The request whose reply opens it (`None`: scroll mode's history,
    /// which is no request).
    id: Option<u64>,
    since: std::time::Instant,
    keys: Vec<u8>,
}

/// How long keys wait for an overlay: a reply that never comes (a core
/// gone mid-request) must not swallow the person's typing for good.
const AWAIT_AT_MOST: std::time::Duration = std::time::Duration::from_secs(3);

/// A broken config.toml, as the status line says it: the file by its
/// name alone (its full path would fill the line before the error
/// starts; `nerdr doctor` prints all of it).
fn config_note(error: &str, file: &std::path::Path) -> String {
    let short = error.replace(&file.display().to_string(), "config.toml");
    format!("config error (see nerdr doctor): {short}")
}

pub fn run(folder: PathBuf) -> anyhow::Result<ExitCode> {
    if std::env::var_os("NERDR_TAB").is_some_and(|v| !v.is_empty()) {
        bail!(
            "refusing to attach from inside a nerdr tab (NERDR_TAB is set): \
             a program nerdr started cannot act as the user's window"
        );
    }
    let paths = Paths::from_process()?;
    let (prefix, prefix_name, note) = match crate::config::load(&paths.config_file()) {
        Ok(c) => {
            let p = keys::prefix_byte(&c.client.prefix).unwrap_or(2);
            (p, c.client.prefix.clone(), String::new())
        }
        Err(e) => (
            2,
            "C-b".to_string(),
            config_note(&e.to_string(), &paths.config_file()),
        ),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let farewell = rt.block_on(async move {
        let stream = crate::client::open_client(&paths).await?;
        let _raw = term::RawTerminal::enter()?;
        attached(stream, paths, folder, prefix, prefix_name, note).await
    });
    // The stdin reader blocks in a read no one will finish; do not wait.
    rt.shutdown_background();
    let farewell = farewell?;
    if !farewell.is_empty() {
        println!("{farewell}");
    }
    // Not a detach the person asked for: scripts around `nerdr` can tell.
    if farewell.starts_with(LOST_CORE) {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

const LOST_CORE: &str = "[lost the core";

/// The window's last line when the core went away for good (stopped,
/// refused it after an upgrade, or not back within a minute): why, and
/// what to do, since the programs a holder keeps run on.
fn lost_core(why: &str) -> String {
    format!("{LOST_CORE}: {why}] run `nerdr` to attach again")
}

async fn attached(
    stream: tokio::net::UnixStream,
    paths: Paths,
    folder: PathBuf,
    prefix: u8,
    prefix_name: String,
    note: String,
) -> anyhow::Result<String> {
    use tokio::signal::unix::{signal, SignalKind};
    let (out, mut link) = Link::up(link::split(stream));
    let (keys_tx, mut keys_rx) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut stdin = tokio::io::stdin();
        let mut buf = vec![0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf).await {
            if n == 0 || keys_tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut winch = signal(SignalKind::window_change())?;
    let mut hup = signal(SignalKind::hangup())?;
    let mut term_sig = signal(SignalKind::terminate())?;
    // Raw mode means the keyboard sends no signals; these come from outside
    // (`kill`, `timeout`), and the terminal must still be put back.
    let mut int_sig = signal(SignalKind::interrupt())?;
    let mut quit_sig = signal(SignalKind::quit())?;

    let mut w = Window::new(folder, term::size(), prefix, prefix_name, note, out);
    w.attach();

    loop {
        tokio::select! {
            ev = link.next() => match ev {
                Event::Frame(frame) => {
                    w.on_frame(frame)?;
                    // Take whatever else already arrived before painting once.
                    while let Some(frame) = link.ready() {
                        w.on_frame(frame)?;
                    }
                }
                Event::Lost(why) => {
                    w.lost(why);
                    link = Link::Waiting(tokio::time::Instant::now() + link::FIRST_DELAY);
                }
                Event::Due => link = Link::open(&paths),
                Event::Opened(stream) => {
                    let (out, up) = Link::up(link::split(stream));
                    link = up;
                    w.connected(out);
                }
                Event::Failed(failure) => match w.failed(failure) {
                    link::Step::RetryIn(d) => {
                        link = Link::Waiting(tokio::time::Instant::now() + d)
                    }
                    link::Step::GiveUp(why) => return Ok(lost_core(&why)),
                },
            },
            k = keys_rx.recv() => match k {
                Some(bytes) => w.on_keys(&bytes),
                None => return Ok("[detached: input closed]".into()),
            },
            _ = winch.recv() => w.on_resize(term::size()),
            _ = hup.recv() => return Ok(String::new()),
            _ = term_sig.recv() => return Ok("[detached: terminated]".into()),
            _ = int_sig.recv() => return Ok("[detached: interrupted]".into()),
            _ = quit_sig.recv() => return Ok("[detached: quit signal]".into()),
        }
        if std::mem::take(&mut w.reattach) {
            // A session switch: a fresh connection, so nothing the old
            // session sent can be taken for the new one's.
            link = Link::open(&paths);
        }
        if let Some(bye) = w.done.take() {
            return Ok(bye);
        }
        w.paint();
    }
}

impl Window {
    fn new(
        folder: PathBuf,
        size: (u16, u16),
        prefix: u8,
        prefix_name: String,
        note: String,
        out: mpsc::UnboundedSender<Frame>,
    ) -> Window {
        Window {
            folder,
            tabs: Vec::new(),
            view: View::new(size),
            mode: Mode::Normal,
            keys: Keys::new(prefix),
            prefix_name,
            note,
            out,
            next_id: 1,
            pending: HashMap::new(),
            done: None,
            offered_picker: false,
            approvals: 0,
            warned: Default::default(),
            marks: Default::default(),
            terminal: notice::Terminal::from_env(|k| std::env::var(k).ok()),
            note_for_a_key: false,
            outage: None,
            restore: None,
            asked: None,
            reattach: false,
            connected: true,
            awaiting: None,
        }
    }

    fn send(&self, msg: ClientMsg) {
        let _ = self.out.send(Frame::control(&msg));
    }

    /// Ask the core `m`; `then` gets the reply, typed as `m`'s method's.
    fn request<M: Method + 'static>(&mut self, m: M, then: fn(&mut Window, M::Reply)) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let on_reply = move |w: &mut Window, value| match api::decode::<M>(value) {
            Ok(reply) => then(w, reply),
            Err(e) => w.note = e.to_string(),
        };
        self.pending.insert(id, Box::new(on_reply));
        self.send(ClientMsg::Request {
            id,
            request: m.into(),
        });
        id
    }

    /// Hold the keys typed from now on for the overlay the reply to
    /// request `id` opens.
    fn await_overlay(&mut self, id: Option<u64>) {
        self.awaiting = Some(Awaiting {
            id,
            since: std::time::Instant::now(),
            keys: Vec::new(),
        });
    }

    /// An overlay opened: the keys held for it are its own.
    fn overlay_opened(&mut self) {
        if let Some(a) = self.awaiting.take() {
            self.feed_keys(&a.keys);
        }
    }

    fn showing(&self) -> Option<usize> {
        self.index_of(self.view.tab.as_deref()?)
    }

    fn index_of(&self, tab: &str) -> Option<usize> {
        self.tabs.iter().position(|t| t.id == tab)
    }

    /// The tab asked for and not shown yet, else the one shown: where
    /// `n` and `p` count from.
    fn showing_or_asked(&self) -> Option<usize> {
        self.asked
            .as_deref()
            .and_then(|a| self.index_of(a))
            .or_else(|| self.showing())
    }

    fn select_index(&mut self, i: usize) {
        if let Some(t) = self.tabs.get(i) {
            let tab = t.id.clone();
            self.asked = Some(tab.clone());
            self.send(ClientMsg::Select { tab });
        }
    }

    fn on_frame(&mut self, frame: Frame) -> anyhow::Result<()> {
        if frame.kind == Kind::Data {
            if let Some((tab, bytes)) = split_data(&frame.body) {
                if self.view.tab.as_deref() == Some(tab) {
                    self.view.output(bytes);
                }
            }
            return Ok(());
        }
        match frame
            .decode_control::<CoreMsg>()
            .context("a malformed message from the core")?
        {
            CoreMsg::Tabs {
                tabs, approvals, ..
            } => {
                self.approvals = approvals;
                self.on_tabs(tabs)
            }
            CoreMsg::Redraw { tab, rows, cols } => {
                if self.restore.as_ref().is_some_and(|r| *r != tab) {
                    // The core shows a new window the session's first tab;
                    // this one asked for the tab it showed before.
                    return Ok(());
                }
                self.restore = None;
                if self.asked.as_ref() == Some(&tab) {
                    self.asked = None;
                }
                self.marks.shown(&tab);
                self.view.redraw(&tab, rows, cols)
            }
            CoreMsg::History { lines, .. } => {
                let rows = self.view.term.0.saturating_sub(1) as usize;
                self.mode = Mode::Scroll(scroll::Scroll::new(lines, rows));
                self.overlay_opened();
            }
            CoreMsg::Reply { id, outcome } => self.on_reply(id, outcome),
            CoreMsg::Closing { message } => {
                self.done = Some(format!("[the core closed the window: {message}]"))
            }
            CoreMsg::Attention { text, .. } => View::write(&self.terminal.notification(&text)),
        }
        Ok(())
    }

    fn on_tabs(&mut self, tabs: Vec<TabInfo>) {
        let was = self.showing();
        // A tab's warning shows once in the status line, until the next key.
        for t in &tabs {
            if let Some(w) = &t.warning {
                if self.warned.insert(t.id.clone()) {
                    self.note = format!("tab {}: {w}", t.id);
                }
            }
        }
        self.tabs = tabs;
        if let Some(r) = self.restore.clone() {
            if self.tabs.iter().any(|t| t.id == r) {
                self.send(ClientMsg::Select { tab: r });
            } else {
                self.restore = None;
            }
        }
        self.marks.update(&self.tabs, self.view.tab.as_deref());
        let shown = self.showing();
        if shown.is_none() && !self.tabs.is_empty() {
            // The shown tab is gone (or none was shown): show a neighbour.
            let i = was.unwrap_or(0).min(self.tabs.len() - 1);
            self.select_index(i);
        }
        if self.tabs.is_empty() {
            self.view.tab = None;
            self.view.invalidate();
            if !self.offered_picker && matches!(self.mode, Mode::Normal) {
                // A session with no tabs: offer to start an agent.
                self.offered_picker = true;
                self.request(ListAgents, Window::pick_agent);
            }
        }
    }

    fn on_reply(&mut self, id: u64, outcome: Outcome) {
        let then = self.pending.remove(&id);
        match outcome {
            Outcome::Error(e) => {
                // The overlay will not open: its keys were for it alone.
                if self.awaiting.as_ref().is_some_and(|a| a.id == Some(id)) {
                    self.awaiting = None;
                }
                self.note = e.message;
                self.mode = Mode::Normal;
                self.view.invalidate();
            }
            Outcome::Result(value) => {
                if let Some(then) = then {
                    then(self, value);
                }
            }
        }
    }

    /// Keys for the shown tab's program; while it is not running they
    /// would reach nothing, so the status line says what brings it back.
    fn type_keys(&mut self, bytes: &[u8]) {
        let Some(tab) = self.view.tab.clone() else {
            return;
        };
        if !self.connected {
            if self.outage.is_some() {
                self.note = "not connected: what you typed was dropped, not sent \
                             (reconnecting...)"
                    .into();
            }
            return;
        }
        let stopped = self
            .showing()
            .and_then(|i| status::stopped_hint(&self.tabs[i], &self.prefix_name));
        match stopped {
            Some(hint) => {
                self.note = hint;
                self.note_for_a_key = true;
            }
            None => {
                let _ = self.out.send(data_frame(&tab, bytes));
            }
        }
    }

    fn on_resize(&mut self, size: (u16, u16)) {
        self.view.term = size;
        // The core answers a resize with the whole screen.
        self.view.expect_whole();
        self.send(ClientMsg::Resize {
            rows: size.0.saturating_sub(1).max(2),
            cols: size.1,
        });
        if let Mode::Scroll(s) = &mut self.mode {
            s.rows = size.0.saturating_sub(1).max(1) as usize;
        }
    }

    /// Every key of a read, in order: a command that opens an overlay
    /// (`C-b x y` in one write) gives it the keys after it, and an overlay
    /// that closes hands the rest back to the tab.
    fn on_keys(&mut self, bytes: &[u8]) {
        if std::mem::take(&mut self.note_for_a_key) {
            self.note.clear();
        }
        if let Some(a) = &mut self.awaiting {
            if a.since.elapsed() < AWAIT_AT_MOST {
                a.keys.extend_from_slice(bytes);
                return;
            }
            self.awaiting = None;
        }
        self.feed_keys(bytes);
    }

    fn feed_keys(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            rest = self.some_keys(rest);
        }
    }

    /// The keys at the start of `bytes` up to a change of who reads them:
    /// the bytes left for the next turn.
    fn some_keys<'a>(&mut self, bytes: &'a [u8]) -> &'a [u8] {
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => {
                let (actions, rest) = self.keys.step(bytes);
                for action in actions {
                    match action {
                        Action::Send(b) => self.type_keys(&b),
                        Action::Cmd(c) => self.command(c),
                    }
                }
                match &mut self.awaiting {
                    // The rest of this read is the coming overlay's.
                    Some(a) => {
                        a.keys.extend_from_slice(rest);
                        &[]
                    }
                    None => rest,
                }
            }
            other => {
                let (mode, effect, used) = overlay::feed(other, bytes);
                self.mode = mode;
                if matches!(self.mode, Mode::Normal) {
                    self.view.invalidate();
                }
                self.effect(effect);
                &bytes[used..]
            }
        }
    }

    fn paint(&mut self) {
        let (rows, cols) = self.view.term;
        let tab_shown = match &self.mode {
            Mode::Normal => true,
            Mode::Rename { .. } => self.view.tab.is_some(),
            _ => false,
        };
        if !tab_shown {
            self.view.invalidate();
        } else if self.view.wants_repaint() && self.connected {
            self.send(ClientMsg::Repaint);
        }
        let bytes = match &self.mode {
            Mode::Normal => {
                // A stopped tab says what brings it back, unless a note
                // has something newer to say.
                let hint = match self.showing() {
                    Some(i) if self.note.is_empty() => {
                        status::stopped_hint(&self.tabs[i], &self.prefix_name)
                    }
                    _ => None,
                };
                let note = hint.as_deref().unwrap_or(&self.note);
                let note = status::status_note(note, self.approvals, &self.prefix_name);
                let width = cols as usize;
                let line = status::status_line(
                    &self.tabs,
                    self.view.tab.as_deref(),
                    &self.marks,
                    &note,
                    width,
                );
                let status = status::render(&line, width);
                if self.view.tab.is_none() {
                    overlay::page(
                        &[
                            "No tabs here yet.".into(),
                            String::new(),
                            format!("Press {} c to start an agent.", self.prefix_name),
                        ],
                        &status,
                        rows,
                        cols,
                    )
                } else {
                    self.view.paint(&status)
                }
            }
            Mode::Rename { .. } if self.view.tab.is_some() => {
                let line = self.mode.status_line().unwrap_or_default();
                let bar = [status::Span {
                    text: line,
                    look: status::Look::Bar,
                }];
                let status = status::render(&bar, cols as usize);
                self.view.paint(&status)
            }
            other => overlay::render(other, &self.prefix_name, rows, cols),
        };
        View::write(&bytes);
    }
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;
