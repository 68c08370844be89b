//! The session picker across places (prefix `s`; the list itself is
//! `session_pick`'s, pure): the window's own core answers at once, and
//! every other place (each `[hosts]` host, and this machine for a window
//! over `--host`) is asked in parallel, a thread each, whose answer comes
//! into the window's loop as an event (`event_loop`), so nothing polls
//! and the picker fills in as they answer.
//!
//! A host is asked as `nerdr --host` asks it (`client::ssh_link`: `ssh
//! HOST nerdr bridge`, the greeting, the key handshake there, one
//! `sessions` request), with ssh's `BatchMode` and in a session of its
//! own (the window holds the terminal: no passphrase or host-key
//! question, nor a `ProxyJump` hop's, may land in it) and
//! deadlines ([`LOGIN_WITHIN`], [`LIST_WITHIN`]), so a dead or stalled
//! host is marked `no answer: WHY` rather than holding the picker. This
//! machine is asked without starting anything (`client::peek`).
//!
//! Choosing another place's session moves the window there: the loop's
//! next connection goes through that place's [`Dial`] (ssh for a host,
//! as `nerdr --host` opens it, the client socket for this machine), and
//! what the window keeps per place (drafts, plan usage, the status
//! line's host) follows it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use super::choose::Choosing;
use super::link::Dial;
use super::overlay::Mode;
use super::session_pick::{Picker, Place, Session};
use super::{drafts, Window};
use crate::client::child_slot::ChildSlot;
use crate::client::ssh_link::{self, Patience, Terminal};
use crate::paths::Paths;
use crate::protocol::api::{decode, ListSessions, SessionInfo};
use crate::remote::target::Target;

/// How long a host has to log in and greet: ssh's connection (its own
/// `ConnectTimeout` is shorter, so a host that does not answer at all is
/// ssh's words), the login, the bridge and its core's verdict there.
pub const LOGIN_WITHIN: Duration = Duration::from_secs(10);

/// And then to list its sessions (this machine's core, too).
pub const LIST_WITHIN: Duration = Duration::from_secs(5);

/// ssh's options for asking a host: no question at the terminal the
/// window holds, and a network that does not answer is ssh's failure.
pub const SSH_OPTIONS: &[&str] = &["-oBatchMode=yes", "-oConnectTimeout=8"];

/// One place's answer, from its thread.
pub struct Answer {
    /// Which opening of the picker asked: a later one ignores it.
    asked: u64,
    place: Place,
    sessions: Result<Vec<SessionInfo>, String>,
}

/// The picker's asking, as the window keeps it.
#[derive(Default)]
pub struct Asking {
    /// Where the threads answer; none in the table tests.
    pub tx: Option<mpsc::UnboundedSender<Answer>>,
    /// How many times the picker opened: an answer to an earlier one is
    /// stale.
    opened: u64,
    /// The hosts as the config named them when the picker opened: where
    /// asking them, and a choice of theirs, goes.
    targets: BTreeMap<String, Target>,
    /// The place the window is moving to, until it is connected there.
    moving: Option<Place>,
    /// The ssh of each host asked by the latest opening, until it
    /// greets: ended when the picker opens again or the window goes, so
    /// none waits on a dead host past the window.
    slots: Vec<ChildSlot>,
}

impl Asking {
    fn end_all(&mut self) {
        for slot in self.slots.drain(..) {
            slot.end();
        }
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        self.end_all();
    }
}

impl Window {
    /// Open the session picker: on the core's list of sessions, with the
    /// other places asked meanwhile.
    pub(super) fn list_sessions(&mut self) {
        if !self.connected {
            // The core does not answer now; the other places may.
            self.open_picker(None, configured_hosts());
            return;
        }
        let id = self.request(ListSessions, |w, list| {
            w.open_picker(Some(list), configured_hosts());
            w.overlay_opened();
        });
        self.await_overlay(Some(id));
    }

    /// The picker on `list` (`None`: not connected), `targets` asked.
    fn open_picker(&mut self, list: Option<Vec<SessionInfo>>, targets: BTreeMap<String, Target>) {
        let here = self.place();
        let sessions = list.map(|l| sessions(l, Some(&self.folder)));
        let picker = Picker::open(here, sessions, targets.keys());
        self.asking.opened += 1;
        self.asking.targets = targets;
        self.asking.end_all();
        for place in picker.asking() {
            self.ask_place(place);
        }
        self.mode = Mode::Sessions {
            at: Choosing {
                sel: picker.shown(),
                typed: String::new(),
            },
            picker,
        };
    }

    /// The place this window shows.
    fn place(&self) -> Place {
        match &self.remote {
            Some(host) => Place::Host(host.clone()),
            None => Place::Local,
        }
    }

    /// Ask `place` for its sessions on a thread of its own.
    fn ask_place(&mut self, place: Place) {
        let Some(tx) = self.asking.tx.clone() else {
            return;
        };
        let asked = self.asking.opened;
        let target = match &place {
            Place::Local => None,
            Place::Host(name) => match self.asking.targets.get(name) {
                Some(t) => Some(t.clone()),
                None => return,
            },
        };
        let slot = ChildSlot::default();
        if target.is_some() {
            self.asking.slots.push(slot.clone());
        }
        std::thread::spawn(move || {
            let sessions = match target {
                None => crate::client::peek(ListSessions, LIST_WITHIN).ok_or_else(|| {
                    format!(
                        "no core here answered (none runs, or none within {} s); \
                         `nerdr` here starts one",
                        LIST_WITHIN.as_secs()
                    )
                }),
                Some(target) => ask_host(target, &slot),
            };
            let _ = tx.send(Answer {
                asked,
                place,
                sessions,
            });
        });
    }

    /// A place answered: its group fills in, if the picker that asked is
    /// still open.
    pub(super) fn place_answered(&mut self, a: Answer) {
        if a.asked != self.asking.opened {
            return;
        }
        let Mode::Sessions { picker, at } = &mut self.mode else {
            return;
        };
        let sessions = a.sessions.map(|l| sessions(l, None));
        at.sel = picker.answered(&a.place, sessions, at.sel);
        // Digits typed so far counted the entries as they were.
        at.typed.clear();
    }

    /// Show `folder`'s session in this window instead.
    pub(super) fn switch_session(&mut self, folder: PathBuf) {
        self.awaiting = None;
        self.switch_to(folder);
    }

    /// Show `folder`'s session of `place` in this window: the next
    /// connection goes there.
    pub(super) fn move_to(&mut self, place: Place, folder: PathBuf) {
        let paths = match Paths::from_process() {
            Ok(p) => p,
            Err(e) => {
                self.note = format!("cannot move to {}: {e}", place.name());
                return;
            }
        };
        let (dial, drafts_dir) = match &place {
            Place::Local => (Dial::Local(paths.clone()), drafts::dir(&paths.state_dir)),
            Place::Host(name) => match self.asking.targets.get(name) {
                Some(t) => (
                    Dial::Ssh(t.clone()),
                    drafts::host_dir(&paths.state_dir, &t.name),
                ),
                None => {
                    self.note = format!("{name} is no longer in [hosts]");
                    return;
                }
            },
        };
        if place == Place::Local {
            // Agents started from here get this window's environment
            // again, not the last bridge's.
            crate::client::over_ssh::forget_env();
        }
        // The drafts of the place left are in its own folder, and come
        // back from there.
        let only_here = std::mem::take(&mut self.window_only);
        self.drafts.retain(|t, _| only_here.contains(t));
        self.window_only = only_here;
        self.drafts_dir = Some(drafts_dir);
        self.remote = match &place {
            Place::Local => None,
            Place::Host(name) => Some(name.clone()),
        };
        // Plan usage is read from this machine's files: not another's.
        self.usage.off = self.remote.is_some();
        // Trouble getting there is that place's, counted from now.
        self.outage = None;
        self.redial = Some(dial);
        self.switch_session(folder);
        self.note = format!("connecting to {}...", place.name());
        self.note_for_a_key = false;
        self.asking.moving = Some(place);
    }

    /// The window is connected (`Window::connected`): once where it was
    /// moving to, the status line says so, until the next key, and the
    /// chosen session shows its own tab, not the one of the place left
    /// (which a failed first attempt there would have it ask back).
    pub(super) fn arrived(&mut self) {
        if let Some(place) = self.asking.moving.take() {
            self.restore = None;
            self.note = format!("connected to {}", place.name());
            self.note_for_a_key = true;
        }
    }
}

/// The core's sessions as the picker lists them; `here` the folder this
/// window shows, when they are its core's.
fn sessions(list: Vec<SessionInfo>, here: Option<&PathBuf>) -> Vec<Session> {
    list.into_iter()
        .map(|s| Session {
            here: here == Some(&s.folder),
            folder: s.folder,
            name: s.name,
            tabs: s.tabs,
            running: s.running,
            blocked: s.blocked,
            done: s.done,
        })
        .collect()
}

/// The `[hosts]` of the config as it is now (none when it does not read:
/// the status line says so already).
fn configured_hosts() -> BTreeMap<String, Target> {
    let Ok(paths) = Paths::from_process() else {
        return BTreeMap::new();
    };
    let Ok(config) = crate::config::load(&paths.config_file()) else {
        return BTreeMap::new();
    };
    config
        .hosts
        .keys()
        .filter_map(|name| {
            let t = crate::remote::target::choose(name, &config.hosts, false).ok()?;
            Some((name.clone(), t))
        })
        .collect()
}

/// One host's sessions, over its own ssh, within the deadlines; why not,
/// in the words `nerdr --host` would use.
fn ask_host(target: Target, slot: &ChildSlot) -> Result<Vec<SessionInfo>, String> {
    let patience = Patience {
        greeting: LOGIN_WITHIN,
        reply: LIST_WITHIN,
    };
    // In a session of its own, without askpass: nothing ssh starts (a
    // ProxyJump hop, a ProxyCommand) can ask at the window's terminal.
    let mut link = ssh_link::open_with(
        std::ffi::OsStr::new("ssh"),
        target,
        SSH_OPTIONS,
        patience,
        Terminal::None,
        Some(slot),
    )
    .map_err(|e| format!("{e:#}"))?;
    let reply = link.ask(ListSessions.into());
    // Asked once: ssh ends now (our own child, by its handle), and what
    // it said is not passed on (the window holds the terminal).
    link.finish(false);
    match reply {
        Ok(Ok(value)) => decode::<ListSessions>(value).map_err(|e| e.to_string()),
        Ok(Err(refused)) => Err(refused.message),
        Err(e) => Err(format!("{e:#}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frame::Frame;
    use crate::protocol::handshake::ClientMsg;

    fn window(remote: Option<&str>) -> (Window, mpsc::Receiver<Frame>) {
        let (mut w, rx) = super::super::test_window();
        w.folder = "/w/api".into();
        w.remote = remote.map(str::to_owned);
        (w, rx)
    }

    fn info(folder: &str) -> SessionInfo {
        SessionInfo {
            folder: folder.into(),
            name: folder.rsplit('/').next().unwrap().into(),
            tabs: 1,
            running: 1,
            blocked: 0,
            done: 0,
        }
    }

    fn targets(names: &[&str]) -> BTreeMap<String, Target> {
        let hosts = names
            .iter()
            .map(|n| (n.to_string(), crate::config::HostConfig::default()))
            .collect();
        names
            .iter()
            .map(|n| {
                let t = crate::remote::target::choose(n, &hosts, false).unwrap();
                (n.to_string(), t)
            })
            .collect()
    }

    fn answer(w: &Window, place: Place, sessions: Result<Vec<SessionInfo>, String>) -> Answer {
        Answer {
            asked: w.asking.opened,
            place,
            sessions,
        }
    }

    fn sent(rx: &mut mpsc::Receiver<Frame>) -> Vec<ClientMsg> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .filter_map(|f| f.decode_control().ok())
            .collect()
    }

    /// (keys typed in the picker) -> where the window goes: nowhere, this
    /// core's other session, or another place's session through its dial.
    #[test]
    fn choosing_a_row_stays_switches_or_moves_the_window_to_its_place() {
        #[derive(Debug, PartialEq)]
        enum Went {
            Nowhere,
            Switched(PathBuf),
            Moved(Option<String>, PathBuf),
        }
        #[rustfmt::skip]
        let rows: &[(Option<&str>, &[u8], Went)] = &[
            // From this machine: 1 api (shown), 2 web, then devbox's 3 shop.
            (None, b"\r", Went::Nowhere),
            (None, b"2\r", Went::Switched("/w/web".into())),
            (None, b"3\r", Went::Moved(Some("devbox".into()), "/r/shop".into())),
            (None, b"\x1b", Went::Nowhere),
            // From devbox: 1 api, 2 web (this machine), 3 shop (shown).
            (Some("devbox"), b"1\r", Went::Moved(None, "/w/api".into())),
            (Some("devbox"), b"3\r", Went::Nowhere),
        ];
        for (remote, keys, want) in rows {
            let (mut w, mut rx) = window(*remote);
            if remote.is_some() {
                w.folder = "/r/shop".into();
            }
            let here = match remote {
                None => vec![info("/w/api"), info("/w/web")],
                Some(_) => vec![info("/r/shop")],
            };
            w.open_picker(Some(here), targets(&["devbox", "gone"]));
            let (other, list) = match remote {
                None => (Place::Host("devbox".into()), vec![info("/r/shop")]),
                Some(_) => (Place::Local, vec![info("/w/api"), info("/w/web")]),
            };
            let a = answer(&w, other, Ok(list));
            w.place_answered(a);
            let a = answer(
                &w,
                Place::Host("gone".into()),
                Err("Connection refused".into()),
            );
            w.place_answered(a);
            sent(&mut rx);
            w.on_keys(keys);
            let went = match (w.reattach, &w.redial) {
                (false, _) => Went::Nowhere,
                (true, None) => Went::Switched(w.folder.clone()),
                (true, Some(Dial::Ssh(t))) => Went::Moved(Some(t.name.clone()), w.folder.clone()),
                (true, Some(Dial::Local(_))) => Went::Moved(None, w.folder.clone()),
            };
            assert_eq!(&went, want, "{remote:?} {keys:?}");
            assert!(matches!(w.mode, Mode::Normal));
            if let Went::Moved(host, _) = want {
                // What the window keeps per place follows it.
                assert_eq!(&w.remote, host);
                assert_eq!(w.usage.off, host.is_some());
                let dir = w.drafts_dir.clone().unwrap();
                match host {
                    Some(h) => assert!(dir.ends_with(format!("drafts/host-{h}")), "{dir:?}"),
                    None => assert!(dir.ends_with("drafts"), "{dir:?}"),
                }
                assert!(!w.connected, "keys wait for the new connection");
                assert!(w.note.starts_with("connecting to "), "{}", w.note);
                // A first attempt there fails; the next one connects.
                w.failed(
                    w.redial.as_ref().unwrap().carrier(),
                    super::super::backoff::Failure::Down("ssh: no route".into()),
                );
                w.view.redraw("oldtab01", 23, 80);
                // Connected there: attached on the chosen session, and said.
                let (out, mut there) = mpsc::channel(super::super::conn::TO_CORE_AHEAD);
                w.connected(out, None);
                let name = host.as_deref().unwrap_or("local");
                assert_eq!(w.note, format!("connected to {name}"));
                assert_eq!(w.restore, None, "the chosen session's own tab shows");
                match sent(&mut there).as_slice() {
                    [ClientMsg::Attach { folder, .. }] => assert_eq!(folder, &w.folder),
                    other => panic!("{other:?}"),
                }
            }
        }
    }

    /// An answer to an earlier opening, or one after the picker closed,
    /// changes nothing; the selection stays on its entry as groups fill.
    #[test]
    fn late_answers_are_dropped_and_the_selection_stays_put() {
        let (mut w, _rx) = window(Some("devbox"));
        w.folder = "/r/shop".into();
        w.open_picker(
            Some(vec![info("/r/shop"), info("/r/docs")]),
            targets(&["devbox"]),
        );
        let stale = answer(&w, Place::Local, Ok(vec![info("/w/old")]));
        // Down to devbox's docs, then the picker opens again.
        w.on_keys(b"j");
        w.open_picker(
            Some(vec![info("/r/shop"), info("/r/docs")]),
            targets(&["devbox"]),
        );
        w.on_keys(b"j");
        w.place_answered(stale);
        let Mode::Sessions { picker, at } = &w.mode else {
            panic!("{:?}", w.mode)
        };
        assert_eq!(
            picker.asking(),
            [Place::Local],
            "the stale answer was dropped"
        );
        assert_eq!(at.sel, 1);
        let a = answer(&w, Place::Local, Ok(vec![info("/w/a"), info("/w/b")]));
        w.place_answered(a);
        let Mode::Sessions { picker, at } = &w.mode else {
            panic!("{:?}", w.mode)
        };
        assert_eq!(picker.entries()[at.sel].1.folder, PathBuf::from("/r/docs"));
        // Closed: an answer has nowhere to go.
        w.on_keys(b"q");
        let a = answer(&w, Place::Local, Ok(vec![]));
        w.place_answered(a);
        assert!(matches!(w.mode, Mode::Normal));
    }

    /// Disconnected, the picker opens at once: the other places are asked,
    /// and the window's own says it is reconnecting.
    #[test]
    fn while_disconnected_the_picker_opens_on_the_other_places() {
        let (mut w, mut rx) = window(None);
        w.connected = false;
        w.open_picker(None, targets(&["devbox"]));
        assert!(sent(&mut rx).is_empty());
        let Mode::Sessions { picker, .. } = &w.mode else {
            panic!("{:?}", w.mode)
        };
        assert_eq!(picker.asking(), [Place::Host("devbox".into())]);
        let (lines, _) = super::super::session_pick::lines(picker, 0, 80);
        assert!(
            lines.contains(&" local: no answer: not connected (reconnecting...)".to_string()),
            "{lines:?}"
        );
    }
}
