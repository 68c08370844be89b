//! A program's output as the core takes it in: the tab's one screen model
//! and its output log are fed, and what the program asked of its terminal
//! (device attributes, cursor position, ...) is answered by the model, as
//! the process that owns it, and written back to the program.

use super::state::Tab;
use crate::host::Host;

/// Feed `bytes` to `t`'s screen and log; the answers to the queries in
/// them, for [`answer`] once the state lock is dropped.
pub fn take_in(t: &mut Tab, bytes: &[u8]) -> Vec<u8> {
    t.screen.process(bytes);
    t.log.push(bytes);
    t.screen.take_replies()
}

/// Write the model's answers to tab `tab`'s program, in order with typed
/// input, on the host (which drops them when the program reads nothing:
/// `host::input`); nothing when there are none.
pub fn answer(host: &dyn Host, tab: &str, replies: Vec<u8>) {
    if !replies.is_empty() {
        host.answer(tab, replies);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use tokio::sync::oneshot;

    use super::*;
    use crate::host::{HostError, SpawnSpec, Spawned};

    /// Records what is written; nothing else is asked of it here.
    #[derive(Default)]
    struct Written(Mutex<Vec<(String, Vec<u8>)>>);

    impl Host for Written {
        fn spawn(&self, _: SpawnSpec) -> oneshot::Receiver<Result<Spawned, HostError>> {
            unreachable!()
        }
        fn write(&self, _: &str, _: Vec<u8>) -> Result<(), HostError> {
            unreachable!("answers are not typed input")
        }
        fn answer(&self, tab: &str, bytes: Vec<u8>) {
            self.0.lock().unwrap().push((tab.to_string(), bytes));
        }
        fn resize(&self, _: &str, _: u16, _: u16) -> Result<(), HostError> {
            unreachable!()
        }
        fn stop(&self, _: &str) -> oneshot::Receiver<()> {
            unreachable!()
        }
        fn forget(&self, _: &str) {}
        fn mode(&self) -> String {
            String::new()
        }
        fn snapshot(&self, _: &str, _: u64, _: u16, _: u16, _: Vec<u8>) {}
        fn programs_end_with_core(&self) -> bool {
            false
        }
    }

    #[test]
    fn answers_go_to_the_program_that_asked_and_silence_writes_nothing() {
        let host = Written::default();
        answer(&host, "ab12", Vec::new());
        assert!(host.0.lock().unwrap().is_empty());
        // A primary device attributes answer, as the model would give it.
        answer(&host, "ab12", b"\x1b[?62;22c".to_vec());
        answer(&host, "cd34", b"\x1b[5;1R".to_vec());
        assert_eq!(
            *host.0.lock().unwrap(),
            [
                ("ab12".to_string(), b"\x1b[?62;22c".to_vec()),
                ("cd34".to_string(), b"\x1b[5;1R".to_vec()),
            ]
        );
    }

    #[test]
    fn output_feeds_the_screen_and_the_log() {
        let saved = serde_json::from_value(serde_json::json!({
            "id": "ab12", "folder": "/w", "agent": "sh", "command": ["sh"], "sandboxed": false,
            "state": "running", "pid": null, "start_time": null, "exit_code": null,
        }))
        .unwrap();
        let mut t = Tab::from_saved(saved, 24, 80);
        let replies = take_in(&mut t, b"hello\r\nworld");
        assert!(replies.is_empty(), "no query asked, none answered");
        assert_eq!(t.screen.text(None), "hello\nworld");
        assert_eq!(t.log.lines(), ["hello", "world"]);
    }
}
