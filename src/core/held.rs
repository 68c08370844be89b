//! The core's one lock, and the rule that goes with it: nothing waits on
//! I/O while it is held (docs/ARCHITECTURE.md, "One owner of the core's
//! state").
//!
//! [`OneLock::lock`] is shaped like `Mutex::lock`, so call sites read the
//! same. Two things hold the rule:
//! - [`Held`] is not `Send` (a `MutexGuard` inside), so a spawned task
//!   cannot keep it across an `.await`: the compiler refuses.
//! - The thread that holds it is marked. Effects and fact gathering call
//!   [`assert_unlocked`] first, and taking the lock twice on one thread
//!   (which would deadlock) is caught the same way. Both checks are debug
//!   assertions: the test suite, which runs the debug binary, fails on a
//!   slip; a release build pays nothing.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, PoisonError};

thread_local! {
    static HELD: Cell<bool> = const { Cell::new(false) };
}

pub struct OneLock<T>(Mutex<T>);

/// The state, held: no I/O and no `.await` until it drops.
pub struct Held<'a, T>(MutexGuard<'a, T>);

impl<T> OneLock<T> {
    pub fn new(value: T) -> Self {
        OneLock(Mutex::new(value))
    }

    /// Poisoned when a holder panicked, as a `Mutex` is.
    pub fn lock(&self) -> Result<Held<'_, T>, PoisonError<()>> {
        debug_assert!(
            !HELD.get(),
            "the core's state lock taken again on the thread that holds it"
        );
        let guard = self.0.lock().map_err(|_| PoisonError::new(()))?;
        HELD.set(true);
        Ok(Held(guard))
    }
}

impl<T> Drop for Held<'_, T> {
    fn drop(&mut self) {
        HELD.set(false);
    }
}

impl<T> Deref for Held<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for Held<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// Called by every effect and fact gatherer of the core before it does
/// I/O: `what` names it in the panic a slip causes in a debug build.
pub fn assert_unlocked(what: &str) {
    debug_assert!(
        !HELD.get(),
        "{what} while the core's state lock is held: gather facts before taking it, act after dropping it"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_marks_its_thread_until_it_drops() {
        let lock = OneLock::new(1);
        assert!(!HELD.get());
        {
            let mut held = lock.lock().unwrap();
            *held += 1;
            assert!(HELD.get());
            // Another thread is not marked by this one's lock.
            std::thread::spawn(|| assert!(!HELD.get())).join().unwrap();
        }
        assert!(!HELD.get());
        assert_eq!(*lock.lock().unwrap(), 2);
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "while the core's state lock is held")]
    fn io_under_the_lock_is_caught() {
        let lock = OneLock::new(());
        let _held = lock.lock().unwrap();
        assert_unlocked("writing a file");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "taken again")]
    fn taking_the_lock_twice_on_one_thread_is_caught_not_a_hang() {
        let lock = OneLock::new(());
        let _held = lock.lock().unwrap();
        let _again = lock.lock();
    }
}
