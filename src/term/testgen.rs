//! For the tests: random-ish output from a small seeded generator of the
//! sequences programs send, and comparisons of two screens in full.

use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::index::Line;
use alacritty_terminal::term::cell::{Cell, Flags};
use alacritty_terminal::term::color::COUNT;

use super::sgr::{put_cell, Pen};
use super::{Emulator, Screen};

/// xorshift64*: enough randomness for streams, no crate needed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const TEXT: [&str; 12] = [
    "hello",
    "a",
    " ",
    "wörld",
    "中文",
    "😀",
    "e\u{301}",
    "x\u{20d7}y",
    "─┐",
    "12345678",
    "~",
    "日本語テキスト",
];

const SGR: [&str; 40] = [
    "0",
    "1",
    "2",
    "3",
    "4",
    "4:0",
    "4:2",
    "4:3",
    "4:4",
    "4:5",
    "21",
    "5",
    "7",
    "8",
    "9",
    "22",
    "23",
    "24",
    "25",
    "27",
    "28",
    "29",
    "31",
    "42",
    "93",
    "104",
    "38;5;123",
    "48;5;17",
    "38;5;3",
    "38;2;10;20;30",
    "48:2::200:100:0",
    "38:5:200",
    "58;5;9",
    "58:2::1:2:3",
    "59",
    "39",
    "49",
    "1;4;31",
    "53",
    "55",
];

const CONTROLS: [&str; 45] = [
    "\r",
    "\n",
    "\r\n",
    "\t",
    "\x08",
    "\x1b[H",
    "\x1b[2J",
    "\x1b[J",
    "\x1b[1J",
    "\x1b[K",
    "\x1b[1K",
    "\x1b[2K",
    "\x1bM",
    "\x1bD",
    "\x1bE",
    "\x1b7",
    "\x1b8",
    "\x1b[s",
    "\x1b[u",
    "\x1b(0",
    "\x1b(B",
    "\x1b)0",
    "\x0e",
    "\x0f",
    "\x1bH",
    "\x1b[g",
    "\x1b[3g",
    "\x1b=",
    "\x1b>",
    "\x1b#8",
    "\x1b[?6h",
    "\x1b[?6l",
    "\x1b[r",
    "\x1b[4h",
    "\x1b[4l",
    "\x1b[?7l",
    "\x1b[?7h",
    "\x1b[?25l",
    "\x1b[?25h",
    "\x1b[?1049h",
    "\x1b[?1049l",
    "\x1b[?1047h",
    "\x1b[?1047l",
    "\x1b[?47h",
    "\x1b[?47l",
];

const MODES: [&str; 10] = [
    "1", "1000", "1002", "1003", "1004", "1005", "1006", "2004", "12", "1007",
];

const WITH_COUNT: [&str; 20] = [
    "A", "B", "C", "D", "E", "F", "G", "`", "d", "@", "P", "L", "M", "X", "b", "I", "Z", "S", "T",
    " q",
];

/// `n` random pieces of output for a `rows`×`cols` screen.
pub fn stream(rng: &mut Rng, rows: u16, cols: u16, n: usize) -> Vec<u8> {
    let mut s = String::new();
    for _ in 0..n {
        match rng.below(12) {
            0..=3 => s.push_str(rng.pick(&TEXT)),
            4 | 5 => s.push_str(&format!("\x1b[{}m", rng.pick(&SGR))),
            6 | 7 => s.push_str(rng.pick(&CONTROLS)),
            8 => s.push_str(&format!(
                "\x1b[{};{}H",
                rng.below(rows as u64 + 2),
                rng.below(cols as u64 + 2)
            )),
            9 => s.push_str(&format!("\x1b[{}{}", rng.below(6), rng.pick(&WITH_COUNT))),
            10 => {
                let set = if rng.below(2) == 0 { 'h' } else { 'l' };
                s.push_str(&format!("\x1b[?{}{set}", rng.pick(&MODES)));
            }
            _ => match rng.below(5) {
                0 => s.push_str(&format!(
                    "\x1b[{};{}r",
                    rng.below(rows as u64) + 1,
                    rng.below(rows as u64) + 1
                )),
                1 => s.push_str(&format!("\x1b]2;title {}\x07", rng.below(100))),
                2 => s.push_str(&format!("\x1b]0;t{}\x1b\\", rng.below(100))),
                3 => s.push_str(&format!("\x1b]4;{};rgb:12/34/56\x07", rng.below(256))),
                _ => s.push_str("\x1bc"),
            },
        }
    }
    s.into_bytes()
}

/// A cell as the person sees it: text and pen (layout flags aside).
pub fn looks(cell: &Cell) -> (String, Pen, bool) {
    let mut text = Vec::new();
    put_cell(&mut text, cell);
    (
        String::from_utf8(text).unwrap(),
        Pen::of(cell),
        cell.flags.contains(Flags::WIDE_CHAR),
    )
}

/// The visible cells as the person sees them.
pub fn seen(s: &Screen) -> Vec<(String, Pen, bool)> {
    s.frame().cells().iter().map(looks).collect()
}

fn grid_rows(g: &Grid<Cell>) -> Vec<Vec<Cell>> {
    (0..g.screen_lines())
        .map(|r| g[Line(r as i32)][..].to_vec())
        .collect()
}

/// A cell with the marks that mean nothing off the last column (where
/// shifting can leave them: the crate reads them only there) taken off.
fn inert(cell: &Cell, last: bool) -> Cell {
    let mut cell = cell.clone();
    // Extras emptied again (a wide character cleared) are no extras.
    if cell.zerowidth().is_some_and(|z| z.is_empty())
        && cell.underline_color().is_none()
        && cell.hyperlink().is_none()
    {
        cell.extra = None;
    }
    if !last {
        cell.flags
            .remove(Flags::WRAPLINE | Flags::LEADING_WIDE_CHAR_SPACER);
    }
    cell
}

fn same_grid(what: &str, a: &Grid<Cell>, b: &Grid<Cell>) -> Result<(), String> {
    let (ra, rb) = (grid_rows(a), grid_rows(b));
    let rows = ra.len();
    for (r, (x, y)) in ra.iter().zip(&rb).enumerate() {
        for (c, (p, q)) in x.iter().zip(y).enumerate() {
            // A snapshot cannot mark the bottom row of a two-row screen
            // wrapped, nor a wide character's spacer there (see
            // snapshot::draw_grid): only a later resize could tell.
            let leading = (p.flags | q.flags).contains(Flags::LEADING_WIDE_CHAR_SPACER);
            let known = c + 1 == x.len() && !(r + 1 == rows && (rows <= 2 || leading));
            let (p, q) = (inert(p, known), inert(q, known));
            if p != q {
                return Err(format!("{what} cell {r},{c}: {p:?} != {q:?}"));
            }
        }
    }
    if a.cursor != b.cursor {
        return Err(format!("{what} cursor {:?} != {:?}", a.cursor, b.cursor));
    }
    if a.saved_cursor != b.saved_cursor {
        return Err(format!(
            "{what} saved cursor {:?} != {:?}",
            a.saved_cursor, b.saved_cursor
        ));
    }
    Ok(())
}

/// Everything a snapshot must give back, compared.
pub fn same_state(a: &Screen, b: &Screen) -> Result<(), String> {
    let (a, b): (&Emulator, &Emulator) = (&a.view(), &b.view());
    same_grid("screen", a.term.grid(), b.term.grid())?;
    match (&a.state.main, &b.state.main) {
        (None, None) => {}
        (Some(x), Some(y)) => same_grid("main behind", x, y)?,
        _ => return Err("alternate screen".into()),
    }
    let checks: [(&str, String, String); 7] = [
        (
            "mode",
            format!("{:?}", a.term.mode()),
            format!("{:?}", b.term.mode()),
        ),
        (
            "region",
            format!("{:?}", a.state.region),
            format!("{:?}", b.state.region),
        ),
        (
            "tabs",
            format!("{:?}", a.state.tabs),
            format!("{:?}", b.state.tabs),
        ),
        (
            "charset",
            format!("{:?}", a.state.active_charset),
            format!("{:?}", b.state.active_charset),
        ),
        (
            "cursor style",
            format!("{} {:?}", a.state.styled, a.term.cursor_style()),
            format!("{} {:?}", b.state.styled, b.term.cursor_style()),
        ),
        ("title", a.inbox().title.clone(), b.inbox().title.clone()),
        ("colours", colours(a), colours(b)),
    ];
    for (what, x, y) in checks {
        if x != y {
            return Err(format!("{what}: {x} != {y}"));
        }
    }
    Ok(())
}

fn colours(e: &Emulator) -> String {
    let c = e.term.colors();
    format!("{:?}", (0..COUNT).map(|i| c[i]).collect::<Vec<_>>())
}

pub fn rebuilt(s: &Screen) -> Screen {
    let (rows, cols) = s.size();
    let mut q = Screen::new(rows, cols);
    q.process(&s.snapshot());
    q
}
