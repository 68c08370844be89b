//! The one thread that forks the holder's programs and re-executes it for
//! a hand-over: the process's main thread.
//!
//! Linux sends a program's parent-death signal (`PR_SET_PDEATHSIG`, what
//! `bwrap --die-with-parent` or `setpriv --pdeathsig` ask for) when the
//! *thread* that forked it ends, not the process; and an `exec` ends every
//! thread of the process but the one calling it, which stays (as the main
//! thread of the new image). Forking and re-executing on that same thread
//! keeps every program's parent thread alive through any number of
//! hand-overs, so no program is signalled by one.
//!
//! Only the holder serves here ([`serve`]); elsewhere (the core running
//! programs itself) [`on_main`] runs its work where it is called.

use std::sync::mpsc;
use std::sync::OnceLock;

type Job = Box<dyn FnOnce() + Send>;

enum Ask {
    Run(Job),
    /// The served work ended (or panicked): stop serving.
    Done,
}

static MAIN: OnceLock<mpsc::Sender<Ask>> = OnceLock::new();

/// Run `f` on the main thread when it serves, else right here; its result.
pub fn on_main<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::sync_channel(1);
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    match MAIN.get() {
        Some(main) => {
            if let Err(mpsc::SendError(Ask::Run(job))) = main.send(Ask::Run(job)) {
                job();
            }
        }
        None => job(),
    }
    rx.recv()
        .expect("the main thread dropped a job without running it")
}

/// Run `work` on a thread of its own, in `rt`'s context, while this (the
/// main) thread runs what [`on_main`] is given, until `work` returns.
pub fn serve<T: Send + 'static>(
    rt: tokio::runtime::Handle,
    work: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<T> {
    let (tx, rx) = mpsc::channel::<Ask>();
    let done = tx.clone();
    if MAIN.set(tx).is_err() {
        return Ok(work());
    }
    // Tokio's process and signal drivers are reached through the runtime
    // a spawn is made in.
    let _in_rt = rt.enter();
    // Tells this loop that `work` ended, even by a panic.
    struct Done(mpsc::Sender<Ask>);
    impl Drop for Done {
        fn drop(&mut self) {
            let _ = self.0.send(Ask::Done);
        }
    }
    let worker = std::thread::Builder::new()
        .name("holder".into())
        .spawn(move || {
            let _done = Done(done);
            work()
        })?;
    while let Ok(Ask::Run(job)) = rx.recv() {
        job();
    }
    match worker.join() {
        Ok(t) => Ok(t),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

#[cfg(test)]
mod tests {
    /// Which thread serves is the process's: the two tests must not run
    /// at once (while one serves, the other's work would go there).
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn without_a_main_thread_serving_work_runs_where_it_is_asked() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let here = std::thread::current().id();
        assert_eq!(super::on_main(move || std::thread::current().id()), here);
    }

    /// Serving ends as soon as the work does, every time (it once could
    /// wait forever when the work's end raced the check for it).
    #[test]
    fn serving_runs_jobs_on_this_thread_and_ends_with_the_work() {
        let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let here = std::thread::current().id();
        let (tx, rx) = std::sync::mpsc::channel();
        let served = super::serve(rt.handle().clone(), move || {
            let there = super::on_main(|| std::thread::current().id());
            tx.send(there).unwrap();
            7
        });
        assert_eq!(served.unwrap(), 7);
        assert_eq!(rx.recv().unwrap(), here);
    }
}
