//! A restart (or a switch) stops a tab's program and starts the next one
//! in the same tab before the old one's exit is reported (the holder
//! reports it over its socket): that late exit must not end the new one.

use std::time::Duration;

use crate::support::local::Local;

#[test]
fn the_old_programs_late_exit_does_not_end_the_restarted_one() {
    let l = Local::started();
    l.write_config("[agents.sh]\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n");
    let tab = l.ok(&["agent", "sh"]);
    l.wait_screen(&tab, "bash");
    for round in 0..8 {
        // A program that writes a lot as it goes: its output is ahead of
        // its exit in the holder's queue, so the stop's reply overtakes it.
        l.ok(&["send", &tab, "trap 'seq 1 200000; exit' HUP; echo trap-set"]);
        l.wait_screen(&tab, "trap-set");
        l.ok(&["restart", "--force", &tab]);
        l.wait_screen(&tab, "bash");
        // Long enough for the old program's exit to come through.
        std::thread::sleep(Duration::from_millis(300));
        let row = l
            .tabs_json(&[])
            .into_iter()
            .find(|t| t["id"] == tab.as_str())
            .expect("the tab");
        assert_eq!(
            row["state"], "running",
            "round {round}: the restarted program reads as ended: {row}"
        );
        let out = l.run(&["send", &tab, &format!("echo round-{round}-done")]);
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        l.wait_screen(&tab, &format!("round-{round}-done"));
    }
}
