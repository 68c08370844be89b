//! When a window that lost its connection tries again, and when it gives
//! up (pure, table-tested): [`step`].
//!
//! To this machine's core (`Carrier::Local`) the window tries again after
//! 50 ms, doubling up to 1 s: the core is back within a moment of a
//! restart or upgrade, and an attempt costs a connect. It gives up after
//! [`GIVE_UP`] without a core, after [`STOPPED_GIVE_UP`] when the sockets
//! were stopped (that is deliberate: `systemctl --user stop`), and at once
//! when the core answers but refuses it (another protocol version after an
//! upgrade: retrying cannot help).
//!
//! Over ssh (`Carrier::Ssh`) an attempt is a whole ssh login, and the
//! link is down for as long as the network is (a laptop suspended
//! overnight, a train's tunnel): 0.5 s doubling up to 10 s, and it never
//! gives up on a link that is down, since the agents there run on and the
//! person wants the window back when the network is. A refusal (the far
//! end's nerdr of another protocol, its core refusing the bridge, nerdr
//! gone from there) ends the window as it does locally.
//!
//! Once connected no timer runs, so an idle window costs no CPU.

use std::time::Duration;

/// What carries the window's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Carrier {
    /// This machine's client socket.
    Local,
    /// `ssh HOST nerdr bridge`.
    Ssh,
}

/// How long a window waits for this machine's core to come back.
pub const GIVE_UP: Duration = Duration::from_secs(60);
/// How long it waits when the socket units were stopped: a reinstall
/// restarts them within a moment, a `systemctl --user stop` is for good.
pub const STOPPED_GIVE_UP: Duration = Duration::from_secs(5);

/// Why an attempt to reach the core failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Nothing answers, or the connection broke: the core may come back.
    Down(String),
    /// The socket units are stopped (systemd units installed).
    Stopped(String),
    /// The core answered and refused this window: it will again.
    Refused(String),
}

impl Failure {
    pub fn why(&self) -> &str {
        match self {
            Failure::Down(w) | Failure::Stopped(w) | Failure::Refused(w) => w,
        }
    }
}

/// What the window does after a failed attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    RetryIn(Duration),
    /// Stop trying; the window ends with this reason.
    GiveUp(String),
}

/// The first wait after the connection drops, and the longest between
/// two attempts.
pub fn bounds(carrier: Carrier) -> (Duration, Duration) {
    match carrier {
        Carrier::Local => (Duration::from_millis(50), Duration::from_secs(1)),
        Carrier::Ssh => (Duration::from_millis(500), Duration::from_secs(10)),
    }
}

/// How long a link must have stayed up for its loss to start the backoff
/// afresh. A far end that welcomes and then drops at once (a broken core
/// there, a frame too large) would otherwise have the window log in twice
/// a second for ever, filling the server's auth log.
pub const STABLE: Duration = Duration::from_secs(10);

/// The first wait after a connection that was up for `up_for` dropped,
/// the last wait before it having been `last`: the shortest after a link
/// that held, else the next step of the backoff it came out of.
pub fn after_lost(carrier: Carrier, up_for: Duration, last: Duration) -> Duration {
    let (first, most) = bounds(carrier);
    if up_for >= STABLE {
        first
    } else {
        (last * 2).clamp(first, most)
    }
}

/// After an attempt over `carrier` failed with `failure`, `elapsed` into
/// the outage, having waited `delay` before it: try again (and when), or
/// give up.
pub fn step(carrier: Carrier, elapsed: Duration, delay: Duration, failure: &Failure) -> Step {
    let (first, most) = bounds(carrier);
    let next = (delay * 2).clamp(first, most);
    match (carrier, failure) {
        (_, Failure::Refused(why)) => Step::GiveUp(why.clone()),
        (Carrier::Local, Failure::Stopped(why)) if elapsed >= STOPPED_GIVE_UP => {
            Step::GiveUp(why.clone())
        }
        (Carrier::Local, Failure::Down(why)) if elapsed >= GIVE_UP => Step::GiveUp(format!(
            "no core came back within {} s: {why}",
            GIVE_UP.as_secs()
        )),
        (_, Failure::Stopped(_) | Failure::Down(_)) => Step::RetryIn(next),
    }
}

#[cfg(test)]
mod tests {
    use super::Carrier::{Local, Ssh};
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_link_that_drops_at_once_keeps_backing_off() {
        let s = Duration::from_secs;
        #[rustfmt::skip]
        let rows: &[(&str, Carrier, Duration, Duration, Duration)] = &[
            ("held a while: afresh", Ssh, s(3600), s(10), ms(500)),
            ("held just long enough", Ssh, STABLE, s(10), ms(500)),
            ("dropped at once after the first try", Ssh, ms(20), ms(500), s(1)),
            ("dropped at once, doubling", Ssh, ms(20), s(4), s(8)),
            ("dropped at once, capped", Ssh, ms(20), s(10), s(10)),
            ("never waited before", Ssh, ms(20), ms(0), ms(500)),
            ("local: afresh after a while", Local, s(60), s(1), ms(50)),
            ("local: dropped at once", Local, ms(5), ms(50), ms(100)),
        ];
        for (case, carrier, up_for, last, want) in rows {
            assert_eq!(after_lost(*carrier, *up_for, *last), *want, "{case}");
        }
    }

    #[test]
    fn every_failure_retries_with_a_bounded_backoff_or_gives_up() {
        let down = Failure::Down("connection refused".into());
        let stopped = Failure::Stopped("nerdr-client.socket is stopped".into());
        let refused = Failure::Refused("protocol 7 and 6".into());
        let hour = Duration::from_secs(3600);
        #[rustfmt::skip]
        let rows: &[(&str, Carrier, Duration, Duration, &Failure, Step)] = &[
            ("first retry doubles", Local, ms(50), ms(50), &down, Step::RetryIn(ms(100))),
            ("doubling", Local, ms(400), ms(200), &down, Step::RetryIn(ms(400))),
            ("capped at 1 s", Local, ms(3000), ms(800), &down, Step::RetryIn(ms(1000))),
            ("stays capped", Local, ms(30_000), ms(1000), &down, Step::RetryIn(ms(1000))),
            ("a zero delay starts at 50 ms", Local, ms(0), ms(0), &down, Step::RetryIn(ms(50))),
            ("down for the whole minute", Local, GIVE_UP, ms(1000), &down,
             Step::GiveUp("no core came back within 60 s: connection refused".into())),
            ("stopped, a moment", Local, ms(1000), ms(400), &stopped, Step::RetryIn(ms(800))),
            ("stopped for good", Local, STOPPED_GIVE_UP, ms(1000), &stopped,
             Step::GiveUp("nerdr-client.socket is stopped".into())),
            ("refused at once", Local, ms(0), ms(50), &refused,
             Step::GiveUp("protocol 7 and 6".into())),
            // Over ssh: half a second, doubling, at most ten.
            ("ssh: a zero delay starts at 0.5 s", Ssh, ms(0), ms(0), &down, Step::RetryIn(ms(500))),
            ("ssh: first retry doubles", Ssh, ms(500), ms(500), &down, Step::RetryIn(ms(1000))),
            ("ssh: doubling", Ssh, ms(3500), ms(2000), &down, Step::RetryIn(ms(4000))),
            ("ssh: 8 s to 10, not 16", Ssh, ms(15_500), ms(8000), &down, Step::RetryIn(ms(10_000))),
            ("ssh: stays capped", Ssh, ms(60_000), ms(10_000), &down, Step::RetryIn(ms(10_000))),
            ("ssh: down for an hour, still trying", Ssh, hour, ms(10_000), &down,
             Step::RetryIn(ms(10_000))),
            ("ssh: refused at once", Ssh, ms(0), ms(500), &refused,
             Step::GiveUp("protocol 7 and 6".into())),
        ];
        for (case, carrier, elapsed, delay, failure, want) in rows {
            assert_eq!(step(*carrier, *elapsed, *delay, failure), *want, "{case}");
        }
    }
}
