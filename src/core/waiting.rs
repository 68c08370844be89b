//! `nerdr wait`: an answer once a tab reaches a state. Nothing polls: each
//! waiter holds a receiver of the core's state-change counter (bumped on
//! every agent state change and every change of the tab list) and looks
//! again only when it moves; the caller's timeout, or the core's copy of
//! it, ends the wait. Whether a tab is there yet is [`progress`], pure.

use std::time::Duration;

use super::not_found::no_tab;
use super::state::Tab;
use super::Core;
use crate::protocol::api::{AgentState, ApiError, TabKind, TabState, Until};
use crate::protocol::replies::Waited;

/// Where a tab stands against what a waiter wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Reached,
    Waiting,
    /// It cannot get there any more: why.
    Never(&'static str),
}

/// Whether a tab of `kind`, its program `life`, its agent `agent`, is at
/// `until`.
pub fn progress(
    until: Until,
    kind: TabKind,
    life: TabState,
    agent: Option<AgentState>,
) -> Progress {
    let wanted = match until {
        Until::Exited => {
            return match life {
                TabState::Exited => Progress::Reached,
                TabState::Refused => Progress::Never(
                    "the tab was refused by its sandbox check: its program never ran",
                ),
                TabState::Starting | TabState::Running => Progress::Waiting,
            }
        }
        Until::Working => AgentState::Working,
        Until::Blocked => AgentState::Blocked,
        Until::Idle => AgentState::Idle,
        Until::Done => AgentState::Done,
    };
    if kind == TabKind::Terminal {
        return Progress::Never("the tab is a terminal: it has no agent state (only `exited`)");
    }
    match (life, agent) {
        (TabState::Running, Some(a)) if a == wanted => Progress::Reached,
        (TabState::Starting | TabState::Running, _) => Progress::Waiting,
        (TabState::Exited, _) => Progress::Never("the agent's program exited"),
        (TabState::Refused, _) => {
            Progress::Never("the tab was refused by its sandbox check: its program never ran")
        }
    }
}

/// The state a waiter saw, in words: the agent's while its program runs,
/// else the program's.
pub fn seen(life: TabState, agent: Option<AgentState>) -> &'static str {
    match (life, agent) {
        (TabState::Running, Some(a)) => a.as_str(),
        (l, _) => l.as_str(),
    }
}

fn look(t: &Tab, until: Until) -> (Progress, &'static str) {
    let agent = t.agent_state();
    (
        progress(until, t.kind, t.state, agent),
        seen(t.state, agent),
    )
}

impl Core {
    /// Answer once tab `tab` is at `until`, or once `timeout` passed (with
    /// the state it was in), or at once when it can never get there.
    pub async fn wait_for(
        &self,
        tab: &str,
        until: Until,
        timeout: Option<Duration>,
    ) -> Result<Waited, ApiError> {
        // Subscribed before the first look: a change between the look and
        // the wait still wakes it.
        let mut changes = self.states.subscribe();
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        loop {
            let (progress, state) = {
                let state = self.state.lock().unwrap();
                let t = state.tabs.get(tab).ok_or_else(|| no_tab(tab))?;
                look(t, until)
            };
            let state = state.to_string();
            match progress {
                Progress::Reached => {
                    return Ok(Waited {
                        reached: true,
                        state,
                        never: None,
                    })
                }
                Progress::Never(why) => {
                    return Ok(Waited {
                        reached: false,
                        state,
                        never: Some(why.into()),
                    })
                }
                Progress::Waiting => {}
            }
            let timed_out = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                changed = changes.changed() => {
                    if changed.is_err() {
                        return Err(no_tab(tab));
                    }
                }
                () = timed_out => {
                    return Ok(Waited { reached: false, state, never: None });
                }
            }
        }
    }
}

/// Completes once the peer has closed its end of the connection (a `nerdr
/// wait` killed, or gone at its own timeout): the wait it asked for ends
/// with it instead of lingering until the tab changes. A peer that sent
/// more after its wait (bytes the connection's reader holds, or that wait
/// in the socket) keeps its wait while it stays connected, and loses it
/// when it hangs up: the kernel's hang-up (`EPOLLRDHUP`) is seen even with
/// unread bytes before it, so a program cannot leave waits (and their
/// descriptors) behind by closing after one more byte.
pub async fn hung_up(read: &tokio::net::unix::OwnedReadHalf) {
    use nix::sys::socket::{recv, MsgFlags};
    use std::os::fd::AsRawFd;
    use tokio::io::Interest;
    let stream: &tokio::net::UnixStream = read.as_ref();
    loop {
        let ready = match stream.ready(Interest::READABLE).await {
            Ok(r) => r,
            Err(_) => return,
        };
        if ready.is_read_closed() {
            return;
        }
        let mut byte = [0u8; 1];
        // `try_io` clears the readiness on `WouldBlock`, so this does not spin.
        let peeked = stream.try_io(Interest::READABLE, || {
            recv(
                stream.as_raw_fd(),
                &mut byte,
                MsgFlags::MSG_PEEK | MsgFlags::MSG_DONTWAIT,
            )
            .map_err(std::io::Error::from)
        });
        match peeked {
            Ok(0) => return,
            Ok(_) => {
                // Bytes wait and the peer is still there: sleep until the
                // next event on the socket (more bytes, or the hang-up).
                let _ = stream.try_io(Interest::READABLE, || {
                    Err::<(), _>(std::io::ErrorKind::WouldBlock.into())
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AgentState as A;
    use TabState as L;

    #[test]
    fn where_a_tab_stands() {
        let agent = TabKind::Agent;
        let term = TabKind::Terminal;
        let never = |s: &str| s.to_string();
        #[rustfmt::skip]
        type Row = (&'static str, Until, TabKind, TabState, Option<AgentState>, Result<bool, String>);
        let rows: &[Row] = &[
            (
                "blocked is reached when the running agent is blocked",
                Until::Blocked,
                agent,
                L::Running,
                Some(A::Blocked),
                Ok(true),
            ),
            (
                "a working agent is not yet idle",
                Until::Idle,
                agent,
                L::Running,
                Some(A::Working),
                Ok(false),
            ),
            (
                "unknown may still become done (a report)",
                Until::Done,
                agent,
                L::Running,
                Some(A::Unknown),
                Ok(false),
            ),
            (
                "a starting agent may still get there",
                Until::Working,
                agent,
                L::Starting,
                None,
                Ok(false),
            ),
            (
                "an exited agent never will",
                Until::Idle,
                agent,
                L::Exited,
                None,
                Err(never("the agent's program exited")),
            ),
            (
                "an exited program is what `exited` waits for",
                Until::Exited,
                agent,
                L::Exited,
                None,
                Ok(true),
            ),
            (
                "a terminal can be waited on to exit",
                Until::Exited,
                term,
                L::Exited,
                None,
                Ok(true),
            ),
            (
                "a running terminal is not exited yet",
                Until::Exited,
                term,
                L::Running,
                None,
                Ok(false),
            ),
            (
                "a terminal has no agent state",
                Until::Idle,
                term,
                L::Running,
                None,
                Err(never(
                    "the tab is a terminal: it has no agent state (only `exited`)",
                )),
            ),
            (
                "a refused tab never exits: it never ran",
                Until::Exited,
                agent,
                L::Refused,
                None,
                Err(never(
                    "the tab was refused by its sandbox check: its program never ran",
                )),
            ),
            (
                "a refused tab never works",
                Until::Working,
                agent,
                L::Refused,
                None,
                Err(never(
                    "the tab was refused by its sandbox check: its program never ran",
                )),
            ),
        ];
        for (sentence, until, kind, life, agent_state, want) in rows {
            let got = match progress(*until, *kind, *life, *agent_state) {
                Progress::Reached => Ok(true),
                Progress::Waiting => Ok(false),
                Progress::Never(why) => Err(why.to_string()),
            };
            assert_eq!(&got, want, "{sentence}");
        }
    }

    #[test]
    fn what_a_waiter_saw() {
        assert_eq!(seen(L::Running, Some(A::Working)), "working");
        assert_eq!(seen(L::Running, None), "running");
        assert_eq!(seen(L::Exited, Some(A::Idle)), "exited");
        assert_eq!(seen(L::Starting, None), "starting");
    }
}
