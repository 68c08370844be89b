//! vttest in a nerdr tab against vttest in a tmux pane, 24 x 80, driven by
//! the same keys, every screen compared (`support::twin`). vttest asks the
//! terminal's primary device attributes at start and waits for them; the
//! operating level it shows in menu 12 comes from that answer and decides
//! which screens follow, so menu 12 is compared first.
//!
//! Menus as vttest 2.7 has them: 1 cursor movements, 2 screen features, 3
//! character sets, 8 VT102 insert/delete, 6 terminal reports (3 DSR, 4 DA1,
//! 5 DA2), 11 non-VT100: 11.5 ISO-6429 cursor movement, 11.6 colours (2-5;
//! 6 on are menus of their own), 11.7 REP and scrolling, 11.8.7 xterm's
//! alternate screens (3-5). Each item shows screens that say "Push
//! <RETURN>", then its menu again. Left out because tmux 3.3a fails them
//! (so it is no reference there): 11.5.4 CHT and 11.5.5 HPR, which it
//! ignores (`fidelity.rs` checks CHT against the right row), and 11.7.4/5
//! SL/SR. Where tmux fails a check inside an item (1.3-4 BS at the right
//! margin, 2.11 DECSTBM's home in origin mode, 11.5.9 VPR, 11.8.7.3-5
//! saved cursors), its screen is corrected to what vttest asks for
//! ([`tmux_fixed`]) and nerdr must show that. vttest runs as `24x80.80`:
//! no 132-column screens, which tmux ignores and a window cannot give
//! (DECCOLM clears the screen in both). A screen that differs is kept and
//! the walk goes on (tmux's screens drive it); the test then fails naming
//! every such screen, the first three in full, and stops early after five
//! in a row.

use std::time::{Duration, Instant};

use crate::suites::fidelity::{have, twin_env};
use crate::support::twin::{describe_difference, side_by_side, Capture, Twin};

/// Screens that differ in a row before vttest is taken to have gone its
/// own way in the window (each costs the comparison's patience).
const GIVE_UP_AFTER: usize = 5;

/// The walk through vttest's menus: every screen compared, every
/// difference kept, the walk driven by what tmux shows.
struct Walk<'t, 'e> {
    twin: &'t Twin<'e>,
    differences: Vec<(String, String)>,
    in_a_row: usize,
}

impl Walk<'_, '_> {
    fn compare(&mut self, what: String) -> Capture {
        self.compare_fixed(what, &|_| {})
    }

    /// [`Self::compare`] against tmux's screen as `fix` corrects it.
    fn compare_fixed(&mut self, what: String, fix: &dyn Fn(&mut Capture)) -> Capture {
        match self
            .twin
            .compare_like_within(&what, Duration::from_secs(6), fix)
        {
            Ok(shown) => {
                self.in_a_row = 0;
                shown
            }
            Err(why) => {
                eprintln!("{why}\n");
                self.differences.push((what, why));
                self.in_a_row += 1;
                if self.in_a_row >= GIVE_UP_AFTER {
                    self.fail();
                }
                self.twin.settled_direct("vttest")
            }
        }
    }

    /// At a menu: choose `item`, compare each screen, Enter after each,
    /// until a menu shows again (compared too).
    fn item(&mut self, path: &str, item: &str) {
        self.twin.keys(&[item, "Enter"]);
        for screen in 1..=30 {
            let shown = self.compare_fixed(
                format!("vttest {path}, screen {screen}"),
                &|c: &mut Capture| tmux_fixed(path, screen, c),
            );
            if shown
                .text()
                .iter()
                .any(|l| l.contains("Enter choice number"))
            {
                return;
            }
            self.twin.keys(&["Enter"]);
        }
        panic!("vttest {path}: no menu after 30 screens");
    }

    /// A report whose numbers are the terminal's identity (nerdr need not
    /// be a tmux): the window must show a report of the same form, not
    /// the same numbers.
    fn identity_item(&mut self, path: &str, item: &str, form: &str) {
        self.twin.keys(&[item, "Enter"]);
        let tmux = self.twin.settled_direct(path);
        assert!(
            tmux.text().iter().any(|l| l.contains(form)),
            "vttest {path}: tmux shows no {form:?}:\n{}",
            tmux.text().join("\n")
        );
        let end = Instant::now() + Duration::from_secs(6);
        loop {
            let (_, nerdr) = self.twin.capture();
            if nerdr.text().iter().any(|l| l.contains(form)) {
                break;
            }
            if Instant::now() > end {
                self.differences.push((
                    format!("vttest {path}"),
                    format!(
                        "vttest {path}: nerdr's window shows no report of the form {form:?} \
                         (the terminal's answer never reached vttest)\n{}",
                        side_by_side(&tmux.text(), &nerdr.text(), &[])
                    ),
                ));
                break;
            }
            std::thread::sleep(Duration::from_millis(150));
        }
        self.twin.keys(&["Enter"]);
        self.compare(format!("vttest {path}, back at its menu"));
    }

    /// Every difference: the screens' names, then the first three in full.
    fn fail(&self) -> ! {
        let names: Vec<&str> = self.differences.iter().map(|(n, _)| n.as_str()).collect();
        let shown: Vec<&str> = self
            .differences
            .iter()
            .take(3)
            .map(|(_, d)| d.as_str())
            .collect();
        let stopped = if self.in_a_row >= GIVE_UP_AFTER {
            format!(" (stopped after {GIVE_UP_AFTER} in a row)")
        } else {
            String::new()
        };
        panic!(
            "{} vttest screens differ between nerdr's window and tmux{stopped}:\n  {}\n\n{}",
            names.len(),
            names.join("\n  "),
            shown.join("\n\n")
        );
    }
}

/// Where tmux 3.3a fails vttest's own check, the screen a VT100 (and
/// xterm, and the emulator) shows, made from tmux's: nerdr keeps the right
/// behaviour there rather than tmux's.
fn tmux_fixed(path: &str, screen: usize, c: &mut Capture) {
    match (path, screen) {
        // BS at the right margin: tmux goes back from its pending wrap to
        // the last column, not the one before, so `B ESC[19;80H B BS
        // space b` splits each such pair over two rows. A VT shows every
        // pair on one row, I to Z in the 18 rows above the blank bottom
        // of the region.
        ("1 cursor movements", 3 | 4) => {
            for (row, upper) in c.rows[2..20].iter_mut().zip('I'..='Z') {
                let lower = upper.to_ascii_lowercase();
                *row = format!("{upper}{}{lower}", " ".repeat(78));
            }
        }
        // DECSTBM homes the cursor to the screen's top-left in tmux, not
        // to the region's (rows 23-24) in origin mode: the first line goes
        // to row 2 instead of the bottom.
        ("2 screen features", 11) => {
            let first = std::mem::take(&mut c.rows[1]);
            c.rows[23] = first;
        }
        // tmux ignores VPR (`CSI Ps e`): of the box of *'s only the top is
        // drawn. A VT draws its sides (columns 20 and 59) and bottom (row
        // 18, as the top).
        ("11.5.9", _) if c.text()[5].trim() == "*".repeat(40) => {
            let side = format!("{}*{}*", " ".repeat(19), " ".repeat(38));
            for row in &mut c.rows[6..17] {
                *row = side.clone();
            }
            c.rows[17] = c.rows[5].clone();
        }
        // tmux keeps one saved cursor for both screens (47, 1047) and
        // none for 1048, and restores 1049's save apart from DECSC's:
        // vttest reports it on a row of its own.
        (p, _) if p.starts_with("11.8.7.") => {
            let text = c.text();
            for (row, text) in c.rows.iter_mut().zip(text) {
                if text.starts_with("cursor save/restore failed") {
                    *row = "cursor save/restore ok".into();
                }
            }
        }
        _ => {}
    }
}

#[test]
fn fidelity_vttest_screens_match_tmux() {
    let Some(env) = twin_env() else { return };
    if !have("vttest") {
        return;
    }
    let twin = Twin::start(&env, 24, 80, "vttest 24x80.80; exec sleep 600");
    let (tmux, nerdr) = (twin.settled_direct("vttest's menu"), twin.capture().1);
    if tmux != nerdr {
        // Once more with the usual patience, for the message.
        let end = Instant::now() + Duration::from_secs(6);
        let mut nerdr = nerdr;
        while nerdr != tmux && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(150));
            nerdr = twin.capture().1;
        }
        assert!(
            nerdr == tmux,
            "vttest's first menu: it asks the terminal's device attributes (ESC[c) and \
             waits for the answer before drawing anything\n{}",
            describe_difference(&tmux, &nerdr)
        );
    }
    let mut walk = Walk {
        twin: &twin,
        differences: Vec::new(),
        in_a_row: 0,
    };
    walk.item(
        "menu 12, whose operating level vttest reads from the DA1 answer (tmux: ESC[?1;2c, a \
         VT100 with AVO; another level changes which screens follow)",
        "12",
    );
    walk.item("back from menu 12", "0");
    for (n, name) in [
        ("1", "1 cursor movements"),
        ("2", "2 screen features"),
        ("3", "3 character sets"),
        ("8", "8 VT102 insert/delete"),
    ] {
        walk.item(name, n);
    }
    walk.item("menu 6", "6");
    walk.item("6.3 DSR", "3");
    walk.identity_item("6.4 DA1", "4", "Report is: <27> [ ?");
    walk.identity_item("6.5 DA2", "5", "<27> [ >");
    walk.item("back from menu 6", "0");
    walk.item("menu 11", "11");
    let menus: [(&str, &[&str]); 3] = [
        ("5", &["1", "2", "3", "6", "7", "8", "9"]),
        ("6", &["2", "3", "4", "5"]),
        ("7", &["2", "3", "6"]),
    ];
    for (menu, items) in menus {
        walk.item(&format!("menu 11.{menu}"), menu);
        for i in items {
            walk.item(&format!("11.{menu}.{i}"), i);
        }
        walk.item(&format!("back from menu 11.{menu}"), "0");
    }
    walk.item("menu 11.8", "8");
    walk.item("menu 11.8.7", "7");
    for i in ["3", "4", "5"] {
        walk.item(&format!("11.8.7.{i}"), i);
    }
    walk.item("back from menu 11.8.7", "0");
    walk.item("back from menu 11.8", "0");
    walk.item("back from menu 11", "0");
    if !walk.differences.is_empty() {
        walk.fail();
    }
}
