//! How often a bell sends a session's windows its tab list (pure).
//!
//! A bell changes nothing on the screen, only the tab's bell count in the
//! list, which the windows showing another tab mark. The list is the
//! whole session's, so a program that rings without pause (a sandboxed
//! one included) would otherwise send the whole list for every chunk of
//! its output: on a window over `--host` those lists fill ssh's channel
//! ahead of the paint, since the core's queue drains into the bridge at
//! once. So a bell's list goes at once when none went for
//! [`EVERY`], and otherwise once at the end of that time, carrying every
//! bell meanwhile. A window marks a tab's bell once until it shows the
//! tab, so nothing it shows waits longer than that.

use std::time::{Duration, Instant};

/// The least time between two bell-driven lists of a session.
pub const EVERY: Duration = Duration::from_secs(1);

/// A session's bell-driven lists: when the last went, and whether one is
/// owed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Throttle {
    pub last: Option<Instant>,
    pub owed: bool,
}

/// What to do about a bell now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnBell {
    /// Send the list now.
    Send,
    /// Owe it, and wake at this moment to send it.
    Owe(Instant),
    /// It is owed already: the wake to send it is set.
    Owed,
}

/// A bell rang in the session whose lists `t` records.
pub fn on_bell(t: Throttle, now: Instant) -> OnBell {
    match t.last {
        Some(last) if now < last + EVERY => match t.owed {
            true => OnBell::Owed,
            false => OnBell::Owe(last + EVERY),
        },
        _ => OnBell::Send,
    }
}

/// When the list owed in `t` goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owed {
    Nothing,
    Now,
    At(Instant),
}

/// Whether the list owed in `t` goes now, or when.
pub fn owed_due(t: Throttle, now: Instant) -> Owed {
    if !t.owed {
        return Owed::Nothing;
    }
    match t.last.map(|last| last + EVERY) {
        Some(at) if now < at => Owed::At(at),
        _ => Owed::Now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bell_sends_at_once_then_at_most_once_a_second() {
        let t0 = Instant::now();
        let ms = |n| t0 + Duration::from_millis(n);
        let sent = |at| Throttle {
            last: Some(at),
            owed: false,
        };
        let owed = |at| Throttle {
            last: Some(at),
            owed: true,
        };
        #[rustfmt::skip]
        let rows: &[(Throttle, Instant, OnBell)] = &[
            (Throttle::default(), t0, OnBell::Send),
            (sent(t0), ms(10), OnBell::Owe(ms(1000))),
            (owed(t0), ms(500), OnBell::Owed),
            (sent(t0), ms(1000), OnBell::Send),
            (owed(t0), ms(1500), OnBell::Send),
        ];
        for (t, now, want) in rows {
            assert_eq!(on_bell(*t, *now), *want, "{t:?} at {:?}", *now - t0);
        }
        #[rustfmt::skip]
        let due: &[(Throttle, Instant, Owed)] = &[
            (sent(t0), ms(10), Owed::Nothing),
            (owed(t0), ms(10), Owed::At(ms(1000))),
            (owed(t0), ms(1000), Owed::Now),
            (Throttle { last: None, owed: true }, t0, Owed::Now),
        ];
        for (t, now, want) in due {
            assert_eq!(owed_due(*t, *now), *want, "{t:?}");
        }
    }
}
