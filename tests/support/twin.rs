//! One program, two terminals: a tab of nerdr shown by a real window in a
//! tmux pane, and a tmux pane of its own, each in a tmux server run as the
//! test user of a [`SystemdEnv`] ([`UserTmux`]). The direct pane
//! is `rows` x `cols`; the window's pane has one row more, its status line,
//! so the tab gets the same size. Both get the same keys; a comparison
//! waits for the direct pane to settle, then for the window to show the
//! same cells (text and attributes as `tmux capture-pane -e -N` re-encodes
//! them, so equal cells give equal lines), the same cursor position and
//! the same input-visible modes, and on a mismatch prints both side by
//! side from the first differing row.
//!
//! What is normalised, because it is how a cell was written and not what
//! the program drew: blanks at a line's end in default attributes or with
//! only a background (a written space and a cleared cell look the same;
//! `-N` tells them apart, and tmux 3.3a captures a cell cleared in a
//! colour only when something was written there before, so what the same
//! screen captures as depends on what each pane showed earlier), and DEC
//! special graphics, which tmux keeps as the ASCII letter marked
//! with SO/SI while an emulator may store the glyph it means.
//!
//! Not compared, because tmux 3.3a does not expose them: the cursor's
//! shape (DECSCUSR), bracketed paste and focus reporting. Not compared
//! either: the pane's own alternate-screen, origin, wrap and insert flags
//! and scroll region, which are how the window paints, not the program's.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::sysenv::{run_ok, SystemdEnv};
use super::user_tmux::UserTmux;

/// What a person sees of a pane, program-side: what tmux exposes of the
/// modes a program sets for its input, and the cursor.
const MODES: &str = "cursor=#{cursor_x},#{cursor_y} visible=#{cursor_flag} \
    keypad_cursor=#{keypad_cursor_flag} keypad=#{keypad_flag} \
    mouse=#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}\
    #{mouse_sgr_flag}#{mouse_utf8_flag}";

/// How long the direct pane must stay unchanged to count as settled.
const SETTLED: Duration = Duration::from_millis(700);

/// One capture of a pane: its rows (normalised, with escapes) and the
/// cursor and mode line.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Capture {
    pub rows: Vec<String>,
    pub modes: String,
}

impl Capture {
    /// The rows without escapes, as a person reads them.
    pub fn text(&self) -> Vec<String> {
        self.rows.iter().map(|r| strip_escapes(r)).collect()
    }
}

pub struct Twin<'a> {
    pub env: &'a SystemdEnv,
    /// The window's pane (`rows` + 1 high).
    pub tmux: UserTmux<'a>,
    /// The program's own pane.
    pub direct: UserTmux<'a>,
    pub rows: u16,
    pub cols: u16,
    /// The nerdr tab running the program.
    pub tab: String,
    pub dir: PathBuf,
}

/// The shell line both terminals run: it waits, silently, for an Enter
/// (typed once the window shows the tab, so the program's output goes
/// through a live window) and for its size, then becomes `cmd`.
fn gated(cmd: &str, rows: u16, cols: u16) -> String {
    format!(
        "stty -echo; IFS= read -r _; stty echo; i=0; \
         while [ \"$(stty size)\" != \"{rows} {cols}\" ] && [ $i -lt 100 ]; \
         do sleep 0.05; i=$((i+1)); done; export TERM=xterm-256color; {cmd}"
    )
}

/// Single quotes for sh.
pub fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl<'a> Twin<'a> {
    /// Installed units, then `cmd` (a shell line) in a nerdr tab of `dir`'s
    /// session shown by a window, and in a direct tmux pane; both started
    /// once the window shows the tab.
    pub fn start(env: &'a SystemdEnv, rows: u16, cols: u16, cmd: &str) -> Twin<'a> {
        let dir = env.home().join("work");
        env.write_user_file("work/.keep", "");
        env.run(&["nerdr", "service", "install"]);
        let line = gated(cmd, rows, cols);
        let folder = dir.to_str().unwrap();
        let mut agent = env.user_cmd(&[
            "nerdr",
            "agent",
            "--folder",
            folder,
            "--no-worktree",
            "--",
            "sh",
            "-c",
            &line,
        ]);
        agent.env("TERM", "xterm-256color").current_dir(&dir);
        let out = run_ok(&mut agent);
        let tab = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let tmux = UserTmux::start(env, &dir, cols, rows + 1, "nerdr");
        let direct = UserTmux::start_on(
            env,
            "direct.sock",
            &dir,
            cols,
            rows,
            &format!("sh -c {}", sh_quote(&line)),
        );
        let t = Twin {
            env,
            tmux,
            direct,
            rows,
            cols,
            tab,
            dir,
        };
        t.wait_window_shows_tab();
        t.keys(&["Enter"]);
        t
    }

    /// Wait until the window's status line shows tab 1 (the window runs).
    pub fn wait_window_shows_tab(&self) {
        self.tmux.wait_within(
            "the window showing tab 1 on its status line",
            Duration::from_secs(30),
            |s| s.last().is_some_and(|l| l.contains("1:")),
        );
    }

    /// Keys (tmux names or literal words) to both terminals.
    pub fn keys(&self, keys: &[&str]) {
        self.direct.keys(keys);
        self.tmux.keys(keys);
    }

    /// Keys to the window only.
    pub fn keys_window(&self, keys: &[&str]) {
        self.tmux.keys(keys);
    }

    /// Both panes: (direct, window).
    pub fn capture(&self) -> (Capture, Capture) {
        (self.capture_of(&self.direct), self.capture_of(&self.tmux))
    }

    /// The first `rows` rows of a pane, then its cursor and modes, in one
    /// tmux call.
    fn capture_of(&self, pane: &UserTmux) -> Capture {
        let last = (self.rows - 1).to_string();
        let out = pane.run(&[
            "capture-pane",
            "-p",
            "-e",
            "-N",
            "-t",
            "0",
            "-S",
            "0",
            "-E",
            &last,
            ";",
            "display",
            "-p",
            "-t",
            "0",
            MODES,
        ]);
        parse_capture(&String::from_utf8_lossy(&out.stdout))
    }

    /// Wait until the direct pane settles, then until the window shows
    /// the same; fail with both side by side after `lag`.
    pub fn assert_same_within(&self, what: &str, lag: Duration) -> Capture {
        self.assert_like_within(what, lag, &|_| {})
    }

    /// [`Self::assert_same_within`] against tmux's screen as `fix`
    /// corrects it, where tmux is known to draw it wrong.
    pub fn assert_like_within(
        &self,
        what: &str,
        lag: Duration,
        fix: &dyn Fn(&mut Capture),
    ) -> Capture {
        self.compare_like_within(what, lag, fix)
            .unwrap_or_else(|why| panic!("{why}"))
    }

    /// [`Self::assert_like_within`] that returns the failure's message
    /// (`Err`) or tmux's screen as fixed (`Ok`), for a test that reports
    /// more than this difference.
    pub fn compare_like_within(
        &self,
        what: &str,
        lag: Duration,
        fix: &dyn Fn(&mut Capture),
    ) -> Result<Capture, String> {
        let mut direct = self.settled_direct(what);
        let seen = direct.clone();
        fix(&mut direct);
        let end = Instant::now() + lag;
        loop {
            let (now_direct, window) = self.capture();
            if now_direct != seen {
                // Still changing after all (a slow program): start over.
                return self.compare_like_within(what, lag, fix);
            }
            if window == direct {
                return Ok(direct);
            }
            if Instant::now() > end {
                return Err(format!(
                    "{what}: nerdr's window does not show what tmux shows ({}x{}, {lag:?} after \
                     tmux settled)\n{}",
                    self.cols,
                    self.rows,
                    describe_difference(&direct, &window)
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn assert_same(&self, what: &str) -> Capture {
        self.assert_same_within(what, Duration::from_secs(6))
    }

    /// The direct pane once it stayed the same for [`SETTLED`].
    pub fn settled_direct(&self, what: &str) -> Capture {
        let give_up = Instant::now() + Duration::from_secs(60);
        let mut last = self.capture().0;
        let mut since = Instant::now();
        loop {
            std::thread::sleep(Duration::from_millis(120));
            let now = self.capture().0;
            if now != last {
                last = now;
                since = Instant::now();
            } else if since.elapsed() >= SETTLED {
                return last;
            }
            assert!(
                Instant::now() < give_up,
                "{what}: the direct tmux pane never settled; last:\n{}",
                last.text().join("\n")
            );
        }
    }

    /// Wait until both panes show `needle`; fails showing both.
    pub fn wait_both(&self, needle: &str, timeout: Duration) -> (Capture, Capture) {
        let end = Instant::now() + timeout;
        loop {
            let (d, w) = self.capture();
            let has = |c: &Capture| c.text().iter().any(|l| l.contains(needle));
            if has(&d) && has(&w) {
                return (d, w);
            }
            if Instant::now() > end {
                panic!(
                    "{needle:?} did not show in both panes within {timeout:?} (tmux: {}, \
                     nerdr: {})\n{}",
                    has(&d),
                    has(&w),
                    side_by_side(&d.text(), &w.text(), &[])
                );
            }
            std::thread::sleep(Duration::from_millis(150));
        }
    }

    /// Start the window again in its pane (after it was detached).
    pub fn respawn_window(&self, cmd: &str) {
        let script = format!(
            "cd {} && {cmd}; echo EXITED=$?; sleep 600",
            self.dir.display()
        );
        self.tmux.run(&["respawn-pane", "-k", "-t", "0", &script]);
    }

    /// `nerdr read TAB` as the test user.
    pub fn nerdr_read(&self) -> String {
        let out = self.env.run(&["nerdr", "read", &self.tab]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// A program file for [`Twin::start`]: `bytes` written to
/// `HOME/prog/name`; returns its path.
pub fn program(env: &SystemdEnv, name: &str, bytes: &[u8]) -> PathBuf {
    env.write_user_file(Path::new("prog").join(name), bytes)
}

fn parse_capture(text: &str) -> Capture {
    let mut lines: Vec<&str> = text.lines().collect();
    let modes = lines.pop().unwrap_or_default().to_string();
    Capture {
        rows: normalise(&lines),
        modes,
    }
}

/// The normalisation the module docs describe: each row re-encoded on its
/// own (tmux carries attributes from one row's end into the next row's
/// escapes), from the attributes of each cell.
pub fn normalise(lines: &[&str]) -> Vec<String> {
    let mut sgr = Sgr::default();
    let mut graphics = false;
    lines
        .iter()
        .map(|line| {
            let mut cells: Vec<(char, String, bool)> = Vec::new();
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\x0e' => graphics = true,
                    '\x0f' => graphics = false,
                    '\x1b' => {
                        let mut seq = String::new();
                        for n in chars.by_ref() {
                            if n.is_ascii_alphabetic() {
                                if n == 'm' {
                                    sgr.apply(seq.trim_start_matches('['));
                                }
                                break;
                            }
                            seq.push(n);
                        }
                    }
                    c => {
                        let c = if graphics { dec_graphic(c) } else { c };
                        cells.push((c, sgr.key(), sgr.background_only()));
                    }
                }
            }
            while cells.last().is_some_and(|(c, _, bg)| *c == ' ' && *bg) {
                cells.pop();
            }
            let mut out = String::new();
            let mut now = String::new();
            for (c, a, _) in cells {
                if a != now {
                    out.push_str(&format!(
                        "\x1b[0{}{a}m",
                        if a.is_empty() { "" } else { ";" }
                    ));
                    now = a;
                }
                out.push(c);
            }
            if !now.is_empty() {
                out.push_str("\x1b[0m");
            }
            out
        })
        .collect()
}

/// Cell attributes as tmux's escapes set them: one value per slot.
#[derive(Default)]
struct Sgr {
    slots: std::collections::BTreeMap<String, String>,
}

impl Sgr {
    fn apply(&mut self, params: &str) {
        let words: Vec<&str> = params.split(';').collect();
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            let head = w.split(':').next().unwrap_or("");
            // `38;5;N` and `38;2;R;G;B` take the words after them.
            let extended = |i: &mut usize| {
                let n = match (w.contains(':'), words.get(*i + 1)) {
                    (false, Some(&"5")) => 2,
                    (false, Some(&"2")) => 4,
                    _ => 0,
                };
                let end = (*i + 1 + n).min(words.len());
                let v = words[*i..end].join(";");
                *i = end - 1;
                v
            };
            match head {
                "" | "0" => self.slots.clear(),
                "38" | "48" | "58" => {
                    let slot = ["fg", "bg", "ul"][usize::from(head.as_bytes()[0] - b'3')];
                    let v = extended(&mut i);
                    self.slots.insert(slot.into(), v);
                }
                "39" => drop(self.slots.remove("fg")),
                "49" => drop(self.slots.remove("bg")),
                "59" => drop(self.slots.remove("ul")),
                "22" => {
                    self.slots.remove("1");
                    self.slots.remove("2");
                }
                // 23 ends 3 (italic), 24 ends 4, ...
                "23" | "24" | "25" | "27" | "28" | "29" => drop(self.slots.remove(&head[1..])),
                h => {
                    let slot = match h.parse::<u16>().unwrap_or(0) {
                        30..=37 | 90..=97 => "fg".to_string(),
                        40..=47 | 100..=107 => "bg".to_string(),
                        n => n.to_string(),
                    };
                    self.slots.insert(slot, w.to_string());
                }
            }
            i += 1;
        }
    }

    /// Whether no attribute but a background is set (or none).
    fn background_only(&self) -> bool {
        self.slots.keys().all(|k| k == "bg")
    }

    /// The attributes as one canonical SGR parameter list ("" for none).
    fn key(&self) -> String {
        self.slots.values().cloned().collect::<Vec<_>>().join(";")
    }
}

/// The glyph a DEC special graphics letter stands for (`_` is a blank:
/// tmux 3.3a keeps the `_` and draws it as one, a VT100 and the emulator
/// draw a blank).
fn dec_graphic(c: char) -> char {
    const FROM: &str = "_`abcdefghijklmnopqrstuvwxyz{|}~";
    const TO: &str = " ◆▒␉␌␍␊°±␤␋┘┐┌└┼⎺⎻─⎼⎽├┤┴┬│≤≥π≠£·";
    FROM.chars()
        .position(|f| f == c)
        .and_then(|i| TO.chars().nth(i))
        .unwrap_or(c)
}

pub fn strip_escapes(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for n in chars.by_ref() {
                if n.is_ascii_alphabetic() {
                    break;
                }
            }
        } else if c != '\x0e' && c != '\x0f' {
            out.push(c);
        }
    }
    out
}

/// Both screens side by side (plain text, `|` at each edge), the rows in
/// `marked` flagged with `>>`.
pub fn side_by_side(left: &[String], right: &[String], marked: &[usize]) -> String {
    side_by_side_as(("tmux", "nerdr"), left, right, marked)
}

/// [`side_by_side`] under other headings.
pub fn side_by_side_as(
    (left_name, right_name): (&str, &str),
    left: &[String],
    right: &[String],
    marked: &[usize],
) -> String {
    let width = left.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut out = format!("     {left_name:width$}   {right_name}\n");
    for i in 0..left.len().max(right.len()) {
        let l = left.get(i).map(String::as_str).unwrap_or("~");
        let r = right.get(i).map(String::as_str).unwrap_or("~");
        let flag = if marked.contains(&i) { ">>" } else { "  " };
        let pad = width - l.chars().count().min(width);
        out.push_str(&format!("{flag}{i:2} |{l}{}| |{r}|\n", " ".repeat(pad)));
    }
    out
}

/// The report of a mismatch: the first differing row in full (escapes
/// shown), the cursor and modes, and both screens side by side.
pub fn describe_difference(direct: &Capture, window: &Capture) -> String {
    let differ: Vec<usize> = (0..direct.rows.len().max(window.rows.len()))
        .filter(|&i| direct.rows.get(i) != window.rows.get(i))
        .collect();
    let shown = |c: &Capture, i: usize| {
        c.rows
            .get(i)
            .map_or("<none>".into(), |r| r.replace('\x1b', "␛"))
    };
    let mut out = String::new();
    match differ.first() {
        Some(&i) => out.push_str(&format!(
            "rows that differ: {differ:?}; the first, row {i}, with its escapes:\n  tmux:  \
             {}\n  nerdr: {}\n",
            shown(direct, i),
            shown(window, i)
        )),
        None => out.push_str("every row is the same\n"),
    }
    if direct.modes != window.modes {
        out.push_str(&format!(
            "cursor and modes differ:\n  tmux:  {}\n  nerdr: {}\n",
            direct.modes, window.modes
        ));
    }
    out.push_str(&side_by_side(&direct.text(), &window.text(), &differ));
    out
}

#[test]
fn twin_normalise_reencodes_each_row_from_its_cells() {
    let table: &[(&[&str], &[&str])] = &[
        // tmux carries a row's attributes into the next row's escapes.
        (
            &["\x1b[7m**", "\x1b[0m\x1b[39m\x1b[49mab"],
            &["\x1b[0;7m**\x1b[0m", "ab"],
        ),
        // Blanks at the end go in default attributes or a background
        // only; not in another attribute, nor before text.
        (&["ab   ", "\x1b[41m   "], &["ab", ""]),
        (
            &["\x1b[41m  x  ", "\x1b[0;7m  "],
            &["\x1b[0;41m  x\x1b[0m", "\x1b[0;7m  \x1b[0m"],
        ),
        // DEC special graphics as tmux marks them, or as the glyphs.
        (&["\x0elqk\x0f x", "┌─┐ x"], &["┌─┐ x", "┌─┐ x"]),
        // DEC special graphics' `_` is a blank, kept at a line's end.
        (
            &["^\x0e^_\x0fx", "^^ x", "\x0e_\x0f"],
            &["^^ x", "^^ x", ""],
        ),
        // Colours in words after 38/48/58, and a styled underline.
        (
            &["\x1b[38;5;196mX\x1b[0;4:3m\x1b[58;2;255;0;0mY"],
            &["\x1b[0;38;5;196mX\x1b[0;4:3;58;2;255;0;0mY\x1b[0m"],
        ),
        // 22 ends bold and dim; 39 the colour only.
        (
            &["\x1b[1;2;31mA\x1b[22mB\x1b[39mC"],
            &["\x1b[0;1;2;31mA\x1b[0;31mB\x1b[0mC"],
        ),
    ];
    for (given, want) in table {
        assert_eq!(normalise(given), *want, "{given:?}");
    }
}
