//! `nerdr` with no command: attach to the folder's session. One pane at a
//! time plus a status line; keys go to the program except after the prefix.
//! Detaching (prefix d, or the terminal closing) leaves every agent running.
//! Tabs that need the person are marked in the status line, the prefix and
//! `a` goes to the next one, and the core's attention messages become
//! desktop notifications through the person's terminal.
//!
//! The same window shows another host's session (`nerdr --host HOST`,
//! [`run_remote`]): only its connection differs (`link::Dial`), and it
//! renders here.

mod backoff;
mod choose;
mod commands;
pub mod comments;
mod conn;
mod diff_draw;
mod diff_open;
mod diff_rows;
mod diff_status;
mod diff_view;
pub mod drafts;
mod drawing;
mod event_loop;
mod from_core;
mod keys;
mod limit_offer;
mod link;
mod marks;
mod notice;
mod overflow;
mod overlay;
mod page_row;
mod paint_acks;
mod prompt;
mod reattach;
mod report_offer;
mod review_rows;
mod scroll;
mod session_hosts;
mod session_pick;
mod ssh_conn;
mod status;
mod term;
mod typing;
mod usage_figure;
mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use tokio::sync::mpsc;

use crate::paths::Paths;
use crate::protocol::api::{self, Method, TabInfo};
use crate::protocol::frame::Frame;
use crate::protocol::handshake::ClientMsg;
use event_loop::Keeping;
use keys::Keys;
use link::Dial;
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
    out: mpsc::Sender<Frame>,
    next_id: u64,
    pending: HashMap<u64, OnReply>,
    /// Set when the loop should end, with what to print after.
    done: Option<String>,
    offered_picker: bool,
    /// The tab prefix `A` asked to switch, until the agents' list comes.
    switching: Option<String>,
    /// The switch asked for with a handoff (request, tab, agent): refused
    /// for want of one, the window asks to switch without.
    switch_asked: Option<(u64, String, String)>,
    /// Tabs at their plan's limit whose switch was offered (`limit_offer`).
    limit_offered: std::collections::HashSet<String>,
    /// Spun-off tabs due a report whose offer was shown (`report_offer`).
    report_offered: std::collections::HashSet<String>,
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
    /// The tab whose history scroll mode asked for: a history nobody
    /// asked for (a far end that is no core) opens nothing.
    history_asked: Option<String>,
    /// Set while the connection to the core is down.
    outage: Option<Outage>,
    /// The tab to show again once attached anew (after a reconnect).
    restore: Option<String>,
    /// Keys typed before the first tab showed (a window over ssh is up a
    /// moment before its tab is): given to that tab, as a terminal keeps
    /// typeahead. Bounded by [`typing::TYPEAHEAD_MAX`].
    early: Vec<u8>,
    /// The tab a key asked the core to show, until its redraw comes:
    /// `n`/`p` typed before it count from it, not from the tab still on
    /// the screen, so each moves once.
    asked: Option<String>,
    /// The loop should open a fresh connection (a session switch).
    reattach: bool,
    /// Whether keys reach the core: false while reconnecting or switching.
    connected: bool,
    /// The host whose core the window shows (`--host`), for what the
    /// status line says of the connection; `None`: this machine's.
    remote: Option<String>,
    /// Comments not sent yet, by tab, while its diff view is closed.
    drafts: HashMap<String, Vec<drafts::Draft>>,
    /// The shown agent's plan usage, for the status line.
    usage: usage_figure::UsageFigure,
    /// Where drafts are kept across windows (`drafts`); `None`: in this
    /// window only (the table tests).
    drafts_dir: Option<PathBuf>,
    /// Tabs whose drafts the file could not keep: this window's alone.
    window_only: std::collections::HashSet<String>,
    /// Comments the core was asked to type, until it answers.
    sending: Option<diff_open::Sending>,
    /// The request for the diff the view opens on, and the tab's reviews
    /// it shows.
    diff_asked: Option<(u64, String, review_rows::Reviews)>,
    /// The request for the reviews of the tab whose view is asked for.
    reviews_asked: Option<(u64, String)>,
    /// The paint this connection brought and what of it was acknowledged.
    acks: paint_acks::PaintAcks,
    /// The session picker's asking of other places (`session_hosts`).
    asking: session_hosts::Asking,
    /// Where the loop's next connection goes, when the window moves to
    /// another place (the session picker); `None`: where it went.
    redial: Option<Dial>,
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

pub use link::SSH_WINDOW_OPTIONS;

/// The window onto this machine's session of `folder`.
pub fn run(folder: PathBuf) -> anyhow::Result<ExitCode> {
    if std::env::var_os("NERDR_TAB").is_some_and(|v| !v.is_empty()) {
        bail!(
            "refusing to attach from inside a nerdr tab (NERDR_TAB is set): \
             a program nerdr started cannot act as the user's window"
        );
    }
    let paths = Paths::from_process()?;
    let keeping = Keeping {
        drafts: drafts::dir(&paths.state_dir),
        usage: true,
    };
    window(folder, First::Local(paths), keeping)
}

/// The window onto another host's session of `folder` (a folder there),
/// over `link` (opened with [`SSH_WINDOW_OPTIONS`], past its handshake);
/// it reconnects through ssh when the link drops.
pub fn run_remote(
    folder: PathBuf,
    link: crate::client::ssh_link::SshLink,
) -> anyhow::Result<ExitCode> {
    let paths = Paths::from_process()?;
    let keeping = Keeping {
        drafts: drafts::host_dir(&paths.state_dir, &link.host.name),
        usage: false,
    };
    window(folder, First::Ssh(Box::new(link)), keeping)
}

/// The window's first connection.
enum First {
    Local(Paths),
    Ssh(Box<crate::client::ssh_link::SshLink>),
}

fn window(folder: PathBuf, first: First, keeping: Keeping) -> anyhow::Result<ExitCode> {
    let config_file = Paths::from_process()?.config_file();
    let (prefix, prefix_name, note) = match crate::config::load(&config_file) {
        Ok(c) => {
            let p = keys::prefix_byte(&c.client.prefix).unwrap_or(2);
            (p, c.client.prefix.clone(), String::new())
        }
        Err(e) => (
            2,
            "C-b".to_string(),
            config_note(&e.to_string(), &config_file),
        ),
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let farewell = rt.block_on(async move {
        let (conn, dial) = match first {
            First::Local(paths) => {
                let (stream, welcome) = crate::client::open_welcomed(&paths).await?;
                (link::split(stream, welcome.ack_every)?, Dial::Local(paths))
            }
            First::Ssh(link) => {
                let dial = Dial::Ssh(link.host.clone());
                (ssh_conn::split(link.into_stream()), dial)
            }
        };
        let _raw = term::RawTerminal::enter()?;
        event_loop::attached(conn, dial, keeping, folder, prefix, prefix_name, note).await
    });
    // The stdin reader blocks in a read no one will finish; do not wait.
    rt.shutdown_background();
    let farewell = farewell?;
    if !farewell.is_empty() {
        println!("{farewell}");
    }
    Ok(exit_code(&farewell))
}

/// How the window exits after its last line: a failure when that was not
/// a detach the person asked for (the core lost, or ending the window),
/// so scripts around `nerdr` can tell.
fn exit_code(farewell: &str) -> ExitCode {
    match farewell.starts_with(LOST_CORE) || farewell.starts_with(CLOSED_BY_CORE) {
        true => ExitCode::FAILURE,
        false => ExitCode::SUCCESS,
    }
}

const LOST_CORE: &str = "[lost the core";
/// The core ended the window itself (a folder that is none, say).
const CLOSED_BY_CORE: &str = "[the core";

/// The window's last line when the core went away for good (stopped,
/// refused it after an upgrade, or not back within a minute): why, and
/// what to do, since the programs a holder keeps run on.
fn lost_core(why: &str) -> String {
    format!("{LOST_CORE}: {why}] run `nerdr` to attach again")
}

impl Window {
    fn new(
        folder: PathBuf,
        size: (u16, u16),
        prefix: u8,
        prefix_name: String,
        note: String,
        out: mpsc::Sender<Frame>,
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
            switching: None,
            switch_asked: None,
            limit_offered: Default::default(),
            report_offered: Default::default(),
            approvals: 0,
            warned: Default::default(),
            marks: Default::default(),
            terminal: notice::Terminal::from_env(|k| std::env::var(k).ok()),
            note_for_a_key: false,
            outage: None,
            restore: None,
            early: Vec::new(),
            asked: None,
            reattach: false,
            connected: true,
            remote: None,
            awaiting: None,
            history_asked: None,
            drafts: HashMap::new(),
            usage: Default::default(),
            drafts_dir: None,
            window_only: Default::default(),
            sending: None,
            diff_asked: None,
            reviews_asked: None,
            acks: Default::default(),
            asking: Default::default(),
            redial: None,
        }
    }

    fn send(&self, msg: ClientMsg) {
        let _ = self.out.try_send(Frame::control(&msg));
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

    fn on_resize(&mut self, size: (u16, u16)) {
        self.view.term = size;
        // The core answers a resize with the whole screen.
        self.view.expect_whole();
        self.send(ClientMsg::Resize {
            rows: size.0.saturating_sub(1).max(2),
            cols: size.1,
        });
        match &mut self.mode {
            Mode::Scroll(s) => s.rows = size.0.saturating_sub(1).max(1) as usize,
            Mode::Diff(v) | Mode::Help { over: Some(v) } => {
                v.resize(size.0.saturating_sub(1) as usize)
            }
            _ => {}
        }
    }
}

/// A window at 24x80 on folder `/a`, prefix C-b, and what it sends.
#[cfg(test)]
fn test_window() -> (
    Window,
    tokio::sync::mpsc::Receiver<crate::protocol::frame::Frame>,
) {
    let (out, rx) = tokio::sync::mpsc::channel(conn::TO_CORE_AHEAD);
    let w = Window::new("/a".into(), (24, 80), 2, "C-b".into(), String::new(), out);
    (w, rx)
}

#[cfg(test)]
#[path = "window_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "far_end_tests.rs"]
mod far_end_tests;
